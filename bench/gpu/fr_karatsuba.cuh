// bench_gpu field's "kara" form: the Fr product with one level of Karatsuba
// on the a*b half: three 4x4-limb products (48 of the 64 product pairs) with
// the multiplier's half sum precomputed, as a twiddle table could store it,
// then the even/odd Montgomery reduction. Measured no faster
// (bench/gpu/NOTES.md, "The Fr product's pipes"), so no kernel uses
// it.
#pragma once

#include "gpu/ff/field.cuh"

namespace cuzk::gpu::dev {
namespace kara {

struct HalfParams {
  static constexpr int kN = 4;
  static constexpr u32 kInv = 1;
  __host__ __device__ static constexpr u32 p(int) { return 1; }
  __host__ __device__ static constexpr u32 one(int) { return 0; }
};
using Half = Field<HalfParams>;

// b split for the product: its halves and their sum (4 limbs + a carry bit).
struct Split {
  Half lo, hi, sum;
  u32 sum_top;
};

CUZK_FF_HD Split split(const Fr &b) {
  Split s;
  CUZK_FF_UNROLL
  for (int i = 0; i < 4; ++i) {
    s.lo.l[i] = b.l[i];
    s.hi.l[i] = b.l[4 + i];
  }
  s.sum.l[0] = add_cc(s.lo.l[0], s.hi.l[0]);
  CUZK_FF_UNROLL
  for (int i = 1; i < 4; ++i) s.sum.l[i] = addc_cc(s.lo.l[i], s.hi.l[i]);
  s.sum_top = addc(0, 0);
  return s;
}

// a b 2^-256 mod r for a, b < r (b given split).
CUZK_FF_HD Fr mul(const Fr &a, const Split &b) {
  const Split sa = split(a);
  u32 p0[8], p2[8], p1[8];
  Half::mul_wide(sa.lo, b.lo, p0);
  Half::mul_wide(sa.hi, b.hi, p2);
  Half::mul_wide(sa.sum, b.sum, p1);
  // p1 += (sa.sum_top b.sum + b.sum_top sa.sum) 2^128 + both tops 2^256.
  const u32 ma = 0u - sa.sum_top, mb = 0u - b.sum_top;
  u32 top;
  p1[4] = add_cc(p1[4], b.sum.l[0] & ma);
  p1[5] = addc_cc(p1[5], b.sum.l[1] & ma);
  p1[6] = addc_cc(p1[6], b.sum.l[2] & ma);
  p1[7] = addc_cc(p1[7], b.sum.l[3] & ma);
  top = addc(sa.sum_top & b.sum_top, 0);
  p1[4] = add_cc(p1[4], sa.sum.l[0] & mb);
  p1[5] = addc_cc(p1[5], sa.sum.l[1] & mb);
  p1[6] = addc_cc(p1[6], sa.sum.l[2] & mb);
  p1[7] = addc_cc(p1[7], sa.sum.l[3] & mb);
  top = addc(top, 0);
  // m = p1 - p0 - p2 = a_lo b_hi + a_hi b_lo (>= 0, < 2^257).
  u32 m[8];
  m[0] = sub_cc(p1[0], p0[0]);
  CUZK_FF_UNROLL
  for (int i = 1; i < 8; ++i) m[i] = subc_cc(p1[i], p0[i]);
  top = subc(top, 0);
  m[0] = sub_cc(m[0], p2[0]);
  CUZK_FF_UNROLL
  for (int i = 1; i < 8; ++i) m[i] = subc_cc(m[i], p2[i]);
  top = subc(top, 0);
  // w = p0 + m 2^128 + p2 2^256.
  u32 w[16];
  CUZK_FF_UNROLL
  for (int i = 0; i < 4; ++i) w[i] = p0[i];
  w[4] = add_cc(p0[4], m[0]);
  w[5] = addc_cc(p0[5], m[1]);
  w[6] = addc_cc(p0[6], m[2]);
  w[7] = addc_cc(p0[7], m[3]);
  w[8] = addc_cc(p2[0], m[4]);
  w[9] = addc_cc(p2[1], m[5]);
  w[10] = addc_cc(p2[2], m[6]);
  w[11] = addc_cc(p2[3], m[7]);
  w[12] = addc_cc(p2[4], top);
  w[13] = addc_cc(p2[5], 0);
  w[14] = addc_cc(p2[6], 0);
  w[15] = addc(p2[7], 0);
  return Fr::redc(w);
}

}  // namespace kara
}  // namespace cuzk::gpu::dev
