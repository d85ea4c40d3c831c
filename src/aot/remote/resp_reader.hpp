// Redis replies (RESP2) read from bytes as they arrive, with bounds that
// are checked as soon as the bytes announcing a size are in: a bulk string
// announced longer than the bound is refused at its header, before any of
// it is waited for, so a hostile or broken server cannot make a reader wait
// for (or hold) more than the largest value it asked for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/result.hpp"

namespace vyre::aot {

struct RedisReply {
  enum class Type { string, status, integer, nil, error, array };
  Type type = Type::nil;
  std::string text;  // string, status, error
  long long integer = 0;
  std::vector<RedisReply> elements;
  bool is_error() const { return type == Type::error; }
};

struct RespLimits {
  uint64_t max_bulk_bytes = uint64_t{64} << 20;  // one bulk string
  uint64_t max_elements = 1 << 16;               // one array
  unsigned max_depth = 8;                        // arrays in arrays
  uint64_t max_line_bytes = 64 << 10;            // a status, error or size line
};

class RespReader {
 public:
  explicit RespReader(RespLimits limits) : limits_(limits) {}

  void feed(std::string_view bytes) { buffer_.append(bytes); }
  // The next whole reply, taken out of what was fed; nullopt while more
  // bytes are needed; a failure (too_large, malformed) as soon as the bytes
  // fed show one. After a failure the reader is of no further use.
  sys::Result<std::optional<RedisReply>> next();

 private:
  enum class Step { done, more, bad };
  Step parse(size_t& pos, unsigned depth, RedisReply& out);
  Step line(size_t& pos, std::string_view& out);
  Step size_line(size_t& pos, char type, long long& out);
  // Notes why the reply is refused.
  Step refuse(sys::Fault fault, std::string why);

  RespLimits limits_;
  std::string buffer_;
  sys::Failure problem_;
};

}  // namespace vyre::aot
