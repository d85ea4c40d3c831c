// The ahead-of-time specialization cache: lowered WGSL kept on disk, keyed by
// the program's identity, the shader options that shape the text, the lowering's
// version and the backend fingerprint, so that a second process skips
// lowering. The cache never fails a dispatch: when it cannot read or write it
// lowers the program and warns once. It knows nothing of GPUs: the
// fingerprint is a string it is given.
//
// Layout, entry format, key derivation, concurrency and crash model,
// eviction, stats and safety rules: docs/cache.md. Settings:
// docs/configuration.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <string_view>
#include <utility>
#include <vector>

#include "vyre/checked.hpp"
#include "vyre/export.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::aot {

// Version of the key derivation and of the entry format.
inline constexpr uint32_t kCacheVersion = 1;

// Reads of cache files never go past these bounds.
inline constexpr uint64_t kMaxWgslBytes = 16u << 20;
inline constexpr uint64_t kMaxMetadataBytes = 64u << 10;

// Default bounds of the writable directory (0 in a setting means unbounded).
inline constexpr uint64_t kDefaultMaxBytes = 1ull << 30;
inline constexpr uint64_t kDefaultMaxEntries = 100'000;

// Everything a cache key is made of, kept apart so that a miss can be
// explained component by component.
struct VYRE_API KeyParts {
  std::string program_digest;  // hex SHA-256 of the canonical wire bytes
  std::string shaping;         // shaping_signature(): what of the ShaderOptions shapes the text
  uint32_t lowering_version = 0;
  std::string vyre_version;
  std::string fingerprint;     // backend fingerprint

  // Hash of everything but the fingerprint (the reference's "spec").
  std::string spec_hash() const;
  // cache_key(spec_hash(), fingerprint): 64 lowercase hex characters.
  std::string key() const;

  friend bool operator==(const KeyParts&, const KeyParts&) = default;
};

VYRE_API KeyParts key_parts(const CheckedProgram& program, std::string_view fingerprint, const ShaderOptions& options = {});

// Versioned, length-prefixed key derivation (docs/cache.md).
VYRE_API std::string cache_key(std::string_view spec_hash, std::string_view fingerprint);

// True for exactly 64 lowercase hexadecimal characters: the only strings
// that ever become a file name in the cache.
VYRE_API bool is_valid_key(std::string_view key);

// What a lookup gives: the entry's text (a program's WGSL, or a tuning
// record), its key, and whether it came from the cache.
struct VYRE_API Artifact {
  std::string text;
  std::string key;
  bool cache_hit = false;
  double lower_ms = 0;  // time spent making the text (0 on a hit)

// The old name of `text`, kept for this release and gone in the next
// (docs/cli.md, "Deprecated names"): the same string, not a copy.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  [[deprecated("vyre::aot::Artifact::wgsl is Artifact::text now")]] std::string& wgsl = text;

  Artifact() = default;
  Artifact(const Artifact& other) : text(other.text), key(other.key), cache_hit(other.cache_hit), lower_ms(other.lower_ms) {}
  Artifact(Artifact&& other) noexcept
      : text(std::move(other.text)), key(std::move(other.key)), cache_hit(other.cache_hit), lower_ms(other.lower_ms) {}
  Artifact& operator=(const Artifact& other) {
    if (this == &other) return *this;
    text = other.text;
    key = other.key;
    cache_hit = other.cache_hit;
    lower_ms = other.lower_ms;
    return *this;
  }
  Artifact& operator=(Artifact&& other) noexcept {
    text = std::move(other.text);
    key = std::move(other.key);
    cache_hit = other.cache_hit;
    lower_ms = other.lower_ms;
    return *this;
  }
#pragma GCC diagnostic pop
};

