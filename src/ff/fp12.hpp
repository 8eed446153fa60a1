// Fp12 = Fp6[w]/(w^2 - v). Elements c0 + c1*w with c0, c1 in Fp6; w^6 = xi.
//
// Pairing values (GT) live here. The twelve Fp coefficients, in the order
// coefficients() returns them and @noble/curves' Fp12 names them, are
//   c0.c0.c0, c0.c0.c1, c0.c1.c0, c0.c1.c1, c0.c2.c0, c0.c2.c1,
//   c1.c0.c0, c1.c0.c1, c1.c1.c0, c1.c1.c1, c1.c2.c0, c1.c2.c1,
// i.e. Fp12.c_i . Fp6.c_j . Fp2.c_k. As powers of w: c0.c_j multiplies w^(2j),
// c1.c_j multiplies w^(2j+1).
//
// Costs count Fp2 multiplications (m2) and squarings (s2).
#pragma once

#include <array>

#include "ff/fp6.hpp"

namespace cuzk::ff {

struct Fp12 {
  Fp6 c0, c1;

  static constexpr Fp12 zero() { return {}; }
  static constexpr Fp12 one() { return {Fp6::one(), Fp6::zero()}; }
  constexpr bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  constexpr bool is_one() const { return c0.is_one() && c1.is_zero(); }
  constexpr bool operator==(const Fp12&) const = default;

