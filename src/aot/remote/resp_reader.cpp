#include "aot/remote/resp_reader.hpp"

#include <charconv>

namespace vyre::aot {

sys::Result<std::optional<RedisReply>> RespReader::next() {
  size_t pos = 0;
  RedisReply reply;
  switch (parse(pos, 0, reply)) {
    case Step::more: return std::optional<RedisReply>{};
    case Step::bad: return problem_;
    case Step::done: break;
  }
  buffer_.erase(0, pos);
  return std::optional<RedisReply>(std::move(reply));
}

RespReader::Step RespReader::line(size_t& pos, std::string_view& out) {
  const size_t end = buffer_.find("\r\n", pos);
  if (end == std::string::npos) {
    if (buffer_.size() - pos <= limits_.max_line_bytes) return Step::more;
    problem_ = sys::failure(sys::Fault::too_large,
                            "a reply line is over " + std::to_string(limits_.max_line_bytes) + " bytes");
    return Step::bad;
  }
  out = std::string_view(buffer_).substr(pos, end - pos);
  pos = end + 2;
  return Step::done;
}

RespReader::Step RespReader::size_line(size_t& pos, char type, long long& out) {
  std::string_view text;
  if (Step s = line(pos, text); s != Step::done) return s;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size() || out < -1) {
    problem_ = sys::failure(sys::Fault::malformed, std::string("the reply announces a `") + type + "` of size `" +
                                                       std::string(text) + "`");
    return Step::bad;
  }
  return Step::done;
}

RespReader::Step RespReader::refuse(sys::Fault fault, std::string why) {
  problem_ = sys::failure(fault, std::move(why));
  return Step::bad;
}

namespace {

// RESP's null bulk string or array (a size of -1).
bool is_null(long long size, RedisReply& out) {
  if (size != -1) return false;
  out.type = RedisReply::Type::nil;
  return true;
}

}  // namespace

RespReader::Step RespReader::parse(size_t& pos, unsigned depth, RedisReply& out) {
  if (pos >= buffer_.size()) return Step::more;
  const char type = buffer_[pos++];
  switch (type) {
    case '+':
    case '-': {
      std::string_view text;
      if (Step s = line(pos, text); s != Step::done) return s;
      out.type = type == '+' ? RedisReply::Type::status : RedisReply::Type::error;
      out.text = text;
      return Step::done;
    }
    case ':': {
      long long value = 0;
      std::string_view text;
      if (Step s = line(pos, text); s != Step::done) return s;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc() || end != text.data() + text.size()) {
        problem_ = sys::failure(sys::Fault::malformed, "the reply's integer `" + std::string(text) + "` is not one");
        return Step::bad;
      }
      out.type = RedisReply::Type::integer;
      out.integer = value;
      return Step::done;
    }
    case '$': {
      long long length = 0;
      if (Step s = size_line(pos, type, length); s != Step::done) return s;
      if (is_null(length, out)) return Step::done;
      if (static_cast<uint64_t>(length) > limits_.max_bulk_bytes)
        return refuse(sys::Fault::too_large, "the reply announces " + std::to_string(length) +
                                                 " bytes, over the bound of " + std::to_string(limits_.max_bulk_bytes));
      const size_t n = static_cast<size_t>(length);
      if (buffer_.size() - pos < n + 2) return Step::more;
      if (buffer_.compare(pos + n, 2, "\r\n") != 0)
        return refuse(sys::Fault::malformed, "a bulk string of the reply does not end where announced");
      out.type = RedisReply::Type::string;
      out.text = buffer_.substr(pos, n);
      pos += n + 2;
      return Step::done;
    }
    case '*': {
      long long count = 0;
      if (Step s = size_line(pos, type, count); s != Step::done) return s;
      if (is_null(count, out)) return Step::done;
      if (static_cast<uint64_t>(count) > limits_.max_elements || depth + 1 > limits_.max_depth)
        return refuse(sys::Fault::too_large, "the reply announces an array of " + std::to_string(count) +
                                                 " elements at depth " + std::to_string(depth + 1) + ", over the bounds");
      out.type = RedisReply::Type::array;
      out.elements.resize(static_cast<size_t>(count));
      for (auto& element : out.elements)
        if (Step s = parse(pos, depth + 1, element); s != Step::done) return s;
      return Step::done;
    }
    default:
      problem_ = sys::failure(sys::Fault::malformed,
                              "the reply starts with byte " + std::to_string(static_cast<unsigned char>(type)) +
                                  ", not a RESP type");
      return Step::bad;
  }
}

}  // namespace vyre::aot
