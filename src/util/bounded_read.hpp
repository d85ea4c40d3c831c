// Reading a whole file or stream with a bound checked as the bytes arrive,
// so that /dev/zero, a FIFO fed by `yes` or a growing file costs at most the
// bound plus one chunk, never all the memory there is.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace vyre {

// What is read and the limit that applies, for the messages: "--input a
// (@data.bin)", "the limit of an @FILE input (vyre::kMaxInputFileBytes)".
struct ReadBound {
  uint64_t max_bytes = 0;
  std::string what;   // names the source
  std::string limit;  // names the limit: where it is documented or set
};

// The file's bytes. Throws Error(io) when it cannot be opened or read or is
// a directory, Error(invalid_input) as soon as it holds more than
// `bound.max_bytes`.
std::vector<uint8_t> read_file_bounded(const std::filesystem::path& path, const ReadBound& bound);

// The same for an open descriptor, read to its end, appending to `data`.
std::vector<uint8_t> read_fd_bounded(int fd, const ReadBound& bound, std::vector<uint8_t> data = {});

// A text's bytes as the JSON readers take them.
inline std::string_view as_text(const std::vector<uint8_t>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

}  // namespace vyre
