#include "util/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace vyre::log {
namespace {

spdlog::level::level_enum level_from_env() {
  const char* v = std::getenv("VYRE_LOG");
  if (v == nullptr || *v == '\0') return spdlog::level::warn;
  std::string s(v);
  if (s == "warning") return spdlog::level::warn;
  auto level = spdlog::level::from_str(s);
  // from_str maps unknown names to off; keep the default for a typo instead.
  if (level == spdlog::level::off && s != "off") return spdlog::level::warn;
  return level;
}

}  // namespace

spdlog::logger& get() {
  static spdlog::logger* logger = [] {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    auto* l = new spdlog::logger("vyre", std::move(sink));  // lives for the whole process
    l->set_pattern("%n: %l: %v");
    l->set_level(level_from_env());
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return *logger;
}

void warn_once(std::string_view topic, std::string_view message) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> seen;
  {
    std::lock_guard lock(mutex);
    if (!seen.emplace(topic).second) return;
  }
  get().warn("{}", message);
}

}  // namespace vyre::log
