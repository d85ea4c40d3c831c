// A lowering pass that throws is a bug the lowering survives (the program
// goes on unpassed, with a warning): in the suites that lower every kind of
// program, that warning fails the test that caused it. (A result that does
// not check is warned about too; docs/lowering.md names the one known case.)
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "vyre/log.hpp"

namespace vyre::test {

class FailOnPassBugs : public ::testing::Environment {
 public:
  void SetUp() override {
    set_log_sink([](LogLevel level, std::string_view message) {
      std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
      if (level == LogLevel::warn && message.find("threw for") != std::string_view::npos &&
          message.find("a bug in the pass") != std::string_view::npos)
        ADD_FAILURE() << "a lowering pass threw: " << message;
    });
  }
  void TearDown() override { set_log_sink(nullptr); }
};

}  // namespace vyre::test
