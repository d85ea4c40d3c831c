#include "aot/remote_lookup.hpp"

#include "util/log.hpp"

namespace vyre::aot {

RemoteLookup::RemoteLookup(RemoteTier* remote, bool may_publish, std::string key, Counters& delta)
    : remote_(remote), key_(std::move(key)), delta_(delta), may_publish_(may_publish) {}

RemoteLookup::~RemoteLookup() { release(); }

std::optional<Entry> RemoteLookup::find() {
  if (remote_ == nullptr) return std::nullopt;
  auto got = remote_->get(key_, Use::serve);
  if (got) return std::move(*got);
  const sys::Failure& failure = got.failure();
  if (!is_miss(failure) && !is_bad_entry(failure)) {
    failed_ = true;  // the remote counted it; not asked again in this lookup
    return std::nullopt;
  }
  if (is_bad_entry(failure)) {
    if (failure.kind == sys::Fault::untrusted) ++delta_.rejected;
    log::warn_once("aot-remote-rejected:" + remote_->location().string(),
                   "AOT cache: rejected entry " + key_.substr(0, 16) + "... from " + remote_->location().string() +
                       " (" + failure.message + "); lowering instead");
  }
  std::optional<Entry> found;
  claim_or_wait(found);
  return found;
}

// A fleet lowers each program once: claim the lowering, or wait a bounded
// time for the worker that has.
void RemoteLookup::claim_or_wait(std::optional<Entry>& found) {
  if (!wants_publication() || remote_->lease_budget().count() <= 0) return;
  switch (remote_->claim(key_)) {
    case RemoteTier::Claim::taken:
      found = remote_->wait_for(key_, remote_->options().lease_wait);
      return;
    case RemoteTier::Claim::owned:
      leased_ = true;
      found = remote_->recheck(key_);  // published between the lookup and the claim?
      if (found) release();
      return;
    case RemoteTier::Claim::unavailable:
      failed_ = true;
      return;
  }
}

bool RemoteLookup::wants_publication() const {
  return remote_ != nullptr && may_publish_ && remote_->writable() && !failed_;
}

void RemoteLookup::publish(const Metadata& meta, std::string_view text) {
  if (wants_publication()) {
    auto stored = remote_->put(meta, text);
    if (!stored && stored.failed_with(sys::Fault::too_large))
      log::warn_once("aot-skipped", "AOT cache: not caching " + key_.substr(0, 16) + "...: " + stored.failure().message);
  }
  release();
}

void RemoteLookup::release() {
  if (!leased_) return;
  leased_ = false;
  remote_->release(key_);
}

}  // namespace vyre::aot
