// Bit-level helpers shared by UInt32 and UInt64: both are N Booleans, least
// significant first, plus the value when every bit's value is known.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>

#include "circuits/gadgets/boolean.hpp"

namespace cuzk::circuits::gadgets::detail {

template <std::size_t N, class T>
std::array<Boolean, N> constant_bits(T v) {
  std::array<Boolean, N> bits{};
  for (std::size_t i = 0; i < N; ++i) bits[i] = Boolean::constant(((v >> i) & 1) != 0);
  return bits;
}

// N allocated bits (N variables, N booleanity constraints), in namespaces
// "allocated bit"/i as bellpepper's UInt32::alloc names them.
template <std::size_t N, class T>
std::array<Boolean, N> alloc_bits(ConstraintSystem& cs, std::optional<T> value) {
  std::array<Boolean, N> bits{};
  for (std::size_t i = 0; i < N; ++i) {
    std::optional<bool> b;
    if (value) b = ((*value >> i) & 1) != 0;
    auto ns = cs.ns("allocated bit", i);
    bits[i] = AllocatedBit::alloc(cs, b);
  }
  return bits;
}

// The value of N little-endian bits, or nullopt when any bit is unknown.
template <std::size_t N, class T>
std::optional<T> value_of_bits_le(std::span<const Boolean> bits) {
  T v = 0;
  for (std::size_t i = 0; i < N; ++i) {
    auto b = bits[i].value();
    if (!b) return std::nullopt;
    if (*b) v |= T{1} << i;
  }
  return v;
}

}  // namespace cuzk::circuits::gadgets::detail