// The remote tier: a Redis server or Redis Cluster that a fleet of workers
// shares, searched after the local directory and the read-only layers
// (docs/cache.md, "The remote tier"; settings: docs/configuration.md).
struct VYRE_API RemoteOptions {
  // redis://HOST:PORT[/DB], redis+unix:///PATH[?db=N], or
  // redis-cluster://HOST:PORT[,HOST:PORT...] (seed nodes).
  std::string url;
  bool read_only = false;             // look up, never publish
  std::string prefix = "vyre:aot:";   // namespace of every Redis key
  std::chrono::seconds ttl{0};        // expiry of published entries; 0: none
  std::chrono::milliseconds connect_timeout{100};
  std::chrono::milliseconds operation_timeout{250};  // one request whole: sending it and reading its answer
  // After this many failures in a row the remote is not asked for
  // `breaker_cooldown`.
  unsigned breaker_threshold = 3;
  std::chrono::milliseconds breaker_cooldown{10'000};
  // A miss whose program another worker is lowering waits this long for
  // its entry before lowering it too; 0: no leases.
  std::chrono::milliseconds lease_wait{2'000};
};

// One server's or cluster node's answer to `vyre cache remote ping`.
struct VYRE_API RemotePing {
  std::string node;   // host:port or socket path
  std::string role;   // "server", "master" or "replica"
  bool ok = false;
  double ms = 0;
  std::string problem;
};

// How the writable directory keeps its entries (docs/cache.md, "Stores"):
// two files each, or rows of one SQLite database (`entries.sqlite3`) where
// many small files hurt. automatic: the database when it is already there or
// the local file system is inode-poor (sys: under 10,000 inodes or 5 % free),
// never on a network file system; else files.
enum class CacheStore { automatic, directory, sqlite };

struct VYRE_API CacheOptions {
  // Writable directory; nullopt: no disk cache (lower every time).
  std::optional<std::filesystem::path> directory;
  // From VYRE_AOT_CACHE_STORE: auto, directory or sqlite.
  CacheStore store = CacheStore::automatic;
  // Whether the writable directory is on a file system shared between
  // machines (entries published as one file, the SQLite store never chosen
  // automatically); nullopt: from the file system's type (NFS, CIFS, Lustre,
  // GPFS, CephFS, FUSE, ...). VYRE_AOT_CACHE_SHARED_FS=1 or 0.
  std::optional<bool> shared_file_system;
  // The SQLite store's journal: the rollback journal (false), or WAL
  // (VYRE_AOT_CACHE_SQLITE_WAL=1; never on a network file system).
  bool sqlite_wal = false;
  // Searched after the writable directory, never written (caches shipped
  // with an application).
  std::vector<std::filesystem::path> readonly_directories;
  // Bounds of the writable directory; 0: unbounded.
  uint64_t max_bytes = kDefaultMaxBytes;
  uint64_t max_entries = kDefaultMaxEntries;
  // A hit refreshes an entry's recency only when it is older than this, so
  // that hits rarely write.
  std::chrono::seconds recency_granularity{600};
  // Temporary and unpaired files older than this are swept by cleanup.
  std::chrono::seconds orphan_grace{3600};
  // Counters reach the on-disk stats at most this often (and at destruction).
  std::chrono::milliseconds stats_flush_interval{2000};
  // Called at each step of publishing an entry ("wgsl-temp", "wgsl-renamed",
  // "metadata-temp", "metadata-renamed"): a seam for crash-injection tests
  // and tracing. Empty by default.
  std::function<void(std::string_view step)> on_publish_step;
  // The remote tier; nullopt: none.
  std::optional<RemoteOptions> remote;
  // An Ed25519 private key (PEM) that signs every entry this process
  // publishes; trusted public keys (PEM): with any, entries from the remote
  // tier, from layers of other users and from group- or world-writable
  // directories are served only when one of them signed them
  // (docs/cache.md, "Signatures").
  std::optional<std::filesystem::path> signing_key;
  std::vector<std::filesystem::path> trusted_keys;
  // Keep the GPU driver's own pipeline cache in the writable directory, one
  // folder per device and driver (gpu::place_driver_cache, docs/cache.md,
  // "Driver pipeline data"); false leaves the driver's settings alone.
  bool driver_cache = true;

  // Directory from Cache::default_directory(); read-only layers, bounds,
  // the remote tier and the keys from the VYRE_AOT_* variables, and
  // driver_cache from VYRE_DRIVER_CACHE
  // (docs/configuration.md).
  static CacheOptions from_environment();
};

// What one tier did: lookups it answered and missed, entries written to it,
// requests that failed or timed out, entries it refused.
struct VYRE_API TierCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t writes = 0;
  uint64_t errors = 0;
  uint64_t timeouts = 0;
  uint64_t rejected = 0;   // malformed, for another key, or not signed by a trusted key

  TierCounters& operator+=(const TierCounters& other);
  bool empty() const;
  friend bool operator==(const TierCounters&, const TierCounters&) = default;
};

// Counters summed over every process that used the directory, plus its
// present size.
struct VYRE_API CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t writes = 0;
  uint64_t evictions = 0;
  uint64_t bad_entries = 0;   // entries found corrupt, torn, foreign or unsafe
  uint64_t errors = 0;        // reads or writes the file system refused
  uint64_t bytes_written = 0;
  double lowering_ms = 0;     // time spent lowering on misses
  double time_saved_ms = 0;   // lowering time the hits did not spend
  uint64_t entries = 0;       // complete entries now in the writable directory
  uint64_t bytes = 0;         // their size (WGSL plus metadata)
  // The counters miss some counts: a process could not write them (a full
  // disk, a read-only directory) or a shard could not be read. Why, in words.
  bool incomplete = false;
  std::string incomplete_reason;
  uint64_t rejected = 0;      // entries refused for want of a trusted signature (any tier)
  // Per tier. local: the writable directory and the read-only layers.
  TierCounters local;
  TierCounters remote;        // zero without a remote tier
  std::string remote_location;  // the remote's URL; empty without one
  // The GPU driver's pipeline data kept in the writable directory, one
  // folder per device and driver (DriverFolderInfo); counted, with `bytes`,
  // against the size bound.
  uint64_t driver_folders = 0;
  uint64_t driver_bytes = 0;
  // Complete entries of the writable directory that another vyre version,
  // lowering version or record format wrote (is_current_version): never
  // served by this build; `prune` with older_versions removes them.
  uint64_t older_versions = 0;
  // How the writable directory keeps its entries: "directory" or "sqlite";
  // why (the setting, or the file system's facts); SQLite's journal mode
  // ("truncate" or "wal"; empty for files); the file system's type ("ext4",
  // "nfs", ...).
  std::string store;
  std::string store_reason;
  // The directory is on a file system shared between machines: entries are
  // published as one file each (docs/cache.md, "Shared and network file systems").
  bool shared_file_system = false;
  std::string journal_mode;
  std::string file_system;
};

