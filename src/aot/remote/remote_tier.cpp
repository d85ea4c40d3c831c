#include "aot/remote/remote_tier.hpp"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "aot/entry/entry_frame.hpp"
#include "sys/units.hpp"
#include "util/log.hpp"

namespace vyre::aot {
namespace {

// How long a lease lives when its holder dies without releasing it.
constexpr std::chrono::milliseconds kLeaseLifetime{60'000};

sys::Failure breaker_open() { return sys::failure(sys::Fault::busy, "remote not asked (circuit breaker open)"); }

}  // namespace

sys::Result<std::unique_ptr<RemoteTier>> RemoteTier::open(const RemoteOptions& options,
                                                          std::shared_ptr<const TrustedKeys> trusted) {
  auto target = make_redis_target(options.url, RedisTimeouts{options.connect_timeout, options.operation_timeout});
  if (!target) return target.failure();
  return std::make_unique<RemoteTier>(std::move(*target), options, std::move(trusted));
}

RemoteTier::RemoteTier(std::unique_ptr<RedisTarget> target, RemoteOptions options,
                       std::shared_ptr<const TrustedKeys> trusted)
    : target_(std::move(target)),
      options_(std::move(options)),
      trusted_(std::move(trusted)),
      location_(options_.url),
      breaker_(std::max(1u, options_.breaker_threshold), options_.breaker_cooldown) {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  lease_owner_ = std::string(host) + ":" + std::to_string(::getpid());
  lease_budget_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(options_.lease_wait).count();
}

std::chrono::milliseconds RemoteTier::lease_budget() const {
  return std::chrono::milliseconds(std::max<int64_t>(0, lease_budget_ms_.load()));
}

std::string RemoteTier::entry_key(const std::string& key) const {
  return options_.prefix + std::string(kWgslArtifact) + ":" + key;
}
std::string RemoteTier::lease_key(const std::string& key) const { return options_.prefix + "lease:" + key; }

void RemoteTier::count_failure(const sys::Failure& failure) {
  ++errors_;
  if (is_timeout(failure)) ++timeouts_;
}

sys::Result<RedisReply> RemoteTier::request(const std::string& redis_key, const std::vector<std::string>& args) {
  if (!breaker_.allow()) return breaker_open();
  auto reply = target_->run(redis_key, args);
  if (reply) {
    if (breaker_.success() == CircuitBreaker::Change::closed)
      log::info("AOT remote cache {} answers again; it is used again", options_.url);
    return reply;
  }
  count_failure(reply.failure());
  if (breaker_.failure() == CircuitBreaker::Change::opened) {
    const std::string message = "AOT remote cache " + options_.url + " does not answer (" + reply.failure().message +
                                "); not asked for " + std::to_string(options_.breaker_cooldown.count()) +
                                " ms at a time until it does, lowering and the local cache go on. `vyre cache "
                                "remote ping` checks it.";
    log::warn_once("aot-remote-down:" + options_.url, message);
    log::debug("{}", message);
  }
  return reply;
}

// A write the server answered with an error (OOM at maxmemory with
// noeviction, READONLY on a replica, an ACL): counted and said once, as a
// write the file system refuses is.
sys::Failure RemoteTier::refused(const RedisReply& reply) {
  ++errors_;
  log::warn_once("aot-remote-refused:" + options_.url,
                 "AOT cache: " + options_.url + " refused an entry (" + reply.text +
                     "); what is lowered here is not shared until it accepts writes");
  return sys::failure(sys::Fault::io, "remote refused the entry: " + reply.text, EIO);
}

sys::Result<Entry> RemoteTier::fetch(const std::string& key) {
  const std::string redis_key = entry_key(key);
  // GETRANGE bounds what the server sends: an oversized value is never read whole.
  auto reply = request(redis_key, {"GETRANGE", redis_key, "0", std::to_string(kMaxEntryFrameBytes)});
  if (!reply) return reply.failure();
  if (reply->is_error()) return sys::failure(sys::Fault::malformed, "remote answered " + reply->text);
  if (reply->type == RedisReply::Type::nil || reply->text.empty()) return sys::failure(sys::Fault::missing, {});
  if (reply->type != RedisReply::Type::string) return sys::failure(sys::Fault::malformed, "remote value is not a string");
  if (reply->text.size() > kMaxEntryFrameBytes)
    return sys::failure(sys::Fault::too_large, "remote value is over " + std::to_string(kMaxEntryFrameBytes) + " bytes");
  auto value = decode_entry_frame(reply->text);
  if (!value) return value.failure();
  if (value->kind != kWgslArtifact)
    return sys::failure(sys::Fault::mismatch, "remote value holds a " + std::string(value->kind) + " artifact");
  Entry entry;
  if (auto parsed = parse_metadata(value->metadata, entry.meta); !parsed) return parsed.failure();
  if (auto checked = check_entry(key, entry.meta, value->content); !checked) return checked.failure();
  if (trusted_)
    if (auto verified = trusted_->verify(entry.meta); !verified) return verified.failure();
  entry.text = std::string(value->content);
  entry.metadata_bytes = value->metadata.size();
  entry.metadata_mtime_ms = entry.meta.created_unix_ms;
  return entry;
}

sys::Result<Entry> RemoteTier::do_get(const std::string& key, Use) {
  auto entry = fetch(key);
  if (entry)
    ++hits_;
  else if (entry.failure().kind == sys::Fault::busy)
    return sys::failure(sys::Fault::missing, {});  // breaker open: the remote is out of the lookup
  else if (is_miss(entry.failure()))
    ++misses_;
  else if (is_bad_entry(entry.failure()))
    ++rejected_;
  return entry;
}

sys::Result<Stored> RemoteTier::do_put(const Metadata& meta, std::string_view wgsl) {
  if (options_.read_only)
    return sys::failure(sys::Fault::read_only, options_.url + " is read-only (VYRE_AOT_REMOTE_MODE=read-only)");
  if (wgsl.size() > kMaxWgslBytes) return sys::failure(sys::Fault::too_large, "WGSL over the bound of an entry");
  const std::string redis_key = entry_key(meta.key);
  const std::string value = encode_entry_frame(kWgslArtifact, encode_metadata(meta), wgsl);
  std::vector<std::string> args{"SET", redis_key, value};
  if (options_.ttl.count() > 0) {
    // A TTL set through the API may be any number of seconds: held at 100
    // years, as the setting is, so the milliseconds neither overflow nor
    // exceed what Redis accepts.
    const auto ttl = std::min(options_.ttl, sys::kLongestDuration);
    args.push_back("PX");
    args.push_back(std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count()));
  }
  args.push_back("NX");
  auto reply = request(redis_key, args);
  if (!reply) return reply.failure();
  if (reply->is_error()) return refused(*reply);
  if (reply->type == RedisReply::Type::nil) {
    // Another worker published first, or a bad value sits there: replace
    // only the latter. A key that exists but reads as nothing holds an
    // empty value (GETRANGE cannot tell it from no key): bad too.
    auto there = fetch(meta.key);
    if (there || !(is_bad_entry(there.failure()) || is_miss(there.failure()))) return Stored{false, 0};
    args.pop_back();  // without NX
    reply = request(redis_key, args);
    if (!reply) return reply.failure();
    if (reply->is_error()) return refused(*reply);
  }
  ++writes_;
  return Stored{true, value.size()};
}

sys::Result<bool> RemoteTier::do_remove(const std::string& key, bool only_if_bad) {
  if (options_.read_only)
    return sys::failure(sys::Fault::read_only, options_.url + " is read-only (VYRE_AOT_REMOTE_MODE=read-only)");
  if (only_if_bad) {
    auto there = fetch(key);
    if (there || !is_bad_entry(there.failure())) return false;
  }
  const std::string redis_key = entry_key(key);
  auto reply = request(redis_key, {"DEL", redis_key});
  if (!reply) return reply.failure();
  return reply->type == RedisReply::Type::integer && reply->integer > 0;
}

RemoteTier::Claim RemoteTier::claim(const std::string& key) {
  if (options_.read_only || options_.lease_wait.count() == 0) return Claim::unavailable;
  const std::string redis_key = lease_key(key);
  auto reply = request(redis_key, {"SET", redis_key, lease_owner_, "PX", std::to_string(kLeaseLifetime.count()), "NX"});
  if (!reply) return Claim::unavailable;
  if (reply->is_error()) {
    (void)refused(*reply);
    return Claim::unavailable;
  }
  return reply->type == RedisReply::Type::nil ? Claim::taken : Claim::owned;
}

void RemoteTier::release(const std::string& key) {
  const std::string redis_key = lease_key(key);
  (void)request(redis_key, {"DEL", redis_key});
}

std::optional<Entry> RemoteTier::wait_for(const std::string& key, std::chrono::milliseconds budget) {
  const auto start = std::chrono::steady_clock::now();
  std::optional<Entry> entry = poll_for(key, std::min(budget, lease_budget()));
  if (!entry)
    lease_budget_ms_ -= std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start)
                            .count();
  return entry;
}

