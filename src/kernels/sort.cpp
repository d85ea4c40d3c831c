#include "vyre/lib/sort.hpp"

#include <bit>
#include <deque>
#include <functional>
#include <string>

#include "gpu/kept_pipeline.hpp"
#include "gpu/unfilled_buffer.hpp"
#include "kernels/passes.hpp"
#include "kernels/program_memo.hpp"
#include "kernels/scan_plan.hpp"
#include "kernels/shape_tuning.hpp"
#include "kernels/workgroup_scan.hpp"
#include "util/concat.hpp"
#include "vyre/builder.hpp"
#include "vyre/error.hpp"

namespace vyre::lib {
namespace {

using namespace vyre::build;
using detail::grid_for;

constexpr uint32_t kKeyBits = 32;
constexpr uint32_t kDefaultRadixBits = 4;

uint32_t digits_of(const SortShape& shape) { return 1u << shape.radix_bits; }

bool is_key_type(ScalarType t) {
  switch (t) {
    case ScalarType::U32:
    case ScalarType::I32:
    case ScalarType::F32:
    case ScalarType::U8:
    case ScalarType::I8:
    case ScalarType::U16:
    case ScalarType::I16:
    case ScalarType::F16: return true;
    default: return false;
  }
}

// WebGPU's default maxComputeWorkgroupStorageSize, in 4-byte words.
constexpr uint64_t kWorkgroupWords = 16384 / 4;

// The digit table's entry t = p*W + c (counter word p of invocation c). The
// scatter reads the table both as table[p*W + l] (neighbouring invocations
// at neighbouring words, each at its own p) and as invocation l's run of P
// words (l*P + j). Where W >= 8P (64 and 128 invocations at 4 and 8 bits),
// in rows of W + 32 words, c's word at p*(W + 32) + c + c/32: W + 32 is a
// multiple of the 32 banks, so no p moves an invocation to another bank,
// and c/32 spreads the runs over 16 banks or more. Elsewhere (a run of P
// words would put W/P invocations on one bank) with a word of padding after
// every 16: runs on 16 banks or more, but neighbouring invocations at
// different p may meet on one.
bool in_rows(uint32_t w, uint32_t pairs) { return w >= 8 * pairs; }
Expr slot(const Expr& t, uint32_t w, uint32_t pairs) {
  if (!in_rows(w, pairs)) return add(t, shr(t, u32(4)));
  const uint32_t log2_w = static_cast<uint32_t>(std::countr_zero(w));
  return add(add(t, shl(shr(t, u32(log2_w)), u32(5))), shr(bit_and(t, u32(w - 1)), u32(5)));
}
// The table of one word a digit, padded by a word after every 16: the size
// the workgroup's limits at each radix (and the rule of orders_locally) were
// set by, before the table was packed and laid out in rows.
uint64_t table_size(uint32_t w, uint32_t digits) { return uint64_t{digits} * w + uint64_t{digits} * w / 16; }
// The packed table's words: P rows of W + 32, or P words an invocation
// padded as table_size pads.
uint64_t table_words(uint32_t w, uint32_t pairs) { return in_rows(w, pairs) ? uint64_t{pairs} * (w + 32) : table_size(w, pairs); }

bool is_word_type(ScalarType t) { return t == ScalarType::U32 || t == ScalarType::I32 || t == ScalarType::F32; }

// The 8-bit passes' span, ordered in workgroup memory with one word of
// padding after every 32, so that invocation l's run of I consecutive
// places (l*I + k) falls on 32 different banks.
Expr padded(const Expr& p) { return add(p, shr(p, u32(5))); }
uint64_t padded_size(uint64_t span) { return span + span / 32; }

// Workgroup memory of the 8-bit scatter: a 4-bit digit table, "sums",
// "bases" (256) and the span (with its values).
uint64_t two_step_words(const SortShape& shape, bool with_values) {
  const uint64_t span = uint64_t{shape.workgroup} * shape.items;
  return table_words(shape.workgroup, 8) + 2 * uint64_t{shape.workgroup} + 256 + padded_size(span) * (with_values ? 2 : 1);
}

void check(ScalarType key_type, const SortShape& shape, std::optional<ScalarType> value_type = std::nullopt) {
  if (!is_key_type(key_type))
    throw Error(ErrorKind::invalid_input, "sort takes u32, i32, f32, f16, u8, i8, u16 or i16 keys, not " +
                                              std::string(vyre::to_string(key_type)));
  if (shape.workgroup < 16 || shape.workgroup > 128 || !std::has_single_bit(shape.workgroup))
    throw Error(ErrorKind::invalid_input, "sort: the workgroup is a power of two from 16 to 128 (its digit table "
                                          "must fit 16 KiB of workgroup memory), not " +
                                              std::to_string(shape.workgroup));
  if (shape.items == 0 || shape.items > 64)
    throw Error(ErrorKind::invalid_input, "sort: items is 1 to 64, not " + std::to_string(shape.items));
  if ((shape.radix_bits < 4 || shape.radix_bits > 6) && shape.radix_bits != 8)
    throw Error(ErrorKind::invalid_input, "sort: radix_bits is 4, 5, 6 or 8, not " + std::to_string(shape.radix_bits));
  if (shape.radix_bits == 8) {
    // The span is sorted whole in workgroup memory (build_two_step_scatter).
    if (!is_word_type(key_type) || (value_type && !is_word_type(*value_type)))
      throw Error(ErrorKind::invalid_input, "sort: 8-bit digits take 32-bit keys and values (u32, i32, f32), not " +
                                                std::string(vyre::to_string(value_type && is_word_type(key_type)
                                                                                ? *value_type
                                                                                : key_type)) +
                                                "; narrower ones take 4 to 6");
    const uint64_t words = two_step_words(shape, value_type.has_value());
    if (words > kWorkgroupWords)
      throw Error(ErrorKind::invalid_input,
                  "sort: with 8-bit digits a workgroup's span of " + std::to_string(shape.workgroup) + " x " +
                      std::to_string(shape.items) + (value_type ? " keys and values" : " keys") +
                      " must fit 16 KiB of workgroup memory beside its tables, and needs " + std::to_string(words * 4) +
                      " bytes: at most " + (value_type ? "1,024" : "2,048") + " keys a workgroup");
    return;
  }
  if (table_size(shape.workgroup, digits_of(shape)) > kWorkgroupWords)
    throw Error(ErrorKind::invalid_input,
                "sort: a workgroup of " + std::to_string(shape.workgroup) + " with " +
                    std::to_string(shape.radix_bits) + "-bit digits needs a digit table larger than 16 KiB of "
                    "workgroup memory: at " + std::to_string(shape.radix_bits) + " bits the workgroup is at most " +
                    std::to_string(128u >> (shape.radix_bits - 4)));
}

ReduceShape span_of(const SortShape& shape) { return {shape.workgroup, shape.items}; }

// The key's digits that the passes sort by: [first, end) in steps of 4 bits.
// Narrow keys have 8 or 16 bits; an f16 key, widened exactly to f32, has
// zeros (ones once flipped) in its f32's 13 lowest bits, the same in every
// key of one sign, so those passes would change nothing.
struct KeyBits {
  uint32_t first = 0;
  uint32_t end = kKeyBits;
};
KeyBits key_bits(ScalarType key_type) {
  switch (key_type) {
    case ScalarType::U8:
    case ScalarType::I8: return {0, 8};
    case ScalarType::U16:
    case ScalarType::I16: return {0, 16};
    case ScalarType::F16: return {12, kKeyBits};
    default: return {};
  }
}

// The key as a u32 whose unsigned order (in its key_bits) is the sort's
// order: u8 and u16 as loaded; i32 with its sign bit flipped, i8 and i16
// with theirs (in their 8 or 16 bits); f32, and f16 widened to it, with
// every bit flipped when negative and the sign bit set when not, and every
// NaN the largest of all; all of it flipped again for a descending sort.
Expr ordered_bits(ScalarType key_type, SortOrder order, Expr key) {
  if (key_type == ScalarType::F16) {
    key = cast(ScalarType::F32, std::move(key));
    key_type = ScalarType::F32;
  }
  const ScalarType loaded = value_type(key_type);
  Expr bits = loaded == ScalarType::U32 ? std::move(key) : bitcast(ScalarType::U32, std::move(key));
  if (key_type == ScalarType::I32) bits = bit_xor(std::move(bits), u32(0x80000000u));
  if (key_type == ScalarType::I8) bits = bit_and(bit_xor(std::move(bits), u32(0x80u)), u32(0xffu));
  if (key_type == ScalarType::I16) bits = bit_and(bit_xor(std::move(bits), u32(0x8000u)), u32(0xffffu));
  if (key_type == ScalarType::F32) {
    Expr flipped = select(eq(shr(bits, u32(31)), u32(1)), bit_not(bits), bit_or(bits, u32(0x80000000u)));
    bits = select(gt(bit_and(bits, u32(0x7fffffffu)), u32(0x7f800000u)), u32(0xffffffffu), std::move(flipped));
  }
  return order == SortOrder::Descending ? bit_not(std::move(bits)) : bits;
}

// The digit of `bits` bits at bit `shift + above` of the key's ordered bits
// (shifted twice: shift + above may reach 32, past which WGSL's shift wraps).
Expr digit_of(ScalarType key_type, SortOrder order, uint32_t bits, Expr key, uint32_t above = 0) {
  Expr shifted = shr(ordered_bits(key_type, order, std::move(key)), load("shift", u32(0)));
  if (above != 0) shifted = shr(std::move(shifted), u32(above));
  return bit_and(std::move(shifted), u32((1u << bits) - 1));
}

// table[p*W + l]: invocation l's counter word p.
Expr cell(Expr word, uint32_t w, uint32_t pairs) { return slot(add(mul(std::move(word), u32(w)), var("l")), w, pairs); }

std::vector<Stmt> zero_table(uint32_t w, uint32_t pairs) {
  return {loop("d", u32(0), u32(pairs), {store("table", cell(var("d"), w, pairs), u32(0))})};
}

// `per_digit(d)` for each digit d, spread over the invocations: invocation
// l takes digit l where there are no more digits than invocations, else
// digits l, l + W, l + 2W, ...; all of it only where `also` holds.
Stmt for_each_digit(uint32_t w, uint32_t digits, const std::optional<Expr>& also,
                    const std::function<std::vector<Stmt>(const Expr&)>& per_digit) {
  if (digits <= w) {
    Expr mine = lt(var("l"), u32(digits));
    return if_(also ? land(std::move(mine), *also) : std::move(mine), per_digit(var("l")));
  }
  Stmt spread = loop("r", u32(0), u32(digits / w), per_digit(add(mul(var("r"), u32(w)), var("l"))));
  return also ? if_(*also, {std::move(spread)}) : std::move(spread);
}

// The workgroup's offset of each digit (offsets[d*groups + g]) in registers,
// as for_each_digit spreads the digits: "offset<r>" is digit r*W + l's
// (digit l's where there are no more digits than invocations); indices
// clamped into the buffer, the values used only where for_each_digit's are.
std::vector<Stmt> load_offsets(uint32_t w, uint32_t digits) {
  std::vector<Stmt> out = {let("offsets_last", sub(len("offsets"), u32(1)))};
  for (uint32_t r = 0; r < std::max(1u, digits / w); ++r)
    out.push_back(let(numbered("offset", r),
                      load("offsets", min(add(mul(add(u32(r * w), var("l")), var("groups")), var("g")), var("offsets_last")))));
  return out;
}

// Each digit's base (its offset, "offset<r>" of load_offsets, less
// `start(d)`, where its keys start in the span) stored in "bases".
Stmt store_bases(uint32_t w, uint32_t digits, const std::function<Expr(const Expr&)>& start) {
  const Expr in_grid = lt(var("g"), var("groups"));
  if (digits <= w)
    return if_(land(lt(var("l"), u32(digits)), in_grid), {store("bases", var("l"), sub(var("offset0"), start(var("l"))))});
  std::vector<Stmt> each;
  for (uint32_t r = 0; r < digits / w; ++r) {
    const Expr d = add(u32(r * w), var("l"));
    each.push_back(store("bases", d, sub(var(numbered("offset", r)), start(d))));
  }
  return if_(in_grid, std::move(each));
}

// Loads an invocation's keys `from + k*step`, k = 0 .. I-1, as "key<k>", and
// their digits as "digit<k>", unrolled: every index clamped into the keys
// (no branch between the loads, so all I are in flight at once; the caller
// ignores those past the end). In a loop, each load waited for the one
// before it.
std::vector<Stmt> load_keys(ScalarType key_type, SortOrder order, uint32_t bits, uint32_t items, const Expr& from,
                            uint32_t step) {
  std::vector<Stmt> out = {let("last", sub(len("keys"), u32(1)))};
  for (uint32_t k = 0; k < items; ++k)
    out.push_back(let(numbered("key", k), load("keys", min(add(from, u32(k * step)), var("last")))));
  for (uint32_t k = 0; k < items; ++k)
    out.push_back(let(numbered("digit", k), digit_of(key_type, order, bits, var(numbered("key", k)))));
  return out;
}

// The 4-bit programs keep the names they had before the radix was a
// parameter.
std::string suffix(ScalarType key_type, SortOrder order, const SortShape& shape) {
  std::string name = std::string(vyre::to_string(key_type)) + (order == SortOrder::Ascending ? "_asc" : "_desc") +
                     "_w" + std::to_string(shape.workgroup) + "_i" + std::to_string(shape.items);
  if (shape.radix_bits != kDefaultRadixBits) name.append("_r").append(std::to_string(shape.radix_bits));
  return name;
}

// The count pass's copies of each digit's counter: invocation l adds to
// copy l mod C, so that a warp's keys of one digit meet on fewer words.
// Counter (d, c) is at c*D + d, so that the invocations that add digit d's
// copies read neighbouring words. On the H100, 2 copies counted 8-bit
// digits 1.76x faster than 8 digit-major (d*8 + c, which put the adding
// invocations 8 words apart, on 4 banks), as fast as 1 copy and 9 % faster
// than 4 (docs/benchmarks.md, "Standard kernels").
constexpr uint32_t kCountCopies = 2;

// The count pass: each workgroup's count of each digit among its span's keys,
// by atomic additions to counters in workgroup memory (the order of counting
// does not matter here, as it does in the scatter pass).
CheckedProgram build_count(const std::string& name, ScalarType key_type, SortOrder order, const SortShape& shape) {
  const uint32_t w = shape.workgroup;
  const uint32_t digits = digits_of(shape);
  const uint32_t counters = digits * kCountCopies;
  const auto counter = [&](const Expr& d, const Expr& c) { return add(mul(c, u32(digits)), d); };
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("groups", div(len("counts"), u32(digits))),
      let("base", mul(var("g"), u32(w * shape.items))),
      let("copy", bit_and(var("l"), u32(kCountCopies - 1))),
  };
  // The counters zeroed, W at a time.
  if (counters >= w)
    body.push_back(loop("r", u32(0), u32(counters / w), {store("hist", add(mul(var("r"), u32(w)), var("l")), u32(0))}));
  else
    body.push_back(if_(lt(var("l"), u32(counters)), {store("hist", var("l"), u32(0))}));
  // Neighbouring invocations read neighbouring keys (k*W + l).
  for (Stmt& s : load_keys(key_type, order, shape.radix_bits, shape.items, add(var("base"), var("l")), w))
    body.push_back(std::move(s));
  body.push_back(barrier());
  for (uint32_t k = 0; k < shape.items; ++k)
    body.push_back(if_(lt(add(var("base"), add(var("l"), u32(k * w))), len("keys")),
                       {eval(atomic(AtomicOp::Add, "hist", counter(var(numbered("digit", k)), var("copy")), u32(1)))}));
  body.push_back(barrier());
  body.push_back(for_each_digit(w, digits, lt(var("g"), var("groups")), [&](const Expr& d) -> std::vector<Stmt> {
    Expr total = load("hist", counter(d, u32(0)));
    for (uint32_t c = 1; c < kCountCopies; ++c) total = add(std::move(total), load("hist", counter(d, u32(c))));
    return {store("counts", add(mul(d, var("groups")), var("g")), std::move(total))};
  }));
  return ProgramBuilder(name)
      .workgroup_size(w)
      .input("keys", 0, key_type)
      .input("shift", 1, ScalarType::U32)
      .output("counts", 2, ScalarType::U32)
      .workgroup_buffer("hist", ScalarType::U32, counters)
      .body(std::move(body))
      .build();
}

// Whether the scatter pass orders its span in workgroup memory before it
// writes (see build_scatter): 32-bit keys and values, and room for the span
// beside a digit table of one word a digit (the rule the shapes were
// measured with; the table now takes half that, so the span always fits).
// The 8-bit passes always do.
bool orders_locally(ScalarType key_type, std::optional<ScalarType> value_type, const SortShape& shape) {
  if (!is_word_type(key_type) || (value_type && !is_word_type(*value_type))) return false;
  if (shape.radix_bits == 8) return true;
  const uint64_t span = uint64_t{shape.workgroup} * shape.items;
  const uint32_t digits = digits_of(shape);
  const uint64_t words = table_size(shape.workgroup, digits) + shape.workgroup + digits + span * (value_type ? 2 : 1);
  return words <= kWorkgroupWords;
}

// A stable ranking of the invocation's `items` consecutive keys in the span
// by their digits `digit<k>` (`bits` bits each), with the digit table. The
// table holds two digits' counters a word, 16 bits each: digit d's at pair
// d mod D/2, in the low half for the lower D/2 digits and the high half for
// the others. A span has at most 8,192 keys, so no count or sum of counts
// below reaches the high half. Half the words of one counter a digit: half
// the zeroing, the scan's loads and stores.
//
// The statements count the digits, then scan the whole table in pair-major
// order: invocation l scans words [Pl, Pl + P) in turn (P pairs), the
// invocations' totals are scanned in log2 W steps (from one half of "sums"
// to the other in turn, one barrier a step), and each adds the total before
// it. Then either half of table[p*W + l] counts the span's keys of its
// half's lower digits, and those of its digit held by invocations before
// l; `place` then gives each key its place. Every name the statements
// declare starts with `names`, so that a program can rank twice.
class SpanRanking {
 public:
  SpanRanking(std::string names, std::string digit, uint32_t w, uint32_t items, uint32_t bits)
      : n_(std::move(names)), digit_(std::move(digit)), w_(w), items_(items), pairs_((1u << bits) / 2), high_bit_(bits - 1) {}

