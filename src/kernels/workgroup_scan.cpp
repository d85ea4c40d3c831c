#include "kernels/workgroup_scan.hpp"

#include <utility>

#include "kernels/combine.hpp"
#include "util/concat.hpp"
#include "vyre/builder.hpp"

namespace vyre::lib::detail {

using namespace vyre::build;

namespace {
Expr index_in(const TotalsArray& a, Expr i) { return a.at == 0 ? i : add(std::move(i), u32(a.at)); }
}  // namespace

Expr load_total(const TotalsArray& array, Expr i) { return load(array.buffer, index_in(array, std::move(i))); }

ScannedTotals scan_totals(ScalarType type, ReduceOp op, uint32_t w, const TotalsArray& from, const TotalsArray& spare,
                          const std::string& names) {
  ScannedTotals out{{}, from};
  TotalsArray to = spare;
  for (uint32_t stride = 1; stride < w; stride *= 2) {
    const std::string t = concat(names, "s", std::to_string(stride));
    const TotalsArray& src = out.result;
    out.steps.push_back(let(t, load_total(src, var("l"))));
    out.steps.push_back(if_(ge(var("l"), u32(stride)),
                            {assign(t, combine(type, op, load_total(src, sub(var("l"), u32(stride))), var(t)))}));
    out.steps.push_back(store(to.buffer, index_in(to, var("l")), var(t)));
    out.steps.push_back(barrier());
    std::swap(out.result, to);
  }
  return out;
}

}  // namespace vyre::lib::detail