// A folder of the GPU driver's own pipeline data (its on-disk shader cache,
// which vyre points at the writable directory): one per full backend
// fingerprint, device and driver (docs/cache.md, "Driver pipeline data").
struct VYRE_API DriverFolderInfo {
  std::string id;           // 32 hex digits of SHA-256 over the fingerprint
  std::string fingerprint;  // the full backend fingerprint it holds data for
  std::filesystem::path path;
  uint64_t bytes = 0;
  uint64_t files = 0;
  int64_t last_used_unix_ms = 0;
  bool ok = true;           // its fingerprint file names it, and it is a directory of this user
  std::string problem;      // why it is not ok
};

enum class EntryState {
  ok,             // complete; its metadata parses (ls) or it verified (verify, show)
  bad,            // corrupt, torn, unsafe file, or metadata for another key
  incomplete,     // only one of the pair exists (a write in progress or interrupted)
  other_format,   // written by another entry format version: ignored, never read
};
VYRE_API std::string_view to_string(EntryState state);

// What an entry's metadata records, its commit record (docs/cache.md, "Entry
// format"): the cache writes it and reads it back, and EntryInfo shows it.
struct VYRE_API EntryRecord {
  uint32_t format = 0;
  std::string key;
  std::string program;              // the program's label (Program::name)
  KeyParts parts;
  std::string spec_hash;
  std::string content_sha256;
  uint64_t wgsl_bytes = 0;
  int64_t created_unix_ms = 0;
  double lower_ms = 0;
  // "ed25519:<key id>:<signature>" by the writer's VYRE_AOT_SIGNING_KEY;
  // empty when unsigned (docs/cache.md, "Signatures").
  std::string signature;
};

// An entry as the maintenance tools see it: its record (as far as it could
// be read) and where it lives and in what state.
struct VYRE_API EntryInfo : EntryRecord {
  std::filesystem::path directory;  // the layer it lives in
  bool readonly_layer = false;
  EntryState state = EntryState::ok;
  std::string problem;              // why it is not ok
  uint64_t metadata_bytes = 0;
  int64_t last_used_unix_ms = 0;   // recency (metadata modification time)
};

// What a removal left in place: how many entries (or files) are still
// there and the first reason the system gave (read-only, immutable...).
struct VYRE_API NotRemoved {
  uint64_t count = 0;
  std::string problem;
};