std::optional<Entry> RemoteTier::poll_for(const std::string& key, std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  auto pause = std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(25));
    auto entry = fetch(key);
    if (entry) {
      ++hits_;
      return std::move(*entry);
    }
    if (!is_miss(entry.failure())) return std::nullopt;  // bad, or the remote went away: lower here
    const std::string lease = lease_key(key);
    auto held = request(lease, {"EXISTS", lease});
    if (!held || held->type != RedisReply::Type::integer || held->integer == 0) {
      // The lease went: its entry may have landed just before.
      auto last = fetch(key);
      if (last) {
        ++hits_;
        return std::move(*last);
      }
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<Entry> RemoteTier::recheck(const std::string& key) {
  auto entry = fetch(key);
  if (!entry) return std::nullopt;
  ++hits_;
  return std::move(*entry);
}

std::vector<RemotePing> RemoteTier::ping() {
  std::vector<RemotePing> out;
  for (auto& p : target_->ping()) out.push_back(RemotePing{p.node, p.role, p.ok, p.ms, p.problem});
  return out;
}

TierCounters RemoteTier::drain() {
  TierCounters c;
  c.hits = hits_.exchange(0);
  c.misses = misses_.exchange(0);
  c.writes = writes_.exchange(0);
  c.errors = errors_.exchange(0);
  c.timeouts = timeouts_.exchange(0);
  c.rejected = rejected_.exchange(0);
  return c;
}

}  // namespace vyre::aot
