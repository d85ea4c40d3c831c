// `vyre run --output` and `--input NAME=@FILE` with NPY, CSV, JSON and raw
// files: every element type written and read back to the same bits, files
// NumPy wrote read as NumPy reads them, malformed files refused with what is
// wrong, the rule for programs of several outputs, and writes that leave a
// whole file or none.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "support/test_support.hpp"

using namespace std::string_literals;
using vyre::test::contains;
using vyre::test::read_file;
using vyre::test::run_process;
using vyre::test::run_vyre;
using vyre::test::source_path;
using vyre::test::TempDir;
using vyre::test::write_file;

namespace {

// out[i] = x[i], for one element type.
std::string copy_program(const std::string& type) {
  return R"({"vyre": 4, "name": "copy", "workgroup_size": [64, 1, 1],
    "buffers": [{"name": "x", "binding": 0, "access": "read", "type": ")" +
         type + R"("},
                {"name": "out", "binding": 1, "access": "read_write", "type": ")" +
         type + R"(", "output": true}],
    "body": [{"let": "i", "value": {"gid": "x"}},
             {"if": {"lt": [{"var": "i"}, {"len": "out"}]}, "then": [
               {"store": "out", "index": {"var": "i"}, "value": {"load": "x", "index": {"var": "i"}}}]}]})";
}

// An NPY 1.0 file as NumPy writes it: the dictionary padded with spaces to
// a multiple of 64 bytes with the preamble, ending in '\n'.
std::string npy(const std::string& dict, const std::string& data) {
  std::string header = dict;
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  return "\x93NUMPY\x01\x00"s + static_cast<char>(header.size() & 0xff) + static_cast<char>(header.size() >> 8) + header +
         data;
}

