// A process that compiles and dispatches N programs on the GPU through the
// AOT cache in VYRE_AOT_CACHE_DIR, and checks every output against the CPU
// reference interpreter. For the many-processes GPU test.
//
//   aot_gpu_worker --programs N [--start-at UNIX_MS]
//
// Exits 0 when every output was right, 3 when one was not, 4 when there is
// no usable GPU adapter; prints "hits=H misses=M".
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "vyre/builder.hpp"
#include "vyre/error.hpp"
#include "vyre/gpu.hpp"
#include "vyre/reference.hpp"

namespace {

using namespace vyre::build;

// Program k: out[i] = a[i] * (k + 1) + (i ^ k); 50 programs, 50 digests.
vyre::Program program(uint32_t k) {
  return ProgramBuilder("mix" + std::to_string(k))
      .workgroup_size(64)
      .input("a", 0, ScalarType::U32)
      .output("out", 1, ScalarType::U32)
      .body({
          let("i", gid()),
          if_(lt(var("i"), len("out")),
              {store("out", var("i"), add(mul(load("a", var("i")), u32(k + 1)), bit_xor(var("i"), u32(k))))}),
      })
      .build();
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t programs = 50;
  long long start_at = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--programs") == 0) programs = static_cast<uint32_t>(std::stoul(argv[i + 1]));
    if (std::strcmp(argv[i], "--start-at") == 0) start_at = std::stoll(argv[i + 1]);
  }
  try {
    vyre::gpu::Backend backend;
    using namespace std::chrono;
    std::this_thread::sleep_until(system_clock::time_point(milliseconds(start_at)));
    std::vector<uint32_t> a(300);
    for (uint32_t i = 0; i < a.size(); ++i) a[i] = i * 2654435761u;
    vyre::Inputs inputs;
    inputs.set("a", a).size("out", static_cast<uint32_t>(a.size()));
    int hits = 0, misses = 0, wrong = 0;
    for (uint32_t k = 0; k < programs; ++k) {
      const vyre::Program p = program(k);
      vyre::gpu::Pipeline pipeline = backend.compile(p);
      (pipeline.compile_report().cache_hit ? hits : misses) += 1;
      if (pipeline.dispatch(inputs) != vyre::reference::run(p, inputs)) {
        std::fprintf(stderr, "wrong output for program %u\n", k);
        ++wrong;
      }
    }
    std::printf("hits=%d misses=%d\n", hits, misses);
    return wrong == 0 ? 0 : 3;
  } catch (const vyre::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.kind() == vyre::ErrorKind::no_adapter ? 4 : 1;
  }
}