  friend constexpr Fp12 operator+(const Fp12& a, const Fp12& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend constexpr Fp12 operator-(const Fp12& a, const Fp12& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  constexpr Fp12 operator-() const { return {-c0, -c1}; }

  // Karatsuba: 3 Fp6 multiplications = 18 m2.
  //   c0 = a0 b0 + v a1 b1, c1 = (a0+a1)(b0+b1) - a0 b0 - a1 b1
  friend constexpr Fp12 operator*(const Fp12& a, const Fp12& b) {
    Fp6 v0 = a.c0 * b.c0, v1 = a.c1 * b.c1;
    return {v0 + v1.mul_by_v(), (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
  }
  constexpr Fp12& operator+=(const Fp12& b) { return *this = *this + b; }
  constexpr Fp12& operator-=(const Fp12& b) { return *this = *this - b; }
  constexpr Fp12& operator*=(const Fp12& b) { return *this = *this * b; }

  // "Complex" squaring: 2 Fp6 multiplications = 12 m2.
  //   (a0 + a1 w)^2 = (a0^2 + v a1^2) + 2 a0 a1 w
  //   a0^2 + v a1^2 = (a0 + a1)(a0 + v a1) - a0 a1 - v a0 a1
  constexpr Fp12 square() const {
    Fp6 ab = c0 * c1;
    Fp6 c0_new = (c0 + c1) * (c0 + c1.mul_by_v()) - ab - ab.mul_by_v();
    return {c0_new, ab.dbl()};
  }

  // x^(p^6): w -> -w. For unitary x (every pairing value after the easy part
  // of the final exponentiation) this is the inverse.
  constexpr Fp12 conjugate() const { return {c0, -c1}; }

  // 1/(a0 + a1 w) = (a0 - a1 w)/(a0^2 - v a1^2); zero maps to zero.
  constexpr Fp12 inverse() const {
    Fp6 t = (c0.square() - c1.square().mul_by_v()).inverse();
    return {c0 * t, -(c1 * t)};
  }

  // x -> x^(p^power) for power = 1, 2, 3 (see detail::TowerFrobenius):
  //   coefficient of w^k maps to frob^j(c) * gamma_j^k.
  constexpr Fp12 frobenius(unsigned power) const {
    if (power < 1 || power > 3) __builtin_trap();  // caller bug: only p, p^2, p^3 are tabled
    const auto& g = detail::kTowerFrobenius.coeff[power - 1];
    bool odd = (power & 1) != 0;
    auto f = [odd](const Fp2& x) { return odd ? x.conjugate() : x; };
    return {{f(c0.c0), f(c0.c1) * g[2], f(c0.c2) * g[4]}, {f(c1.c0) * g[1], f(c1.c1) * g[3], f(c1.c2) * g[5]}};
  }

  // Multiplication by a line function value l0 + l1 w^2 + l4 w^3, which in the
  // tower is c0 = (l0, l1, 0), c1 = (0, l4, 0): Fp12 slots 0, 1, 4
  // (see pairing.hpp for where the line comes from). 13 m2 instead of 18.
  constexpr Fp12 mul_by_014(const Fp2& l0, const Fp2& l1, const Fp2& l4) const {
    Fp6 t0 = c0.mul_by_01(l0, l1);
    Fp6 t1 = c1.mul_by_1(l4);
    Fp6 s = (c0 + c1).mul_by_01(l0, l1 + l4);
    return {t0 + t1.mul_by_v(), s - t0 - t1};
  }

  // Granger-Scott squaring, valid only in the cyclotomic subgroup
  // (x^(p^4 - p^2 + 1) = 1, i.e. after the easy part of the final exponentiation):
  // 9 s2 instead of 12 m2.
  //
  // View Fp12 = Fp4[w]/(w^3 - t) with Fp4 = Fp2[t]/(t^2 - xi), t = w^3, and
  // x = A + B w + C w^2 where
  //   A = c0.c0 + c1.c1 t,  B = c1.c0 + c0.c2 t,  C = c0.c1 + c1.c2 t.
  // For unitary x:  A' = 3A^2 - 2 conj(A),  B' = 3 t C^2 + 2 conj(B),
  //                 C' = 3B^2 - 2 conj(C),  with conj(a + b t) = a - b t.
  constexpr Fp12 cyclotomic_square() const {
    // (a + b t)^2 = (a^2 + xi b^2) + ((a+b)^2 - a^2 - b^2) t: 3 s2.
    auto fp4_square = [](const Fp2& a, const Fp2& b, Fp2& r0, Fp2& r1) {
      Fp2 a2 = a.square(), b2 = b.square();
      r0 = a2 + b2.mul_by_xi();
      r1 = (a + b).square() - a2 - b2;
    };
    // 3s - 2x and 3s + 2x, as 2(s -+ x) + s.
    auto three_minus_two = [](const Fp2& s, const Fp2& x) { return (s - x).dbl() + s; };
    auto three_plus_two = [](const Fp2& s, const Fp2& x) { return (s + x).dbl() + s; };

    Fp2 a0, a1, b0, b1, q0, q1;
    fp4_square(c0.c0, c1.c1, a0, a1);  // A^2
    fp4_square(c1.c0, c0.c2, b0, b1);  // B^2
    fp4_square(c0.c1, c1.c2, q0, q1);  // C^2
    Fp12 r;
    r.c0.c0 = three_minus_two(a0, c0.c0);
    r.c1.c1 = three_plus_two(a1, c1.c1);
    // t C^2 = xi q1 + q0 t.
    r.c1.c0 = three_plus_two(q1.mul_by_xi(), c1.c0);
    r.c0.c2 = three_minus_two(q0, c0.c2);
    r.c0.c1 = three_minus_two(b0, c0.c1);
    r.c1.c2 = three_plus_two(b1, c1.c2);
    return r;
  }

  // x^e in the cyclotomic subgroup (square-and-multiply with Granger-Scott squarings).
  constexpr Fp12 cyclotomic_pow(u64 e) const {
    Fp12 acc = one();
    bool started = false;
    for (int i = 63; i >= 0; --i) {
      if (started) acc = acc.cyclotomic_square();
      if ((e >> i) & 1) {
        acc = started ? acc * *this : *this;
        started = true;
      }
    }
    return acc;
  }

  // Generic x^e (any element). Tests and slow paths only.
  template <std::size_t M>
  constexpr Fp12 pow(const BigInt<M>& e) const {
    Fp12 acc = one();
    for (std::size_t i = e.bit_length(); i-- > 0;) {
      acc = acc.square();
      if (e.bit(i)) acc *= *this;
    }
    return acc;
  }

  // The twelve Fp coefficients in the documented order (top of this file).
  constexpr std::array<Fp, 12> coefficients() const {
    return {c0.c0.c0, c0.c0.c1, c0.c1.c0, c0.c1.c1, c0.c2.c0, c0.c2.c1,
            c1.c0.c0, c1.c0.c1, c1.c1.c0, c1.c1.c1, c1.c2.c0, c1.c2.c1};
  }
  static constexpr Fp12 from_coefficients(const std::array<Fp, 12>& c) {
    return {{{c[0], c[1]}, {c[2], c[3]}, {c[4], c[5]}}, {{c[6], c[7]}, {c[8], c[9]}, {c[10], c[11]}}};
  }

  template <class Rng>
  static Fp12 random(Rng& rng) {
    Fp6 a = Fp6::random(rng);
    return {a, Fp6::random(rng)};
  }
};

}  // namespace cuzk::ff