std::string bytes_of_u32(const std::vector<uint32_t>& values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

std::string bytes_of_f32(const std::vector<float>& values) {
  std::string out(values.size() * 4, '\0');
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The files of a folder, by name.
std::vector<std::string> files_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

struct Fixture {
  TempDir dir;
  std::map<std::string, std::string> env{{"VYRE_AOT_CACHE_DIR", (dir / "cache").string()}};

  // A copy program of `type` in dir, its path.
  std::string program(const std::string& type) {
    const auto path = dir / ("copy_" + type + ".json");
    write_file(path, copy_program(type));
    return path.string();
  }
  vyre::test::ProcessResult run(std::vector<std::string> args) {
    args.insert(args.begin(), "run");
    return run_vyre(args, env);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
};

const std::string kSaxpyFile = "{\"out\": [12.5, 5.25, -9.0, 0.0]}\n";

std::vector<std::string> saxpy_args() {
  return {source_path("examples/saxpy.json").string(), "--inputs", source_path("examples/saxpy.run.json").string()};
}

}  // namespace

// saxpy on the GPU written in each format, each file's bytes checked, and
// each file read back as the input of a run that gives it out unchanged.
TEST(CliRunFiles, EachFormatHoldsTheOutputsExactlyAndReadsBackOnTheGpu) {
  Fixture f;
  const std::string expected_data = bytes_of_f32({12.5f, 5.25f, -9.0f, 0.0f});
  for (const std::string ext : {"npy", "bin", "csv", "json"}) {
    auto args = saxpy_args();
    args.insert(args.end(), {"--output", "out=" + f.path("r." + ext)});
    const auto r = f.run(args);
    ASSERT_EQ(r.exit_code, 0) << ext << ": " << r.err;
    EXPECT_EQ(r.out, "") << ext << ": values printed beside --output";
    EXPECT_EQ(r.err, "") << ext;
  }
  EXPECT_EQ(read_file(f.path("r.npy")), npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", expected_data));
  EXPECT_EQ(read_file(f.path("r.npy")).size(), 128u + 16u);
  EXPECT_EQ(read_file(f.path("r.bin")), expected_data);
  EXPECT_EQ(read_file(f.path("r.csv")), "12.5\n5.25\n-9.0\n0.0\n");
  EXPECT_EQ(read_file(f.path("r.json")), "[12.5, 5.25, -9.0, 0.0]\n");

  // out = 1 * x + 0: each file as x gives its values back.
  for (const std::string ext : {"npy", "bin", "csv", "json"}) {
    const auto r = f.run({source_path("examples/saxpy.json").string(), "--input", "alpha=1", "--input",
                          "x=@" + f.path("r." + ext), "--input", "y=0,0,0,0", "--size", "out=4"});
    EXPECT_EQ(r.exit_code, 0) << ext << ": " << r.err;
    EXPECT_EQ(r.out, kSaxpyFile) << ext;
  }
}

// Without a name, a .json file holds what stdout would print; a file of
// another format holds the one output.
TEST(CliRunFiles, AFileWithoutANameHoldsTheOnlyOutputOrInJsonWhatStdoutPrints) {
  Fixture f;
  auto args = saxpy_args();
  args.insert(args.end(), {"--output", f.path("all.json"), "--output", f.path("only.csv")});
  const auto r = f.run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(read_file(f.path("all.json")), kSaxpyFile);
  EXPECT_EQ(read_file(f.path("only.csv")), "12.5\n5.25\n-9.0\n0.0\n");
  // The object a run wrote is the input of the buffer it names.
  write_file(f.path("x.json"), R"({"alpha": [7], "x": [1, 2, 3, 4]})");
  const auto back = f.run({source_path("examples/saxpy.json").string(), "--input", "alpha=1", "--input",
                           "x=@" + f.path("x.json"), "--input", "y=0,0,0,0", "--size", "out=4"});
  EXPECT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(back.out, "{\"out\": [1.0, 2.0, 3.0, 4.0]}\n");
  // --verbose tells on stderr what went where.
  args.push_back("--verbose");
  const auto verbose = f.run(args);
  EXPECT_TRUE(contains(verbose.err, "vyre: wrote 'out' (4 f32) to " + f.path("only.csv") + " (csv, 19 bytes)"))
      << verbose.err;
  EXPECT_TRUE(contains(verbose.err, "vyre: wrote every output to " + f.path("all.json") + " (json, 33 bytes)"))
      << verbose.err;
  EXPECT_EQ(verbose.out, "");
}

// Every element type through every format on the reference interpreter: the
// NPY file names the type and holds the raw bytes, the CSV spells each value
// as the JSON printer does (words bare, bool as 1 and 0), and each file read
// back gives the same values, to the bit.
TEST(CliRunFiles, EveryElementTypeRoundTripsThroughEveryFormat) {
  Fixture f;
  struct Case {
    std::string type, values, descr;
    size_t size;
  };
  const Case cases[] = {
      {"u32", "0,4294967295,7", "<u4", 4},
      {"i32", "-2147483648,2147483647,-1", "<i4", 4},
      {"f32", "1.5,nan,-inf,-0,1e-45,3.4028235e38,0.1", "<f4", 4},
      {"f64", "0.1,nan,inf,-0,5e-324,1e300", "<f8", 8},
      {"f16", "0.1,nan,-inf,65504,6e-08,-0", "<f2", 2},
      {"u8", "0,255,7", "|u1", 1},
      {"i8", "-128,127,-1", "|i1", 1},
      {"u16", "0,65535,300", "<u2", 2},
      {"i16", "-32768,32767,-2", "<i2", 2},
      {"bool", "true,false,true", "|b1", 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type);
    const std::string program = f.program(c.type);
    const size_t count = static_cast<size_t>(std::count(c.values.begin(), c.values.end(), ',')) + 1;
    const std::string size = "out=" + std::to_string(count);
    const std::vector<std::string> base{program, "--backend", "reference", "--input", "x=" + c.values, "--size", size};
    const auto printed = f.run(base);
    ASSERT_EQ(printed.exit_code, 0) << printed.err;
    auto args = base;
    for (const std::string ext : {"npy", "bin", "csv", "json"})
      args.insert(args.end(), {"--output", "out=" + f.path(c.type + "." + ext)});
    const auto written = f.run(args);
    ASSERT_EQ(written.exit_code, 0) << written.err;
    EXPECT_EQ(written.out, "");

    const std::string raw = read_file(f.path(c.type + ".bin"));
    EXPECT_EQ(raw.size(), count * c.size);
    EXPECT_EQ(read_file(f.path(c.type + ".npy")),
              npy("{'descr': '" + c.descr + "', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }",
                  raw));
    // The JSON printer's values, one a line, words unquoted, bool as 1 and 0.
    std::string lines = printed.out.substr(printed.out.find('[') + 1);
    lines = lines.substr(0, lines.find(']'));
    std::string expected_csv;
    for (size_t start = 0; start <= lines.size();) {
      const size_t comma = lines.find(", ", start);
      std::string value = lines.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (value.front() == '"') value = value.substr(1, value.size() - 2);
      if (value == "true") value = "1";
      if (value == "false") value = "0";
      expected_csv += value + "\n";
      if (comma == std::string::npos) break;
      start = comma + 2;
    }
    EXPECT_EQ(read_file(f.path(c.type + ".csv")), expected_csv);
    EXPECT_EQ(read_file(f.path(c.type + ".json")), printed.out.substr(printed.out.find('['), lines.size() + 2) + "\n");

    for (const std::string ext : {"npy", "bin", "csv", "json"}) {
      const auto back = f.run({program, "--backend", "reference", "--input", "x=@" + f.path(c.type + "." + ext),
                               "--size", size, "--output", "out=" + f.path(c.type + ".again.bin")});
      ASSERT_EQ(back.exit_code, 0) << ext << ": " << back.err;
      EXPECT_EQ(read_file(f.path(c.type + ".again.bin")), raw) << ext << ": not the same bits";
    }
  }
}

// Files NumPy wrote (np.save), byte for byte: a 1-D f32 array with NaN,
// infinity and -0, a C-order 2-D array (flattened), a Fortran-order one
// (flattened in C order, as ravel() gives it).
TEST(CliRunFiles, NpyFilesNumpyWroteReadAsNumpyReadsThem) {
  Fixture f;
  // np.save(f, np.array([1.5, -2, np.nan, np.inf, -0.0, 3.4028235e38], dtype=np.float32))
  const std::string numpy_f32 =
      "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }"
      "                                                            \n"
      "\x00\x00\xc0\x3f\x00\x00\x00\xc0\x00\x00\xc0\x7f\x00\x00\x80\x7f\x00\x00\x00\x80\xff\xff\x7f\x7f"s;
  ASSERT_EQ(numpy_f32.size(), 128u + 24u);
  // The test's own NPY writer writes what NumPy writes.
  EXPECT_EQ(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", numpy_f32.substr(128)), numpy_f32);
  write_file(f.path("f32.npy"), numpy_f32);
  const auto r = f.run({f.program("f32"), "--backend", "reference", "--input", "x=@" + f.path("f32.npy"), "--size", "out=6"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{\"out\": [1.5, -2.0, \"nan\", \"inf\", -0.0, 3.4028235e+38]}\n");

  // -np.arange(6, dtype=np.int32).reshape(2, 3)
  write_file(f.path("c.npy"), npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
                                  bytes_of_u32({0, 0xffffffff, 0xfffffffe, 0xfffffffd, 0xfffffffc, 0xfffffffb})));
  const auto c = f.run({f.program("i32"), "--backend", "reference", "--input", "x=@" + f.path("c.npy"), "--size", "out=6"});
  EXPECT_EQ(c.exit_code, 0) << c.err;
  EXPECT_EQ(c.out, "{\"out\": [0, -1, -2, -3, -4, -5]}\n");

  // np.asfortranarray(np.arange(6, dtype=np.uint32).reshape(2, 3)): stored 0 3 1 4 2 5.
  write_file(f.path("fortran.npy"), npy("{'descr': '<u4', 'fortran_order': True, 'shape': (2, 3), }",
                                        bytes_of_u32({0, 3, 1, 4, 2, 5})));
  const auto fortran = f.run({f.program("u32"), "--backend", "reference", "--input", "x=@" + f.path("fortran.npy"),
                            "--size", "out=6"});
  EXPECT_EQ(fortran.exit_code, 0) << fortran.err;
  EXPECT_EQ(fortran.out, "{\"out\": [0, 1, 2, 3, 4, 5]}\n");
  // A 1-D array in Fortran order is the same array; keys in any order, the
  // other quote, a version 2.0 preamble.
  std::string v2 = npy("{\"shape\": (2,), \"fortran_order\": True, \"descr\": \"<u4\"}", bytes_of_u32({9, 8}));
  v2 = "\x93NUMPY\x02\x00"s + v2.substr(8, 2) + "\x00\x00"s + v2.substr(10);
  write_file(f.path("v2.npy"), v2);
  const auto two = f.run({f.program("u32"), "--backend", "reference", "--input", "x=@" + f.path("v2.npy"), "--size", "out=2"});
  EXPECT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out, "{\"out\": [9, 8]}\n");
}

// Each malformed or mismatched NPY file is refused (exit 3) saying what is
// wrong, and nothing runs.
TEST(CliRunFiles, MalformedOrMismatchedNpyFilesAreRefusedSayingWhy) {
  Fixture f;
  const std::string program = f.program("f32");
  const std::string good = npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", bytes_of_f32({1, 2}));
  struct Case {
    std::string name, contents, message;
  };
  const Case cases[] = {
      {"magic", "\x93NUMPZ\x01\x00"s + good.substr(8), "not an NPY file (it does not begin with NumPy's magic"},
      {"empty", "", "not an NPY file"},
      {"preamble", good.substr(0, 9), "ends inside its preamble"},
      {"header", good.substr(0, 50), "the NPY header is truncated: it says 118 bytes, the file has 40"},
      {"dict", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,) ", bytes_of_f32({1, 2})),
       "the NPY header is malformed"},
      {"descr", npy("{'fortran_order': False, 'shape': (2,), }", bytes_of_f32({1, 2})), "no 'descr'"},
      {"f64", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", std::string(8, '\0')),
       "the NPY file holds '<f8' (float64), the buffer is f32 ('<f4', numpy.float32): save a.astype('<f4')"},
      {"i32", npy("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", bytes_of_u32({1, 2})),
       "the NPY file holds '<i4' (int32), the buffer is f32"},
      {"big", npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", bytes_of_f32({1, 2})),
       "the NPY file is big-endian ('>f4' (float32)); vyre reads little-endian"},
      {"object", npy("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", "\x80\x04\x95"s),
       "holds Python objects ('|O'), not values"},
      {"structured", npy("{'descr': [('a', '<f4'), ('b', '<f4')], 'fortran_order': False, 'shape': (1,), }",
                         bytes_of_f32({1, 2})),
       "structured type"},
      {"short", good.substr(0, good.size() - 3), "the NPY data is truncated: shape (2,) needs 8 bytes, the file has 5"},
      {"long", good + "xyz", "the NPY file has 3 bytes after the 8 of shape (2,)"},
      {"version", "\x93NUMPY\x04\x00"s + good.substr(8), "NPY version 4.0, which vyre does not read"},
  };
  for (const Case& c : cases) {
    write_file(f.path(c.name + ".npy"), c.contents);
    const auto r = f.run({program, "--backend", "reference", "--input", "x=@" + f.path(c.name + ".npy"),
                      "--size", "out=2"});
    EXPECT_EQ(r.exit_code, 3) << c.name << ": " << r.err;
    EXPECT_TRUE(contains(r.err, "--input x (@" + f.path(c.name + ".npy") + "): ")) << c.name << ": " << r.err;
    EXPECT_TRUE(contains(r.err, c.message)) << c.name << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.name;
  }
  // A fixed-size buffer takes an NPY file of its size only (saxpy's alpha: one f32).
  write_file(f.path("two.npy"), good);
  const auto fixed = f.run({source_path("examples/saxpy.json").string(), "--backend", "reference", "--input",
                            "alpha=@" + f.path("two.npy"), "--input", "x=1", "--input", "y=1", "--size", "out=1"});
  EXPECT_EQ(fixed.exit_code, 3) << fixed.err;
  EXPECT_TRUE(contains(fixed.err, "alpha")) << fixed.err;
}

// CSV: commas and line ends both separate, '#' lines and blank lines are
// skipped, \r\n is a line end; a bad value names its line. JSON: an array,
// or an object's member of the buffer's name. Any other extension is raw
// bytes, as before.
TEST(CliRunFiles, CsvAndJsonInputsAndRawBytesForOtherNames) {
  Fixture f;
  const std::string program = f.program("i32");
  write_file(f.path("in.csv"), "# x\r\n1, 2\r\n\r\n-3\r\n4,\n");
  const auto csv = f.run({program, "--backend", "reference", "--input", "x=@" + f.path("in.csv"), "--size", "out=4"});
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "{\"out\": [1, 2, -3, 4]}\n");
  write_file(f.path("bad.csv"), "1\n2\nthree\n");
  const auto bad = f.run({program, "--backend", "reference", "--input", "x=@" + f.path("bad.csv"), "--size", "out=3"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_TRUE(contains(bad.err, "(@" + f.path("bad.csv") + ") line 3: 'three' is not an i32")) << bad.err;

  write_file(f.path("other.json"), R"({"y": [1]})");
  const auto missing = f.run({program, "--backend", "reference", "--input", "x=@" + f.path("other.json"),
                             "--size", "out=1"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_TRUE(contains(missing.err, "the JSON object has no member 'x' (it has: y)")) << missing.err;

  // Raw bytes for any other name: "1,2" is three u8 elements.
  write_file(f.path("text.txt"), "1,2");
  const auto raw = f.run({f.program("u8"), "--backend", "reference", "--input", "x=@" + f.path("text.txt"),
                         "--size", "out=3"});
  EXPECT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_EQ(raw.out, "{\"out\": [49, 44, 50]}\n");
}

// A program of several outputs: a .json file without a name holds them all;
// an NPY, CSV or raw file must name its buffer.
TEST(CliRunFiles, SeveralOutputsGoToAJsonFileOrEachToAFileOfItsName) {
  Fixture f;
  const std::vector<std::string> base{source_path("examples/find_pattern.json").string(), "--inputs",
                                      source_path("examples/find_pattern.run.json").string(), "--backend", "reference"};
  const auto printed = f.run(base);
  ASSERT_EQ(printed.exit_code, 0) << printed.err;

  auto all = base;
  all.insert(all.end(), {"--output", f.path("all.json")});
  const auto r = f.run(all);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(f.path("all.json")), printed.out);

  auto unnamed = base;
  unnamed.insert(unnamed.end(), {"--output", f.path("r.npy")});
  const auto refused = f.run(unnamed);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(contains(refused.err, "the program has 2 outputs (count, where) and an NPY file holds one: name it with "
                                    "--output NAME=FILE"))
      << refused.err;
  EXPECT_FALSE(std::filesystem::exists(f.path("r.npy")));

  auto named = base;
  named.insert(named.end(), {"--output", "count=" + f.path("count.npy"), "--output", "where=" + f.path("where.csv")});
  const auto each = f.run(named);
  EXPECT_EQ(each.exit_code, 0) << each.err;
  EXPECT_EQ(read_file(f.path("count.npy")),
            npy("{'descr': '<u4', 'fortran_order': False, 'shape': (1,), }", bytes_of_u32({4})));
  const std::string where = read_file(f.path("where.csv"));
  EXPECT_EQ(std::count(where.begin(), where.end(), '\n'), 16) << where;

  auto unknown = base;
  unknown.insert(unknown.end(), {"--output", "data=" + f.path("d.npy")});
  const auto not_output = f.run(unknown);
  EXPECT_EQ(not_output.exit_code, 3);
  EXPECT_TRUE(contains(not_output.err, "the program has no output named 'data' (its outputs: count, where)"))
      << not_output.err;
}

// The format: --format, else the extension; neither is a usage error naming
// --format, told before anything runs.
TEST(CliRunFiles, AFileWhoseFormatNothingNamesIsRefusedNamingTheFlag) {
  Fixture f;
  auto args = saxpy_args();
  args.insert(args.end(), {"--output", f.path("r.txt")});
  const auto refused = f.run(args);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_TRUE(contains(refused.err, "--output " + f.path("r.txt") + ": the file's extension names no format")) << refused.err;
  EXPECT_TRUE(contains(refused.err, "give --format json|npy|bin|csv")) << refused.err;
  EXPECT_FALSE(std::filesystem::exists(f.path("r.txt")));
  EXPECT_FALSE(std::filesystem::exists(f.path("cache"))) << "the run started before the refusal";

  args.insert(args.end(), {"--format", "csv"});
  const auto csv = f.run(args);
  EXPECT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(read_file(f.path("r.txt")), "12.5\n5.25\n-9.0\n0.0\n");
  // --format overrides the extension.
  auto npy_as_json = saxpy_args();
  npy_as_json.insert(npy_as_json.end(), {"--output", f.path("r.npy"), "--format", "json"});
  EXPECT_EQ(f.run(npy_as_json).exit_code, 0);
  EXPECT_EQ(read_file(f.path("r.npy")), kSaxpyFile);

  auto alone = saxpy_args();
  alone.insert(alone.end(), {"--format", "npy"});
  const auto without_output = f.run(alone);
  EXPECT_EQ(without_output.exit_code, 2);
  EXPECT_TRUE(contains(without_output.err, "give --output FILE")) << without_output.err;
  auto bad_format = saxpy_args();
  bad_format.insert(bad_format.end(), {"--output", f.path("r.npy"), "--format", "xls"});
  EXPECT_EQ(f.run(bad_format).exit_code, 2);
  auto twice = saxpy_args();
  twice.insert(twice.end(), {"--output", f.path("r.npy"), "--output", "out=" + f.path("r.npy")});
  const auto given_twice = f.run(twice);
  EXPECT_EQ(given_twice.exit_code, 2);
  EXPECT_TRUE(contains(given_twice.err, "is given twice")) << given_twice.err;
}

// A file into a folder that does not exist is refused before the run (exit
// 6), and a write the system refuses midway (a file size limit) leaves the
// old file as it was and no temporary file behind.
TEST(CliRunFiles, AWriteThatFailsLeavesNoFileAndTheOldOneWhole) {
  Fixture f;
  auto args = saxpy_args();
  args.insert(args.end(), {"--output", f.path("missing/r.npy")});
  const auto missing = f.run(args);
  EXPECT_EQ(missing.exit_code, 6) << missing.err;
  EXPECT_TRUE(contains(missing.err, "cannot write " + f.path("missing/r.npy") + ": the directory " + f.path("missing") +
                                        " does not exist"))
      << missing.err;
  EXPECT_FALSE(std::filesystem::exists(f.path("missing")));

  std::filesystem::create_directory(f.path("sub"));
  auto onto_dir = saxpy_args();
  onto_dir.insert(onto_dir.end(), {"--output", f.path("sub"), "--format", "npy"});
  const auto is_dir = f.run(onto_dir);
  EXPECT_EQ(is_dir.exit_code, 6) << is_dir.err;
  EXPECT_TRUE(contains(is_dir.err, "it is a directory")) << is_dir.err;

  // 4,000 bytes of output under a 1,024-byte file size limit (SIGXFSZ
  // ignored, so the write fails with EFBIG instead of killing the process).
  std::filesystem::create_directory(f.path("out"));
  write_file(f.path("out/r.bin"), "old");
  write_file(f.path("in.bin"), std::string(4000, '\x07'));
  const std::string script = "ulimit -f 2; trap '' XFSZ; exec \"$0\" \"$@\"";
  const auto limited = run_process({"/bin/sh", "-c", script, VYRE_CLI_PATH, "run", f.program("u32"), "--backend",
                                    "reference", "--input", "x=@" + f.path("in.bin"), "--size", "out=1000", "--output",
                                    "out=" + f.path("out/r.bin")},
                                   f.env);
  EXPECT_EQ(limited.exit_code, 6) << limited.err;
  EXPECT_TRUE(contains(limited.err, "cannot write " + f.path("out/r.bin") + ": File too large")) << limited.err;
  EXPECT_EQ(read_file(f.path("out/r.bin")), "old");
  EXPECT_EQ(files_in(f.path("out")), std::vector<std::string>{"r.bin"});

  // Without the limit: the new file, and still no temporary one.
  const auto written = f.run({f.program("u32"), "--backend", "reference", "--input", "x=@" + f.path("in.bin"),
                              "--size", "out=1000", "--output", "out=" + f.path("out/r.bin")});
  EXPECT_EQ(written.exit_code, 0) << written.err;
  EXPECT_TRUE(read_file(f.path("out/r.bin")) == std::string(4000, '\x07'));
  EXPECT_EQ(files_in(f.path("out")), std::vector<std::string>{"r.bin"});

  // A run that fails leaves the file it would have written as it was.
  write_file(f.path("out/r.bin"), "old");
  const auto failed = f.run({f.program("u32"), "--backend", "reference", "--input", "x=1", "--size", "out=2",
                             "--check-bounds", "--output", "out=" + f.path("out/r.bin")});
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  EXPECT_TRUE(contains(failed.err, "a load of 'x' at index 1")) << failed.err;
  EXPECT_EQ(read_file(f.path("out/r.bin")), "old");
}

// The new flags are in the completions and the man page, made from the
// command tree.
TEST(CliRunFiles, CompletionsAndTheManPageKnowTheNewFlags) {
  // Each shell offers them after `vyre run`.
  const std::string bash = run_vyre({"completions", "bash"}).out;
  EXPECT_TRUE(contains(bash, "--report-json --output --format")) << bash;
  const std::string zsh = run_vyre({"completions", "zsh"}).out;
  EXPECT_TRUE(contains(zsh, "'--output' '--format'")) << zsh;
  const std::string fish = run_vyre({"completions", "fish"}).out;
  EXPECT_TRUE(contains(fish, "-n '__fish_seen_subcommand_from run' -l format")) << fish;
  const std::string page = run_vyre({"manpage"}).out;
  EXPECT_TRUE(contains(page, ".B \\-\\-format\nFormat of the \\-\\-output files")) << page;
  const std::string help = run_vyre({"run", "--help"}).out;
  EXPECT_TRUE(contains(help, "--output")) << help;
  EXPECT_TRUE(contains(help, "json, npy (NumPy's .npy), bin (raw little-endian) or csv")) << help;
}
