// The remote tier: entries in Redis or Redis Cluster shared by a fleet, one
// Redis string per entry (entry_frame.hpp), so that the first worker to
// lower a program publishes it and every other starts warm. A value read
// back is verified like a file (format, key components, content digest) and,
// with trusted keys, its signature; anything else is rejected and counted,
// never served. Every request is bounded by the timeouts, and a circuit
// breaker stops asking a remote that does not answer, so a dead, slow or
// flapping Redis never fails a dispatch.
//
// Leases keep a fleet from lowering one program many times at once: a miss
// claims `<prefix>lease:<key>` (SET NX with an expiry) before lowering; a
// worker that finds the lease taken waits a bounded time for the entry.
#pragma once

#include <atomic>
#include <memory>
#include <optional>

#include "aot/remote/circuit_breaker.hpp"
#include "aot/entry/entry_signature.hpp"
#include "aot/remote/redis_client.hpp"
#include "aot/entry/storage_tier.hpp"

namespace vyre::aot {

class RemoteTier final : public StorageTier {
 public:
  // Fails (malformed) only for a URL it cannot parse; nothing is connected
  // before the first request.
  static sys::Result<std::unique_ptr<RemoteTier>> open(const RemoteOptions& options,
                                                       std::shared_ptr<const TrustedKeys> trusted);
  // For tests: a tier on a given target.
  RemoteTier(std::unique_ptr<RedisTarget> target, RemoteOptions options, std::shared_ptr<const TrustedKeys> trusted);

  const std::filesystem::path& location() const override { return location_; }
  bool writable() const override { return !options_.read_only; }

  enum class Claim { owned, taken, unavailable };
  Claim claim(const std::string& key);
  void release(const std::string& key);
  // Polls for the entry another worker is lowering until it appears, its
  // lease disappears (that worker gave up) or `budget` has passed. A wait
  // that ends without the entry is spent from lease_budget().
  std::optional<Entry> wait_for(const std::string& key, std::chrono::milliseconds budget);
  // What waiting on leases may still cost this process. Anyone who can
  // write the store can set a lease, and a lease whose holder died never
  // brings an entry: such waits together cost a process at most one
  // lease wait (VYRE_AOT_REMOTE_LEASE_WAIT) in its life; then it lowers
  // without waiting.
  std::chrono::milliseconds lease_budget() const;
  // The entry, if it arrived since a miss (counted only as a hit).
  std::optional<Entry> recheck(const std::string& key);

  std::vector<RemotePing> ping();
  // Counters since the last call (this tier's part of the stats).
  TierCounters drain();
  const RemoteOptions& options() const { return options_; }

 private:
  // A breaker that is open makes every request a plain miss (missing).
  sys::Result<Entry> do_get(const std::string& key, Use use) override;
  // SET NX: an entry already there stays, unless it is bad (then replaced).
  sys::Result<Stored> do_put(const Metadata& meta, std::string_view wgsl) override;
  sys::Result<bool> do_remove(const std::string& key, bool only_if_bad) override;
  // The remote is not listed (a SCAN of a shared store is no lookup's
  // business): the tools list the local tiers.
  sys::Result<std::vector<EntryInfo>> do_list(const ListQuery&) const override { return std::vector<EntryInfo>{}; }
  sys::Result<TierStats> do_stats() const override { return TierStats{}; }  // sized by Redis's own bounds
  std::string entry_key(const std::string& key) const;
  std::string lease_key(const std::string& key) const;
  // A request through the breaker: busy when it is open.
  sys::Result<RedisReply> request(const std::string& redis_key, const std::vector<std::string>& args);
  // wait_for's polling, for at most `budget`.
  std::optional<Entry> poll_for(const std::string& key, std::chrono::milliseconds budget);
  // The value at the key, verified; not counted.
  sys::Result<Entry> fetch(const std::string& key);
  void count_failure(const sys::Failure& failure);
  sys::Failure refused(const RedisReply& reply);

  std::unique_ptr<RedisTarget> target_;
  RemoteOptions options_;
  std::shared_ptr<const TrustedKeys> trusted_;
  std::filesystem::path location_;
  CircuitBreaker breaker_;
  std::string lease_owner_;
  std::atomic<int64_t> lease_budget_ms_{0};
  std::atomic<uint64_t> hits_{0}, misses_{0}, writes_{0}, errors_{0}, timeouts_{0}, rejected_{0};
};

}  // namespace vyre::aot
