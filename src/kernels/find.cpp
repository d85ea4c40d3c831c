#include "vyre/lib/find.hpp"

#include <algorithm>
#include <bit>
#include <deque>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "kernels/aho_corasick.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/scan_plan.hpp"
#include "kernels/shape_tuning.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/lib/scan.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;
using detail::grid_for;

constexpr uint32_t kMinChunk = 16;
constexpr uint32_t kMaxChunk = 4096;
constexpr uint32_t kMaxWorkgroup = 256;  // WebGPU's default limit of invocations a workgroup
constexpr uint32_t kByteValues = 256;

// params[0]: the longest pattern's bytes; params[1]: the byte classes.
constexpr uint32_t kParamLongest = 0;
constexpr uint32_t kParamClasses = 1;

void check(const FindShape& shape) {
  if (shape.workgroup == 0 || shape.workgroup > kMaxWorkgroup || !std::has_single_bit(shape.workgroup))
    throw Error(ErrorKind::invalid_input,
                "find: the workgroup is a power of two from 1 to 256, not " + std::to_string(shape.workgroup));
  if (shape.chunk < kMinChunk || shape.chunk > kMaxChunk)
    throw Error(ErrorKind::invalid_input,
                "find: the chunk is 16 to 4096 bytes an invocation, not " + std::to_string(shape.chunk));
}

// The invocation's number, across a grid of up to 65,535 x 65,535 workgroups.
Expr invocation(uint32_t workgroup) {
  return add(mul(add(wid(), mul(wid(Axis::Y), nwg())), u32(workgroup)), lid());
}

// Invocation `i` of `chunks` scans its window of the haystack backwards,
// from the root state: its chunk [first, end) and up to longest - 1 bytes
// past it, [end, last). After reading byte j the state names every pattern
// that occurs starting at j and ends before `last`, which is all of those
// starting in the chunk. `at_start` runs at each j in the chunk where some
// pattern starts, with `from` and `found`: its state's list's first entry
// and length. At most chunk + longest - 1 iterations: well below lavapipe's
// 65,535 (kFindMaxPatternBytes).
std::vector<Stmt> scan_window(uint32_t chunk, const std::vector<Stmt>& at_start) {
  std::vector<Stmt> on_start = {let("s", bit_and(var("state"), u32(detail::kStateBits))),
                                let("from", load("starts", var("s"))),
                                let("found", sub(load("starts", add(var("s"), u32(1))), var("from")))};
  on_start.insert(on_start.end(), at_start.begin(), at_start.end());
  return {
      let("n", len("haystack")),
      let("first", mul(var("i"), u32(chunk))),
      let("end", add(var("first"), min(u32(chunk), sub(var("n"), var("first"))))),
      let("last", add(var("end"), min(sub(var("n"), var("end")), sub(load("params", u32(kParamLongest)), u32(1))))),
      let("classes", load("params", u32(kParamClasses))),
      let("state", u32(0)),
      loop("k", u32(0), sub(var("last"), var("first")),
           {let("j", sub(sub(var("last"), u32(1)), var("k"))),
            assign("state", load("next", add(mul(bit_and(var("state"), u32(detail::kStateBits)), var("classes")),
                                             load("byte_class", load("haystack", var("j")))))),
            if_(land(ge(var("state"), u32(detail::kEndsSome)), lt(var("j"), var("end"))), std::move(on_start))}),
  };
}

ProgramBuilder& automaton_buffers(ProgramBuilder& builder) {
  return builder.input("haystack", 0, ScalarType::U8)
      .input("byte_class", 1, ScalarType::U32, kByteValues)
      .input("next", 2, ScalarType::U32)
      .input("starts", 3, ScalarType::U32)
      .input("params", 4, ScalarType::U32, 2);
}

CheckedProgram build_count(const std::string& name, const FindShape& shape) {
  std::vector<Stmt> scan = {let("events", u32(0)), let("matches", u32(0))};
  for (Stmt& s : scan_window(shape.chunk, {assign("events", add(var("events"), u32(1))),
                                           assign("matches", add(var("matches"), var("found")))}))
    scan.push_back(std::move(s));
  scan.push_back(store("counts", var("i"), var("events")));
  scan.push_back(store("counts", add(var("chunks"), var("i")), var("matches")));
  ProgramBuilder builder(name);
  builder.workgroup_size(shape.workgroup);
  automaton_buffers(builder).output("counts", 5, ScalarType::U32);
  return builder
      .body({let("i", invocation(shape.workgroup)), let("chunks", div(len("counts"), u32(2))),
             if_(lt(var("i"), var("chunks")), std::move(scan))})
      .build();
}

