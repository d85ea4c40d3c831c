// The library's one logger (spdlog, to stderr). Its level comes from VYRE_LOG:
// trace, debug, info, warn (the default), error or off.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

namespace vyre::log {

spdlog::logger& get();

template <class... Args>
void trace(spdlog::format_string_t<Args...> fmt, Args&&... args) { get().trace(fmt, std::forward<Args>(args)...); }
template <class... Args>
void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) { get().debug(fmt, std::forward<Args>(args)...); }
template <class... Args>
void info(spdlog::format_string_t<Args...> fmt, Args&&... args) { get().info(fmt, std::forward<Args>(args)...); }
template <class... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) { get().warn(fmt, std::forward<Args>(args)...); }
template <class... Args>
void error(spdlog::format_string_t<Args...> fmt, Args&&... args) { get().error(fmt, std::forward<Args>(args)...); }

// Logs a warning the first time `topic` is seen in this process only, for
// conditions that would otherwise repeat on every dispatch.
void warn_once(std::string_view topic, std::string_view message);

}  // namespace vyre::log