  // Appends the counting and the scan to `body`; `inside(k)` says whether
  // key k is one of the span's.
  void count_and_scan(std::vector<Stmt>& body, const std::function<Expr(uint32_t)>& inside) const {
    for (Stmt& s : zero_table(w_, pairs_)) body.push_back(std::move(s));
    for (uint32_t k = 0; k < items_; ++k) {
      const Expr d = digit(k);
      body.push_back(let(name("c", k), cell(bit_and(d, u32(pairs_ - 1)), w_, pairs_)));  // its counter's word
      body.push_back(let(name("h", k), mul(shr(d, u32(high_bit_)), u32(16))));   // and half: 0 or 16
    }
    for (uint32_t k = 0; k < items_; ++k) {
      const Expr c = var(name("c", k));
      body.push_back(if_(inside(k), {store("table", c, add(load("table", c), shl(u32(1), var(name("h", k)))))}));
    }
    body.push_back(barrier());
    const std::string acc = n_ + "acc";
    body.push_back(let(acc, u32(0)));
    body.push_back(loop("j", u32(0), u32(pairs_),
                        {let("t", slot(add(mul(var("l"), u32(pairs_)), var("j")), w_, pairs_)),
                         let("x", load("table", var("t"))),
                         store("table", var("t"), var(acc)),
                         assign(acc, add(var(acc), var("x")))}));
    body.push_back(store("sums", var("l"), var(acc)));
    body.push_back(barrier());
    const detail::ScannedTotals totals =
        detail::scan_totals(ScalarType::U32, ReduceOp::Sum, w_, {"sums", 0}, {"sums", w_}, n_);
    for (const Stmt& s : totals.steps) body.push_back(s);
    // The span's keys of the lower D/2 digits: where the upper digits start.
    body.push_back(let(n_ + "low_total", bit_and(detail::load_total(totals.result, u32(w_ - 1)), u32(0xffff))));
    const std::string before = n_ + "before";
    body.push_back(let(before, u32(0)));
    body.push_back(if_(gt(var("l"), u32(0)), {assign(before, detail::load_total(totals.result, sub(var("l"), u32(1))))}));
    body.push_back(loop("j", u32(0), u32(pairs_),
                        {let("t", slot(add(mul(var("l"), u32(pairs_)), var("j")), w_, pairs_)),
                         store("table", var("t"), add(load("table", var("t")), var(before)))}));
    body.push_back(barrier());
  }

