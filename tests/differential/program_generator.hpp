// The generator's state and its parts (internal to the differential tester):
// buffer plan (generate_buffers.cpp), expressions (generate_expressions.cpp),
// f32 values (generate_f32.cpp), statements and phases
// (generate_statements.cpp).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "differential/choice_stream.hpp"
#include "differential/exact_range.hpp"
#include "differential/generated_case.hpp"
#include "differential/random_program.hpp"
#include "differential/value_pools.hpp"
#include "vyre/builder.hpp"

namespace vyre::differential::detail {

// What an f32 buffer or local holds.
struct F32Class {
  enum class Kind { exact, special, bounded } kind = Kind::exact;
  ExactRange range;     // exact: the domain of its values
  SpecialF32 special;   // special: which non-exact values may appear
  bool zero = true;     // special: whether zeros may appear
};

// An f32 expression with what its value may be.
struct F32Value {
  Expr expr;
  std::optional<ExactRange> exact;  // set: in the exact domain
  bool nan_inf = false;
  bool subnormal = false;
  bool zero = true;
};

// How the program may touch a bound or workgroup buffer.
enum class Role {
  input,     // read: any index, modulo its length
  uniform,   // uniform: any index
  stable,    // read_write, never written: any index
  owned,     // read_write: invocation `me` owns elements [me*K, me*K + K), all in bounds
  guarded,   // read_write output, maybe shorter: guarded stores to owned elements only, never read
  counter,   // read_write output, atomic: commutative read-modify-writes at any index, results dropped
  workgroup,  // workgroup: each phase reads any slot, or writes its own slots, or accumulates
  group_shared  // read_write, in one slice per workgroup: like workgroup memory, phases split by storage barriers
};

// Commutative families of atomic read-modify-writes.
enum class Family { add_sub, min, max, bit_and, bit_or, bit_xor };

// The imprecise operation a bounded f32 output holds.
enum class Imprecise {
  div, rem, pow, atan2, sqrt, inverse_sqrt, exp, exp2, log, log2, sin, cos, tan, tanh,
  inexact_arithmetic, inexact_fma, int_to_f32
};

struct BufferInfo {
  Buffer decl;
  Role role = Role::input;
  uint32_t length = 0;     // elements at dispatch
  uint32_t per_owner = 1;  // elements per invocation (owned, guarded) or slots (workgroup)
  bool atomic = false;
  F32Class f32;
  Family family = Family::add_sub;  // counters
  Imprecise imprecise = Imprecise::div;  // bounded outputs
  CompareRule rule;                      // bounded outputs: the loosest bound of the values stored
  bool given_contents = false;
};

enum class WorkgroupMode { owned, read, accumulate };

struct Local {
  std::string name;
  ScalarType type = ScalarType::U32;
  F32Class f32;
  bool assignable = true;
  std::optional<std::pair<int64_t, int64_t>> small;  // integers known to lie in [first, second]
  bool uniform = false;  // holds the same value in every invocation of a workgroup
};

// A private array in scope: integers hold any value of their type, f32
// values of the array's exact range (which holds 0, the elements' start).
struct PrivateArray {
  std::string name;
  ScalarType type = ScalarType::U32;
  uint32_t count = 1;
  ExactRange range;  // f32 only
};

// Where a statement is generated.
struct Flow {
  bool final_phase = true;  // no barrier follows: returns are allowed
  bool top = true;          // at the top level of a phase
  int loops = 0;            // enclosing loops a break or continue may leave
  int depth = 0;            // nesting of if / loop / while
  // Long loops (tens of thousands of iterations, or a few hundred nested in
  // a few hundred) may start here: they find the class of a driver's loop
  // limit (lavapipe's, docs/conformance.md). At most two deep, so that the
  // reference's cost stays bounded.
  int long_loops_left = 2;
};

// A domain in words, for reproducers: "exact: multiples of 0.25 in [-1024, 1024]".
std::string describe(const F32Class& c);

class ProgramGenerator {
 public:
  ProgramGenerator(ChoiceStream& choices, const GeneratorOptions& options);
  GeneratedCase generate();

 private:
  // ---- buffers and dispatch (generate_buffers.cpp) ----
  void plan_dispatch();
  void plan_buffers();
  BufferInfo& add_buffer(const std::string& name, Access access, ScalarType type, Role role);
  F32Class pick_f32_class(bool allow_bounded, bool allow_special);
  ExactRange pick_exact_range();
  std::string fresh_buffer_name();
  void assign_bindings();
  void fill_contents(GeneratedCase& out);
  uint32_t content_bits(const BufferInfo& b);
  void set_compare_rules(GeneratedCase& out);

  // ---- integer and bool expressions (generate_expressions.cpp) ----
  Expr int_expr(ScalarType t, int depth);
  Expr int_leaf(ScalarType t, int depth);
  Expr int_conversion(ScalarType t, int depth);
  Expr bool_expr(int depth);
  Expr any_index(const BufferInfo& b, int depth);
  // Phased buffers (workgroup memory, group-shared storage) and their mode now.
  static bool phased(const BufferInfo& b) { return b.role == Role::workgroup || b.role == Role::group_shared; }
  bool in_mode(const BufferInfo& b, WorkgroupMode mode) const;
  // Loads allowed now, and whether they must stay on owned elements.
  bool readable(const BufferInfo& b) const;
  bool own_reads_only(const BufferInfo& b) const;
  Expr read_index(const BufferInfo& b, int depth);
  Expr own_index(const BufferInfo& b, uint32_t j, bool as_i32 = false);
  Expr me();
  Expr lid_flat();
  Expr owned_atomic(ScalarType t, int depth);   // an atomic whose old value may flow anywhere
  Expr counter_update(int depth);               // a commutative update whose value must be dropped
  Expr effect_expr(int depth);                  // for `eval`: may hold counter updates
  Expr uniform_u32(int depth);
  Expr uniform_bool();
  Expr small_u32(uint32_t bound, int depth, std::pair<int64_t, int64_t>* range);  // in [0, bound)

