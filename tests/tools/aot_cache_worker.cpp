// A process that uses the AOT cache the way a dispatching program does, for
// the multi-process, crash-injection and full-disk tests.
//
//   aot_cache_worker DIR [options]
//     --programs N        look up programs p0..p(N-1) (default 10)
//     --prefix S          program name prefix (default "p")
//     --bytes N           WGSL size of each program (default 256)
//     --rounds N          repeat the lookups N times (default 1)
//     --forever           cycle through fresh program names until killed
//     --crash-at STEP     SIGKILL itself at this publication step
//     --max-entries N / --max-bytes N   bounds of the cache
//     --fsize-limit N     RLIMIT_FSIZE in bytes, SIGXFSZ ignored (a full disk)
//     --readonly DIR      a read-only layer
//     --store S           directory or sqlite (the writable directory's store)
//     --wal               the SQLite store in WAL
//     --shared            the directory is on a shared file system (one file an entry)
//     --lower-ms N        lowering takes N milliseconds
//     --start-at MS       wait until this Unix time in milliseconds (a start line
//                         for many workers)
//     --remote URL        the remote tier (redis://..., redis-cluster://...)
//     --remote-read-only  look it up, never publish
//     --timeout-ms N      its connect and operation timeouts (default 250)
//     --retry-after-ms N  its circuit breaker's cooldown (default 10000)
//     --lease-wait-ms N   how long a miss waits for another worker's lowering
//     --signing-key PEM / --trusted-key PEM (repeatable)
//     --interval-ms N     pause between lookups (for the fault tests)
//
// Exits 0 when every artifact had the right WGSL, 3 when one did not; prints
// "hits=H misses=M wrong=W", and "max_ms=T" on stderr (T: the slowest
// lookup, lowering included).
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/aot_fixtures.hpp"
#include "vyre/aot.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: aot_cache_worker DIR [options]\n");
    return 2;
  }
  vyre::aot::CacheOptions options = vyre::test::cache_options(argv[1]);
  long programs = 10, bytes = 256, rounds = 1, lower_ms = 0, interval_ms = 0;
  long long start_at = 0;
  bool forever = false;
  std::string prefix = "p", crash_at;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", arg.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--programs") programs = std::stol(next());
    else if (arg == "--prefix") prefix = next();
    else if (arg == "--bytes") bytes = std::stol(next());
    else if (arg == "--rounds") rounds = std::stol(next());
    else if (arg == "--lower-ms") lower_ms = std::stol(next());
    else if (arg == "--start-at") start_at = std::stoll(next());
    else if (arg == "--forever") forever = true;
    else if (arg == "--crash-at") crash_at = next();
    else if (arg == "--max-entries") options.max_entries = std::stoull(next());
    else if (arg == "--max-bytes") options.max_bytes = std::stoull(next());
    else if (arg == "--readonly") options.readonly_directories.push_back(next());
    else if (arg == "--store")
      options.store = next() == "sqlite" ? vyre::aot::CacheStore::sqlite : vyre::aot::CacheStore::directory;
    else if (arg == "--wal") options.sqlite_wal = true;
    else if (arg == "--shared") options.shared_file_system = true;
    else if (arg == "--remote") {
      if (!options.remote) options.remote.emplace();
      options.remote->url = next();
    } else if (arg == "--remote-read-only") {
      if (!options.remote) options.remote.emplace();
      options.remote->read_only = true;
    } else if (arg == "--timeout-ms") {
      if (!options.remote) options.remote.emplace();
      options.remote->connect_timeout = options.remote->operation_timeout = std::chrono::milliseconds(std::stol(next()));
    } else if (arg == "--retry-after-ms") {
      if (!options.remote) options.remote.emplace();
      options.remote->breaker_cooldown = std::chrono::milliseconds(std::stol(next()));
    } else if (arg == "--lease-wait-ms") {
      if (!options.remote) options.remote.emplace();
      options.remote->lease_wait = std::chrono::milliseconds(std::stol(next()));
    } else if (arg == "--signing-key") options.signing_key = next();
    else if (arg == "--trusted-key") options.trusted_keys.push_back(next());
    else if (arg == "--interval-ms") interval_ms = std::stol(next());
    else if (arg == "--fsize-limit") {
      rlim_t bytes_allowed = std::stoul(next());
      rlimit limit{bytes_allowed, bytes_allowed};
      signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG, like a full disk
      setrlimit(RLIMIT_FSIZE, &limit);
    } else {
      std::fprintf(stderr, "unknown option %s\n", arg.c_str());
      return 2;
    }
  }
  if (!crash_at.empty())
    options.on_publish_step = [crash_at](std::string_view step) {
      if (step == crash_at) raise(SIGKILL);
    };

  using namespace std::chrono;
  auto start = system_clock::time_point(milliseconds(start_at));
  if (start > system_clock::now()) std::this_thread::sleep_until(start);

  long hits = 0, misses = 0, wrong = 0;
  double max_ms = 0;
  {
    vyre::aot::Cache cache(options);
    auto lookup = [&](const std::string& name) {
      std::string expected = vyre::test::synthetic_wgsl(name, static_cast<size_t>(bytes));
      const auto began = steady_clock::now();
      auto artifact = cache.load_or_compile(
          vyre::test::synthetic_parts(name),
          [&] {
            if (lower_ms > 0) usleep(static_cast<useconds_t>(lower_ms * 1000));
            return expected;
          },
          name);
      max_ms = std::max(max_ms, duration<double, std::milli>(steady_clock::now() - began).count());
      if (artifact.text != expected) ++wrong;
      (artifact.cache_hit ? hits : misses) += 1;
      if (interval_ms > 0) usleep(static_cast<useconds_t>(interval_ms * 1000));
    };
    if (forever) {
      for (long n = 0;; ++n) lookup(prefix + std::to_string(getpid()) + "-" + std::to_string(n));
    }
    for (long r = 0; r < rounds; ++r)
      for (long p = 0; p < programs; ++p) lookup(prefix + std::to_string(p));
  }
  std::printf("hits=%ld misses=%ld wrong=%ld\n", hits, misses, wrong);
  std::fprintf(stderr, "max_ms=%.1f\n", max_ms);
  return wrong == 0 ? 0 : 3;
}
