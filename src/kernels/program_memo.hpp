// The standard kernels' programs depend on their parameters alone, not on
// the device: each is built and checked once per process, so that a call
// pays neither again (a few hundred microseconds a call, measured on the
// H200, docs/benchmarks.md "Standard kernels").
#pragma once

#include <functional>
#include <string>

#include "vyre/checked.hpp"

namespace vyre::lib::detail {

// The program `key` names, built by `build` the first time it is asked for.
// Safe from any thread; the reference stays valid for the process's life.
const CheckedProgram& memo_program(const std::string& key, const std::function<CheckedProgram()>& build);

}  // namespace vyre::lib::detail
