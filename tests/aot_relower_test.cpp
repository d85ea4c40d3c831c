// An entry that verifies (its digest matches its text) but holds WGSL the
// device refuses would fail every run: the backend lowers the program
// afresh, replaces the entry, and the dispatch succeeds.
#include <gtest/gtest.h>

#include "support/aot_fixtures.hpp"
#include "support/programs.hpp"
#include "support/stored_entries.hpp"
#include "support/test_support.hpp"
#include "vyre/aot.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/lower.hpp"

namespace {

vyre::CheckedProgram doubler() { return vyre::test::doubler_program(); }

std::shared_ptr<vyre::aot::Cache> cache_in(const std::filesystem::path& dir) {
  vyre::aot::CacheOptions options = vyre::test::cache_options();
  options.directory = dir;
  return std::make_shared<vyre::aot::Cache>(options);
}

TEST(AotRelower, AnEntryWithInvalidWgslIsLoweredAgainAndReplaced) {
  vyre::test::TempDir tmp;
  const auto program = doubler();
  std::optional<vyre::gpu::Backend> probe;
  try {
    vyre::gpu::BackendOptions options;
    options.cache = cache_in(tmp / "cache");
    options.widen = false;  // the planted entry is the one-element shader's
    probe.emplace(options);
  } catch (const vyre::Error& e) {
    GTEST_SKIP() << "no GPU adapter: " << e.what();
  }
  const auto parts = probe->wgsl_target(program).parts;
  probe.reset();
  // A valid-looking entry: its metadata names the key and the digest of its (invalid) text.
  {
    auto planted = cache_in(tmp / "cache")->load_or_compile(parts, [] { return std::string("fn main( {"); }, "doubler");
    ASSERT_FALSE(planted.cache_hit);
  }
  const std::vector<uint32_t> a{1, 2, 3, 40};
  vyre::Inputs inputs;
  inputs.set("a", a).size("out", 4);
  {
    vyre::gpu::BackendOptions options;
    options.cache = cache_in(tmp / "cache");
    options.widen = false;  // the planted entry is the one-element shader's
    vyre::gpu::Backend backend(options);
    auto pipeline = backend.compile(program);
    EXPECT_FALSE(pipeline.compile_report().cache_hit) << "the refused entry was lowered again";
    EXPECT_EQ(pipeline.dispatch(inputs).get<uint32_t>("out"), (std::vector<uint32_t>{2, 4, 6, 80}));
  }
  EXPECT_EQ(vyre::test::read_entry_part(tmp / "cache", parts.key(), vyre::test::EntryPart::wgsl), vyre::lower_to_wgsl(program))
      << "the entry was replaced";
  vyre::gpu::BackendOptions options;
  options.cache = cache_in(tmp / "cache");
  options.widen = false;
  vyre::gpu::Backend backend(options);
  auto pipeline = backend.compile(program);
  EXPECT_TRUE(pipeline.compile_report().cache_hit);
  EXPECT_EQ(pipeline.dispatch(inputs).get<uint32_t>("out"), (std::vector<uint32_t>{2, 4, 6, 80}));
}

}  // namespace
