// `vyre lib` end to end, as a separate process on the real device: values
// from the command line and from a raw file, printed or written back raw;
// the refusals, each with its exit code (docs/cli.md).
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

TEST(CliLib, ScanAndReduceOfValuesOnTheCommandLine) {
  TempDir tmp;
  auto r = run_vyre({"lib", "scan", "--input", "x=1,2,3,4", "--dtype", "u32"}, cache_in(tmp));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "[1, 3, 6, 10]\n");
  EXPECT_EQ(r.err, "");
  r = run_vyre({"lib", "scan", "--input", "x=5,-1,7", "--dtype", "i32", "--op", "min", "--exclusive"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[2147483647, 5, -1]\n") << r.err;
  r = run_vyre({"lib", "reduce", "--input", "x=1.5,2,-8", "--dtype", "f32", "--op", "max"}, cache_in(tmp));
  EXPECT_EQ(r.out, "2.0\n") << r.err;
  r = run_vyre({"lib", "reduce", "--input", "x=1.5,nan", "--dtype", "f64", "--json"}, cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["primitive"], "reduce");
  EXPECT_EQ(j["dtype"], "f64");
  EXPECT_EQ(j["result"], "nan");
  EXPECT_GT(j["ms"].get<double>(), 0.0);
  r = run_vyre({"lib", "sort", "--input", "x=3,1,nan,-0,0,-5", "--dtype", "f32"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[-5.0, -0.0, 0.0, 1.0, 3.0, \"nan\"]\n") << r.err;
  r = run_vyre({"lib", "sort", "--input", "x=3,-1,2", "--dtype", "i32", "--descending"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[3, 2, -1]\n") << r.err;
  r = run_vyre({"lib", "bincount", "--input", "x=0,3,3,1", "--dtype", "i32"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[1, 1, 0, 2]\n") << r.err;
  r = run_vyre({"lib", "bincount", "--input", "x=1", "--dtype", "u32", "--bins", "3", "--json"}, cache_in(tmp));
  EXPECT_EQ(nlohmann::json::parse(r.out)["dtype"], "u32") << r.err;
  // Narrow and bool elements: reduce and scan give their accumulator's type.
  r = run_vyre({"lib", "reduce", "--input", "x=200,100", "--dtype", "u8", "--json"}, cache_in(tmp));
  EXPECT_EQ(nlohmann::json::parse(r.out)["result"], 300) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["dtype"], "u32") << r.err;
  r = run_vyre({"lib", "scan", "--input", "x=true,false,true", "--dtype", "bool"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[1, 1, 2]\n") << r.err;
  r = run_vyre({"lib", "sort", "--input", "x=3,-1,2,-128", "--dtype", "i8"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[-128, -1, 2, 3]\n") << r.err;
  r = run_vyre({"lib", "sort", "--input", "x=70000,3,-1,2,-128", "--dtype", "i32", "--shape", "32,4,6"}, cache_in(tmp));
  EXPECT_EQ(r.out, "[-128, -1, 2, 3, 70000]\n") << r.err;
}

TEST(CliLib, RawFileInAndOut) {
  TempDir tmp;
  std::vector<uint32_t> keys(100000);
  for (uint32_t i = 0; i < keys.size(); ++i) keys[i] = i * 2654435761u;
  write_file(tmp / "keys.bin", std::string(reinterpret_cast<const char*>(keys.data()), keys.size() * 4));
  const auto r = run_vyre({"lib", "scan", "--input", "x=@" + (tmp / "keys.bin").string(), "--dtype", "u32", "--op",
                           "xor", "--output", (tmp / "out.bin").string()},
                          cache_in(tmp));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string out = read_file(tmp / "out.bin");
  ASSERT_EQ(out.size(), keys.size() * 4);
  uint32_t acc = 0, got = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    acc ^= keys[i];
    std::memcpy(&got, out.data() + 4 * i, 4);
    ASSERT_EQ(got, acc) << i;
  }
}

TEST(CliLib, RefusalsNameTheFlag) {
  TempDir tmp;
  write_file(tmp / "odd.bin", "12345");
  const std::vector<vyre::test::Refusal> cases = {
      {{"lib", "scan", "--input", "x=1,2", "--dtype", "u64"}, 3, "--dtype: 'u64' is not one of u32, i32, f32, f64, f16, u8"},
      {{"lib", "scan", "--input", "x=1,2", "--dtype", "f32", "--op", "xor"}, 3, "scan xor takes integer or bool elements"},
      {{"lib", "scan", "--input", "x=1,2", "--dtype", "u32", "--op", "prod"}, 3, "--op: 'prod' is not one of"},
      {{"lib", "scan", "--input", "y=1,2", "--dtype", "u32"}, 3, "is not x=V1,V2,... or x=@FILE"},
      {{"lib", "reduce", "--input", "x=", "--dtype", "f32", "--op", "min"}, 3, "min of zero elements has no value"},
      {{"lib", "reduce", "--input", "x=@" + (tmp / "odd.bin").string(), "--dtype", "u32"}, 3,
       "5 bytes are not whole u32 elements"},
      {{"lib", "reduce", "--input", "x=@" + (tmp / "missing.bin").string(), "--dtype", "u32"}, 3, "cannot open the file"},
      {{"lib", "scan", "--input", "x=1", "--dtype", "u32", "--shape", "256"}, 3, "is not WORKGROUP,ITEMS"},
      {{"lib", "scan", "--input", "x=1", "--dtype", "u32", "--shape", "100,4"}, 3, "power of two"},
      {{"lib", "scan", "--dtype", "u32"}, 2, "--input is required"},
      {{"lib", "sort", "--input", "x=1", "--dtype", "f64"}, 3, "sort takes u32, i32, f32, f16, u8, i8, u16 or i16 keys, not f64"},
      {{"lib", "sort", "--input", "x=1", "--dtype", "u32", "--op", "max"}, 2, "--op"},
      {{"lib", "sort", "--input", "x=1", "--dtype", "u32", "--shape", "256,4"}, 3, "from 16 to 128"},
      {{"lib", "sort", "--input", "x=1", "--dtype", "u32", "--shape", "32,4,x"}, 3, "is not WORKGROUP,ITEMS[,RADIX_BITS]"},
      {{"lib", "sort", "--input", "x=1", "--dtype", "u32", "--shape", "128,4,5"}, 3, "at 5 bits the workgroup is at most 64"},
      {{"lib", "bincount", "--input", "x=1,5,9", "--dtype", "u32", "--bins", "5"}, 3, "2 of the 3 values are not in [0, 5)"},
      {{"lib", "bincount", "--input", "x=1", "--dtype", "f32"}, 3, "bincount takes u32, i32, u8, i8, u16 or i16 values, not f32"},
      {{"lib"}, 2, "A subcommand is required"},
  };
  expect_refusals(cases, cache_in(tmp));
  const auto help = run_vyre({"lib", "reduce", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(contains(help.out, "--dtype"));
}

}  // namespace

namespace {

TEST(CliLib, ATunedShapeIsRecordedAndTheNextProcessTimesNothing) {
  TempDir tmp;
  std::map<std::string, std::string> env = cache_in(tmp);
  env["VYRE_TUNE_WARMUP"] = "1";
  env["VYRE_TUNE_REPETITIONS"] = "1";
  const std::vector<std::string> call = {"lib", "reduce", "--input", "x=1,2,3,4,5", "--dtype", "u32", "--json"};
  std::vector<std::string> tuned = call;
  tuned.push_back("--tune");
  auto r = run_vyre(tuned, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["result"], 15);
  ASSERT_EQ(j["shapes"].size(), 1u);
  EXPECT_EQ(j["shapes"][0]["source"], "tuned");
  EXPECT_EQ(j["shapes"][0]["family"], "reduce u32 sum");
  const std::string key = j["shapes"][0]["record_key"];
  const std::string shape = j["shapes"][0]["shape"];

  // VYRE_TUNE=1 as --tune: the record, nothing timed; --verbose says so.
  env["VYRE_TUNE"] = "1";
  std::vector<std::string> verbose = call;
  verbose.back() = "--verbose";
  r = run_vyre(verbose, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "15\n");
  EXPECT_TRUE(contains(r.err, "reduce u32 sum, 2^3 elements: " + shape + " (the cache's tuning record, nothing timed"))
      << r.err;
  env.erase("VYRE_TUNE");
  r = run_vyre(verbose, env);
  EXPECT_TRUE(contains(r.err, "this device class's default (--tune to measure)")) << r.err;

  r = run_vyre({"cache", "show", key}, env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "kind              shape record of a standard kernel")) << r.out;
  EXPECT_TRUE(contains(r.out, "chosen            " + shape)) << r.out;
  EXPECT_TRUE(contains(r.out, "workgroup=512 items=32")) << r.out;  // every candidate is listed
  r = run_vyre({"cache", "show", key, "--json"}, env);
  EXPECT_EQ(nlohmann::json::parse(r.out)["shape_record"]["shape"], shape) << r.out;
}

}  // namespace
