#include "differential/random_program.hpp"

#include "differential/program_generator.hpp"

namespace vyre::differential {

namespace detail {

GeneratedCase ProgramGenerator::generate() {
  plan_dispatch();
  plan_buffers();
  program_.name = "differential";
  for (const auto& b : buffers_) program_.buffers.push_back(b.decl);
  program_.body = body();
  GeneratedCase out;
  out.program = program_;
  out.options = shader_options_;
  out.grid = launch_grid_;
  fill_contents(out);
  set_compare_rules(out);
  return out;
}

}  // namespace detail

GeneratedCase generate_case(ChoiceStream& choices, const GeneratorOptions& options) {
  return detail::ProgramGenerator(choices, options).generate();
}

GeneratedCase generate_case(uint64_t seed, const GeneratorOptions& options) {
  ChoiceStream choices = ChoiceStream::from_seed(seed);
  GeneratedCase c = generate_case(choices, options);
  c.seed = seed;
  return c;
}

}  // namespace vyre::differential