  // A place in the span from a counter's word v: its half, and the lower
  // digits' keys where digit d is an upper one.
  Expr place_in_span(const Expr& v, const Expr& half, const Expr& d) const {
    return add(bit_and(shr(v, half), u32(0xffff)), mul(shr(d, u32(high_bit_)), var(n_ + "low_total")));
  }

  // Where digit d's keys start in the span (before any `place`).
  Expr start_of(const Expr& d) const {
    return place_in_span(load("table", slot(mul(bit_and(d, u32(pairs_ - 1)), u32(w_)), w_, pairs_)), mul(shr(d, u32(high_bit_)), u32(16)),
                         d);
  }

  // Key k's place, declared as `place<k>`, and its counter counted on; in
  // k's order, so that equal digits keep the keys' order.
  std::vector<Stmt> place(uint32_t k) const {
    const Expr c = var(name("c", k)), h = var(name("h", k));
    return {let(name("v", k), load("table", c)),
            let(name("place", k), place_in_span(var(name("v", k)), h, digit(k))),
            store("table", c, add(var(name("v", k)), shl(u32(1), h)))};
  }
  Expr place_of(uint32_t k) const { return var(name("place", k)); }
  Expr digit(uint32_t k) const { return var(numbered(digit_, k)); }

 private:
  std::string name(const char* what, uint32_t k) const { return numbered(n_ + what, k); }

