// The remote step of a lookup, after the local directory and the read-only
// layers missed: ask the fleet's store once, count what it rejects, and on a
// miss claim the lowering (a lease) or wait a bounded time for the worker
// that holds it; after lowering, publish and give the lease back. A remote
// that failed in this lookup is not asked again in it, so a dispatch waits
// on the network at most once.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "aot/entry/entry.hpp"
#include "aot/local/stats_store.hpp"
#include "aot/remote/remote_tier.hpp"

namespace vyre::aot {

class RemoteLookup {
 public:
  // `remote` may be null (no remote tier): every step is then a no-op.
  // Without `may_publish` (trusted readers would refuse what this process
  // makes) it only looks: no lease, no publication.
  RemoteLookup(RemoteTier* remote, bool may_publish, std::string key, Counters& delta);
  ~RemoteLookup();  // gives back a lease still held
  RemoteLookup(const RemoteLookup&) = delete;
  RemoteLookup& operator=(const RemoteLookup&) = delete;

  // The verified entry, or nullopt when this process is to lower it.
  std::optional<Entry> find();
  // Whether publish() would store anything.
  bool wants_publication() const;
  // Stores what was lowered (SET NX: an entry already there stays unless it
  // is bad) and gives the lease back. The remote counts its own writes.
  void publish(const Metadata& meta, std::string_view text);

 private:
  void claim_or_wait(std::optional<Entry>& found);
  void release();

  RemoteTier* remote_;
  std::string key_;
  Counters& delta_;
  bool may_publish_;
  bool failed_ = false;  // it could not be asked in this lookup
  bool leased_ = false;  // this process holds the lease on key_
};

}  // namespace vyre::aot