struct VYRE_API VerifyReport {
  uint64_t checked = 0;
  uint64_t good = 0;
  std::vector<EntryInfo> bad;       // state bad, with the problem
  uint64_t removed = 0;             // bad entries removed from the writable directory
  NotRemoved not_removed;           // bad entries of the writable directory that could not be removed
  uint64_t other_format = 0;        // left alone
  uint64_t incomplete = 0;          // unpaired files (swept when older than the grace period)
  uint64_t driver_checked = 0;      // driver pipeline data folders
  std::vector<DriverFolderInfo> driver_bad;  // removed (as `removed` counts) unless not_removed says
  uint64_t older_versions = 0;      // good entries another version wrote (is_current_version): left to prune
};

struct VYRE_API PruneOptions {
  std::optional<uint64_t> max_bytes;    // evict least recently used down to this size
  std::optional<uint64_t> max_entries;  // and to this many entries
  std::optional<std::chrono::seconds> older_than;  // evict entries unused for longer
  bool older_versions = false;          // remove every entry another version wrote (is_current_version)
};

struct VYRE_API PruneReport {
  uint64_t evicted = 0;
  uint64_t bytes_freed = 0;
  uint64_t swept = 0;               // orphaned temporary and unpaired files removed
  uint64_t driver_evicted = 0;      // driver pipeline data folders evicted (their bytes in bytes_freed)
  uint64_t entries = 0;             // left
  uint64_t bytes = 0;               // left: entries and driver folders
  NotRemoved not_removed;           // entries and files to evict or sweep that could not be removed
  uint64_t older_versions_removed = 0;  // entries of other versions removed (their bytes in bytes_freed)
};

struct VYRE_API TransferReport {
  uint64_t copied = 0;
  uint64_t skipped_present = 0;     // already there and good
  uint64_t skipped_bad = 0;         // did not verify: not copied
  // Import with VYRE_AOT_TRUSTED_KEYS set: entries no trusted key signed,
  // refused (an imported entry is served unchecked afterwards), and the
  // first reason why.
  uint64_t refused_unsigned = 0;
  std::string refused_reason;
  // Driver pipeline data folders: copied, and skipped because they are for
  // another device or driver than the one named (or none was named).
  uint64_t driver_copied = 0;
  uint64_t driver_skipped_other = 0;
  std::vector<std::string> driver_skipped_fingerprints;
};

// Why a lookup hits or misses, component by component.
struct VYRE_API Explanation {
  struct Component {
    std::string name;   // "program digest", "shaping", ...
    std::string value;
    std::string hash;   // SHA-256 of the value as it enters the key
  };
  std::vector<Component> components;
  std::string spec_hash;
  std::string key;
  bool hit = false;
  std::optional<std::filesystem::path> found_in;  // layer of the hit (or of a bad entry)
  std::string problem;                            // the entry at this key is bad: why
  // Other entries for the same program digest and what differs in each
  // ("fingerprint.driver: cached 'A', now 'B'").
  struct Neighbour {
    std::string key;
    std::filesystem::path directory;
    std::vector<std::string> differences;
  };
  std::vector<Neighbour> same_program;
  // The other tier: the driver's pipeline data for the device named
  // (explain's `device_fingerprint`), keyed by the full fingerprint.
  std::string device_fingerprint;
  std::optional<DriverFolderInfo> driver_folder;  // nullopt: none kept yet
};

// Whether this build wrote an entry with these key parts: its vyre version
// is kVersion, and its lowering version is kLoweringVersion (for a tuning
// record kTuningRecordFormat, for a shape record kShapeRecordFormat). The
// versions are key parts, so an entry of another version is never served;
// `vyre cache stats` and `verify` count such entries, and `prune
// --older-versions` removes them (docs/cache.md, "Older versions").
VYRE_API bool is_current_version(const KeyParts& parts);

// Sizes ("64M", "1GiB"), counts and durations ("30d", "12h") as the cache's
// settings and `vyre cache` options write them, and entries' ages, for tools
// that take or print the same. Each parse gives nullopt for text it refuses.
// ---- Tuning records ---------------------------------------------------------
// What autotuning chose for one program, one size class and one device and
// driver, with the measurements it chose by (docs/tuning.md). The cache keeps
// a record as an entry like any other: same publication, verification,
// eviction and tiers; its text is the record below instead of WGSL.

inline constexpr uint32_t kTuningRecordFormat = 1;

struct VYRE_API TuningCandidate {
  Dim3 workgroup{1, 1, 1};
  uint8_t vector_width = 1;
  bool ran = false;        // compiled and timed; false: `note` says why not
  double median_ms = 0;    // of one dispatch, over the repetitions
  double min_ms = 0;
  std::string note;
};

