// Fp6 = Fp2[v]/(v^3 - xi) with xi = 1 + u. Elements c0 + c1*v + c2*v^2.
//
// This is the middle floor of BLS12-381's pairing tower (Fp2 -> Fp6 -> Fp12,
// the same tower as zcash/blst/noble). xi is neither a square nor a cube in
// Fp2, so v^3 - xi and w^2 - v (Fp12) are irreducible.
//
// Costs below count Fp2 multiplications (m2) and squarings (s2); additions are
// not counted.
#pragma once

#include <array>

#include "ff/fp2.hpp"

namespace cuzk::ff {

namespace detail {

// floor(a / d) for a small divisor d.
template <std::size_t N>
constexpr BigInt<N> div_small(const BigInt<N>& a, u64 d) {
  BigInt<N> q{};
  u128 rem = 0;
  for (std::size_t i = N; i-- > 0;) {
    u128 cur = (rem << 64) | a.limb[i];
    q.limb[i] = u64(cur / d);
    rem = cur % d;
  }
  return q;
}

// a mod d for a small divisor d.
template <std::size_t N>
constexpr u64 mod_small(const BigInt<N>& a, u64 d) {
  u128 rem = 0;
  for (std::size_t i = N; i-- > 0;) rem = ((rem << 64) | a.limb[i]) % d;
  return u64(rem);
}

// Frobenius constants of the tower, derived at compile time from gamma_1.
//
// Let w be Fp12's generator, w^6 = xi. For c in Fp2 and k = 0..5,
//   (c w^k)^(p^j) = frob^j(c) * w^(k p^j) = frob^j(c) * gamma_j^k * w^k,
//   gamma_j = w^(p^j - 1) = xi^((p^j - 1)/6)       (an element of Fp2).
// With gamma = gamma_1 and gamma^p = conj(gamma):
//   gamma_2 = gamma^(1+p)      = gamma * conj(gamma)           (lies in Fp)
//   gamma_3 = gamma^(1+p+p^2)  = gamma_2 * gamma.
// Fp6's basis v^i = w^(2i) uses the even powers gamma_j^(2i).
// coeff[j-1][k] = gamma_j^k for j = 1, 2, 3.
//
// gamma_1 itself is written out: evaluating xi^((p-1)/6) in constexpr costs
// g++ 12 about 2.3 s per translation unit. tower_test re-derives it with
// Fp2::pow and checks every map against x^(p^j).
inline constexpr Fp2 kFrobeniusGamma1 = {
    Fp::from_hex("1904d3bf02bb0667c231beb4202c0d1f0fd603fd3cbd5f4f7b2443d784bab9c4f67ea53d63e7813d8d0775ed92235fb8"),
    Fp::from_hex("00fc3e2b36c4e03288e9e902231f9fb854a14787b6c7b36fec0c8ec971f63c5f282d5ac14d6c7ec22cf78a126ddc4af3")};

struct TowerFrobenius {
  std::array<std::array<Fp2, 6>, 3> coeff{};

  static constexpr TowerFrobenius derive(const Fp2& g1) {
    const Fp2 g2 = g1 * g1.conjugate();
    const Fp2 g3 = g2 * g1;
    const Fp2 g[3] = {g1, g2, g3};
    TowerFrobenius t;
    for (std::size_t j = 0; j < 3; ++j) {
      Fp2 acc = Fp2::one();
      for (std::size_t k = 0; k < 6; ++k) {
        t.coeff[j][k] = acc;
        acc *= g[j];
      }
    }
    return t;
  }
};

inline constexpr TowerFrobenius kTowerFrobenius = TowerFrobenius::derive(kFrobeniusGamma1);

static_assert(mod_small(Fp::kModulus, 6) == 1, "p = 1 mod 6 makes (p-1)/6 exact");

}  // namespace detail

struct Fp6 {
  Fp2 c0, c1, c2;

  static constexpr Fp6 zero() { return {}; }
  static constexpr Fp6 one() { return {Fp2::one(), Fp2::zero(), Fp2::zero()}; }
  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero() && c2.is_zero(); }
  constexpr bool operator==(const Fp6&) const = default;

