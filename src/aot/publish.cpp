#include "aot/publish.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

namespace vyre::aot {

void remove_entry_files(int dirfd, const std::string& key) {
  ::unlinkat(dirfd, metadata_name(key).c_str(), 0);
  ::unlinkat(dirfd, wgsl_name(key).c_str(), 0);
}

PublishResult publish_entry(CacheDirectory& directory, const Metadata& meta, std::string_view wgsl,
                            const PublishStep& on_step, mode_t mode) {
  PublishResult result;
  auto fail = [&](int err, std::string what) {
    result.outcome = PublishResult::Outcome::failed;
    result.error = err;
    result.problem = std::move(what) + ": " + std::strerror(err);
    return result;
  };
  if (wgsl.size() > kMaxWgslBytes) {
    result.outcome = PublishResult::Outcome::skipped;
    result.problem = "WGSL of " + std::to_string(wgsl.size()) + " bytes is over the cache's bound of " +
                     std::to_string(kMaxWgslBytes);
    return result;
  }
  std::string meta_text = encode_metadata(meta);
  if (meta_text.size() > kMaxMetadataBytes) {
    result.outcome = PublishResult::Outcome::skipped;
    result.problem = "metadata of " + std::to_string(meta_text.size()) + " bytes (a very long fingerprint or label)";
    return result;
  }

  int err = 0;
  FileLock stripe = directory.stripe_lock(meta.key, FileLock::Mode::wait, &err);
  if (!stripe.held()) return fail(err, "cannot take the write lock in " + directory.path().string() + "/.locks");

  // Another process may have published while this one lowered.
  EntryRead existing = read_entry(directory.fd(), meta.key, OwnerRule::self);
  if (existing.status == EntryRead::Status::good) {
    result.outcome = PublishResult::Outcome::present;
    return result;
  }
  // Uncommit a bad or foreign entry first, so that a crash below cannot
  // leave its metadata beside the new WGSL.
  if (existing.status != EntryRead::Status::missing) ::unlinkat(directory.fd(), metadata_name(meta.key).c_str(), 0);

  auto step = [&](const char* name) {
    if (on_step) on_step(name);
  };
  const std::function<void()> wgsl_temp_done = [&] { step("wgsl-temp"); };
  if (int e = write_atomic_at(directory.fd(), wgsl_name(meta.key), wgsl, &wgsl_temp_done, mode); e != 0)
    return fail(e, "cannot write " + (directory.path() / wgsl_name(meta.key)).string());
  step("wgsl-renamed");
  const std::function<void()> meta_temp_done = [&] { step("metadata-temp"); };
  if (int e = write_atomic_at(directory.fd(), metadata_name(meta.key), meta_text, &meta_temp_done, mode); e != 0)
    return fail(e, "cannot write " + (directory.path() / metadata_name(meta.key)).string());
  step("metadata-renamed");
  result.outcome = PublishResult::Outcome::written;
  result.bytes = wgsl.size() + meta_text.size();
  return result;
}

}  // namespace vyre::aot
