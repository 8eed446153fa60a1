// Fixed-width unsigned integers of N 64-bit limbs, least-significant limb first.
// Everything here is constexpr so field constants (R, R^2, exponents) are derived
// from the modulus at compile time instead of being pasted in as magic numbers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cuzk::ff {

using u64 = std::uint64_t;
using u128 = unsigned __int128;

template <std::size_t N>
struct BigInt {
  std::array<u64, N> limb{};

  constexpr bool operator==(const BigInt&) const = default;

  constexpr bool is_zero() const {
    u64 acc = 0;
    for (u64 l : limb) acc |= l;
    return acc == 0;
  }
  constexpr bool is_odd() const { return limb[0] & 1; }
  constexpr bool bit(std::size_t i) const { return i / 64 < N ? (limb[i / 64] >> (i % 64)) & 1 : false; }
  // Number of significant bits (0 for zero).
  constexpr std::size_t bit_length() const {
    for (std::size_t i = N; i-- > 0;) {
      if (limb[i] != 0) return i * 64 + (64 - static_cast<std::size_t>(__builtin_clzll(limb[i])));
    }
    return 0;
  }
  // Extract `width` (<= 64) bits starting at bit `lo`.
  constexpr u64 bits(std::size_t lo, std::size_t width) const {
    std::size_t w = lo / 64, s = lo % 64;
    if (w >= N) return 0;
    u64 v = limb[w] >> s;
    if (s != 0 && w + 1 < N) v |= limb[w + 1] << (64 - s);
    return width >= 64 ? v : v & ((u64{1} << width) - 1);
  }
};

// a < b
template <std::size_t N>
constexpr bool less_than(const BigInt<N>& a, const BigInt<N>& b) {
  for (std::size_t i = N; i-- > 0;) {
    if (a.limb[i] != b.limb[i]) return a.limb[i] < b.limb[i];
  }
  return false;
}

// r = a + b, returns carry out.
template <std::size_t N>
constexpr u64 add_with_carry(BigInt<N>& r, const BigInt<N>& a, const BigInt<N>& b) {
  u64 carry = 0;
  for (std::size_t i = 0; i < N; ++i) {
    u128 t = u128(a.limb[i]) + b.limb[i] + carry;
    r.limb[i] = u64(t);
    carry = u64(t >> 64);
  }
  return carry;
}

// r = a - b, returns borrow out (1 when a < b).
template <std::size_t N>
constexpr u64 sub_with_borrow(BigInt<N>& r, const BigInt<N>& a, const BigInt<N>& b) {
  u64 borrow = 0;
  for (std::size_t i = 0; i < N; ++i) {
    u128 t = u128(a.limb[i]) - b.limb[i] - borrow;
    r.limb[i] = u64(t);
    borrow = u64(t >> 64) & 1;
  }
  return borrow;
}

template <std::size_t N>
constexpr BigInt<N> shr1(BigInt<N> a) {
  for (std::size_t i = 0; i < N; ++i) {
    a.limb[i] = (a.limb[i] >> 1) | (i + 1 < N ? a.limb[i + 1] << 63 : 0);
  }
  return a;
}

template <std::size_t N>
constexpr BigInt<N> shr(BigInt<N> a, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) a = shr1(a);
  return a;
}

template <std::size_t N>
constexpr BigInt<N> from_u64(u64 v) {
  BigInt<N> r{};
  r.limb[0] = v;
  return r;
}

template <std::size_t N>
constexpr BigInt<N> sub_small(BigInt<N> a, u64 v) {
  BigInt<N> r{};
  sub_with_borrow(r, a, from_u64<N>(v));
  return r;
}

template <std::size_t N>
constexpr BigInt<N> add_small(BigInt<N> a, u64 v) {
  BigInt<N> r{};
  add_with_carry(r, a, from_u64<N>(v));
  return r;
}

// Parses a big-endian hex literal ("0x..." optional). Used for constants only:
// a malformed literal is a programming error and fails constant evaluation.
template <std::size_t N>
constexpr BigInt<N> from_hex(std::string_view s) {
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  BigInt<N> r{};
  std::size_t nibble = 0;
  for (std::size_t i = s.size(); i-- > 0;) {
    char c = s[i];
    u64 d = 0;
    if (c >= '0' && c <= '9')
      d = u64(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = u64(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = u64(c - 'A' + 10);
    else if (c == '_')
      continue;
    else
      throw "from_hex: bad digit";
    if (nibble / 16 >= N) throw "from_hex: literal too wide";
    r.limb[nibble / 16] |= d << (4 * (nibble % 16));
    ++nibble;
  }
  return r;
}

// 2-adic valuation of a non-zero integer.
template <std::size_t N>
constexpr std::size_t trailing_zeros(const BigInt<N>& a) {
  std::size_t n = 0;
  while (!a.bit(n)) ++n;
  return n;
}

}  // namespace cuzk::ff