  std::string n_, digit_;
  uint32_t w_, items_, pairs_, high_bit_;
};

// A scatter program's buffers: its bindings, the digit table (`pairs`
// words an invocation), the totals' two arrays and each digit's base.
ProgramBuilder scatter_builder(const std::string& name, ScalarType key_type, std::optional<ScalarType> value_type,
                               uint32_t w, uint32_t pairs, uint32_t digits) {
  ProgramBuilder builder(name);
  builder.workgroup_size(w)
      .input("keys", 0, key_type)
      .input("shift", 1, ScalarType::U32)
      .input("offsets", 2, ScalarType::U32)
      .output("keys_out", 3, key_type)
      .workgroup_buffer("table", ScalarType::U32, static_cast<uint32_t>(table_words(w, pairs)))
      .workgroup_buffer("sums", ScalarType::U32, 2 * w)
      .workgroup_buffer("bases", ScalarType::U32, digits);
  if (value_type) builder.input("values", 4, *value_type).output("values_out", 5, *value_type);
  return builder;
}

// The 4- to 6-bit scatter: one ranking, then each key straight to its place
// or, where the span fits, through workgroup memory in digit order.
CheckedProgram build_scatter(const std::string& name, ScalarType key_type, std::optional<ScalarType> value_type,
                             SortOrder order, const SortShape& shape) {
  const bool with_values = value_type.has_value();
  const bool local = orders_locally(key_type, value_type, shape);
  const uint32_t w = shape.workgroup;
  const uint32_t items = shape.items;
  const uint32_t digits = digits_of(shape);
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("groups", div(len("offsets"), u32(digits))),
      // Invocation l takes keys [first, first + items): consecutive keys, so
      // that equal keys keep their order.
      let("base", mul(var("g"), u32(w * items))),
      let("first", add(var("base"), mul(var("l"), u32(items)))),
  };
  // The invocation's keys stay in registers from here to their stores.
  for (Stmt& s : load_keys(key_type, order, shape.radix_bits, items, var("first"), 1)) body.push_back(std::move(s));
  // Each digit's offset loaded with the keys, its wait behind theirs and
  // the ranking's (on the H100, 2.3 % off a sort of pairs at 64 x 8).
  for (Stmt& s : load_offsets(w, digits)) body.push_back(std::move(s));
  const auto inside = [](uint32_t k) { return lt(add(var("first"), u32(k)), len("keys")); };
  const SpanRanking ranking("", "digit", w, items, shape.radix_bits);
  ranking.count_and_scan(body, inside);
  // Where each digit's keys go, less where they start in the span (kept
  // before the table's cells become running counts): a key's place in the
  // output is its digit's base plus its place in the span.
  body.push_back(store_bases(w, digits, [&](const Expr& d) { return ranking.start_of(d); }));
  body.push_back(barrier());
  if (!local) {
    // Each key straight to its place: neighbouring invocations write to
    // places far apart (one run of each digit per invocation).
    for (uint32_t k = 0; k < items; ++k) {
      const Expr d = ranking.digit(k);
      std::vector<Stmt> place = ranking.place(k);
      const std::string at = numbered("at", k);
      place.push_back(let(at, add(load("bases", d), ranking.place_of(k))));
      place.push_back(store("keys_out", var(at), var(numbered("key", k))));
      if (with_values) place.push_back(store("values_out", var(at), load("values", add(var("first"), u32(k)))));
      body.push_back(if_(inside(k), std::move(place)));
    }
  } else {
    // The span ordered by digit in workgroup memory first (each key at its
    // place in the span, stable), then written out with neighbouring
    // invocations at neighbouring places: each digit's keys of the span are
    // one run of the output, written whole, where the keys straight to
    // their places make one run per invocation and digit.
    for (uint32_t k = 0; k < items; ++k) {
      std::vector<Stmt> place = ranking.place(k);
      place.push_back(store("ordered_keys", ranking.place_of(k), var(numbered("key", k))));
      if (with_values)
        place.push_back(store("ordered_values", ranking.place_of(k), load("values", add(var("first"), u32(k)))));
      body.push_back(if_(inside(k), std::move(place)));
    }
    body.push_back(barrier());
    std::vector<Stmt> write = {
        let("key", load("ordered_keys", var("t"))),
        let("d", digit_of(key_type, order, shape.radix_bits, var("key"))),
        let("at", add(load("bases", var("d")), var("t"))),
        store("keys_out", var("at"), var("key")),
    };
    if (with_values) write.push_back(store("values_out", var("at"), load("ordered_values", var("t"))));
    body.push_back(loop("k", u32(0), u32(items),
                        {let("t", add(mul(var("k"), u32(w)), var("l"))),
                         if_(lt(add(var("base"), var("t")), len("keys")), std::move(write))}));
  }
  ProgramBuilder builder = scatter_builder(name, key_type, value_type, w, digits / 2, digits);
  if (local) {
    builder.workgroup_buffer("ordered_keys", key_type, w * items);
    if (with_values) builder.workgroup_buffer("ordered_values", *value_type, w * items);
  }
  return builder.body(std::move(body)).build();
}

