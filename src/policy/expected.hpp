// A value or a typed error of the policy's own error enum (std::expected is
// C++23; this is the small subset the policy code needs).
#pragma once

#include <utility>
#include <variant>

#include "policy/check.hpp"

namespace cuzk::policy {

template <class E>
struct Unexpected {
  E error;
};
template <class E>
Unexpected<E> unexpected(E e) {
  return Unexpected<E>{std::move(e)};
}

template <class T, class E>
class Expected {
 public:
  Expected(T value) : v_(std::in_place_index<0>, std::move(value)) {}            // NOLINT: implicit by design
  Expected(Unexpected<E> e) : v_(std::in_place_index<1>, std::move(e.error)) {}  // NOLINT
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() & {
    CUZK_POLICY_CHECK(has_value(), "Expected::value() on an error");
    return std::get<0>(v_);
  }
  const T& value() const& {
    CUZK_POLICY_CHECK(has_value(), "Expected::value() on an error");
    return std::get<0>(v_);
  }
  T&& value() && {
    CUZK_POLICY_CHECK(has_value(), "Expected::value() on an error");
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const {
    CUZK_POLICY_CHECK(!has_value(), "Expected::error() on a value");
    return std::get<1>(v_);
  }

 private:
  std::variant<T, E> v_;
};

// Success without a value.
struct Ok {};

}  // namespace cuzk::policy
