#include "aot/remote/redis_client.hpp"

#include <hiredis/hiredis.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>

#include "aot/remote/redis_cluster.hpp"
#include "sys/deadline.hpp"

namespace vyre::aot {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// One command as RESP, the form redis-cli sends. Appended piece by piece:
// GCC 12 at -O3 misreads `"*" + std::to_string(n)` as an overlapping copy (-Wrestrict).
void append_command(std::string& out, const std::vector<std::string>& args) {
  out += '*';
  out += std::to_string(args.size());
  out += "\r\n";
  for (const auto& a : args) {
    out += '$';
    out += std::to_string(a.size());
    out += "\r\n";
    out += a;
    out += "\r\n";
  }
}

using Clock = std::chrono::steady_clock;

// Waits for `fd` to be ready for `events`; false once `deadline` has passed.
bool wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (n > 0) return true;  // ready, or an error or hang-up that the next send or recv reports
    if (n < 0 && errno != EINTR) return true;
  }
}

// 1 ms more per 64 KiB received: the largest entry (16 MiB) earns about a
// quarter of a second, the time it takes at 64 MB/s.
constexpr uint64_t kBytesPerExtraMs = 64 << 10;

RespLimits reply_limits() {
  RespLimits limits;
  limits.max_bulk_bytes = kMaxReplyBulkBytes;
  return limits;
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

bool is_timeout(const sys::Failure& failure) { return failure.kind == sys::Fault::io && failure.error == ETIMEDOUT; }

std::string RedisEndpoint::text() const { return socket_path.empty() ? host + ":" + std::to_string(port) : socket_path; }

RedisConnection::RedisConnection(RedisEndpoint endpoint, RedisTimeouts timeouts, int database)
    : endpoint_(std::move(endpoint)), timeouts_(timeouts), database_(database) {}

RedisConnection::~RedisConnection() {
  if (context_ != nullptr) redisFree(context_);
}

sys::Failure RedisConnection::fail(const std::string& what) {
  int err = 0;
  std::string detail = "not connected";
  if (context_ != nullptr) {
    // hiredis reports a socket timeout as an I/O error with EAGAIN.
    err = (context_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ETIMEDOUT))
              ? ETIMEDOUT
              : (context_->err == REDIS_ERR_IO ? errno : 0);
    detail = err == ETIMEDOUT ? "timed out" : context_->errstr;
    redisFree(context_);
    context_ = nullptr;
  }
  if (err == 0) err = ECONNRESET;
  return sys::failure(sys::Fault::io, what + " " + endpoint_.text() + ": " + detail, err);
}

sys::Result<void> RedisConnection::connect() {
  if (context_ != nullptr) return {};
  const timeval tv = to_timeval(timeouts_.connect);
  errno = 0;
  context_ = endpoint_.socket_path.empty() ? redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, tv)
                                           : redisConnectUnixWithTimeout(endpoint_.socket_path.c_str(), tv);
  if (context_ == nullptr) return sys::failure(sys::Fault::io, "cannot connect to " + endpoint_.text(), ENOMEM);
  if (context_->err != 0) {
    const bool timed_out = errno == ETIMEDOUT || errno == EINPROGRESS;
    std::string detail = timed_out ? "connection timed out" : context_->errstr;
    redisFree(context_);
    context_ = nullptr;
    return sys::failure(sys::Fault::io, "cannot connect to " + endpoint_.text() + ": " + detail,
                        timed_out ? ETIMEDOUT : ECONNREFUSED);
  }
  if (redisSetTimeout(context_, to_timeval(timeouts_.operation)) != REDIS_OK) return fail("cannot set timeouts on");
  if (database_ != 0) {
    auto selected = command({"SELECT", std::to_string(database_)});
    if (!selected) return selected.failure();
    if (selected->is_error()) {
      redisFree(context_);
      context_ = nullptr;
      return sys::failure(sys::Fault::io, "SELECT " + std::to_string(database_) + " on " + endpoint_.text() +
                                              " failed: " + selected->text, EINVAL);
    }
  }
  return {};
}

sys::Failure RedisConnection::drop(sys::Failure why) {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
  return why;
}

sys::Result<std::vector<RedisReply>> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (auto connected = connect(); !connected) return connected.failure();
  // One deadline for the whole exchange, not for each send and receive: a
  // server that answers a byte at a time still fails here, in time. Bytes
  // received earn a little more (kBytesPerExtraMs), so that the largest
  // entry still arrives from a busy but honest server; a trickle earns
  // nothing, and no answer earns more than the largest entry's worth.
  auto deadline = sys::deadline_after(timeouts_.operation);
  uint64_t received = 0, credited_ms = 0;
  const auto timed_out = [&] {
    return drop(sys::failure(sys::Fault::io,
                             "no whole answer from " + endpoint_.text() + " within " +
                                 std::to_string(timeouts_.operation.count()) + " ms (VYRE_AOT_REMOTE_TIMEOUT): timed out",
                             ETIMEDOUT));
  };
  const auto broken = [&](const std::string& what, int err) {
    return drop(sys::failure(sys::Fault::io, what + " " + endpoint_.text() + ": " + std::strerror(err), err));
  };
  const int fd = context_->fd;
  std::string request;
  for (const auto& args : commands) append_command(request, args);
  for (size_t sent = 0; sent < request.size();) {
    if (!wait_ready(fd, POLLOUT, deadline)) return timed_out();
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return broken("cannot send to", errno);
    if (n > 0) sent += static_cast<size_t>(n);
  }
  RespReader reader(reply_limits());
  std::vector<RedisReply> replies;
  std::string chunk(64 << 10, '\0');
  while (replies.size() < commands.size()) {
    auto reply = reader.next();
    if (!reply) {
      // A server that sends what no request asked for is a server that
      // failed (io, like one that does not answer), not a bad entry.
      const sys::Failure& why = reply.failure();
      return drop(sys::failure(sys::Fault::io, "refused the answer of " + endpoint_.text() + ": " + why.message,
                               why.kind == sys::Fault::too_large ? EMSGSIZE : EPROTO));
    }
    if (*reply) {
      replies.push_back(std::move(**reply));
      continue;
    }
    if (!wait_ready(fd, POLLIN, deadline)) return timed_out();
    const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
    if (n == 0) return broken("no answer from", ECONNRESET);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return broken("no answer from", errno);
    if (n > 0) {
      reader.feed(std::string_view(chunk.data(), static_cast<size_t>(n)));
      received += static_cast<uint64_t>(n);
      const uint64_t earned = std::min(received, kMaxReplyBulkBytes) / kBytesPerExtraMs;
      if (earned > credited_ms && deadline != Clock::time_point::max()) {
        deadline += std::chrono::milliseconds(earned - credited_ms);
        credited_ms = earned;
      }
    }
  }
  return replies;
}

