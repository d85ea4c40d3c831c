// `vyre lib compact`, `nonzero` and `histogram` end to end, as a separate
// process on the real device: values from the command line and from raw
// files, printed, as JSON and written back raw; the refusals, each with its
// exit code (docs/cli.md).
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "support/cli_lib.hpp"
#include "support/test_support.hpp"

using vyre::test::cache_in;
using vyre::test::contains;
using vyre::test::expect_refusals;
using vyre::test::read_file;
using vyre::test::run_vyre;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

TEST(CliLibCompactHistogram, ValuesOnTheCommandLine) {
  TempDir tmp;
  auto r = run_vyre({"lib", "compact", "--input", "x=1.5,2,nan,-0", "--dtype", "f32", "--mask", "1,0,7,1"}, cache_in(tmp));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[1.5, \"nan\", -0.0]\n");
  EXPECT_EQ(r.err, "");
  r = run_vyre({"lib", "compact", "--input", "x=-1,2,-3", "--dtype", "i8", "--mask", "true,false,true", "--mask-dtype",
                "bool", "--json"},
               cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["primitive"], "compact");
  EXPECT_EQ(j["dtype"], "i8");
  EXPECT_EQ(j["result"], nlohmann::json::parse("[-1, -3]"));
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["shapes"][0]["family"], "compact i8 by bool");
  r = run_vyre({"lib", "compact", "--input", "x=1,2", "--dtype", "u32", "--mask", "0,0"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[]\n") << r.err;
  r = run_vyre({"lib", "nonzero", "--input", "x=0,-0,nan,3,0", "--dtype", "f32"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[2, 3]\n") << r.err;
  r = run_vyre({"lib", "nonzero", "--input", "x=", "--dtype", "u16", "--json"}, cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["count"], 0);
  // Edges 0, 0.25, 0.5, 0.75, 1: a value on an edge goes right, 1 in the last bin.
  r = run_vyre({"lib", "histogram", "--input", "x=0,0.25,0.5,1,2,nan,-0", "--dtype", "f32", "--bins", "4", "--range",
                "0,1", "--json"},
               cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["result"], nlohmann::json::parse("[2, 1, 1, 1]"));
  EXPECT_EQ(j["outside"], 2);
  r = run_vyre({"lib", "histogram", "--input", "x=1,2,3", "--dtype", "u8", "--edges", "0,2,2,3", "-v"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[1, 0, 2]\n") << r.err;
  EXPECT_TRUE(contains(r.err, "0 values outside the bins")) << r.err;
  r = run_vyre({"lib", "histogram", "--input", "x=1,2,3,4", "--dtype", "i32", "--range", "1,4"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[1, 0, 0, 1, 0, 0, 1, 0, 0, 1]\n") << r.err;  // ten bins by default
}

TEST(CliLibCompactHistogram, RawFilesInAndOut) {
  TempDir tmp;
  std::vector<uint16_t> values(100003);
  std::vector<uint8_t> mask(values.size());
  for (uint32_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<uint16_t>(i * 40503u);
    mask[i] = static_cast<uint8_t>((i * 2654435761u) >> 31);
  }
  write_file(tmp / "values.bin", std::string(reinterpret_cast<const char*>(values.data()), values.size() * 2));
  write_file(tmp / "mask.bin", std::string(reinterpret_cast<const char*>(mask.data()), mask.size()));
  auto r = run_vyre({"lib", "compact", "--input", "x=@" + (tmp / "values.bin").string(), "--dtype", "u16", "--mask",
                     "@" + (tmp / "mask.bin").string(), "--output", (tmp / "kept.bin").string()},
                    cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  std::string want;
  for (size_t i = 0; i < values.size(); ++i)
    if (mask[i] != 0) want.append(reinterpret_cast<const char*>(&values[i]), 2);
  EXPECT_EQ(read_file(tmp / "kept.bin"), want);
  r = run_vyre({"lib", "histogram", "--input", "x=@" + (tmp / "values.bin").string(), "--dtype", "u16", "--bins", "256",
                "--range", "0,65535", "--output", (tmp / "counts.bin").string()},
               cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string counts = read_file(tmp / "counts.bin");
  ASSERT_EQ(counts.size(), 256u * 4);
  // Edges i * 65535 / 256: an integer v is in the last bin whose edge is at most v.
  std::vector<uint32_t> host(256, 0);
  for (uint16_t v : values) {
    size_t bin = 0;
    while (bin + 1 < 256 && (bin + 1) * (65535.0 / 256) <= v) ++bin;
    ++host[bin];
  }
  std::vector<uint32_t> got(256);
  std::memcpy(got.data(), counts.data(), counts.size());
  EXPECT_EQ(got, host);
}

TEST(CliLibCompactHistogram, RefusalsNameTheFlag) {
  TempDir tmp;
  write_file(tmp / "odd.bin", "123");
  const std::vector<vyre::test::Refusal> cases = {
      {{"lib", "compact", "--input", "x=1,2", "--dtype", "u32", "--mask", "1"}, 3, "2 values but a mask of 1"},
      {{"lib", "compact", "--input", "x=1,2", "--dtype", "u32", "--mask", "1,0", "--mask-dtype", "f32"}, 3,
       "u32, i32, u8 or bool mask, not f32"},
      {{"lib", "compact", "--input", "x=1,2", "--dtype", "u64", "--mask", "1,0"}, 3, "--dtype: 'u64' is not one of"},
      {{"lib", "compact", "--input", "x=1,2", "--dtype", "u32", "--mask", "1,256"}, 3, "--mask"},
      {{"lib", "compact", "--input", "x=1", "--dtype", "u32", "--mask", "@" + (tmp / "missing.bin").string()}, 3,
       "--mask @"},
      {{"lib", "compact", "--input", "x=1", "--dtype", "u32"}, 2, "--mask is required"},
      {{"lib", "nonzero", "--input", "x=@" + (tmp / "odd.bin").string(), "--dtype", "i16"}, 3,
       "3 bytes are not whole i16 elements"},
      {{"lib", "nonzero", "--input", "x=1", "--dtype", "u32", "--shape", "64,33"}, 3, "items is 1 to 32"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f64", "--range", "0,1"}, 3,
       "--dtype: histogram takes u32, i32, f32, u8, u16, i8 or i16, not f64"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32"}, 3, "give --range LO,HI"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32", "--range", "1"}, 3, "is not LO,HI"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32", "--range", "2,1"}, 3, "low end 2 is above its high end 1"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32", "--range", "0,inf"}, 3, "is not finite"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32", "--range", "0,1", "--bins", "0"}, 3, "at least one bin"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32", "--edges", "0,2,1"}, 3, "must not decrease"},
      {{"lib", "histogram", "--input", "x=1", "--dtype", "f32", "--edges", "0,1", "--range", "0,1"}, 3, "not both"},
  };
  expect_refusals(cases, cache_in(tmp));
  for (const char* name : {"compact", "nonzero", "histogram"}) {
    const auto help = run_vyre({"lib", name, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    EXPECT_TRUE(contains(help.out, "--dtype")) << name;
  }
}

}  // namespace