// The 8-bit scatter: the span sorted by its 8-bit digit in workgroup memory
// in two stable 4-bit rankings (the low half of the digit, then, from the
// places the first gave, the high half), then written out in digit order
// as the 4-bit local form does. Half the passes over the keys of the 4-bit
// digits, for twice the ranking within the workgroup.
CheckedProgram build_two_step_scatter(const std::string& name, ScalarType key_type, std::optional<ScalarType> value_type,
                                      SortOrder order, const SortShape& shape) {
  const bool with_values = value_type.has_value();
  const uint32_t w = shape.workgroup;
  const uint32_t items = shape.items;
  std::vector<Stmt> body = {
      let("l", lid()),
      let("g", add(wid(), mul(wid(Axis::Y), nwg()))),
      let("groups", div(len("offsets"), u32(256))),
      let("base", mul(var("g"), u32(w * items))),
      let("first", add(var("base"), mul(var("l"), u32(items)))),
  };
  // Key k of either ranking is the invocation's k-th of its run of `items`
  // consecutive places; one of the span's where first + k is a key's index.
  const auto inside = [](uint32_t k) { return lt(add(var("first"), u32(k)), len("keys")); };
  const auto run_place = [&](uint32_t k) { return padded(add(mul(var("l"), u32(items)), u32(k))); };
  // The first ranking, by the digit's low 4 bits, of the keys as loaded.
  for (Stmt& s : load_keys(key_type, order, 4, items, var("first"), 1)) body.push_back(std::move(s));
  if (with_values)
    for (uint32_t k = 0; k < items; ++k)
      body.push_back(let(numbered("value", k), load("values", min(add(var("first"), u32(k)), var("last")))));
  // Each digit's offset loaded with the keys (on the H100, 5 % off a sort
  // at 128 x 16 x 8).
  for (Stmt& s : load_offsets(w, 256)) body.push_back(std::move(s));
  // A ranking, then each key (and value) stored at its place in the span.
  const auto rank_into_span = [&](const SpanRanking& ranking, const char* key, const char* value) {
    ranking.count_and_scan(body, inside);
    for (uint32_t k = 0; k < items; ++k) {
      std::vector<Stmt> place = ranking.place(k);
      place.push_back(store("ordered_keys", padded(ranking.place_of(k)), var(numbered(key, k))));
      if (with_values) place.push_back(store("ordered_values", padded(ranking.place_of(k)), var(numbered(value, k))));
      body.push_back(if_(inside(k), std::move(place)));
    }
    body.push_back(barrier());
  };
  rank_into_span(SpanRanking("low_", "digit", w, items, 4), "key", "value");
  // The second, by the high 4 bits, of the keys in the first's order: each
  // invocation again takes a run of consecutive places, so the ranking
  // keeps the first's order among equal high bits.
  for (uint32_t k = 0; k < items; ++k) {
    body.push_back(let(numbered("hkey", k), load("ordered_keys", run_place(k))));
    body.push_back(let(numbered("hdigit", k), digit_of(key_type, order, 4, var(numbered("hkey", k)), 4)));
    if (with_values) body.push_back(let(numbered("hvalue", k), load("ordered_values", run_place(k))));
  }
  // (The ranking's barriers: every load above is done before its stores.)
  rank_into_span(SpanRanking("high_", "hdigit", w, items, 4), "hkey", "hvalue");
  // The span is in digit order. Where each digit starts: at a place whose
  // key's digit differs from the one before it (digits the span lacks are
  // never looked up).
  const auto in_span = [](const Expr& t) { return lt(add(var("base"), t), len("keys")); };
  for (uint32_t k = 0; k < items; ++k) {
    const std::string t = numbered("t", k), key = numbered("okey", k), d = numbered("odigit", k);
    body.push_back(let(t, add(u32(k * w), var("l"))));
    body.push_back(let(key, load("ordered_keys", padded(var(t)))));
    body.push_back(let(d, digit_of(key_type, order, 8, var(key))));
    // (Invocation 0's first place compares with itself, and starts anyway.)
    const Expr before = k == 0 ? sub(max(var(t), u32(1)), u32(1)) : sub(var(t), u32(1));
    Expr starts_here = ne(var(d), digit_of(key_type, order, 8, load("ordered_keys", padded(before))));
    if (k == 0) starts_here = lor(eq(var("l"), u32(0)), std::move(starts_here));
    body.push_back(if_(land(in_span(var(t)), std::move(starts_here)), {store("bases", var(d), var(t))}));
  }
  body.push_back(barrier());
  // Each digit's base: where its keys go, less where they start in the span.
  body.push_back(store_bases(w, 256, [](const Expr& d) { return load("bases", d); }));
  body.push_back(barrier());
  for (uint32_t k = 0; k < items; ++k) {
    const Expr t = var(numbered("t", k)), d = var(numbered("odigit", k));
    const std::string at = numbered("at", k);
    std::vector<Stmt> write = {
        let(at, add(load("bases", d), t)),
        store("keys_out", var(at), var(numbered("okey", k))),
    };
    if (with_values) write.push_back(store("values_out", var(at), load("ordered_values", padded(t))));
    body.push_back(if_(in_span(t), std::move(write)));
  }
  const uint32_t span = w * items;
  ProgramBuilder builder = scatter_builder(name, key_type, value_type, w, 8, 256);
  builder.workgroup_buffer("ordered_keys", key_type, static_cast<uint32_t>(padded_size(span)));
  if (with_values) builder.workgroup_buffer("ordered_values", *value_type, static_cast<uint32_t>(padded_size(span)));
  return builder.body(std::move(body)).build();
}

