// The reference interpreter's race check (RunChecks::races): two invocations
// touching one element of a buffer, at least one of them writing, with no
// barrier ordering them, and not through atomics (a buffer any atomic names
// is atomic everywhere, so it never races). What orders two accesses:
// being the same invocation, or being in one workgroup with a barrier of the
// buffer's kind between them (workgroupBarrier for workgroup memory,
// storageBarrier for storage); invocations of different workgroups are
// never ordered within a dispatch. Each element remembers its last write
// and its last reads by two invocations, so the first race found is a real
// one, though a race among three readers and a writer may be found later or
// not at all.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vyre/program.hpp"
#include "vyre/shader_options.hpp"

namespace vyre::reference {

struct Accessor {
  uint64_t invocation = 0;  // the flat global invocation index
  uint64_t workgroup = 0;   // the flat workgroup index
  uint32_t epoch = 0;       // barriers of the buffer's kind the invocation had passed
  Dim3 gid{};
  const void* source = nullptr;  // the load expression or store statement
  bool valid = false;
};

class RaceCheck {
 public:
  // Shadows for `program`'s buffers of these lengths (0: left unchecked).
  RaceCheck(const Program& program, const std::vector<uint32_t>& lengths, const std::vector<bool>& atomic);

  // A workgroup starts: its workgroup memory is fresh.
  void start_workgroup();
  // Throws ProgramError with both accesses' JSON paths on a race.
  void load(size_t buffer, size_t element, const Accessor& who);
  void store(size_t buffer, size_t element, const Accessor& who);

 private:
  struct Shadow {
    Accessor write, read, other_read;
  };
  [[noreturn]] void report(size_t buffer, size_t element, const Accessor& first, bool first_writes,
                           const Accessor& second, bool second_writes) const;
  void check(size_t buffer, size_t element, const Accessor& earlier, bool earlier_writes, const Accessor& who,
             bool writes) const;

  const Program& program_;
  std::vector<std::vector<Shadow>> shadows_;  // per buffer, per element; empty when unchecked
};

}  // namespace vyre::reference