  friend constexpr Fp6 operator+(const Fp6& a, const Fp6& b) { return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2}; }
  friend constexpr Fp6 operator-(const Fp6& a, const Fp6& b) { return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2}; }
  constexpr Fp6 operator-() const { return {-c0, -c1, -c2}; }

  // Karatsuba over the cubic extension: 6 m2.
  //   v0 = a0 b0, v1 = a1 b1, v2 = a2 b2
  //   c0 = v0 + xi((a1+a2)(b1+b2) - v1 - v2)      [a1 b2 v^3 + a2 b1 v^3]
  //   c1 = (a0+a1)(b0+b1) - v0 - v1 + xi v2        [a2 b2 v^4 = xi a2 b2 v]
  //   c2 = (a0+a2)(b0+b2) - v0 - v2 + v1
  friend constexpr Fp6 operator*(const Fp6& a, const Fp6& b) {
    Fp2 v0 = a.c0 * b.c0, v1 = a.c1 * b.c1, v2 = a.c2 * b.c2;
    return {v0 + ((a.c1 + a.c2) * (b.c1 + b.c2) - v1 - v2).mul_by_xi(),
            (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1 + v2.mul_by_xi(), (a.c0 + a.c2) * (b.c0 + b.c2) - v0 - v2 + v1};
  }
  constexpr Fp6& operator+=(const Fp6& b) { return *this = *this + b; }
  constexpr Fp6& operator-=(const Fp6& b) { return *this = *this - b; }
  constexpr Fp6& operator*=(const Fp6& b) { return *this = *this * b; }

  constexpr Fp6 dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }

  // Chung-Hasegawa SQR2: 2 m2 + 3 s2.
  //   s0 = a0^2, s1 = 2 a0 a1, s2 = (a0 - a1 + a2)^2, s3 = 2 a1 a2, s4 = a2^2
  //   c0 = s0 + xi s3, c1 = s1 + xi s4, c2 = s1 + s2 + s3 - s0 - s4
  constexpr Fp6 square() const {
    Fp2 s0 = c0.square();
    Fp2 s1 = (c0 * c1).dbl();
    Fp2 s2 = (c0 - c1 + c2).square();
    Fp2 s3 = (c1 * c2).dbl();
    Fp2 s4 = c2.square();
    return {s0 + s3.mul_by_xi(), s1 + s4.mul_by_xi(), s1 + s2 + s3 - s0 - s4};
  }

  // Multiplication by v: (c0 + c1 v + c2 v^2) v = xi c2 + c0 v + c1 v^2.
  constexpr Fp6 mul_by_v() const { return {c2.mul_by_xi(), c0, c1}; }

  constexpr Fp6 mul_by_fp2(const Fp2& s) const { return {c0 * s, c1 * s, c2 * s}; }

  // a * (b0 + b1 v), the shape of a line function's Fp6 half: 5 m2.
  //   c0 = a0 b0 + xi a2 b1, c1 = (a0+a1)(b0+b1) - a0 b0 - a1 b1, c2 = a2 b0 + a1 b1
  constexpr Fp6 mul_by_01(const Fp2& b0, const Fp2& b1) const {
    Fp2 v0 = c0 * b0, v1 = c1 * b1;
    return {v0 + (c2 * b1).mul_by_xi(), (c0 + c1) * (b0 + b1) - v0 - v1, c2 * b0 + v1};
  }

  // a * (b1 v): 3 m2.
  constexpr Fp6 mul_by_1(const Fp2& b1) const { return {(c2 * b1).mul_by_xi(), c0 * b1, c1 * b1}; }

  // 1/a = adj(a)/det(a) for the multiplication-by-a matrix; zero maps to zero.
  //   t0 = a0^2 - xi a1 a2, t1 = xi a2^2 - a0 a1, t2 = a1^2 - a0 a2
  //   det = a0 t0 + xi (a2 t1 + a1 t2)   (in Fp2), then (t0, t1, t2) / det.
  constexpr Fp6 inverse() const {
    Fp2 t0 = c0.square() - (c1 * c2).mul_by_xi();
    Fp2 t1 = c2.square().mul_by_xi() - c0 * c1;
    Fp2 t2 = c1.square() - c0 * c2;
    Fp2 det = c0 * t0 + (c2 * t1 + c1 * t2).mul_by_xi();
    Fp2 inv = det.inverse();
    return {t0 * inv, t1 * inv, t2 * inv};
  }

  // x -> x^(p^power) for power = 1, 2, 3 (other powers reduce mod 6 by the caller).
  //   (c_i v^i)^(p^j) = frob^j(c_i) * gamma_j^(2i) v^i.
  constexpr Fp6 frobenius(unsigned power) const {
    if (power < 1 || power > 3) __builtin_trap();  // caller bug: only p, p^2, p^3 are tabled
    const auto& g = detail::kTowerFrobenius.coeff[power - 1];
    bool odd = (power & 1) != 0;
    Fp2 a0 = odd ? c0.conjugate() : c0;
    Fp2 a1 = odd ? c1.conjugate() : c1;
    Fp2 a2 = odd ? c2.conjugate() : c2;
    return {a0, a1 * g[2], a2 * g[4]};
  }

  template <std::size_t M>
  constexpr Fp6 pow(const BigInt<M>& e) const {
    Fp6 acc = one();
    for (std::size_t i = e.bit_length(); i-- > 0;) {
      acc = acc.square();
      if (e.bit(i)) acc *= *this;
    }
    return acc;
  }

  template <class Rng>
  static Fp6 random(Rng& rng) {
    Fp2 a = Fp2::random(rng);
    Fp2 b = Fp2::random(rng);
    return {a, b, Fp2::random(rng)};
  }
};

}  // namespace cuzk::ff