const CheckedProgram& checked_count(ScalarType key_type, SortOrder order, const SortShape& shape) {
  check(key_type, shape);
  const std::string name = "sort_count_" + suffix(key_type, order, shape);
  return detail::memo_program(name, [&] { return build_count(name, key_type, order, shape); });
}

const CheckedProgram& checked_scatter(ScalarType key_type, std::optional<ScalarType> value_type, SortOrder order,
                                      const SortShape& shape) {
  check(key_type, shape, value_type);
  const std::string name =
      (value_type ? "sort_scatter_pairs_" + std::string(vyre::to_string(*value_type)) + "_" : std::string("sort_scatter_")) +
      suffix(key_type, order, shape);
  return detail::memo_program(name, [&] {
    return shape.radix_bits == 8 ? build_two_step_scatter(name, key_type, value_type, order, shape)
                                 : build_scatter(name, key_type, value_type, order, shape);
  });
}

}  // namespace

Program sort_count_pass(ScalarType key_type, SortOrder order, const SortShape& shape) {
  return checked_count(key_type, order, shape).program();
}

Program sort_scatter_pass(ScalarType key_type, bool with_values, SortOrder order, const SortShape& shape) {
  return checked_scatter(key_type, with_values ? std::optional(ScalarType::U32) : std::nullopt, order, shape).program();
}

