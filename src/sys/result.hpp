// The one error convention below the public API (src/sys/, src/aot/): a
// function that can fail returns Result<T>, a value or a Failure that says
// what kind of failure it was, the errno behind it (0 when none) and a
// message a person can act on. Callers branch on the kind, never on text.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace vyre::sys {

enum class Fault {
  missing,      // nothing at that name
  partial,      // only part of something that comes in parts (a pair of files half written)
  unsafe,       // not a regular file of an accepted owner: never followed or read
  too_large,    // over a bound
  malformed,    // present, but not in the expected form
  mismatch,     // well formed, but not what it claims to be (a digest or key differs)
  unsupported,  // written in a format version this build does not read
  untrusted,    // must be signed, and no trusted key signed it
  read_only,    // a place that is never written
  busy,         // a lock that another holder has
  io,           // the system refused; Failure::error is the errno
};

struct Failure {
  Fault kind = Fault::io;
  int error = 0;  // errno, when the system said no
  std::string message;
};

inline Failure failure(Fault kind, std::string message, int error = 0) {
  return Failure{kind, error, std::move(message)};
}
// Fault::io with strerror(error) as the message.
Failure errno_failure(int error);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}
  Result(Failure failure) : state_(std::in_place_index<1>, std::move(failure)) {}

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& operator*() { return std::get<0>(state_); }
  const T& operator*() const { return std::get<0>(state_); }
  T* operator->() { return &std::get<0>(state_); }
  const T* operator->() const { return &std::get<0>(state_); }
  const Failure& failure() const { return std::get<1>(state_); }
  bool failed_with(Fault kind) const { return !ok() && failure().kind == kind; }
  // For callers that only ask "is there a value" (option parsing).
  operator std::optional<T>() const& {
    return ok() ? std::optional<T>(std::get<0>(state_)) : std::nullopt;
  }

 private:
  std::variant<T, Failure> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Failure failure) : failure_(std::move(failure)) {}

  bool ok() const { return !failure_; }
  explicit operator bool() const { return ok(); }
  const Failure& failure() const { return *failure_; }
  bool failed_with(Fault kind) const { return !ok() && failure().kind == kind; }

 private:
  std::optional<Failure> failure_;
};

}  // namespace vyre::sys
