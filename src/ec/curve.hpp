// Group law of BLS12-381's G1 (over Fp) and G2 (over Fp2), templated over the
// coordinate field F. Both curves are short Weierstrass with a = 0:
//   G1: y^2 = x^3 + 4,  G2: y^2 = x^3 + 4(1+u).
//
// Jacobian (X, Y, Z) represents (X/Z^2, Y/Z^3); Z = 0 is the identity.
// Costs below count field multiplications M and squarings S (our square is a
// multiplication today, so S = M); additions are cheap and not counted.
//
// The variable-time formulas (dbl, add, add_mixed) branch on the identity and
// on P == +-Q; they are for public data (MSM bases, verification), as is
// mul(P, k). Secret scalars go through mul_ct (complete formulas, fixed
// windows, table scans), at the end of this file.
//
// Measured on the 2-core build host (Zen 5, asm Fp mul ~30 ns), Release:
//   G1 add_mixed ~0.54 us, add ~0.76 us, dbl ~0.51 us; G2 2.2 / 3.3 / 2.0 us.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "ec/endomorphism.hpp"
#include "ec/point.hpp"

namespace cuzk::ec {

// Curve constant b picked from the coordinate field.
template <class F>
struct CurveB;
template <>
struct CurveB<Fp> {
  static constexpr Fp kValue = kG1B;
};
template <>
struct CurveB<Fp2> {
  static constexpr Fp2 kValue = kG2B;
};
template <class F>
inline constexpr F kCurveB = CurveB<F>::kValue;

// ---------------------------------------------------------------------------
// Conversions, negation, predicates
// ---------------------------------------------------------------------------

template <class F>
constexpr Jacobian<F> from_affine(const Affine<F>& p) {
  if (p.infinity) return Jacobian<F>::identity();
  return {p.x, p.y, F::one()};
}

template <class F>
constexpr Affine<F> neg(const Affine<F>& p) {
  if (p.infinity) return p;
  return {p.x, -p.y, false};
}

template <class F>
constexpr Jacobian<F> neg(const Jacobian<F>& p) {
  return {p.x, -p.y, p.z};
}

// One inversion: x = X/Z^2, y = Y/Z^3.
template <class F>
constexpr Affine<F> to_affine(const Jacobian<F>& p) {
  if (p.is_identity()) return Affine<F>::identity();
  F zinv = p.z.inverse();
  F zinv2 = zinv.square();
  return {p.x * zinv2, p.y * zinv2 * zinv, false};
}

// Converts every point with a single field inversion (Montgomery's trick).
// out.size() must equal in.size(). Identities map to affine identities.
template <class F>
void batch_to_affine(std::span<const Jacobian<F>> in, std::span<Affine<F>> out) {
  const std::size_t n = in.size();
  if (n == 0) return;
  // prefix[i] = product of the non-zero Z of in[0..i) ; written into out[i].x
  // as scratch so no allocation is needed.
  F acc = F::one();
  for (std::size_t i = 0; i < n; ++i) {
    out[i].x = acc;
    if (!in[i].is_identity()) acc *= in[i].z;
  }
  F inv = acc.inverse();
  for (std::size_t i = n; i-- > 0;) {
    const Jacobian<F>& p = in[i];
    if (p.is_identity()) {
      out[i] = Affine<F>::identity();
      continue;
    }
    F zinv = inv * out[i].x;  // 1/Z_i
    inv *= p.z;               // drop Z_i from the running inverse
    F zinv2 = zinv.square();
    out[i].x = p.x * zinv2;
    out[i].y = p.y * zinv2 * zinv;
    out[i].infinity = false;
  }
}

// Projective equality: X1 Z2^2 == X2 Z1^2 and Y1 Z2^3 == Y2 Z1^3.
template <class F>
constexpr bool eq(const Jacobian<F>& a, const Jacobian<F>& b) {
  const bool ai = a.is_identity(), bi = b.is_identity();
  if (ai || bi) return ai == bi;
  F z1z1 = a.z.square(), z2z2 = b.z.square();
  if (a.x * z2z2 != b.x * z1z1) return false;
  return a.y * z2z2 * b.z == b.y * z1z1 * a.z;
}

template <class F>
constexpr bool is_on_curve(const Affine<F>& p) {
  if (p.infinity) return true;
  return p.y.square() == p.x.square() * p.x + kCurveB<F>;
}

// Y^2 == X^3 + b Z^6.
template <class F>
constexpr bool is_on_curve(const Jacobian<F>& p) {
  if (p.is_identity()) return true;
  F z2 = p.z.square();
  F z6 = z2.square() * z2;
  return p.y.square() == p.x.square() * p.x + kCurveB<F> * z6;
}

// ---------------------------------------------------------------------------
// Group law (a = 0)
// ---------------------------------------------------------------------------

// dbl-2009-l, 2M + 5S. Identity (Z = 0) and 2-torsion (Y = 0) both give Z3 = 0.
template <class F>
constexpr Jacobian<F> dbl(const Jacobian<F>& p) {
  F a = p.x.square();                        // A = X1^2
  F b = p.y.square();                        // B = Y1^2
  F c = b.square();                          // C = B^2
  F d = ((p.x + b).square() - a - c).dbl();  // D = 2((X1+B)^2 - A - C) = 4 X1 Y1^2
  F e = a.dbl() + a;                         // E = 3A
  F f = e.square();                          // F = E^2
  Jacobian<F> r;
  r.x = f - d.dbl();                          // X3 = F - 2D
  r.z = (p.y * p.z).dbl();                    // Z3 = 2 Y1 Z1
  r.y = e * (d - r.x) - c.dbl().dbl().dbl();  // Y3 = E(D - X3) - 8C
  return r;
}

// add-2007-bl, 11M + 5S. Falls back to dbl when P == Q and returns the
// identity when P == -Q.
template <class F>
constexpr Jacobian<F> add(const Jacobian<F>& p, const Jacobian<F>& q) {
  if (p.is_identity()) return q;
  if (q.is_identity()) return p;
  F z1z1 = p.z.square();    // Z1^2
  F z2z2 = q.z.square();    // Z2^2
  F u1 = p.x * z2z2;        // U1 = X1 Z2^2
  F u2 = q.x * z1z1;        // U2 = X2 Z1^2
  F s1 = p.y * q.z * z2z2;  // S1 = Y1 Z2^3
  F s2 = q.y * p.z * z1z1;  // S2 = Y2 Z1^3
  F h = u2 - u1;            // H = U2 - U1
  F rr = s2 - s1;           // r/2 = S2 - S1
  if (h.is_zero()) {
    if (rr.is_zero()) return dbl(p);  // same point
    return Jacobian<F>::identity();   // P == -Q
  }
  rr = rr.dbl();           // r = 2(S2 - S1)
  F i = h.dbl().square();  // I = (2H)^2
  F j = h * i;             // J = H I
  F v = u1 * i;            // V = U1 I
  Jacobian<F> out;
  out.x = rr.square() - j - v.dbl();                 // X3 = r^2 - J - 2V
  out.y = rr * (v - out.x) - (s1 * j).dbl();         // Y3 = r(V - X3) - 2 S1 J
  out.z = ((p.z + q.z).square() - z1z1 - z2z2) * h;  // Z3 = 2 Z1 Z2 H
  return out;
}

// madd-2007-bl with Z3 = 2 Z1 H computed directly: 8M + 3S. The MSM inner
// loop; q must be an affine point (identity allowed).
template <class F>
constexpr Jacobian<F> add_mixed(const Jacobian<F>& p, const Affine<F>& q) {
  if (q.infinity) return p;
  if (p.is_identity()) return {q.x, q.y, F::one()};
  F z1z1 = p.z.square();    // Z1^2
  F u2 = q.x * z1z1;        // U2 = X2 Z1^2
  F s2 = q.y * p.z * z1z1;  // S2 = Y2 Z1^3
  F h = u2 - p.x;           // H = U2 - X1
  F rr = s2 - p.y;          // r/2 = S2 - Y1
  if (h.is_zero()) {
    if (rr.is_zero()) return dbl(p);
    return Jacobian<F>::identity();
  }
  rr = rr.dbl();         // r = 2(S2 - Y1)
  F hh = h.square();     // HH = H^2
  F i = hh.dbl().dbl();  // I = 4 HH
  F j = h * i;           // J = H I
  F v = p.x * i;         // V = X1 I
  Jacobian<F> out;
  out.x = rr.square() - j - v.dbl();           // X3 = r^2 - J - 2V
  out.y = rr * (v - out.x) - (p.y * j).dbl();  // Y3 = r(V - X3) - 2 Y1 J
  out.z = (p.z * h).dbl();                     // Z3 = 2 Z1 H
  return out;
}

template <class F>
constexpr Jacobian<F> sub(const Jacobian<F>& p, const Jacobian<F>& q) {
  return add(p, neg(q));
}

// ---------------------------------------------------------------------------
// Variable-time scalar multiplication (public scalars)
// ---------------------------------------------------------------------------

namespace detail {

// Width-w NAF of k: digits d_i in {0, +-1, +-3, .., +-(2^(w-1)-1)}, k = sum d_i 2^i,
// least significant first. Returns the number of digits (<= 64N + 1).
template <std::size_t N>
std::size_t wnaf(const ff::BigInt<N>& k, unsigned w, std::int8_t* digits) {
  // One spare limb: k - d with d < 0 may carry past the top limb of k.
  ff::BigInt<N + 1> e{};
  for (std::size_t i = 0; i < N; ++i) e.limb[i] = k.limb[i];
  const std::int64_t full = std::int64_t{1} << w, half = full >> 1;
  std::size_t len = 0;
  while (!e.is_zero()) {
    std::int64_t d = 0;
    if (e.is_odd()) {
      d = std::int64_t(e.limb[0] & std::uint64_t(full - 1));
      if (d >= half) d -= full;
      e = d > 0 ? ff::sub_small(e, std::uint64_t(d)) : ff::add_small(e, std::uint64_t(-d));
    }
    digits[len++] = std::int8_t(d);
    e = ff::shr1(e);
  }
  return len;
}

// Window of every variable-time multiplication: tables of the odd multiples
// P, 3P, .., 15P (8 entries, 1 doubling + 7 additions to build).
inline constexpr unsigned kWnafWindow = 5;
inline constexpr std::size_t kWnafTable = std::size_t{1} << (kWnafWindow - 2);

template <class F>
void odd_multiples(const Jacobian<F>& p, Jacobian<F> (&table)[kWnafTable]) {
  table[0] = p;
  const Jacobian<F> p2 = dbl(p);
  for (std::size_t i = 1; i < kWnafTable; ++i) table[i] = add(table[i - 1], p2);
}

// sum_i [k_i] P_i by interleaved wNAF (Straus), each P_i given by its table of
// odd multiples; M scalars of N limbs share one chain of doublings.
template <class F, std::size_t M, std::size_t N>
Jacobian<F> straus(const Jacobian<F> (&tables)[M][kWnafTable], const ff::BigInt<N> (&ks)[M]) {
  std::int8_t digits[M][64 * N + 1];
  std::size_t len[M], top = 0;
  for (std::size_t i = 0; i < M; ++i) {
    len[i] = wnaf(ks[i], kWnafWindow, digits[i]);
    top = len[i] > top ? len[i] : top;
  }
  Jacobian<F> acc = Jacobian<F>::identity();
  for (std::size_t j = top; j-- > 0;) {
    acc = dbl(acc);
    for (std::size_t i = 0; i < M; ++i) {
      if (j >= len[i]) continue;
      const int d = digits[i][j];
      if (d > 0)
        acc = add(acc, tables[i][(d - 1) / 2]);
      else if (d < 0)
        acc = add(acc, neg(tables[i][(-d - 1) / 2]));
    }
  }
  return acc;
}

}  // namespace detail

// [k]P for an integer k of any width and any curve point P: width-5 wNAF over
// a Jacobian table of P, 3P, .., 15P: ~bits doublings + ~bits/6 additions.
// Variable time.
template <class F, std::size_t N>
Jacobian<F> mul(const Jacobian<F>& p, const ff::BigInt<N>& k) {
  if (p.is_identity()) return p;
  Jacobian<F> tables[1][detail::kWnafTable];
  detail::odd_multiples(p, tables[0]);
  const ff::BigInt<N> ks[1] = {k};
  return detail::straus(tables, ks);
}

template <class F, std::size_t N>
Jacobian<F> mul(const Affine<F>& p, const ff::BigInt<N>& k) {
  return mul(from_affine(p), k);
}

namespace detail {

// k = a0 + a1 |x| + a2 |x|^2 + a3 |x|^3 with 0 <= a_i < |x|; needs k < |x|^4,
// true for every k < r since r = x^4 - x^2 + 1.
inline std::array<std::uint64_t, 4> base_x_digits(ff::BigInt<4> k) {
  std::array<std::uint64_t, 4> a{};
  for (auto& digit : a) {
    ff::u128 rem = 0;  // k /= |x| by schoolbook division, one limb at a time
    for (std::size_t l = 4; l-- > 0;) {
      const ff::u128 cur = (rem << 64) | k.limb[l];
      k.limb[l] = std::uint64_t(cur / kBlsXAbs);
      rem = cur % kBlsXAbs;
    }
    digit = std::uint64_t(rem);
  }
  return a;
}

// G1 (GLV): with a_i the base-|x| digits of k, k = k0 + k1 x^2 where
// k0 = a0 + a1|x|, k1 = a2 + a3|x| (< 2^128), and [x^2] = -phi on G1:
// [k]P = [k0]P + [k1](-phi(P)). 128 doublings instead of 255.
inline G1Jacobian mul_glv(const G1Jacobian& p, const ff::BigInt<4>& k) {
  const auto a = base_x_digits(k);
  auto join = [](std::uint64_t lo, std::uint64_t hi) {
    const ff::u128 v = ff::u128(hi) * kBlsXAbs + lo;  // < |x|^2 < 2^128
    ff::BigInt<2> r;
    r.limb[0] = std::uint64_t(v);
    r.limb[1] = std::uint64_t(v >> 64);
    return r;
  };
  const ff::BigInt<2> ks[2] = {join(a[0], a[1]), join(a[2], a[3])};
  G1Jacobian tables[2][kWnafTable];
  odd_multiples(p, tables[0]);
  for (std::size_t i = 0; i < kWnafTable; ++i) tables[1][i] = neg(phi(tables[0][i]));
  return straus(tables, ks);
}

// G2 (GLS): psi = [x] on G2 and x = -|x|, so |x|^i acts as (-psi)^i:
// [k]P = [a0]P + [a1](-psi P) + [a2] psi^2 P + [a3](-psi^3 P).
// 64 doublings instead of 255; the endomorphism tables cost a few Fp2 products.
inline G2Jacobian mul_gls(const G2Jacobian& p, const ff::BigInt<4>& k) {
  const auto a = base_x_digits(k);
  ff::BigInt<1> ks[4];
  for (std::size_t i = 0; i < 4; ++i) ks[i].limb[0] = a[i];
  G2Jacobian tables[4][kWnafTable];
  odd_multiples(p, tables[0]);
  for (std::size_t i = 0; i < kWnafTable; ++i) {
    tables[1][i] = neg(psi(tables[0][i]));
    tables[2][i] = psi2(tables[0][i]);
    tables[3][i] = neg(psi(tables[2][i]));
  }
  return straus(tables, ks);
}

}  // namespace detail

// [k]P for k in Fr. Fr elements are residues mod r, so this is defined for P
// in the order-r subgroup (G1 or G2) only, and uses the endomorphisms there
// (GLV on G1, 4-dimensional GLS on G2): about 1.6x / 2x faster than the plain
// wNAF. For integer multiples of arbitrary curve points use the BigInt form.
// Variable time: public scalars only (mul_ct below for secrets).
template <class F>
Jacobian<F> mul(const Jacobian<F>& p, const Fr& k) {
  if (p.is_identity()) return p;
  if constexpr (std::is_same_v<F, Fp>) {
    return detail::mul_glv(p, k.to_int());
  } else if constexpr (std::is_same_v<F, Fp2>) {
    return detail::mul_gls(p, k.to_int());
  } else {
    return mul(p, k.to_int());
  }
}

template <class F>
Jacobian<F> mul(const Affine<F>& p, const Fr& k) {
  return mul(from_affine(p), k);
}

// ---------------------------------------------------------------------------
// Constant-time scalar multiplication (secret scalars)
// ---------------------------------------------------------------------------

namespace detail {

// dst = mask ? src : dst, mask all-ones or zero; no data-dependent branch.
template <class P>
constexpr void ct_assign(ff::MontField<P>& dst, const ff::MontField<P>& src, std::uint64_t mask) {
  auto d = dst.mont();
  const auto& s = src.mont();
  for (std::size_t i = 0; i < d.limb.size(); ++i) d.limb[i] ^= (d.limb[i] ^ s.limb[i]) & mask;
  dst = ff::MontField<P>::from_raw_mont(d);
}
constexpr void ct_assign(Fp2& dst, const Fp2& src, std::uint64_t mask) {
  ct_assign(dst.c0, src.c0, mask);
  ct_assign(dst.c1, src.c1, mask);
}

// Homogeneous projective (X:Y:Z) = (X/Z, Y/Z); the identity is (0:1:0).
template <class F>
struct Projective {
  F x, y, z;
};

// Complete addition for a = 0 (Renes-Costello-Batina 2015, alg. 7): 12M + 2 m_3b,
// valid for every pair of inputs on a curve without 2-torsion (both G1's and
// G2's curve groups have odd order), so it has no branches at all.
template <class F>
constexpr Projective<F> add_complete(const Projective<F>& p, const Projective<F>& q) {
  constexpr F b3 = kCurveB<F> + kCurveB<F> + kCurveB<F>;
  F t0 = p.x * q.x, t1 = p.y * q.y, t2 = p.z * q.z;
  F t3 = (p.x + p.y) * (q.x + q.y) - (t0 + t1);  // X1 Y2 + X2 Y1
  F t4 = (p.y + p.z) * (q.y + q.z) - (t1 + t2);  // Y1 Z2 + Y2 Z1
  F ty = (p.x + p.z) * (q.x + q.z) - (t0 + t2);  // X1 Z2 + X2 Z1
  t0 = t0.dbl() + t0;                            // 3 X1 X2
  t2 = b3 * t2;                                  // 3b Z1 Z2
  F z3 = t1 + t2;
  t1 = t1 - t2;
  ty = b3 * ty;
  Projective<F> r;
  r.x = t3 * t1 - t4 * ty;
  r.y = t1 * z3 + ty * t0;
  r.z = z3 * t4 + t0 * t3;
  return r;
}

// Complete doubling for a = 0 (RCB 2015, alg. 9): 6M + 2S + 1 m_3b.
template <class F>
constexpr Projective<F> dbl_complete(const Projective<F>& p) {
  constexpr F b3 = kCurveB<F> + kCurveB<F> + kCurveB<F>;
  F t0 = p.y.square();
  F z3 = t0.dbl().dbl().dbl();  // 8 Y^2
  F t1 = p.y * p.z;
  F t2 = b3 * p.z.square();  // 3b Z^2
  F x3 = t2 * z3;
  F y3 = t0 + t2;
  z3 = t1 * z3;
  t2 = t2.dbl() + t2;
  t0 = t0 - t2;
  y3 = t0 * y3 + x3;
  x3 = (t0 * (p.x * p.y)).dbl();
  return {x3, y3, z3};
}

}  // namespace detail

// [k]P for a secret k: fixed 4-bit windows, each table entry read by scanning
// the whole table with masks, and complete formulas throughout, so neither the
// sequence of operations nor the memory access pattern depends on k. The point
// P is treated as public. 252 doublings + 64 additions + 64 table scans.
template <class F>
Jacobian<F> mul_ct(const Jacobian<F>& p, const Fr& k) {
  using detail::Projective;
  constexpr unsigned kWindow = 4;
  constexpr std::size_t kTable = std::size_t{1} << kWindow;
  constexpr std::size_t kBits = 256;  // Fr fits in 4 limbs
  if (p.is_identity()) return Jacobian<F>::identity();
  // Jacobian (X, Y, Z) -> projective (X Z, Y, Z^3).
  Projective<F> table[kTable];  // table[i] = i P
  table[0] = {F::zero(), F::one(), F::zero()};
  table[1] = {p.x * p.z, p.y, p.z.square() * p.z};
  for (std::size_t i = 2; i < kTable; ++i) table[i] = detail::add_complete(table[i - 1], table[1]);

  const ff::BigInt<4> e = k.to_int();
  auto select = [&](std::uint64_t idx) {
    Projective<F> out = table[0];
    for (std::size_t i = 1; i < kTable; ++i) {
      // mask = all ones iff i == idx, computed without a comparison branch.
      std::uint64_t diff = std::uint64_t(i) ^ idx;
      std::uint64_t mask = ((diff | (std::uint64_t{0} - diff)) >> 63) - 1;
      detail::ct_assign(out.x, table[i].x, mask);
      detail::ct_assign(out.y, table[i].y, mask);
      detail::ct_assign(out.z, table[i].z, mask);
    }
    return out;
  };
  Projective<F> acc = select(e.bits(kBits - kWindow, kWindow));
  for (std::size_t w = kBits / kWindow - 1; w-- > 0;) {
    for (unsigned j = 0; j < kWindow; ++j) acc = detail::dbl_complete(acc);
    acc = detail::add_complete(acc, select(e.bits(w * kWindow, kWindow)));
  }
  // Projective -> Jacobian (X Z, Y Z^2, Z); Z = 0 stays the identity.
  Jacobian<F> out{acc.x * acc.z, acc.y * acc.z.square(), acc.z};
  if (out.is_identity()) return Jacobian<F>::identity();
  return out;
}

template <class F>
Jacobian<F> mul_ct(const Affine<F>& p, const Fr& k) {
  return mul_ct(from_affine(p), k);
}

}  // namespace cuzk::ec