// Each chunk's positions and matches go to the ends of its ranges first: the
// scan meets them from the last, so the ranges fill from the back and end in
// order of position, and each position's matches in its list's order.
CheckedProgram build_write(const std::string& name, const FindShape& shape) {
  std::vector<Stmt> scan = {
      let("positions", load("offsets", var("chunks"))),  // all chunks' positions come before the matches
      let("event_end", add(load("offsets", var("i")), load("counts", var("i")))),
      let("match_end", sub(add(load("offsets", add(var("chunks"), var("i"))),
                               load("counts", add(var("chunks"), var("i")))),
                           var("positions"))),
  };
  std::vector<Stmt> window = scan_window(
      shape.chunk, {assign("event_end", sub(var("event_end"), u32(1))),
                    assign("match_end", sub(var("match_end"), var("found"))),
                    store("event_position", var("event_end"), var("j")),
                    store("event_first", var("event_end"), var("match_end")),
                    store("event_from", var("event_end"), var("from"))});
  // A chunk without matches (most, in a secret scan) is not read again.
  scan.push_back(if_(gt(load("counts", var("i")), u32(0)), std::move(window)));
  ProgramBuilder builder(name);
  builder.workgroup_size(shape.workgroup);
  automaton_buffers(builder)
      .input("counts", 5, ScalarType::U32)
      .input("offsets", 6, ScalarType::U32)
      .output("event_position", 7, ScalarType::U32)
      .output("event_first", 8, ScalarType::U32)
      .output("event_from", 9, ScalarType::U32);
  return builder
      .body({let("i", invocation(shape.workgroup)), let("chunks", div(len("counts"), u32(2))),
             if_(lt(var("i"), var("chunks")), std::move(scan))})
      .build();
}

// Match m's position: the last whose first match is at or below m, found by
// bisection (at most 32 steps; event_first[0] is 0).
CheckedProgram build_expand(const std::string& name, uint32_t workgroup) {
  std::vector<Stmt> one = {
      let("lo", u32(0)),
      let("hi", len("event_first")),
      while_(lt(add(var("lo"), u32(1)), var("hi")),
             {let("mid", add(var("lo"), shr(sub(var("hi"), var("lo")), u32(1)))),
              if_(le(load("event_first", var("mid")), var("m")), {assign("lo", var("mid"))}, {assign("hi", var("mid"))})}),
      store("pattern", var("m"),
            load("list", add(load("event_from", var("lo")), sub(var("m"), load("event_first", var("lo")))))),
      store("position", var("m"), load("event_position", var("lo"))),
  };
  return ProgramBuilder(name)
      .workgroup_size(workgroup)
      .input("event_position", 0, ScalarType::U32)
      .input("event_first", 1, ScalarType::U32)
      .input("event_from", 2, ScalarType::U32)
      .input("list", 3, ScalarType::U32)
      .output("pattern", 4, ScalarType::U32)
      .output("position", 5, ScalarType::U32)
      .body({let("m", invocation(workgroup)), if_(lt(var("m"), len("pattern")), std::move(one))})
      .build();
}

// totals[0]: the positions where a match starts; totals[1]: the matches.
CheckedProgram build_totals(const std::string& name) {
  return ProgramBuilder(name)
      .workgroup_size(1)
      .input("counts", 0, ScalarType::U32)
      .input("offsets", 1, ScalarType::U32)
      .output("totals", 2, ScalarType::U32, 2)
      .body({let("chunks", div(len("counts"), u32(2))),
             let("last", sub(len("counts"), u32(1))),
             let("positions", load("offsets", var("chunks"))),
             store("totals", u32(0), var("positions")),
             store("totals", u32(1),
                   sub(add(load("offsets", var("last")), load("counts", var("last"))), var("positions")))})
      .build();
}

std::string suffix(const FindShape& shape) {
  return "_w" + std::to_string(shape.workgroup) + "_c" + std::to_string(shape.chunk);
}

const CheckedProgram& checked_count(const FindShape& shape) {
  check(shape);
  const std::string name = "find_count" + suffix(shape);
  return detail::memo_program(name, [&] { return build_count(name, shape); });
}

const CheckedProgram& checked_write(const FindShape& shape) {
  check(shape);
  const std::string name = "find_write" + suffix(shape);
  return detail::memo_program(name, [&] { return build_write(name, shape); });
}

const CheckedProgram& checked_expand(uint32_t workgroup) {
  check({workgroup, FindShape{}.chunk});
  const std::string name = "find_expand_w" + std::to_string(workgroup);
  return detail::memo_program(name, [&] { return build_expand(name, workgroup); });
}

const CheckedProgram& checked_totals() {
  return detail::memo_program("find_totals", [] { return build_totals("find_totals"); });
}

}  // namespace