sys::Result<RedisReply> RedisConnection::command(const std::vector<std::string>& args) {
  auto replies = pipeline({args});
  if (!replies) return replies.failure();
  return std::move(replies->front());
}

RedisServer::RedisServer(RedisEndpoint endpoint, RedisTimeouts timeouts, int database)
    : connection_(std::move(endpoint), timeouts, database) {}

sys::Result<RedisReply> RedisServer::run(std::string_view, const std::vector<std::string>& args) {
  std::lock_guard lock(mutex_);
  return connection_.command(args);
}

RedisNodePing ping_node(RedisConnection& connection, std::string role) {
  RedisNodePing result{connection.endpoint().text(), std::move(role), false, 0, {}};
  const auto start = std::chrono::steady_clock::now();
  auto reply = connection.command({"PING"});
  result.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!reply)
    result.problem = reply.failure().message;
  else if (reply->is_error() || reply->text != "PONG")
    result.problem = "unexpected answer: " + reply->text;
  else
    result.ok = true;
  return result;
}

std::vector<RedisNodePing> RedisServer::ping() {
  std::lock_guard lock(mutex_);
  return {ping_node(connection_, "server")};
}

namespace {

sys::Failure bad_url(std::string_view url, const std::string& why) {
  return sys::failure(sys::Fault::malformed,
                      "VYRE_AOT_REMOTE=" + std::string(url) + ": " + why +
                          "; use redis://HOST:PORT[/DB], redis+unix:///PATH or redis-cluster://HOST:PORT[,HOST:PORT...]");
}

// "`text` what", built by appending (GCC 12 at -O3 misreads `"`" + std::string(text)` as an overlapping copy: -Wrestrict).
std::string quoted_then(std::string_view text, std::string_view what) {
  std::string s;
  s.reserve(text.size() + what.size() + 2);
  s.append(1, '`').append(text).append(1, '`').append(what);
  return s;
}

sys::Result<RedisEndpoint> parse_host_port(std::string_view url, std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad_url(url, quoted_then(text, " is not HOST:PORT"));
  auto port = parse_int(text.substr(colon + 1));
  if (!port || *port <= 0 || *port > 65535) return bad_url(url, quoted_then(text, " has no valid port"));
  RedisEndpoint e;
  e.host = std::string(text.substr(0, colon));
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']') e.host = e.host.substr(1, e.host.size() - 2);
  e.port = *port;
  return e;
}

}  // namespace

sys::Result<std::unique_ptr<RedisTarget>> make_redis_target(std::string_view url, const RedisTimeouts& timeouts) {
  constexpr std::string_view kServer = "redis://", kUnix = "redis+unix://", kCluster = "redis-cluster://";
  if (url.starts_with(kUnix)) {
    std::string_view rest = url.substr(kUnix.size());
    int db = 0;
    if (size_t q = rest.find("?db="); q != std::string_view::npos) {
      auto parsed = parse_int(rest.substr(q + 4));
      if (!parsed || *parsed < 0) return bad_url(url, "the database is not a number");
      db = *parsed;
      rest = rest.substr(0, q);
    }
    if (rest.empty() || rest.front() != '/') return bad_url(url, "the socket path is not absolute");
    RedisEndpoint e;
    e.socket_path = std::string(rest);
    return std::unique_ptr<RedisTarget>(new RedisServer(std::move(e), timeouts, db));
  }
  if (url.starts_with(kServer)) {
    std::string_view rest = url.substr(kServer.size());
    int db = 0;
    if (size_t slash = rest.find('/'); slash != std::string_view::npos) {
      std::string_view db_text = rest.substr(slash + 1);
      if (!db_text.empty()) {
        auto parsed = parse_int(db_text);
        if (!parsed || *parsed < 0) return bad_url(url, "the database is not a number");
        db = *parsed;
      }
      rest = rest.substr(0, slash);
    }
    auto endpoint = parse_host_port(url, rest);
    if (!endpoint) return endpoint.failure();
    return std::unique_ptr<RedisTarget>(new RedisServer(std::move(*endpoint), timeouts, db));
  }
  if (url.starts_with(kCluster)) {
    std::vector<RedisEndpoint> seeds;
    std::string_view rest = url.substr(kCluster.size());
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      auto seed = parse_host_port(url, rest.substr(0, comma));
      if (!seed) return seed.failure();
      seeds.push_back(std::move(*seed));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    }
    if (seeds.empty()) return bad_url(url, "no seed node");
    return std::unique_ptr<RedisTarget>(new RedisCluster(std::move(seeds), timeouts));
  }
  return bad_url(url, "unknown scheme");
}

}  // namespace vyre::aot
