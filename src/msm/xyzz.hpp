// Extended Jacobian ("XYZZ") coordinates for MSM buckets, curves with a = 0.
//
// (X, Y, ZZ, ZZZ) represents the affine point (X/ZZ, Y/ZZZ) with ZZ^3 = ZZZ^2;
// ZZ = 0 is the identity. Keeping Z^2 and Z^3 separately makes the two
// operations an MSM repeats cheap and free of field doublings: mixed addition
// 8M + 2S (ec/curve.hpp's Jacobian add_mixed: 8M + 3S) and general addition
// 12M + 2S (Jacobian: 11M + 5S), and the doubling case inside a bucket is rare.
// Formulas are from the Explicit-Formulas Database, "shortw-xyzz" section:
// madd-2008-s, mdbl-2008-s, add-2008-s, dbl-2008-s-1 (a = 0 drops the a ZZ^2 term).
//
// Everything here is variable time: MSM bases and bucket contents are public.
#pragma once

#include "ec/point.hpp"

namespace cuzk::msm {

template <class F>
struct Xyzz {
  F x{}, y{}, zz{}, zzz{};  // zz == 0: identity

  static constexpr Xyzz identity() { return {}; }
  constexpr bool is_identity() const { return zz.is_zero(); }
  static constexpr Xyzz from_affine(const F& ax, const F& ay) { return {ax, ay, F::one(), F::one()}; }
};

// 2P for an affine P = (x1, y1), mdbl-2008-s: 2M + 3S. y1 == 0 (2-torsion,
// absent from the prime-order groups) would give the identity, as it should.
template <class F>
constexpr Xyzz<F> dbl_affine(const F& x1, const F& y1) {
  F u = y1.dbl();    // U = 2 Y1
  F v = u.square();  // V = U^2
  F w = u * v;       // W = U V
  F s = x1 * v;      // S = X1 V
  F xx = x1.square();
  F m = xx.dbl() + xx;  // M = 3 X1^2
  Xyzz<F> r;
  r.x = m.square() - s.dbl();    // X3 = M^2 - 2S
  r.y = m * (s - r.x) - w * y1;  // Y3 = M (S - X3) - W Y1
  r.zz = v;                      // ZZ3 = V
  r.zzz = w;                     // ZZZ3 = W
  return r;
}

// 2P, dbl-2008-s-1 with a = 0: 6M + 3S.
template <class F>
constexpr Xyzz<F> dbl(const Xyzz<F>& p) {
  if (p.is_identity()) return p;
  F u = p.y.dbl();   // U = 2 Y1
  F v = u.square();  // V = U^2
  F w = u * v;       // W = U V
  F s = p.x * v;     // S = X1 V
  F xx = p.x.square();
  F m = xx.dbl() + xx;  // M = 3 X1^2
  Xyzz<F> r;
  r.x = m.square() - s.dbl();     // X3 = M^2 - 2S
  r.y = m * (s - r.x) - w * p.y;  // Y3 = M (S - X3) - W Y1
  r.zz = v * p.zz;                // ZZ3 = V ZZ1
  r.zzz = w * p.zzz;              // ZZZ3 = W ZZZ1
  return r;
}

// acc += (x2, y2) for a finite affine point, madd-2008-s: 8M + 2S.
// The MSM inner loop: callers pass -y2 to subtract.
template <class F>
constexpr void add_affine(Xyzz<F>& acc, const F& x2, const F& y2) {
  if (acc.is_identity()) {
    acc = Xyzz<F>::from_affine(x2, y2);
    return;
  }
  F u2 = x2 * acc.zz;   // U2 = X2 ZZ1
  F s2 = y2 * acc.zzz;  // S2 = Y2 ZZZ1
  F p = u2 - acc.x;     // P = U2 - X1
  F r = s2 - acc.y;     // R = S2 - Y1
  if (p.is_zero()) {
    // Same x: either the same point (double) or its negation (identity).
    acc = r.is_zero() ? dbl_affine(x2, y2) : Xyzz<F>::identity();
    return;
  }
  F pp = p.square();                   // PP = P^2
  F ppp = p * pp;                      // PPP = P PP
  F q = acc.x * pp;                    // Q = X1 PP
  F x3 = r.square() - ppp - q.dbl();   // X3 = R^2 - PPP - 2Q
  acc.y = r * (q - x3) - acc.y * ppp;  // Y3 = R (Q - X3) - Y1 PPP
  acc.x = x3;
  acc.zz *= pp;    // ZZ3 = ZZ1 PP
  acc.zzz *= ppp;  // ZZZ3 = ZZZ1 PPP
}

// acc += b, add-2008-s: 12M + 2S. Used by the bucket reduction.
template <class F>
constexpr void add(Xyzz<F>& acc, const Xyzz<F>& b) {
  if (b.is_identity()) return;
  if (acc.is_identity()) {
    acc = b;
    return;
  }
  F u1 = acc.x * b.zz;   // U1 = X1 ZZ2
  F u2 = b.x * acc.zz;   // U2 = X2 ZZ1
  F s1 = acc.y * b.zzz;  // S1 = Y1 ZZZ2
  F s2 = b.y * acc.zzz;  // S2 = Y2 ZZZ1
  F p = u2 - u1;         // P = U2 - U1
  F r = s2 - s1;         // R = S2 - S1
  if (p.is_zero()) {
    acc = r.is_zero() ? dbl(acc) : Xyzz<F>::identity();
    return;
  }
  F pp = p.square();                   // PP = P^2
  F ppp = p * pp;                      // PPP = P PP
  F q = u1 * pp;                       // Q = U1 PP
  acc.x = r.square() - ppp - q.dbl();  // X3 = R^2 - PPP - 2Q
  acc.y = r * (q - acc.x) - s1 * ppp;  // Y3 = R (Q - X3) - S1 PPP
  acc.zz = acc.zz * b.zz * pp;         // ZZ3 = ZZ1 ZZ2 PP
  acc.zzz = acc.zzz * b.zzz * ppp;     // ZZZ3 = ZZZ1 ZZZ2 PPP
}

// Jacobian with Z = ZZ ZZZ: X/ZZ = X ZZ ZZZ^2 / Z^2 and Y/ZZZ = Y ZZ^3 ZZZ^2 / Z^3.
// Does not rely on ZZ^3 = ZZZ^2, so any (X, Y, ZZ, ZZZ) converts faithfully.
template <class F>
constexpr ec::Jacobian<F> to_jacobian(const Xyzz<F>& p) {
  if (p.is_identity()) return ec::Jacobian<F>::identity();
  F zzz2 = p.zzz.square();
  F zz2 = p.zz.square();
  ec::Jacobian<F> r;
  r.z = p.zz * p.zzz;
  r.x = p.x * p.zz * zzz2;
  r.y = p.y * zz2 * p.zz * zzz2;
  return r;
}

}  // namespace cuzk::msm