struct VYRE_API TuningRecord {
  uint32_t format = kTuningRecordFormat;
  std::string size_class;         // what dispatches the choice is for (docs/tuning.md)
  Dim3 own_workgroup{1, 1, 1};    // the program's own shape (after any override asked for)
  Dim3 workgroup{1, 1, 1};        // chosen
  uint8_t vector_width = 1;       // chosen
  std::string reason;             // why the own configuration stays, when it does
  unsigned warmup = 0;
  unsigned repetitions = 0;
  unsigned batch = 1;             // dispatches per timed sample (one submission)
  double tuning_ms = 0;           // the whole tuning, compiles included
  std::vector<TuningCandidate> candidates;  // in the order they were tried; the first is the own configuration

  bool chose_own() const { return workgroup == own_workgroup && vector_width == 1; }
};

// The key parts of the tuning record of `program` under `options` (the shaping
// it was tuned from) for `size_class` on the device `device_fingerprint` (the
// full one: device and driver). Its shaping names the size class; its
// lowering version is kTuningRecordFormat.
VYRE_API KeyParts tuning_key_parts(const CheckedProgram& program, std::string_view device_fingerprint,
                                   std::string_view size_class, const ShaderOptions& options = {});
// Whether an entry's key parts are a tuning record's (its text is then one).
VYRE_API bool is_tuning_record(const KeyParts& parts);
// The record as the cache keeps it (TOML), and back: nullopt with the reason
// in `problem` for text that is no record of this format.
VYRE_API std::string encode_tuning_record(const TuningRecord& record);
VYRE_API std::optional<TuningRecord> decode_tuning_record(std::string_view text, std::string* problem = nullptr);

// ---- Shape records ------------------------------------------------------------
// What tuning chose for one of vyre::lib's families of programs (docs/lib.md,
// "Shapes and tuning"): the shape (named counts such as "workgroup=64
// items=32") that ran a whole call fastest for one size class on one device
// and driver, with every candidate's timing. Kept as an entry like a tuning
// record; the family's name stands where a program's digest would.

inline constexpr uint32_t kShapeRecordFormat = 1;

struct VYRE_API ShapeCandidate {
  std::string shape;       // "workgroup=64 items=32"
  bool ran = false;        // timed; false: `note` says why not
  double median_ms = 0;    // of one whole call, over the repetitions
  double min_ms = 0;
  std::string note;
};

struct VYRE_API ShapeRecord {
  uint32_t format = kShapeRecordFormat;
  std::string family;      // "reduce f32 sum"
  std::string size_class;  // "2^20 elements"
  std::string shape;       // chosen
  std::string fallback;    // the device class's default, which runs without tuning
  unsigned warmup = 0;
  unsigned repetitions = 0;
  double tuning_ms = 0;    // the whole tuning, compiles included
  std::vector<ShapeCandidate> candidates;  // in the order they were tried
};

// The key parts of the shape record of `family` for `size_class` on the
// device `device_fingerprint` (the full one: device and driver).
VYRE_API KeyParts shape_record_key_parts(std::string_view family, std::string_view size_class,
                                         std::string_view device_fingerprint);
// Whether an entry's key parts are a shape record's (its text is then one).
VYRE_API bool is_shape_record(const KeyParts& parts);
// The record as the cache keeps it (TOML), and back: nullopt with the reason
// in `problem` for text that is no record of this format.
VYRE_API std::string encode_shape_record(const ShapeRecord& record);
VYRE_API std::optional<ShapeRecord> decode_shape_record(std::string_view text, std::string* problem = nullptr);

namespace units {
VYRE_API std::optional<uint64_t> parse_size(std::string_view text);
VYRE_API std::optional<uint64_t> parse_count(std::string_view text);
VYRE_API std::optional<std::chrono::seconds> parse_duration(std::string_view text);
VYRE_API std::string format_size(uint64_t bytes);       // "1.5 MiB"
VYRE_API std::string format_age(int64_t milliseconds);  // "3h", "2d"
// Now, on the clock of EntryInfo's times (milliseconds since the Unix epoch).
VYRE_API int64_t now_unix_ms();
}  // namespace units

class VYRE_API Cache {
 public:
  // Directory from VYRE_AOT_CACHE_DIR, else $XDG_CACHE_HOME/vyre/aot, else
  // $HOME/.cache/vyre/aot; with none of them, no disk cache (and a warning).
  static std::optional<std::filesystem::path> default_directory();
  static Cache from_environment();

