// The stores of the writable directory side by side (files; SQLite with its
// rollback journal, the default; SQLite in WAL) (docs/benchmarks.md,
// "Cache stores"): for 10 to 100,000 entries of about 1 KiB, the time to
// write them, a hit's median in a process that has the cache open, the first
// hit of a fresh process (opening the store included) and the closing of
// that process's cache, a miss (lowered and stored), `stats()` (which counts
// the entries), and the inodes and bytes the store takes.
//
//   aot_store_figures [--sizes 10,100,1000,10000,100000] [--reps N] [--dir PARENT]
//
// Prints one JSON line per store and size.
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "vyre/aot.hpp"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

vyre::aot::KeyParts parts_of(int i) {
  vyre::aot::KeyParts parts;
  char digest[65];
  std::snprintf(digest, sizeof digest, "%064x", i + 1);
  parts.program_digest = digest;
  parts.lowering_version = 1;
  parts.vyre_version = "bench";
  parts.fingerprint = "target=wgsl";
  return parts;
}

std::string text_of(int i) {
  std::string text = "// entry " + std::to_string(i) + "\n";
  while (text.size() < 1024) text += "fn f" + std::to_string(text.size()) + "() -> u32 { return 7u; }\n";
  return text;
}

struct Variant {
  const char* name;
  vyre::aot::CacheStore store;
  bool wal;
};

vyre::aot::CacheOptions options_for(const fs::path& dir, const Variant& v) {
  vyre::aot::CacheOptions options;
  options.directory = dir;
  options.store = v.store;
  options.sqlite_wal = v.wal;
  options.max_entries = 0;
  options.max_bytes = 0;
  options.driver_cache = false;
  return options;
}

struct Usage {
  uint64_t inodes = 0;
  uint64_t bytes = 0;
};

Usage usage_of(const fs::path& dir) {
  Usage u;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    ++u.inodes;
    if (it->is_regular_file(ec)) u.bytes += it->file_size(ec);
  }
  return u;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes{10, 100, 1000, 10000, 100000};
  int reps = 2000;
  fs::path parent = fs::temp_directory_path();
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--dir") == 0) parent = argv[i + 1];
    if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes.clear();
      for (const char* p = argv[i + 1]; *p != '\0';) {
        sizes.push_back(std::atoi(p));
        p = std::strchr(p, ',');
        if (p == nullptr) break;
        ++p;
      }
    }
  }
  const fs::path root = parent / ("vyre-store-bench-" + std::to_string(::getpid()));
  std::mt19937 rng(7);
  for (int n : sizes) {
    for (const Variant store : {Variant{"directory", vyre::aot::CacheStore::directory, false},
                                Variant{"sqlite", vyre::aot::CacheStore::sqlite, false},
                                Variant{"sqlite_wal", vyre::aot::CacheStore::sqlite, true}}) {
      const char* name = store.name;
      const fs::path dir = root / (std::string(name) + "-" + std::to_string(n));
      double write_us = 0;
      {
        vyre::aot::Cache cache(options_for(dir, store));
        const auto start = Clock::now();
        for (int i = 0; i < n; ++i) cache.load_or_compile(parts_of(i), [&] { return text_of(i); }, "bench");
        write_us = us_since(start);
      }
      // A fresh process's first hit: the store opened, then one lookup.
      std::vector<double> first, closing;
      for (int r = 0; r < 20; ++r) {
        const int i = static_cast<int>(rng() % static_cast<unsigned>(n));
        auto start = Clock::now();
        {
          vyre::aot::Cache cache(options_for(dir, store));
          (void)cache.load_or_compile(parts_of(i), [] { return std::string("lowered"); }, "bench");
          first.push_back(us_since(start));
          start = Clock::now();
        }
        closing.push_back(us_since(start));
      }
      vyre::aot::Cache cache(options_for(dir, store));
      std::vector<double> hit, miss;
      bool wrong = false;
      for (int r = 0; r < reps; ++r) {
        const int i = static_cast<int>(rng() % static_cast<unsigned>(n));
        auto start = Clock::now();
        auto artifact = cache.load_or_compile(parts_of(i), [] { return std::string("lowered"); }, "bench");
        hit.push_back(us_since(start));
        wrong |= artifact.text != text_of(i);
      }
      for (int r = 0; r < std::min(reps, 200); ++r) {
        auto start = Clock::now();
        // Another fingerprint: absent, and (lowered) then stored; each r new.
        vyre::aot::KeyParts absent = parts_of(r);
        absent.fingerprint = "target=absent-" + std::to_string(n) + "-" + std::to_string(r);
        (void)cache.load_or_compile(absent, [] { return std::string("x"); }, "bench");
        miss.push_back(us_since(start));
      }
      auto start = Clock::now();
      const auto stats = cache.stats();
      const double stats_us = us_since(start);
      const Usage used = usage_of(dir);
      std::printf(
          "{\"store\": \"%s\", \"entries\": %d, \"write_us_per_entry\": %.1f, \"hit_us\": %.1f, "
          "\"first_hit_us\": %.1f, \"close_us\": %.1f, \"miss_and_store_us\": %.1f, \"stats_ms\": %.2f, \"inodes\": %llu, "
          "\"bytes\": %llu, \"counted\": %llu, \"wrong\": %s}\n",
          name, n, write_us / n, median(hit), median(first), median(closing), median(miss), stats_us / 1000.0,
          static_cast<unsigned long long>(used.inodes), static_cast<unsigned long long>(used.bytes),
          static_cast<unsigned long long>(stats.entries), wrong ? "true" : "false");
      std::fflush(stdout);
      if (wrong) return 1;
    }
  }
  std::error_code ec;
  fs::remove_all(root, ec);
  return 0;
}