  // ---- f32 values (generate_f32.cpp) ----
  F32Value exact_expr(int depth);
  F32Value exact_leaf(int depth);
  F32Value f32_expr(int depth, bool nan_inf, bool subnormal, bool zero);
  F32Value fit(F32Value v, const ExactRange& into);
  F32Value fit_into_class(const F32Class& c, int depth);  // a value for a buffer or local of class c
  F32Value imprecise_value(BufferInfo& target, int depth);
  Expr f32_literal_exact(float v);

  // ---- statements and phases (generate_statements.cpp) ----
  std::vector<Stmt> body();
  void phase(std::vector<Stmt>& out, bool final_phase);
  void boundary(std::vector<Stmt>& out);
  void uniform_construct(std::vector<Stmt>& out);
  void choose_workgroup_modes();
  std::vector<Stmt> block(const Flow& flow, int max_statements);
  void statement(std::vector<Stmt>& out, const Flow& flow);
  bool store_statement(std::vector<Stmt>& out, int depth);
  void let_statement(std::vector<Stmt>& out, int depth);
  bool assign_statement(std::vector<Stmt>& out, int depth);
  void uniform_local_statement(std::vector<Stmt>& out);
  void if_statement(std::vector<Stmt>& out, const Flow& flow);
  void loop_statement(std::vector<Stmt>& out, const Flow& flow);
  // A loop of a constant, large count: alone (30,000 to 100,000), or one of
  // a nested pair (150 to 449 each).
  void long_loop_statement(std::vector<Stmt>& out, const Flow& flow);
  // eval(load(b, index)) with an index at the ends of u32 and i32: its value
  // is unspecified and unused, but the shader must compile.
  Stmt extreme_index_load();
  void while_statement(std::vector<Stmt>& out, const Flow& flow);
  void final_stores(std::vector<Stmt>& out);
  Expr value_for_buffer(BufferInfo& b, int depth);
  Expr value_for_local(const Local& l, int depth);
  // Private arrays: a declaration with a few stores, a store, a load.
  void array_statement(std::vector<Stmt>& out, int depth);
  bool array_store_statement(std::vector<Stmt>& out, int depth);
  const PrivateArray* pick_array(const std::function<bool(const PrivateArray&)>& pred);
  // Mostly in range; sometimes any u32 or i32, which is the last element on
  // both sides (docs/format-v4.md).
  Expr array_index(const PrivateArray& a, int depth);

  // ---- scopes ----
  void push_scope() {
    scopes_.emplace_back();
    arrays_.emplace_back();
  }
  // A name whose scope ended may be declared again (in a sibling block).
  void pop_scope() {
    for (const auto& l : scopes_.back())
      if (l.name.rfind("s_", 0) != 0) used_local_names_.erase(l.name);
    scopes_.pop_back();
    arrays_.pop_back();
  }
  void declare(Local l) { scopes_.back().push_back(std::move(l)); }
  std::vector<const Local*> locals_where(const std::function<bool(const Local&)>& pred) const;
  std::string fresh_local_name();
  template <class T>
  T* pick(const std::vector<T*>& from) {
    return from.empty() ? nullptr : from[choices_.below(static_cast<uint32_t>(from.size()))];
  }
  std::vector<BufferInfo*> buffers_where(const std::function<bool(const BufferInfo&)>& pred);

  ChoiceStream& choices_;
  GeneratorOptions options_;
  Program program_;
  ShaderOptions shader_options_;
  std::optional<Dim3> launch_grid_;  // the grid dispatched with; none: the default
  Dim3 workgroup_{1, 1, 1};  // effective
  Dim3 grid_{1, 1, 1};
  uint32_t group_size_ = 1;   // invocations per workgroup
  uint32_t invocations_ = 1;  // in the whole dispatch
  bool default_grid_ = false;
  std::vector<BufferInfo> buffers_;
  std::vector<std::vector<Local>> scopes_;
  std::vector<std::vector<PrivateArray>> arrays_;  // by scope, as scopes_
  int array_counter_ = 0;  // names p0, p1, ...: never a buffer's
  // Elements of the arrays declared so far: kept far below the format's
  // limit, since a driver's compile time grows fast with them.
  uint32_t private_elements_ = 0;
  static constexpr uint32_t kMaxGeneratedPrivateElements = 192;
  std::set<std::string> used_local_names_;
  int local_counter_ = 0;
  // Buffer indexes inside buffer indexes (see any_index).
  static constexpr int kMaxIndexNesting = 8;
  int index_nesting_ = 0;
  std::map<std::string, WorkgroupMode> workgroup_mode_;
  std::map<std::string, Family> workgroup_family_;
};

}  // namespace vyre::differential::detail
