#include "util/log.hpp"

#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "vyre/log.hpp"

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

LogLevel level_of(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return LogLevel::trace;
    case spdlog::level::debug: return LogLevel::debug;
    case spdlog::level::info: return LogLevel::info;
    case spdlog::level::warn: return LogLevel::warn;
    default: return LogLevel::error;
  }
}

// stderr, or the host's sink once one is set (vyre::set_log_sink). One
// message at a time, so a host's sink need not be thread-safe; recursive, so
// a sink that calls back into vyre does not deadlock.
class HostOrStderrSink final : public spdlog::sinks::sink {
 public:
  void log(const spdlog::details::log_msg& msg) override {
    std::lock_guard lock(mutex_);
    if (host_) {
      host_(level_of(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
      return;
    }
    stderr_.log(msg);
  }
  void flush() override {
    std::lock_guard lock(mutex_);
    if (!host_) stderr_.flush();
  }
  void set_pattern(const std::string& pattern) override { stderr_.set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    stderr_.set_formatter(std::move(formatter));
  }
  void set_host(LogSink host) {
    std::lock_guard lock(mutex_);
    host_ = std::move(host);
  }

 private:
  std::recursive_mutex mutex_;
  LogSink host_;
  spdlog::sinks::stderr_sink_st stderr_;
};

struct Logger {
  std::shared_ptr<HostOrStderrSink> sink = std::make_shared<HostOrStderrSink>();
  spdlog::logger logger{"vyre", sink};
  Logger() {
    logger.set_pattern("%n: %l: %v");
    logger.set_level(level_from_env());
    logger.flush_on(spdlog::level::trace);
  }
};

Logger& the_logger() {
  static auto* l = new Logger;  // lives for the whole process
  return *l;
}

}  // namespace

spdlog::logger& get() { return the_logger().logger; }

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

namespace vyre {

void set_log_sink(LogSink sink) { log::the_logger().sink->set_host(std::move(sink)); }

}  // namespace vyre
