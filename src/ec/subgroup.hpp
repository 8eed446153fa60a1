// Endomorphisms, prime-order subgroup membership and cofactor clearing for
// BLS12-381's G1 and G2, plus random-point helpers for tests and benches.
//
// Curve parameter x = -0xd201000000010000 (negative; |x| has 6 set bits).
//   G1 = E(Fp)[r], cofactor h1 = (x - 1)^2 / 3.
//   G2 = E'(Fp2)[r] on the M-type sextic twist, cofactor h2 (~ 2^509).
//
// Membership (Scott, "A note on group membership tests for G1, G2 and GT on
// BLS pairing-friendly curves", eprint 2021/1130; proof updated in 2022/352):
//   G1: phi(P) == -[x^2] P, with phi(x, y) = (beta x, y), beta a primitive cube
//       root of unity (the one for which phi acts as -x^2 on G1).
//   G2: psi(P) == [x] P, with psi the untwist-Frobenius-twist endomorphism.
// Each costs two (G1) or one (G2) 64-bit multiplications instead of a 255-bit one;
// tests compare them with [r]P == O on points in and out of the subgroup.
#pragma once

#include <cstdint>

#include "ec/curve.hpp"
#include "ec/endomorphism.hpp"

namespace cuzk::ec {

// [x] P for the (negative) curve parameter: 63 doublings + 5 additions.
template <class F>
constexpr Jacobian<F> mul_by_x(const Jacobian<F>& p) {
  Jacobian<F> acc = p;  // top bit of |x|
  for (int i = 62; i >= 0; --i) {
    acc = dbl(acc);
    if ((kBlsXAbs >> i) & 1) acc = add(acc, p);
  }
  return neg(acc);
}

// Subgroup membership of a point already known to be on the curve.
inline bool in_subgroup(const G1Jacobian& p) {
  if (p.is_identity()) return true;
  return eq(phi(p), neg(mul_by_x(mul_by_x(p))));  // phi(P) == -[x^2] P
}
inline bool in_subgroup(const G2Jacobian& p) {
  if (p.is_identity()) return true;
  return eq(psi(p), mul_by_x(p));  // psi(P) == [x] P
}
inline bool in_subgroup(const G1Affine& p) { return in_subgroup(from_affine(p)); }
inline bool in_subgroup(const G2Affine& p) { return in_subgroup(from_affine(p)); }

// Reference check [r] P == O (slow; for tests and cross-checks).
template <class F>
bool in_subgroup_by_order(const Affine<F>& p) {
  return mul(p, Fr::kModulus).is_identity();
}

// G1: multiplication by h_eff = 1 - x = 1 + |x| (the IETF hash-to-curve choice):
// maps any curve point into G1.
inline G1Jacobian clear_cofactor(const G1Jacobian& p) { return add(p, neg(mul_by_x(p))); }

// G2: h_eff P = [x^2 - x - 1] P + [x - 1] psi(P) + psi^2(2P) (Budroni-Pintore,
// the IETF hash-to-curve method).
inline G2Jacobian clear_cofactor(const G2Jacobian& p) {
  G2Jacobian t1 = mul_by_x(p);   // [x] P
  G2Jacobian t2 = psi(p);        // psi(P)
  G2Jacobian t3 = psi2(dbl(p));  // psi^2(2P)
  t3 = sub(t3, t2);              // psi^2(2P) - psi(P)
  t2 = mul_by_x(add(t1, t2));    // [x^2] P + [x] psi(P)
  t3 = add(t3, t2);
  t3 = sub(t3, t1);   // .. - [x] P
  return sub(t3, p);  // .. - P
}

// A uniformly random point of the whole curve group (NOT cleared into the
// subgroup): random x until x^3 + b is a square, random sign of y.
template <class F, class Rng>
Affine<F> random_curve_point(Rng& rng) {
  for (;;) {
    F x = F::random(rng);
    F y;
    if (!(x.square() * x + kCurveB<F>).sqrt(y)) continue;
    if (rng() & 1) y = -y;
    return {x, y, false};
  }
}

// A random point of the prime-order subgroup (G1 or G2).
template <class F, class Rng>
Affine<F> random_subgroup_point(Rng& rng) {
  return to_affine(clear_cofactor(from_affine(random_curve_point<F>(rng))));
}

}  // namespace cuzk::ec
