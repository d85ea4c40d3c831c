#include "kernels/program_memo.hpp"

#include <map>
#include <mutex>

namespace vyre::lib::detail {

const CheckedProgram& memo_program(const std::string& key, const std::function<CheckedProgram()>& build) {
  static std::mutex mutex;
  static std::map<std::string, CheckedProgram>* programs = new std::map<std::string, CheckedProgram>();  // never freed: used until exit
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = programs->find(key); found != programs->end()) return found->second;
  return programs->emplace(key, build()).first->second;
}

}  // namespace vyre::lib::detail
