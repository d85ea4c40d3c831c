#include "aot/remote/redis_client.hpp"

#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <cerrno>
#include <charconv>

#include "aot/remote/redis_cluster.hpp"

namespace vyre::aot {
namespace {

timeval to_timeval(std::chrono::milliseconds ms) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(ms.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((ms.count() % 1000) * 1000);
  return tv;
}

// Deep copy, so that no hiredis object outlives the call.
RedisReply copy_reply(const redisReply* r) {
  RedisReply out;
  switch (r->type) {
    case REDIS_REPLY_STRING: out.type = RedisReply::Type::string; break;
    case REDIS_REPLY_STATUS: out.type = RedisReply::Type::status; break;
    case REDIS_REPLY_ERROR: out.type = RedisReply::Type::error; break;
    case REDIS_REPLY_INTEGER: out.type = RedisReply::Type::integer; break;
    case REDIS_REPLY_ARRAY: out.type = RedisReply::Type::array; break;
    default: out.type = RedisReply::Type::nil; break;
  }
  if (r->str != nullptr) out.text.assign(r->str, r->len);
  out.integer = r->integer;
  if (r->type == REDIS_REPLY_ARRAY)
    for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(copy_reply(r->element[i]));
  return out;
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

sys::Result<std::vector<RedisReply>> RedisConnection::pipeline(const std::vector<std::vector<std::string>>& commands) {
  if (auto connected = connect(); !connected) return connected.failure();
  for (const auto& args : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (const auto& a : args) {
      argv.push_back(a.data());
      lengths.push_back(a.size());
    }
    if (redisAppendCommandArgv(context_, static_cast<int>(argv.size()), argv.data(), lengths.data()) != REDIS_OK)
      return fail("cannot send to");
  }
  std::vector<RedisReply> replies;
  for (size_t i = 0; i < commands.size(); ++i) {
    void* raw = nullptr;
    errno = 0;
    if (redisGetReply(context_, &raw) != REDIS_OK || raw == nullptr) return fail("no answer from");
    replies.push_back(copy_reply(static_cast<redisReply*>(raw)));
    freeReplyObject(raw);
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

sys::Result<RedisEndpoint> parse_host_port(std::string_view url, std::string_view text) {
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad_url(url, "`" + std::string(text) + "` is not HOST:PORT");
  auto port = parse_int(text.substr(colon + 1));
  if (!port || *port <= 0 || *port > 65535) return bad_url(url, "`" + std::string(text) + "` has no valid port");
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
