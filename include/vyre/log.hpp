// Where the library's messages go: stderr ("vyre: warning: ..."), or a
// host's own logging. The level is VYRE_LOG's: trace, debug, info, warn (the
// default), error or off.
#pragma once

#include <functional>
#include <string_view>

#include "vyre/export.hpp"

namespace vyre {

enum class LogLevel { trace, debug, info, warn, error };

// Receives each message the library logs, without the "vyre: level: "
// prefix. Called from whichever thread logs (the cache's background thread
// among them), never twice at once; it must not throw.
using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// Sends the library's messages to `sink` from now on, instead of stderr; an
// empty sink sends them to stderr again. Safe to call from any thread.
VYRE_API void set_log_sink(LogSink sink);

}  // namespace vyre