SortShape default_sort_shape(const gpu::Backend& backend, ScalarType key_type, std::optional<ScalarType> value_type) {
  // Measured (docs/benchmarks.md, "Standard kernels"): on the H100, 32-bit
  // keys alone sort fastest with 8-bit digits at 128 x 16, and with u32
  // values at 64 x 8 (4-bit digits, the span ordered in workgroup memory);
  // on lavapipe 128 x 16 at 4 bits leads both. Other devices, unmeasured,
  // take the 4-bit shape that was the fastest or near it everywhere, whose
  // scatter needs the least workgroup memory.
  if (detail::device_class(backend) == "nvidia" && is_word_type(key_type)) {
    if (!value_type) return SortShape{128, 16, 8};
    if (is_word_type(*value_type)) return SortShape{64, 8};
  }
  return SortShape{128, 16};
}

SortShape default_sort_shape(const gpu::Backend& backend) { return default_sort_shape(backend, ScalarType::U32); }

namespace {

void check_buffers(const std::shared_ptr<gpu::DeviceBuffer>& keys, const std::shared_ptr<gpu::DeviceBuffer>& values) {
  if (!keys) throw Error(ErrorKind::invalid_input, "sort: the keys buffer is null");
  check(keys->type(), SortShape{});
  if (values && values->elements() != keys->elements())
    throw Error(ErrorKind::invalid_input, "sort: " + std::to_string(keys->elements()) + " keys but " +
                                              std::to_string(values->elements()) + " values");
}

// One call with one shape: all its passes in one Batch, run and waited for.
SortedBuffers sort_with(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& keys,
                        const std::shared_ptr<gpu::DeviceBuffer>& values, SortOrder order, const SortShape& shape) {
  check(keys->type(), shape);
  const uint32_t n = keys->elements();
  const ScalarType key_type = keys->type();
  gpu::Pipeline count = gpu::detail::kept_pipeline(backend, checked_count(key_type, order, shape));
  gpu::Pipeline scatter = gpu::detail::kept_pipeline(
      backend, checked_scatter(key_type, values ? std::optional(values->type()) : std::nullopt, order, shape));
  const uint32_t groups = detail::groups_for(n, span_of(shape));
  const Dim3 grid = grid_for(groups);
  gpu::Batch batch(backend);
  std::deque<detail::Pass> passes;
  detail::ScanPlan offsets(backend, batch, passes, ScalarType::U32, ReduceOp::Sum, ScanKind::Exclusive,
                           default_scan_shape(backend, ScalarType::U32));
  // The passes take turns between two buffers (the caller's keys are only
  // read), which each scatter writes whole: no clearing, and two buffers of
  // the keys' size however many passes.
  const std::shared_ptr<gpu::DeviceBuffer> turns[2][2] = {
      {gpu::detail::unfilled_buffer(backend, n, key_type, "sort's keys"),
       gpu::detail::unfilled_buffer(backend, n, key_type, "sort's keys")},
      {values ? gpu::detail::unfilled_buffer(backend, n, values->type(), "sort's values") : nullptr,
       values ? gpu::detail::unfilled_buffer(backend, n, values->type(), "sort's values") : nullptr}};
  SortedBuffers now{keys, values};
  const KeyBits bits = key_bits(key_type);
  const uint32_t digits = digits_of(shape);
  for (uint32_t shift = bits.first, turn = 0; shift < bits.end; shift += shape.radix_bits, turn ^= 1) {
    detail::Pass& counted = passes.emplace_back();
    counted.inputs.device("keys", now.keys).set<uint32_t>("shift", {shift}).size("counts", digits * groups);
    counted.outputs = batch.dispatch_resident(count, counted.inputs, grid);
    const std::shared_ptr<gpu::DeviceBuffer> starts = offsets.record(counted.outputs.get("counts"));
    detail::Pass& moved = passes.emplace_back();
    moved.inputs.device("keys", now.keys).set<uint32_t>("shift", {shift}).device("offsets", starts);
    moved.inputs.device("keys_out", turns[0][turn]);
    if (values) moved.inputs.device("values", now.values).device("values_out", turns[1][turn]);
    moved.outputs = batch.dispatch_resident(scatter, moved.inputs, grid);
    now.keys = turns[0][turn];
    if (values) now.values = turns[1][turn];
  }
  batch.run();
  return now;
}

// radix_bits is named only where it is not 4, so that a record of a 4-bit
// shape from before the radix was tunable still names a candidate.
detail::ShapeValues sort_values_of(const SortShape& s) {
  detail::ShapeValues values = {{"workgroup", s.workgroup}, {"items", s.items}};
  if (s.radix_bits != kDefaultRadixBits) values.emplace_back("radix_bits", s.radix_bits);
  return values;
}
SortShape sort_shape_of(const detail::ShapeValues& v) {
  return {v.at(0).second, v.at(1).second, v.size() > 2 ? v.at(2).second : kDefaultRadixBits};
}

detail::TunableFamily family_of(const gpu::Backend& backend, ScalarType key_type,
                                const std::shared_ptr<gpu::DeviceBuffer>& values, SortOrder order, uint64_t elements) {
  detail::TunableFamily family{"sort " + std::string(vyre::to_string(key_type)) +
                                   (values ? " pairs of " + std::string(vyre::to_string(values->type())) : " keys") +
                                   (order == SortOrder::Ascending ? " ascending" : " descending"),
                               detail::size_class_of(elements),
                               {},
                               sort_values_of(default_sort_shape(
                                   backend, key_type, values ? std::optional(values->type()) : std::nullopt))};
  for (uint32_t w : {32u, 64u, 128u})
    for (uint32_t items : {4u, 8u, 16u, 32u}) family.candidates.push_back(sort_values_of({w, items}));
  // Wider digits, fewer passes (7 of 5 bits, 6 of 6), where their tables fit.
  for (const SortShape wide : {SortShape{64, 16, 5}, SortShape{64, 32, 5}, SortShape{32, 32, 5}, SortShape{32, 16, 6},
                               SortShape{32, 32, 6}})
    family.candidates.push_back(sort_values_of(wide));
  // 8-bit digits (4 passes of 32-bit keys), where the span fits beside its
  // values.
  if (is_word_type(key_type) && (!values || is_word_type(values->type())))
    for (const SortShape wide : {SortShape{128, 16, 8}, SortShape{64, 32, 8}, SortShape{128, 8, 8}, SortShape{64, 16, 8},
                                 SortShape{64, 8, 8}})
      if (two_step_words(wide, values != nullptr) <= kWorkgroupWords) family.candidates.push_back(sort_values_of(wide));
  return family;
}

}  // namespace