  explicit Cache(CacheOptions options);
  ~Cache();  // flushes stats; joins background cleanup
  Cache(Cache&&) noexcept;
  Cache& operator=(Cache&&) noexcept;

  // The writable directory in use (nullopt when there is none or it was
  // refused as unsafe).
  const std::optional<std::filesystem::path>& directory() const;
  const CacheOptions& options() const;

  Artifact load_or_compile(const CheckedProgram& program, std::string_view fingerprint, const ShaderOptions& options = {});
  // The entry at `parts`' key, or what `make` makes (then stored): a
  // program's WGSL, or any text kept under a key (a tuning record).
  Artifact load_or_compile(const KeyParts& parts, const std::function<std::string()>& make);
  // As above; `program_label` is recorded in the entry's metadata for ls and stats.
  Artifact load_or_compile(const KeyParts& parts, const std::function<std::string()>& make,
                           std::string_view program_label);

  // Maintenance (docs/cache.md). None of these throws for an unreadable
  // entry; they throw Error(io) only when the directory itself is unusable.
  CacheStats stats();  // flushes this process's counters first
  void zero_stats();
  std::vector<EntryInfo> list() const;  // every layer; metadata only, no digests
  std::optional<EntryInfo> show(std::string_view key, std::string* wgsl = nullptr) const;  // verified
  VerifyReport verify(bool remove_bad = true);
  PruneReport prune(const PruneOptions& options);
  // Removes every entry; returns how many were removed, and says in
  // `not_removed` (when given) what is still there and why.
  // Driver pipeline data folders go too (`driver_folders_removed` counts them).
  uint64_t clear(NotRemoved* not_removed = nullptr, uint64_t* driver_folders_removed = nullptr);
  // Exports the entries and every good driver pipeline data folder.
  TransferReport export_to(const std::filesystem::path& destination) const;
  // Imports the entries, and the driver pipeline data folder of
  // `device_fingerprint` (this machine's device and driver) when given;
  // other devices' folders are skipped, and the report says so.
  TransferReport import_from(const std::filesystem::path& source,
                             const std::optional<std::string>& device_fingerprint = std::nullopt);
  // `device_fingerprint`: also what is kept of that device's driver data.
  Explanation explain(const KeyParts& parts, const std::optional<std::string>& device_fingerprint = std::nullopt) const;
  // The driver pipeline data folders of the writable directory, by id, with
  // the data of first starts that have ended counted toward their folder
  // (read only: nothing is moved).
  std::vector<DriverFolderInfo> driver_folders() const;
  // PING to the remote server or every cluster node; empty without a
  // remote tier.
  std::vector<RemotePing> remote_ping();

  // Lowers afresh and replaces the entry at `parts`' key in every writable
  // tier: for an entry the device refused to compile (a valid-looking entry
  // with invalid WGSL would otherwise fail every run), or a tuning record
  // that is unusable or timed again. The caller says why, in its own log.
  Artifact replace(const KeyParts& parts, const std::function<std::string()>& make, std::string_view program_label);

  // Writes this process's counters to disk now and waits for a cleanup that
  // is running in the background.
  void flush();

 private:
  struct Impl;
  friend struct CacheInternals;  // the library's own access to Impl (and its tests')
  std::unique_ptr<Impl> impl_;
};

// ---- Reports as JSON ---------------------------------------------------------
// One JSON text per report, with the keys docs/cli.md lists: what `vyre cache
// stats|ls|show|explain --json` print and vyre.cache returns, made here once
// so that the two say the same.

// The counters, with the cache's writable directory (null without one) and
// its bounds (`max_bytes`, `max_entries`; 0: unbounded).
VYRE_API std::string to_json(const CacheStats& stats, const Cache& cache);
VYRE_API std::string to_json(const EntryInfo& entry);
VYRE_API std::string to_json(const std::vector<EntryInfo>& entries);  // an array, in the order given
VYRE_API std::string to_json(const DriverFolderInfo& folder);
VYRE_API std::string to_json(const Explanation& explanation);
VYRE_API std::string to_json(const VerifyReport& report);
VYRE_API std::string to_json(const PruneReport& report);
VYRE_API std::string to_json(const TransferReport& report);
// Most recently used first (then by key): the order `vyre cache ls` and
// vyre.cache.entries() list entries in.
VYRE_API void order_for_listing(std::vector<EntryInfo>& entries);

}  // namespace vyre::aot
