// Field inversion on the device for the affine MSM tree
// (gpu/msm/msm_tree.cu): one inversion is shared by
// many additions through Montgomery's trick, so its latency, not its
// throughput, is what matters.
#pragma once

#include "gpu/ff/field.cuh"

namespace cuzk::gpu::dev::inversion {

// a >>= 1 with `top` (0 or 1) shifted into bit 383.
static __device__ __forceinline__ void shr1(u32 (&a)[12], u32 top) {
#pragma unroll
  for (int i = 0; i < 11; ++i) a[i] = __funnelshift_r(a[i], a[i + 1], 1);
  a[11] = __funnelshift_r(a[11], top, 1);
}

// x / 2 mod p for x < p: x even -> x >> 1; odd -> (x + p) >> 1 (x + p < 2^382).
static __device__ __forceinline__ void halve_mod_p(u32 (&x)[12]) {
  if ((x[0] & 1u) == 0) {
    shr1(x, 0);
    return;
  }
  x[0] = add_cc(x[0], FpParams::p(0));
#pragma unroll
  for (int i = 1; i < 12; ++i) x[i] = addc_cc(x[i], FpParams::p(i));
  const u32 carry = addc(0, 0);
  shr1(x, carry);
}

static __device__ __forceinline__ bool is_one_int(const u32 (&a)[12]) {
  u32 acc = a[0] ^ 1u;
#pragma unroll
  for (int i = 1; i < 12; ++i) acc |= a[i];
  return acc == 0;
}

// R^3 mod p (R = 2^384): Montgomery-multiplying the plain inverse (aR)^-1 by
// it gives (aR)^-1 R^3 / R = a^-1 R, the Montgomery form of a^-1.
static __device__ __forceinline__ Fp r_cubed() {
  constexpr u32 v[12] = {0xd94ca1e0, 0xed48ac6b, 0x03a7adf8, 0x315f831e, 0x615e29dd, 0x9a53352a,
                         0x921e1761, 0x34c04e5e, 0x65724728, 0x2512d435, 0x91755d4d, 0x0aa63460};
  Fp r;
#pragma unroll
  for (int i = 0; i < 12; ++i) r.l[i] = v[i];
  return r;
}

// a^-1 for a != 0 (Montgomery form in and out). Binary extended Euclid on the
// integer A = aR: invariants x1 A = u, x2 A = v (mod p); u, v odd after the
// halvings, and the larger loses the smaller until one of them is 1.
static __device__ __noinline__ Fp inverse(const Fp& a) {
  if (a.is_zero()) return a;  // not reached: callers pass products of nonzero d's
  u32 u[12], v[12];
  Fp x1 = Fp::zero(), x2 = Fp::zero();  // plain integers < p (not Montgomery)
#pragma unroll
  for (int i = 0; i < 12; ++i) {
    u[i] = a.l[i];
    v[i] = FpParams::p(i);
  }
  x1.l[0] = 1;
  while (!is_one_int(u) && !is_one_int(v)) {
    while ((u[0] & 1u) == 0) {
      shr1(u, 0);
      halve_mod_p(x1.l);
    }
    while ((v[0] & 1u) == 0) {
      shr1(v, 0);
      halve_mod_p(x2.l);
    }
    u32 d[12];
    d[0] = sub_cc(u[0], v[0]);
#pragma unroll
    for (int i = 1; i < 12; ++i) d[i] = subc_cc(u[i], v[i]);
    const u32 borrow = subc(0, 0);  // all ones when u < v
    if (borrow == 0) {
#pragma unroll
      for (int i = 0; i < 12; ++i) u[i] = d[i];
      x1 = x1 - x2;  // Field subtraction is mod p on the plain integers too
    } else {
      v[0] = sub_cc(v[0], u[0]);
#pragma unroll
      for (int i = 1; i < 12; ++i) v[i] = subc_cc(v[i], u[i]);
      x2 = x2 - x1;
    }
  }
  return (is_one_int(u) ? x1 : x2) * r_cubed();
}

// (c0 + c1 u)^-1 = (c0 - c1 u) / (c0^2 + c1^2), since u^2 = -1.
static __device__ __noinline__ Fp2 inverse(const Fp2& a) {
  const Fp t = inverse(a.c0.sqr() + a.c1.sqr());
  return {a.c0 * t, -(a.c1 * t)};
}

}  // namespace cuzk::gpu::dev::inversion
