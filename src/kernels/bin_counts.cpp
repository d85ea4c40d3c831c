#include "kernels/bin_counts.hpp"

#include "vyre/lib/bincount.hpp"

namespace vyre::lib::detail {
namespace {

using namespace vyre::build;

bool in_workgroup(uint32_t bins) { return bins <= kWorkgroupBins; }

// The workgroup's counters: every bin and the values outside them, or the
// values outside alone.
uint32_t slots(uint32_t bins) { return in_workgroup(bins) ? bins + 1 : 1; }

}  // namespace

void declare_bin_memory(ProgramBuilder& builder, uint32_t bins) {
  builder.workgroup_buffer("hist", ScalarType::U32, slots(bins));
}

std::vector<Stmt> count_into_bins(uint32_t bins, const ReduceShape& shape, const BinOf& bin_of) {
  const uint32_t w = shape.workgroup;
  const bool local = in_workgroup(bins);
  const uint32_t outside_slot = local ? bins : 0;
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("base", mul(var("g"), u32(w * shape.items))),
  };
  // Slot s = r*W + l of the workgroup's counters, for r in uniform bounds
  // (a barrier follows).
  const uint32_t rounds = (slots(bins) + w - 1) / w;
  const auto each_slot = [&](std::vector<Stmt> then) {
    return loop("r", u32(0), u32(rounds),
                {let("s", add(mul(var("r"), u32(w)), var("l"))), if_(lt(var("s"), u32(slots(bins))), std::move(then))});
  };
  body.push_back(each_slot({store("hist", var("s"), u32(0))}));
  body.push_back(barrier());
  std::vector<Stmt> count_one = bin_of();
  if (local)
    count_one.push_back(eval(atomic(AtomicOp::Add, "hist", var("b"), u32(1))));
  else
    count_one.push_back(if_(lt(var("b"), u32(bins)), {eval(atomic(AtomicOp::Add, "counts", var("b"), u32(1)))},
                            {eval(atomic(AtomicOp::Add, "hist", u32(0), u32(1)))}));
  body.push_back(loop("k", u32(0), u32(shape.items),
                      {let("i", add(var("base"), add(mul(var("k"), u32(w)), var("l")))),
                       if_(lt(var("i"), len("values")), std::move(count_one))}));
  body.push_back(barrier());
  body.push_back(each_slot(
      {let("c", load("hist", var("s"))),
       if_(gt(var("c"), u32(0)), {if_(eq(var("s"), u32(outside_slot)), {eval(atomic(AtomicOp::Add, "outside", u32(0), var("c")))},
                                      {eval(atomic(AtomicOp::Add, "counts", var("s"), var("c")))})})}));
  return body;
}

}  // namespace vyre::lib::detail