Program find_count_pass(const FindShape& shape) { return checked_count(shape).program(); }
Program find_write_pass(const FindShape& shape) { return checked_write(shape).program(); }
Program find_expand_pass(uint32_t workgroup) { return checked_expand(workgroup).program(); }

FindShape default_find_shape(const gpu::Backend& backend) {
  // Measured: the fastest candidate for a 2^28-byte haystack and 1,000
  // secret-like patterns on the H200 (128 x 64: 2.8 ms); on lavapipe the
  // candidates came within 10 % of each other for 2^22 bytes.
  if (detail::device_class(backend) == "nvidia") return {128, 64};
  return {};
}

namespace {

// The automaton of the reversed patterns (a match read backwards ends where
// it starts), after the refusals of patterns out of bounds.
detail::ByteAutomaton automaton_of(const std::vector<std::string>& patterns) {
  if (patterns.size() > kFindMaxPatterns)
    throw Error(ErrorKind::invalid_input, "find takes at most 65536 patterns, not " + std::to_string(patterns.size()) +
                                              ": split them into several calls");
  uint64_t total = 0;
  std::vector<std::string> reversed;
  reversed.reserve(patterns.size());
  for (size_t p = 0; p < patterns.size(); ++p) {
    const std::string& pattern = patterns[p];
    if (pattern.empty())
      throw Error(ErrorKind::invalid_input,
                  "find: pattern " + std::to_string(p) + " is empty; every pattern needs at least one byte");
    if (pattern.size() > kFindMaxPatternBytes)
      throw Error(ErrorKind::invalid_input, "find: pattern " + std::to_string(p) + " has " +
                                                std::to_string(pattern.size()) +
                                                " bytes; a pattern has at most 32768 (search for a prefix of it "
                                                "and compare the rest on the host)");
    total += pattern.size();
    if (total > kFindMaxTotalBytes)
      throw Error(ErrorKind::invalid_input, "find: the patterns hold more than 16777216 bytes in all: split them "
                                            "into several calls");
    reversed.emplace_back(pattern.rbegin(), pattern.rend());
  }
  const std::vector<std::string_view> views(reversed.begin(), reversed.end());
  return detail::build_byte_automaton(views, {kFindMaxTransitions, kFindMaxListEntries}, "find");
}

// The automaton on the GPU.
struct Uploaded {
  std::shared_ptr<gpu::DeviceBuffer> byte_class, next, starts, list, params;
};

Uploaded upload(gpu::Backend& backend, const detail::ByteAutomaton& a) {
  return {backend.upload(std::span<const uint32_t>(a.byte_class)), backend.upload(a.next), backend.upload(a.starts),
          backend.upload(a.list), backend.upload(std::vector<uint32_t>{a.longest, a.classes})};
}

Inputs& bind_automaton(Inputs& in, const std::shared_ptr<gpu::DeviceBuffer>& haystack, const Uploaded& u) {
  return in.device("haystack", haystack)
      .device("byte_class", u.byte_class)
      .device("next", u.next)
      .device("starts", u.starts)
      .device("params", u.params);
}

MatchBuffers no_matches(gpu::Backend& backend) {
  return {backend.upload(std::vector<uint32_t>{}), backend.upload(std::vector<uint32_t>{})};
}

// One call with one shape. The count pass, the scan of its counts and the
// totals run in one Batch, whose totals are read back to size the rest: the
// write and expand passes, in a second.
MatchBuffers find_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& haystack, const Uploaded& u,
                       const FindShape& shape) {
  check(shape);
  const uint32_t n = haystack->elements();
  const uint32_t chunks = (n - 1) / shape.chunk + 1;  // n > 0
  const Dim3 chunk_grid = grid_for(detail::groups_for(chunks, {shape.workgroup, 1}));
  gpu::Pipeline count = gpu::detail::kept_pipeline(backend, checked_count(shape));
  gpu::Pipeline write = gpu::detail::kept_pipeline(backend, checked_write(shape));
  gpu::Pipeline expand = gpu::detail::kept_pipeline(backend, checked_expand(shape.workgroup));
  gpu::Pipeline totals = gpu::detail::kept_pipeline(backend, checked_totals());

  std::deque<detail::Pass> passes;
  gpu::Batch counting(backend);
  detail::ScanPlan offsets_plan(backend, counting, passes, ScalarType::U32, ReduceOp::Sum, ScanKind::Exclusive,
                                default_scan_shape(backend, ScalarType::U32));
  detail::Pass& counted = passes.emplace_back();
  bind_automaton(counted.inputs, haystack, u).size("counts", 2 * chunks);
  counted.outputs = counting.dispatch_resident(count, counted.inputs, chunk_grid);
  const std::shared_ptr<gpu::DeviceBuffer> counts = counted.outputs.get("counts");
  const std::shared_ptr<gpu::DeviceBuffer> offsets = offsets_plan.record(counts);
  detail::Pass& summed = passes.emplace_back();
  summed.inputs.device("counts", counts).device("offsets", offsets);
  summed.outputs = counting.dispatch_resident(totals, summed.inputs, Dim3{1, 1, 1});
  counting.run();
  const std::vector<uint32_t> found = summed.outputs.get("totals")->read_as<uint32_t>();
  const uint32_t positions = found.at(0);
  const uint32_t matches = found.at(1);
  if (matches == 0) return no_matches(backend);

  gpu::Batch writing(backend);
  detail::Pass& written = passes.emplace_back();
  bind_automaton(written.inputs, haystack, u)
      .device("counts", counts)
      .device("offsets", offsets)
      .size("event_position", positions)
      .size("event_first", positions)
      .size("event_from", positions);
  written.outputs = writing.dispatch_resident(write, written.inputs, chunk_grid);
  detail::Pass& expanded = passes.emplace_back();
  expanded.inputs.device("event_position", written.outputs.get("event_position"))
      .device("event_first", written.outputs.get("event_first"))
      .device("event_from", written.outputs.get("event_from"))
      .device("list", u.list)
      .size("pattern", matches)
      .size("position", matches);
  expanded.outputs = writing.dispatch_resident(
      expand, expanded.inputs, grid_for(detail::groups_for(matches, {shape.workgroup, 1})));
  writing.run();
  return {expanded.outputs.get("pattern"), expanded.outputs.get("position")};
}

