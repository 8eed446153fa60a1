// A small, independent host reference for the GPU tests: Jacobian point
// arithmetic (a = 0 curves), scalar multiplication, and naive DFTs. Written
// for clarity, not speed; it shares nothing with the GPU code but the host
// field types.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "ec/point.hpp"
#include "ff/fp.hpp"

namespace cuzk::gpu::ref {

using ec::Affine;
using ec::Jacobian;

// 2P: dbl-2009-l (A = X^2, B = Y^2, C = B^2, D = 2((X+B)^2 - A - C), E = 3A,
// X3 = E^2 - 2D, Y3 = E(D - X3) - 8C, Z3 = 2YZ).
template <class F>
Jacobian<F> dbl(const Jacobian<F>& p) {
  if (p.is_identity() || p.y.is_zero()) return Jacobian<F>::identity();
  const F a = p.x.square(), b = p.y.square(), c = b.square();
  const F d = ((p.x + b).square() - a - c).dbl();
  const F e = a.dbl() + a;
  const F x3 = e.square() - d.dbl();
  const F c8 = c.dbl().dbl().dbl();
  return {x3, e * (d - x3) - c8, (p.y * p.z).dbl()};
}

// P + Q: add-2007-bl without the doubling shortcut (handled by comparison).
template <class F>
Jacobian<F> add(const Jacobian<F>& p, const Jacobian<F>& q) {
  if (p.is_identity()) return q;
  if (q.is_identity()) return p;
  const F z1z1 = p.z.square(), z2z2 = q.z.square();
  const F u1 = p.x * z2z2, u2 = q.x * z1z1;
  const F s1 = p.y * q.z * z2z2, s2 = q.y * p.z * z1z1;
  if (u1 == u2) return s1 == s2 ? dbl(p) : Jacobian<F>::identity();
  const F h = u2 - u1;
  const F i = h.dbl().square();
  const F j = h * i;
  const F r = (s2 - s1).dbl();
  const F v = u1 * i;
  const F x3 = r.square() - j - v.dbl();
  const F y3 = r * (v - x3) - (s1 * j).dbl();
  const F z3 = ((p.z + q.z).square() - z1z1 - z2z2) * h;
  return {x3, y3, z3};
}

template <class F>
Jacobian<F> from_affine(const Affine<F>& a) {
  if (a.infinity) return Jacobian<F>::identity();
  return {a.x, a.y, F::one()};
}

// k * P by double-and-add from the top bit (k a standard integer).
template <class F, std::size_t M>
Jacobian<F> mul(const Jacobian<F>& p, const ff::BigInt<M>& k) {
  Jacobian<F> r = Jacobian<F>::identity();
  for (std::size_t i = k.bit_length(); i-- > 0;) {
    r = dbl(r);
    if (k.bit(i)) r = add(r, p);
  }
  return r;
}

// Projective equality: X1 Z2^2 = X2 Z1^2 and Y1 Z2^3 = Y2 Z1^3.
// A device XYZZ point as the GPU writes it (x, y, zz, zzz: sizeof(F) / 4
// limbs each) as Jacobian: x = X/ZZ, y = Y/ZZZ, so Z' = ZZ ZZZ,
// X' = X ZZ ZZZ^2, Y' = Y ZZ^3 ZZZ^2; ZZ = 0 is the identity.
template <class F>
Jacobian<F> from_xyzz(const std::uint32_t* limbs) {
  F c[4];
  std::memcpy(static_cast<void*>(c), limbs, sizeof(c));
  if (c[2].is_zero()) return Jacobian<F>::identity();
  const F zzz2 = c[3].square();
  return {c[0] * c[2] * zzz2, c[1] * c[2].square() * c[2] * zzz2, c[2] * c[3]};
}

template <class F>
bool eq(const Jacobian<F>& a, const Jacobian<F>& b) {
  if (a.is_identity() || b.is_identity()) return a.is_identity() == b.is_identity();
  const F za2 = a.z.square(), zb2 = b.z.square();
  return a.x * zb2 == b.x * za2 && a.y * zb2 * b.z == b.y * za2 * a.z;
}

// y^2 = x^3 + b in Jacobian form: Y^2 = X^3 + b Z^6.
template <class F>
bool on_curve(const Jacobian<F>& p, const F& b) {
  if (p.is_identity()) return true;
  const F z2 = p.z.square();
  const F z6 = z2.square() * z2;
  return p.y.square() == p.x.square() * p.x + b * z6;
}

// Affine forms of many Jacobian points (one inversion per point; tests only).
template <class F>
std::vector<Affine<F>> to_affine(std::span<const Jacobian<F>> ps) {
  std::vector<Affine<F>> out;
  out.reserve(ps.size());
  for (const auto& p : ps) {
    if (p.is_identity()) {
      out.push_back(Affine<F>::identity());
      continue;
    }
    const F zi = p.z.inverse();
    const F zi2 = zi.square();
    out.push_back({p.x * zi2, p.y * zi2 * zi, false});
  }
  return out;
}

// Primitive 2^log_n-th root of unity w = 7^((r-1)/2^32) squared 32 - log_n times.
inline ff::Fr root_of_unity(int log_n) {
  ff::Fr w = ff::Fr::from_u64(7).pow(ff::Fr::kTrace);
  for (int i = log_n; i < 32; ++i) w = w.square();
  return w;
}

// sum_i coeffs[i] x^i by Horner's rule.
inline ff::Fr evaluate(std::span<const ff::Fr> coeffs, const ff::Fr& x) {
  ff::Fr acc = ff::Fr::zero();
  for (std::size_t i = coeffs.size(); i-- > 0;) acc = acc * x + coeffs[i];
  return acc;
}

}  // namespace cuzk::gpu::ref
