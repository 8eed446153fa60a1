// Fp2 = Fp[u]/(u^2 + 1). Elements c0 + c1*u.
#pragma once

#include "ff/fp.hpp"

namespace cuzk::ff {

struct Fp2 {
  Fp c0, c1;

  static constexpr Fp2 zero() { return {}; }
  static constexpr Fp2 one() { return {Fp::one(), Fp::zero()}; }
  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero(); }
  constexpr bool operator==(const Fp2&) const = default;

  friend constexpr Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend constexpr Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  constexpr Fp2 operator-() const { return {-c0, -c1}; }
  // Karatsuba: 3 Fp multiplications.
  friend constexpr Fp2 operator*(const Fp2& a, const Fp2& b) {
    Fp v0 = a.c0 * b.c0, v1 = a.c1 * b.c1;
    return {v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
  }
  constexpr Fp2& operator+=(const Fp2& b) { return *this = *this + b; }
  constexpr Fp2& operator-=(const Fp2& b) { return *this = *this - b; }
  constexpr Fp2& operator*=(const Fp2& b) { return *this = *this * b; }

  // (c0 + c1 u)^2 = (c0+c1)(c0-c1) + 2 c0 c1 u: 2 multiplications.
  constexpr Fp2 square() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
  constexpr Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  constexpr Fp2 conjugate() const { return {c0, -c1}; }
  constexpr Fp2 mul_by_fp(const Fp& s) const { return {c0 * s, c1 * s}; }
  // Multiplication by the Fp6 non-residue xi = 1 + u: (c0 - c1) + (c0 + c1) u.
  constexpr Fp2 mul_by_xi() const { return {c0 - c1, c0 + c1}; }
  // Norm c0^2 + c1^2 in Fp.
  constexpr Fp norm() const { return c0.square() + c1.square(); }
  constexpr Fp2 inverse() const {
    Fp t = norm().inverse();
    return {c0 * t, -(c1 * t)};
  }
  // Frobenius x -> x^p is conjugation in Fp2.
  constexpr Fp2 frobenius() const { return conjugate(); }

  template <std::size_t M>
  constexpr Fp2 pow(const BigInt<M>& e) const {
    Fp2 acc = one();
    for (std::size_t i = e.bit_length(); i-- > 0;) {
      acc = acc.square();
      if (e.bit(i)) acc *= *this;
    }
    return acc;
  }

  // Square root by the "complex method" (p = 3 mod 4, u^2 = -1); returns false
  // when none exists. For a = a0 + a1 u with a1 != 0: the norm n = a0^2 + a1^2
  // must be a square in Fp; with g = sqrt(n), one of d = (a0 +- g)/2 is a square,
  // and x = sqrt(d) + a1/(2 sqrt(d)) u. Cost: 3 Fp exponentiations + 1 inverse.
  // Variable time (used on public points: decompression, hashing in tests).
  bool sqrt(Fp2& out) const {
    if (c1.is_zero()) {
      Fp r;
      if (c0.sqrt(r)) {  // real square root
        out = {r, Fp::zero()};
        return true;
      }
      if ((-c0).sqrt(r)) {  // a0 = -r^2 = (r u)^2
        out = {Fp::zero(), r};
        return true;
      }
      return false;
    }
    Fp g;
    if (!norm().sqrt(g)) return false;
    constexpr Fp half = Fp::from_int(shr1(add_small(Fp::kModulus, 1)));  // 1/2 = (p+1)/2
    Fp d = (c0 + g) * half, x0;
    if (!d.sqrt(x0)) {
      d = (c0 - g) * half;
      if (!d.sqrt(x0)) return false;
    }
    // x0 != 0 here: x0 = 0 would force a1 = 0.
    Fp2 cand{x0, c1 * x0.dbl().inverse()};
    if (cand.square() != *this) return false;
    out = cand;
    return true;
  }

  // zcash sign convention for compressed G2: lexicographically largest
  // compares c1 first, and c0 only when c1 is zero.
  constexpr bool is_lexicographically_largest() const {
    return c1.is_zero() ? c0.is_lexicographically_largest() : c1.is_lexicographically_largest();
  }

  template <class Rng>
  static Fp2 random(Rng& rng) {
    Fp a = Fp::random(rng);
    return {a, Fp::random(rng)};
  }
};

}  // namespace cuzk::ff
