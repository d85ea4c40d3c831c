#include "aot/local/publish.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>

#include "sys/remove_at.hpp"

namespace vyre::aot {

sys::Result<void> remove_entry_files(int dirfd, const std::string& key) {
  for (const std::string& name : {metadata_name(key), wgsl_name(key)})
    if (auto removed = sys::remove_at(dirfd, name, sys::OwnerRule::self); !removed) return removed.failure();
  return {};
}

sys::Result<Stored> publish_entry(CacheDirectory& directory, const Metadata& meta, std::string_view wgsl,
                                     const PublishStep& on_step, mode_t mode) {
  auto fail = [&](const sys::Failure& cause, std::string what) {
    return sys::failure(cause.kind, std::move(what) + ": " + cause.message, cause.error);
  };
  if (wgsl.size() > kMaxWgslBytes)
    return sys::failure(sys::Fault::too_large, "WGSL of " + std::to_string(wgsl.size()) +
                                                   " bytes is over the cache's bound of " + std::to_string(kMaxWgslBytes));
  std::string meta_text = encode_metadata(meta);
  if (meta_text.size() > kMaxMetadataBytes)
    return sys::failure(sys::Fault::too_large, "metadata of " + std::to_string(meta_text.size()) +
                                                   " bytes (a very long fingerprint or label)");

  auto stripe = directory.stripe_lock(meta.key, sys::FileLock::Mode::wait);
  if (!stripe) return fail(stripe.failure(), "cannot take the write lock in " + directory.path().string() + "/.locks");

  // Another process may have published while this one lowered.
  auto existing = read_entry(directory.fd(), meta.key, sys::OwnerRule::self);
  if (existing) return Stored{false, 0};
  // Remove what is there first, metadata first, so that a crash below
  // cannot leave a bad entry's metadata beside the new WGSL; a directory
  // planted at either name goes too (even with no metadata beside it), or
  // the rename below could never land and the key never be cached again.
  if (auto removed = remove_entry_files(directory.fd(), meta.key); !removed)
    return fail(removed.failure(), "cannot replace what is at " + meta.key + " in " + directory.path().string());

  auto step = [&](const char* name) {
    if (on_step) on_step(name);
  };
  const std::function<void()> wgsl_temp_done = [&] { step("wgsl-temp"); };
  if (auto w = sys::write_atomic_at(directory.fd(), wgsl_name(meta.key), wgsl, &wgsl_temp_done, mode); !w)
    return fail(w.failure(), "cannot write " + (directory.path() / wgsl_name(meta.key)).string());
  step("wgsl-renamed");
  const std::function<void()> meta_temp_done = [&] { step("metadata-temp"); };
  if (auto w = sys::write_atomic_at(directory.fd(), metadata_name(meta.key), meta_text, &meta_temp_done, mode); !w)
    return fail(w.failure(), "cannot write " + (directory.path() / metadata_name(meta.key)).string());
  step("metadata-renamed");
  return Stored{true, wgsl.size() + meta_text.size()};
}

}  // namespace vyre::aot
