// The maintenance commands that exist to write into the cache directory
// (`prune`, `zero-stats`): a write it refuses (a read-only mount, an
// immutable directory, a full disk) is the write error of docs/cli.md
// (exit 6), not an unreadable input (3). Without a writable directory at
// all the error stays what it is for every command (3).
#pragma once

#include <iostream>

#include "cli.hpp"
#include "vyre/aot.hpp"
#include "vyre/error.hpp"

namespace vyre::cli {

template <class Body>
Exit writing_to_the_cache(const aot::Cache& cache, Body body) {
  try {
    return static_cast<Exit>(body());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::io || !cache.directory()) throw;
    std::cerr << "vyre: error: " << e.what() << "\n";
    return kWriteError;
  }
}

}  // namespace vyre::cli
