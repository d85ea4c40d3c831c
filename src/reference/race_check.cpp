#include "reference/race_check.hpp"

#include "reference/source_path.hpp"
#include "vyre/error.hpp"

namespace vyre::reference {
namespace {

bool ordered(const Accessor& a, const Accessor& b) {
  return a.invocation == b.invocation || (a.workgroup == b.workgroup && a.epoch != b.epoch);
}

std::string gid_text(const Dim3& g) {
  return "(" + std::to_string(g[0]) + ", " + std::to_string(g[1]) + ", " + std::to_string(g[2]) + ")";
}

}  // namespace

RaceCheck::RaceCheck(const Program& program, const std::vector<uint32_t>& lengths, const std::vector<bool>& atomic)
    : program_(program), shadows_(program.buffers.size()) {
  for (size_t b = 0; b < program.buffers.size(); ++b)
    if (!atomic[b] && program.buffers[b].access != Access::Uniform) shadows_[b].resize(lengths[b]);
}

void RaceCheck::start_workgroup() {
  for (size_t b = 0; b < program_.buffers.size(); ++b)
    if (program_.buffers[b].access == Access::Workgroup) shadows_[b].assign(shadows_[b].size(), Shadow{});
}

void RaceCheck::check(size_t buffer, size_t element, const Accessor& earlier, bool earlier_writes,
                      const Accessor& who, bool writes) const {
  if (earlier.valid && (earlier_writes || writes) && !ordered(earlier, who))
    report(buffer, element, earlier, earlier_writes, who, writes);
}

void RaceCheck::load(size_t buffer, size_t element, const Accessor& who) {
  if (element >= shadows_[buffer].size()) return;
  Shadow& s = shadows_[buffer][element];
  check(buffer, element, s.write, true, who, false);
  if (s.read.valid && s.read.invocation != who.invocation) s.other_read = s.read;
  s.read = who;
}

void RaceCheck::store(size_t buffer, size_t element, const Accessor& who) {
  if (element >= shadows_[buffer].size()) return;
  Shadow& s = shadows_[buffer][element];
  check(buffer, element, s.write, true, who, true);
  check(buffer, element, s.read, false, who, true);
  check(buffer, element, s.other_read, false, who, true);
  s.write = who;
}

void RaceCheck::report(size_t buffer, size_t element, const Accessor& first, bool first_writes, const Accessor& second,
                       bool second_writes) const {
  const Buffer& b = program_.buffers[buffer];
  const char* barrier = b.access == Access::Workgroup ? "workgroupBarrier" : "storageBarrier";
  const std::string what = "a data race on '" + b.name + "' element " + std::to_string(element) + ": ";
  const std::string between =
      first.workgroup == second.workgroup
          ? "with no " + std::string(barrier) + " between them, and no atomic"
          : "in different workgroups, which no barrier orders (use atomics, or one workgroup)";
  throw ProgramError(
      {{source_path(program_, second.source),
        what + std::string(second_writes ? "a store" : "a load") + " by the invocation with gid " + gid_text(second.gid) +
            " and " + std::string(first_writes ? "a store" : "a load") + " by the invocation with gid " +
            gid_text(first.gid) + " (at " + source_path(program_, first.source) + "), " + between},
       {source_path(program_, first.source),
        "the earlier access of that race: " + std::string(first_writes ? "a store" : "a load") +
            " by the invocation with gid " + gid_text(first.gid)}});
}

}  // namespace vyre::reference
