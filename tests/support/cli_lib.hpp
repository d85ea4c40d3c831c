// What the `vyre lib` command-line tests share: a cache of the test's own,
// and a table of refusals, each with its exit code and its message.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "support/test_support.hpp"

namespace vyre::test {

inline std::map<std::string, std::string> cache_in(const TempDir& tmp) {
  return {{"VYRE_AOT_CACHE_DIR", (tmp / "cache").string()}};
}

using Refusal = std::tuple<std::vector<std::string>, int, std::string>;  // arguments, exit code, part of stderr

// Each refusal exits with its code, says its message on stderr and prints nothing.
inline void expect_refusals(const std::vector<Refusal>& cases, const std::map<std::string, std::string>& env) {
  for (const auto& [args, code, message] : cases) {
    const auto r = run_vyre(args, env);
    EXPECT_EQ(r.exit_code, code) << args[1] << " " << args.back() << ": " << r.err;
    EXPECT_TRUE(contains(r.err, message)) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace vyre::test
