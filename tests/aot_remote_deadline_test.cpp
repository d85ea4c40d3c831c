// The remote client against a fake slow Redis (support/slow_redis.hpp): one
// deadline bounds each request whole, however slowly the server trickles
// its answer; a reply announced larger than any value asked for is refused
// at its header; and deadline hits open the circuit breaker.
#include <gtest/gtest.h>

#include <chrono>

#include "aot/remote/redis_client.hpp"
#include "aot/remote/remote_tier.hpp"
#include "support/slow_redis.hpp"

namespace vyre::aot {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::SlowRedis;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

RedisEndpoint loopback(const SlowRedis& server) {
  RedisEndpoint endpoint;
  endpoint.host = "127.0.0.1";
  endpoint.port = server.port();
  return endpoint;
}

TEST(RemoteDeadline, AReplyTrickledAByteAtATimeFailsAtTheRequestsDeadline) {
  // 11 bytes at 100 ms each: every receive is well inside 300 ms, the whole
  // answer is not.
  SlowRedis server("$5\r\nhello\r\n", 100ms);
  ASSERT_NE(server.port(), 0);
  RedisConnection connection(loopback(server), RedisTimeouts{500ms, 300ms});
  const auto start = Clock::now();
  auto reply = connection.command({"GET", "k"});
  const double took = seconds_since(start);
  ASSERT_FALSE(reply) << "got the whole answer after " << took << " s";
  EXPECT_TRUE(is_timeout(reply.failure())) << reply.failure().message;
  EXPECT_GE(took, 0.29);
  EXPECT_LT(took, 0.9) << "the deadline is per request, not per receive";
}

TEST(RemoteDeadline, AReplyThatArrivesInTimeIsRead) {
  SlowRedis server("$5\r\nhello\r\n", 5ms);
  ASSERT_NE(server.port(), 0);
  RedisConnection connection(loopback(server), RedisTimeouts{500ms, 2000ms});
  auto reply = connection.command({"GET", "k"});
  ASSERT_TRUE(reply) << reply.failure().message;
  EXPECT_EQ(reply->type, RedisReply::Type::string);
  EXPECT_EQ(reply->text, "hello");
}

TEST(RemoteDeadline, AReplyAnnouncedLargerThanAnyEntryIsRefusedAtOnce) {
  // The header announces a gigabyte, then the server sends nothing: the
  // client must not wait for it (nor until its 5 s deadline).
  const std::string header = "$1000000000\r\n";
  SlowRedis server(header + "x", 0ms, header.size());
  ASSERT_NE(server.port(), 0);
  RedisConnection connection(loopback(server), RedisTimeouts{500ms, 5000ms});
  const auto start = Clock::now();
  auto reply = connection.command({"GETRANGE", "k", "0", std::to_string(kMaxEntryFrameBytes)});
  const double took = seconds_since(start);
  ASSERT_FALSE(reply);
  EXPECT_FALSE(is_timeout(reply.failure())) << reply.failure().message;
  EXPECT_EQ(reply.failure().error, EMSGSIZE) << reply.failure().message;
  EXPECT_NE(reply.failure().message.find("1000000000"), std::string::npos) << reply.failure().message;
  EXPECT_LT(took, 1.0);
}

TEST(RemoteDeadline, TheLargestValueTheTierAsksForStillFits) {
  RespLimits limits;
  limits.max_bulk_bytes = kMaxReplyBulkBytes;
  RespReader reader(limits);
  reader.feed("$" + std::to_string(kMaxReplyBulkBytes) + "\r\n");
  auto waiting = reader.next();
  ASSERT_TRUE(waiting) << waiting.failure().message;
  EXPECT_FALSE(*waiting);  // accepted, waiting for the bytes
  RespReader over(limits);
  over.feed("$" + std::to_string(kMaxReplyBulkBytes + 1) + "\r\n");
  EXPECT_TRUE(over.next().failed_with(sys::Fault::too_large));
}

TEST(RemoteDeadline, RepliesSplitAnywhereReadBackWhole) {
  const std::string bytes = "*3\r\n$3\r\nabc\r\n:42\r\n*2\r\n+OK\r\n$-1\r\n-ERR no\r\n";
  for (size_t split = 0; split <= bytes.size(); ++split) {
    RespReader reader(RespLimits{});
    reader.feed(bytes.substr(0, split));
    auto first = reader.next();
    ASSERT_TRUE(first);
    if (!*first) {
      reader.feed(bytes.substr(split));
      first = reader.next();
      ASSERT_TRUE(first && *first) << split;
    } else {
      reader.feed(bytes.substr(split));
    }
    const RedisReply& array = **first;
    ASSERT_EQ(array.type, RedisReply::Type::array);
    ASSERT_EQ(array.elements.size(), 3u);
    EXPECT_EQ(array.elements[0].text, "abc");
    EXPECT_EQ(array.elements[1].integer, 42);
    EXPECT_EQ(array.elements[2].elements[0].text, "OK");
    EXPECT_EQ(array.elements[2].elements[1].type, RedisReply::Type::nil);
    auto second = reader.next();
    ASSERT_TRUE(second && *second) << split;
    EXPECT_TRUE((*second)->is_error());
  }
}

TEST(RemoteDeadline, DeadlineHitsOpenTheBreakerAndGetReturnsInTime) {
  SlowRedis server("$5\r\nhello\r\n", 200ms);
  ASSERT_NE(server.port(), 0);
  RemoteOptions options;
  options.url = server.url();
  options.connect_timeout = 500ms;
  options.operation_timeout = 250ms;
  options.breaker_threshold = 3;
  options.breaker_cooldown = 60'000ms;
  auto tier = RemoteTier::open(options, nullptr);
  ASSERT_TRUE(tier) << tier.failure().message;
  const std::string key(64, 'a');
  for (int i = 0; i < 3; ++i) {
    const auto start = Clock::now();
    auto entry = (*tier)->get(key, Use::serve);
    const double took = seconds_since(start);
    ASSERT_FALSE(entry);
    EXPECT_LT(took, 0.8) << "get " << i << " outlived its deadline";
  }
  EXPECT_EQ((*tier)->drain().timeouts, 3u);
  // Open: the remote is not asked, and the lookup is a plain miss at once.
  const int asked = server.requests();
  const auto start = Clock::now();
  auto entry = (*tier)->get(key, Use::serve);
  EXPECT_LT(seconds_since(start), 0.05);
  ASSERT_FALSE(entry);
  EXPECT_EQ(entry.failure().kind, sys::Fault::missing);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(server.requests(), asked);
}

}  // namespace
}  // namespace vyre::aot
