// Builds the xor program with the public API of vyre (installed, or built in
// the consumer's own project by add_subdirectory or FetchContent), gives it
// its identity, lowers it, and runs it on the GPU when one is usable.
#include <vyre/builder.hpp>
#include <vyre/error.hpp>
#include <vyre/gpu.hpp>
#include <vyre/lower.hpp>
#include <vyre/version.hpp>
#include <vyre/wire.hpp>

#include <cstdio>
#include <vector>

int main() {
  using namespace vyre::build;
  const vyre::Program program = ProgramBuilder("xor")
                                    .workgroup_size(64)
                                    .input("a", 0, vyre::ScalarType::U32)
                                    .input("b", 1, vyre::ScalarType::U32)
                                    .output("out", 2, vyre::ScalarType::U32)
                                    .body({let("i", gid()),
                                           if_(lt(var("i"), len("out")),
                                               {store("out", var("i"), bit_xor(load("a", var("i")), load("b", var("i"))))})})
                                    .build();
  std::printf("vyre %s digest %s\n", vyre::kVersion, vyre::digest(program).hex().c_str());
  if (vyre::lower_to_wgsl(program).find("@compute") == std::string::npos) return 1;
  try {
    vyre::gpu::Backend backend;
    vyre::Inputs inputs;
    inputs.set<uint32_t>("a", {1, 2, 3}).set<uint32_t>("b", {3, 2, 1}).size("out", 3);
    const auto out = backend.compile(program).dispatch(inputs).get<uint32_t>("out");
    const bool ok = out == std::vector<uint32_t>{2, 0, 2};
    std::printf("gpu %s: %s\n", backend.adapter().name.c_str(), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (const vyre::Error& e) {
    if (e.kind() != vyre::ErrorKind::no_adapter) throw;
    std::printf("no GPU adapter: %s\n", e.what());
    return 0;
  }
}
