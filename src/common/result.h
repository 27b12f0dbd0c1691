// Result<T>: the value of an operation that can fail on input, or the message a person can act
// on. Exceptions are for bugs; anything a user can get wrong comes back as a Result.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace drover {

struct Error {
  std::string message;
};

inline Error MakeError(std::string message) {
  return Error{std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}  // NOLINT

  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    assert(ok());
    return std::get<0>(state_);
  }
  T& value() & {
    assert(ok());
    return std::get<0>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const std::string& error() const {
    assert(!ok());
    return std::get<1>(state_).message;
  }
  Error take_error() && { return std::get<1>(std::move(state_)); }

 private:
  std::variant<T, Error> state_;
};

// For operations that return nothing on success.
struct Ok {};
using Status = Result<Ok>;
inline Status OkStatus() {
  return Ok{};
}

}  // namespace drover
