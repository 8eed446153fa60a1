// bench_gpu field's "f64" form (device only): the Fr Montgomery product on
// the FP64 pipe. Measured against the even/odd form in bench/gpu/NOTES.md
// ("The Fr product's pipes"): the same throughput, so no kernel
// uses it.
#pragma once

#include "gpu/ff/field.cuh"

namespace cuzk::gpu::dev {
// Radix 2^52, 5 limbs, R' = 2^260 (the caller scales b by 2^4 to get the
// 2^-256 of the other forms). Each 52x52 limb product is split exactly by two
// DFMA.RZ and one DADD: hi = fma_rz(a, b, 2^104) holds floor(ab / 2^52) in its
// mantissa, lo = fma_rz(a, b, 2^104 + 2^52 - hi) = 2^52 + (ab mod 2^52). Their
// bit patterns are integers plus a known exponent offset, summed in 64-bit
// columns (the offsets are removed by each column's starting value).
namespace f64x {
using u64 = unsigned long long;
constexpr double kC1 = 0x1p104;
constexpr double kC3 = 0x1p104 + 0x1p52;
constexpr double kTwo52 = 0x1p52;
constexpr u64 kHiBits = 0x4670000000000000ull;
constexpr u64 kLoBits = 0x4330000000000000ull;
constexpr u64 kMask52 = (u64{1} << 52) - 1;
__device__ __forceinline__ constexpr double r_limb(int j) {
  return j == 0   ? double(0xfffff00000001ull)
         : j == 1 ? double(0x2fffe5bfefffull)
         : j == 2 ? double(0x9a1d80553bda4ull)
         : j == 3 ? double(0x7d483339d8080ull)
                  : double(0x73eda753299dull);
}
struct F52 {
  double v[5];
};
__device__ __forceinline__ double u52_to_double(u32 hi20, u32 lo32) {
  return __dsub_rn(__hiloint2double(int(hi20 | 0x43300000u), int(lo32)), kTwo52);
}
__device__ __forceinline__ F52 to_f52(const u32 (&l)[8]) {
  u32 w[11];
#pragma unroll
  for (int i = 0; i < 8; ++i) w[i] = l[i];
  w[8] = w[9] = w[10] = 0;
  F52 r;
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const int bit = 52 * k, word = bit / 32, sh = bit % 32;
    const u32 lo = __funnelshift_r(w[word], w[word + 1], sh);
    const u32 hi = __funnelshift_r(w[word + 1], w[word + 2], sh) & 0xfffffu;
    r.v[k] = u52_to_double(hi, lo);
  }
  return r;
}
// Number of hi / lo patterns each column receives (compile-time).
__device__ __forceinline__ constexpr u64 column_bias(int k) {
  u64 b = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j) {
      if (i + j == k) b += kLoBits;
      if (i + j + 1 == k) b += kHiBits;
    }
  for (int m = 0; m < 5; ++m) {
    for (int j = 1; j < 5; ++j)
      if (m + j == k) b += kLoBits;
    for (int j = 0; j < 5; ++j)
      if (m + j + 1 == k) b += kHiBits;
  }
  return b;
}
__device__ __forceinline__ void split(double a, double b, u64 &hi, u64 &lo) {
  const double h = __fma_rz(a, b, kC1);
  const double s = __dsub_rn(kC3, h);  // exact: (1 - H) 2^52
  const double l = __fma_rz(a, b, s);
  hi = u64(__double_as_longlong(h));
  lo = u64(__double_as_longlong(l));
}
// a (8 x 32-bit limbs, < r) times b (5 limbs, < r): a b 2^-260 mod r, reduced.
__device__ __forceinline__ void mul(const u32 (&a32)[8], const F52 &b, u32 (&out)[8]) {
  const F52 a = to_f52(a32);
  u64 col[11];
#pragma unroll
  for (int k = 0; k < 11; ++k) col[k] = 0 - column_bias(k);
#pragma unroll
  for (int i = 0; i < 5; ++i)
#pragma unroll
    for (int j = 0; j < 5; ++j) {
      u64 hi, lo;
      split(a.v[i], b.v[j], hi, lo);
      col[i + j] += lo;
      col[i + j + 1] += hi;
    }
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const u64 v = col[k];
    const u64 m = (0 - (v + (v << 32))) & kMask52;  // -v r^-1 mod 2^52
    col[k + 1] += (v + kMask52) >> 52;              // (v + (-v mod 2^52)) / 2^52
    const double md = u52_to_double(u32(m >> 32), u32(m));
    col[k + 1] += u64(__double_as_longlong(__fma_rz(md, r_limb(0), kC1)));
#pragma unroll
    for (int j = 1; j < 5; ++j) {
      u64 hi, lo;
      split(md, r_limb(j), hi, lo);
      col[k + j] += lo;
      col[k + j + 1] += hi;
    }
  }
  // The result (< 2r < 2^256) in columns 5..9: carry them into 52-bit limbs
  // (the top one takes the rest).
  u64 t[5];
  u64 c = 0;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const u64 v = col[5 + k] + c;
    t[k] = v & kMask52;
    c = v >> 52;
  }
  t[4] = col[9] + c;
  // Repack 5 x 52 -> 8 x 32.
  u32 r[8];
  r[0] = u32(t[0]);
  r[1] = u32(t[0] >> 32) | u32(t[1] << 20);
  r[2] = u32(t[1] >> 12);
  r[3] = u32(t[1] >> 44) | u32(t[2] << 8);
  r[4] = u32(t[2] >> 24) | u32(t[3] << 28);
  r[5] = u32(t[3] >> 4);
  r[6] = u32(t[3] >> 36) | u32(t[4] << 16);
  r[7] = u32(t[4] >> 16);
  Fr::reduce_once(r);
#pragma unroll
  for (int i = 0; i < 8; ++i) out[i] = r[i];
}
}  // namespace f64x
}  // namespace cuzk::gpu::dev