detail::ShapeValues find_values_of(const FindShape& s) { return {{"workgroup", s.workgroup}, {"chunk", s.chunk}}; }
FindShape find_shape_of(const detail::ShapeValues& v) { return {v.at(0).second, v.at(1).second}; }

detail::TunableFamily family_of(const gpu::Backend& backend, uint64_t bytes) {
  detail::TunableFamily family{"find", detail::size_class_of(bytes), {}, find_values_of(default_find_shape(backend))};
  for (uint32_t w : {32u, 64u, 128u, 256u})
    for (uint32_t chunk : {16u, 32u, 64u, 128u, 256u, 512u, 1024u}) family.candidates.push_back(find_values_of({w, chunk}));
  return family;
}

}  // namespace

MatchBuffers find(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& haystack,
                  const std::vector<std::string>& patterns, const std::optional<FindShape>& shape,
                  const Options& options) {
  if (!haystack) throw Error(ErrorKind::invalid_input, "find: the haystack buffer is null");
  if (haystack->type() != ScalarType::U8)
    throw Error(ErrorKind::invalid_input, "find searches a u8 buffer of bytes, not " +
                                              std::string(vyre::to_string(haystack->type())) +
                                              ": upload the haystack as ScalarType::U8");
  if (shape) check(*shape);
  const detail::ByteAutomaton automaton = automaton_of(patterns);
  const uint64_t n = haystack->elements();
  // Each position where a match starts, and each match, is counted in u32:
  // both together must not wrap.
  const uint64_t most = automaton.most_per_state;
  if (n * (most + 1) > UINT32_MAX)
    throw Error(ErrorKind::invalid_input,
                "find: a haystack of " + std::to_string(n) + " bytes could hold more than 2^32 - 1 matches of these "
                "patterns (up to " + std::to_string(most) + " at one position): search pieces of at most " +
                std::to_string(UINT32_MAX / (most + 1)) + " bytes, overlapping by the longest pattern's length less one");
  if (n == 0 || patterns.empty()) return no_matches(backend);
  const Uploaded u = upload(backend, automaton);
  const FindShape chosen = detail::choose<FindShape>(
      backend, shape, family_of(backend, n), options, find_values_of, find_shape_of,
      [&](const FindShape& s) { (void)find_with(backend, haystack, u, s); });
  return find_with(backend, haystack, u, chosen);
}

Matches find(gpu::Backend& backend, std::span<const uint8_t> haystack, const std::vector<std::string>& patterns,
             const std::optional<FindShape>& shape, const Options& options) {
  if (shape) check(*shape);
  if (haystack.size() > UINT32_MAX)
    throw Error(ErrorKind::limit_exceeded,
                "find takes a haystack of at most 4294967295 bytes, not " + std::to_string(haystack.size()));
  if (haystack.empty()) {
    (void)automaton_of(patterns);  // refuses what a search would
    return {};
  }
  const MatchBuffers found = find(backend, backend.upload(haystack, ScalarType::U8), patterns, shape, options);
  if (found.pattern->elements() == 0) return {};
  return {found.pattern->read_as<uint32_t>(), found.position->read_as<uint32_t>()};
}

}  // namespace vyre::lib