SortedBuffers sort(gpu::Backend& backend, const std::shared_ptr<gpu::DeviceBuffer>& keys,
                   const std::shared_ptr<gpu::DeviceBuffer>& values, SortOrder order,
                   const std::optional<SortShape>& shape, const Options& options) {
  check_buffers(keys, values);
  if (shape) check(keys->type(), *shape, values ? std::optional(values->type()) : std::nullopt);
  if (keys->elements() == 0) return {keys, values};
  const SortShape chosen = detail::choose<SortShape>(
      backend, shape, family_of(backend, keys->type(), values, order, keys->elements()), options,
      sort_values_of, sort_shape_of, [&](const SortShape& s) { (void)sort_with(backend, keys, values, order, s); });
  return sort_with(backend, keys, values, order, chosen);
}

std::pair<std::vector<uint8_t>, std::vector<uint32_t>> sort_bytes(gpu::Backend& backend,
                                                                 std::span<const uint8_t> keys, ScalarType key_type,
                                                                 std::span<const uint32_t> values, SortOrder order,
                                                                 const std::optional<SortShape>& shape,
                                                                 const Options& options) {
  check(key_type, shape.value_or(SortShape{}));
  const uint32_t n = detail::element_count("sort", keys.size(), key_type);
  if (!values.empty() && values.size() != n)
    throw Error(ErrorKind::invalid_input,
                "sort: " + std::to_string(n) + " keys but " + std::to_string(values.size()) + " values");
  if (n == 0) return {};
  const SortedBuffers sorted =
      sort(backend, backend.upload(keys, key_type), values.empty() ? nullptr : backend.upload(values), order, shape,
           options);
  return {sorted.keys->read(), sorted.values ? sorted.values->read_as<uint32_t>() : std::vector<uint32_t>{}};
}

std::pair<std::vector<uint8_t>, std::vector<uint8_t>> sort_pairs_bytes(
    gpu::Backend& backend, std::span<const uint8_t> keys, ScalarType key_type, std::span<const uint8_t> values,
    ScalarType value_type, SortOrder order, const std::optional<SortShape>& shape, const Options& options) {
  check(key_type, shape.value_or(SortShape{}));
  const uint32_t n = detail::element_count("sort", keys.size(), key_type);
  const uint32_t m = detail::element_count("sort", values.size(), value_type);
  if (m != n) throw Error(ErrorKind::invalid_input, "sort: " + std::to_string(n) + " keys but " + std::to_string(m) + " values");
  if (n == 0) return {};
  const SortedBuffers sorted =
      sort(backend, backend.upload(keys, key_type), backend.upload(values, value_type), order, shape, options);
  return {sorted.keys->read(), sorted.values->read()};
}

}  // namespace vyre::lib
