#include "aot/local/publish.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "aot/entry/entry_frame.hpp"
#include "sys/remove_at.hpp"

namespace vyre::aot {

sys::Result<void> remove_entry_files(int dirfd, const std::string& key, sys::OwnerRule rule) {
  for (const std::string& name : {metadata_name(key), packed_name(key), wgsl_name(key)})
    if (auto removed = sys::remove_at(dirfd, name, rule); !removed) return removed.failure();
  return {};
}

sys::Result<Stored> publish_entry(CacheDirectory& directory, const Metadata& meta, std::string_view wgsl,
                                     const PublishStep& on_step, mode_t mode, const ExistingCheck& existing_ok) {
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
  auto existing = read_entry(directory.fd(), meta.key, directory.owner_rule());
  if (existing && (!existing_ok || existing_ok(existing->meta))) return Stored{false, 0};
  // Remove what is there first, metadata first, so that a crash below
  // cannot leave a bad entry's metadata beside the new WGSL; a directory
  // planted at either name goes too (even with no metadata beside it), or
  // the rename below could never land and the key never be cached again.
  if (auto removed = remove_entry_files(directory.fd(), meta.key, directory.owner_rule()); !removed)
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

namespace vyre::aot {

sys::Result<Stored> publish_packed(CacheDirectory& directory, const Metadata& meta, std::string_view content,
                                   const PublishStep& on_step, mode_t mode, const ExistingCheck& existing_ok) {
  if (content.size() > kMaxWgslBytes)
    return sys::failure(sys::Fault::too_large, "WGSL of " + std::to_string(content.size()) +
                                                   " bytes is over the cache's bound of " + std::to_string(kMaxWgslBytes));
  const std::string meta_text = encode_metadata(meta);
  if (meta_text.size() > kMaxMetadataBytes)
    return sys::failure(sys::Fault::too_large, "metadata of " + std::to_string(meta_text.size()) +
                                                   " bytes (a very long fingerprint or label)");
  // The stripe keeps evictions from removing a replacement being made; where
  // the file system has no working locks (flock: ENOSYS, ENOLCK, EOPNOTSUPP)
  // the one rename below is safe alone, and a busy stripe only waits.
  auto stripe = directory.stripe_lock(meta.key, sys::FileLock::Mode::wait);
  if (!stripe && stripe.failure().error != ENOSYS && stripe.failure().error != ENOLCK &&
      stripe.failure().error != EOPNOTSUPP)
    return sys::failure(stripe.failure().kind, "cannot take the write lock in " + directory.path().string() +
                                                   "/.locks: " + stripe.failure().message, stripe.failure().error);
  if (auto existing = read_entry(directory.fd(), meta.key, directory.owner_rule());
      existing && (!existing_ok || existing_ok(existing->meta)))
    return Stored{false, 0};
  // A pair left there would be read before the one file: it goes first.
  for (const std::string& name : {metadata_name(meta.key), wgsl_name(meta.key)})
    if (auto removed = sys::remove_at(directory.fd(), name, directory.owner_rule()); !removed)
      return sys::failure(removed.failure().kind, "cannot replace what is at " + meta.key + " in " +
                                                      directory.path().string() + ": " + removed.failure().message);
  const std::string frame = encode_entry_frame(kPackedEntryKind, meta_text, content);
  const std::function<void()> temp_done = [&] {
    if (on_step) on_step("packed-temp");
  };
  if (auto w = sys::write_atomic_at(directory.fd(), packed_name(meta.key), frame, &temp_done, mode); !w)
    return sys::failure(w.failure().kind, "cannot write " + (directory.path() / packed_name(meta.key)).string() + ": " +
                                              w.failure().message, w.failure().error);
  if (on_step) on_step("packed-renamed");
  return Stored{true, frame.size()};
}

}  // namespace vyre::aot
