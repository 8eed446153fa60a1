// Device prime fields in Montgomery form with 32-bit limbs.
//
// Layout contract: an element is N little-endian 32-bit limbs holding x*R mod p
// with R = 2^(32N), fully reduced (< p). The host's MontField (src/ff/mont.hpp)
// stores the same integer as N/2 little-endian 64-bit limbs with the same R
// (2^384 for Fp, 2^256 for Fr), so on a little-endian host a memcpy of a host
// array is the device array and vice versa.
//
// Multiplication is row-wise CIOS written as PTX carry chains (mad.lo.cc /
// madc.hi.cc): per row the accumulator t (N+1 limbs) gets a*b_i (two chains,
// low and high halves of the 32x32 products) and then m*p with m = t0 * (-p^-1)
// (two more chains), then shifts down one limb. Cost: 2N^2 + N full products
// (Fp 300, Fr 136). The accumulator needs only N+1 limbs because both moduli
// leave their top bit clear: t < 2p after each row, and 2p + 2(2^32-1)p < 2^(32N+32).
// Squaring forms the 2N-limb square with doubled off-diagonal products
// (N(N-1)/2 + N products) and then Montgomery-reduces (N^2 + N): Fp 234 vs 300.
#pragma once

#include <cstdint>

namespace cuzk::gpu::dev {

using u32 = std::uint32_t;

// Single-instruction PTX wrappers. Carry-flag users are `asm volatile` so that
// the compiler keeps them in program order; ptxas keeps CC.CF between them.
__device__ __forceinline__ u32 add_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 addc_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 addc(u32 a, u32 b) {
  u32 r;
  asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 sub_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 subc_cc(u32 a, u32 b) {
  u32 r;
  asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
__device__ __forceinline__ u32 subc(u32 a, u32 b) {
  u32 r;
  asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
  return r;
}
// acc + lo(a*b), starting / continuing / ending a chain.
__device__ __forceinline__ u32 mad_lo_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 madc_lo_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 mad_hi_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 madc_hi_cc(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}
__device__ __forceinline__ u32 madc_hi(u32 a, u32 b, u32 c) {
  u32 r;
  asm volatile("madc.hi.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
  return r;
}

// P provides: kN (limb count), p(i) (modulus limbs), kInv (-p^-1 mod 2^32), one(i) (limbs of R mod p).
// Limbs come from constexpr functions so that unrolled loops fold them into immediates.
// 16-byte alignment lets the compiler move elements with 128-bit loads (every
// element size, 32/48/96 B, is a multiple of 16).
template <class P>
struct alignas(16) Field {
  static constexpr int N = P::kN;
  u32 l[N];

  __device__ __forceinline__ static Field zero() {
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.l[i] = 0;
    return r;
  }
  __device__ __forceinline__ static Field one() {
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.l[i] = P::one(i);
    return r;
  }
  __device__ __forceinline__ bool is_zero() const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  __device__ __forceinline__ bool operator==(const Field& o) const {
    u32 acc = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  __device__ __forceinline__ bool operator!=(const Field& o) const { return !(*this == o); }

  // r = t - p if t >= p else t (t < 2p, N limbs; spare top bit means no carry limb).
  __device__ __forceinline__ static void reduce_once(u32 (&t)[N]) {
    u32 s[N];
    s[0] = sub_cc(t[0], P::p(0));
#pragma unroll
    for (int i = 1; i < N; ++i) s[i] = subc_cc(t[i], P::p(i));
    const u32 borrow = subc(0, 0);  // 0xffffffff when t < p
#pragma unroll
    for (int i = 0; i < N; ++i) t[i] = borrow ? t[i] : s[i];
  }

  __device__ __forceinline__ friend Field operator+(const Field& a, const Field& b) {
    Field r;
    r.l[0] = add_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; ++i) r.l[i] = addc_cc(a.l[i], b.l[i]);
    reduce_once(r.l);  // a + b < 2p < 2^(32N): no carry out
    return r;
  }
  __device__ __forceinline__ friend Field operator-(const Field& a, const Field& b) {
    Field r;
    r.l[0] = sub_cc(a.l[0], b.l[0]);
#pragma unroll
    for (int i = 1; i < N; ++i) r.l[i] = subc_cc(a.l[i], b.l[i]);
    const u32 mask = subc(0, 0);  // all ones on borrow: add p back
    r.l[0] = add_cc(r.l[0], P::p(0) & mask);
#pragma unroll
    for (int i = 1; i < N; ++i) r.l[i] = addc_cc(r.l[i], P::p(i) & mask);
    return r;
  }
  __device__ __forceinline__ Field operator-() const { return zero() - *this; }
  __device__ __forceinline__ Field dbl() const { return *this + *this; }

  __device__ __forceinline__ friend Field operator*(const Field& a, const Field& b) {
    u32 t[N + 1];
#pragma unroll
    for (int i = 0; i <= N; ++i) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const u32 bi = b.l[i];
      // t += a * b_i: low halves into t[0..N-1] (carry into t[N]) ...
      t[0] = mad_lo_cc(a.l[0], bi, t[0]);
#pragma unroll
      for (int j = 1; j < N; ++j) t[j] = madc_lo_cc(a.l[j], bi, t[j]);
      t[N] = addc(t[N], 0);
      // ... high halves into t[1..N].
      t[1] = mad_hi_cc(a.l[0], bi, t[1]);
#pragma unroll
      for (int j = 1; j < N - 1; ++j) t[j + 1] = madc_hi_cc(a.l[j], bi, t[j + 1]);
      t[N] = madc_hi(a.l[N - 1], bi, t[N]);
      // t += m * p with m chosen so that t[0] becomes 0, then t >>= 32.
      const u32 m = t[0] * P::kInv;
      t[0] = mad_lo_cc(m, P::p(0), t[0]);
#pragma unroll
      for (int j = 1; j < N; ++j) t[j] = madc_lo_cc(m, P::p(j), t[j]);
      t[N] = addc(t[N], 0);
      t[1] = mad_hi_cc(m, P::p(0), t[1]);
#pragma unroll
      for (int j = 1; j < N - 1; ++j) t[j + 1] = madc_hi_cc(m, P::p(j), t[j + 1]);
      t[N] = madc_hi(m, P::p(N - 1), t[N]);
#pragma unroll
      for (int j = 0; j < N; ++j) t[j] = t[j + 1];
      t[N] = 0;
    }
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.l[i] = t[i];
    reduce_once(r.l);
    return r;
  }

  __device__ __forceinline__ Field sqr() const {
    const u32* a = l;
    u32 w[2 * N];
#pragma unroll
    for (int i = 0; i < 2 * N; ++i) w[i] = 0;
    // Off-diagonal products a_i a_j (i < j) at limb i + j, one row per i. Row i's
    // low chain ends at limb i+N-1 and carries into limb i+N, which no earlier
    // row has touched; the partial sum always fits in limbs 0..i+N.
#pragma unroll
    for (int i = 0; i < N - 1; ++i) {
      w[2 * i + 1] = mad_lo_cc(a[i], a[i + 1], w[2 * i + 1]);
#pragma unroll
      for (int j = i + 2; j < N; ++j) w[i + j] = madc_lo_cc(a[i], a[j], w[i + j]);
      w[i + N] = addc(0, 0);
      if (i + 1 < N - 1) {
        w[2 * i + 2] = mad_hi_cc(a[i], a[i + 1], w[2 * i + 2]);
#pragma unroll
        for (int j = i + 2; j < N - 1; ++j) w[i + j + 1] = madc_hi_cc(a[i], a[j], w[i + j + 1]);
        w[i + N] = madc_hi(a[i], a[N - 1], w[i + N]);
      } else {
        // Last row (i = N-2) has the single product a_{N-2} a_{N-1}.
        w[i + N] = mad_hi_cc(a[i], a[i + 1], w[i + N]);
      }
    }
    // Double the off-diagonal sum (w[0] is 0), then add the diagonal a_i^2.
    w[1] = add_cc(w[1], w[1]);
#pragma unroll
    for (int i = 2; i < 2 * N; ++i) w[i] = addc_cc(w[i], w[i]);
    w[0] = mad_lo_cc(a[0], a[0], w[0]);
    w[1] = madc_hi_cc(a[0], a[0], w[1]);
#pragma unroll
    for (int i = 1; i < N; ++i) {
      w[2 * i] = madc_lo_cc(a[i], a[i], w[2 * i]);
      if (i + 1 < N) {
        w[2 * i + 1] = madc_hi_cc(a[i], a[i], w[2 * i + 1]);
      } else {
        w[2 * i + 1] = madc_hi(a[i], a[i], w[2 * i + 1]);
      }
    }
    return redc(w);
  }

  // Montgomery reduction of a 2N-limb value w < p^2: returns w / R mod p.
  __device__ __forceinline__ static Field redc(const u32 (&w)[2 * N]) {
    u32 t[N + 1];
#pragma unroll
    for (int i = 0; i < N; ++i) t[i] = w[i];
    t[N] = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const u32 m = t[0] * P::kInv;
      t[0] = mad_lo_cc(m, P::p(0), t[0]);
#pragma unroll
      for (int j = 1; j < N; ++j) t[j] = madc_lo_cc(m, P::p(j), t[j]);
      t[N] = addc(t[N], 0);
      t[1] = mad_hi_cc(m, P::p(0), t[1]);
#pragma unroll
      for (int j = 1; j < N - 1; ++j) t[j + 1] = madc_hi_cc(m, P::p(j), t[j + 1]);
      t[N] = madc_hi(m, P::p(N - 1), t[N]);
#pragma unroll
      for (int j = 0; j < N; ++j) t[j] = t[j + 1];
      // Bring in the next limb of the high half.
      t[N - 1] = add_cc(t[N - 1], w[N + i]);
      t[N] = addc(0, 0);
    }
    Field r;
#pragma unroll
    for (int i = 0; i < N; ++i) r.l[i] = t[i];
    reduce_once(r.l);
    return r;
  }

  // Montgomery -> standard integer (x*R -> x): one reduction of x*R padded with zeros.
  __device__ __forceinline__ Field from_mont() const {
    u32 w[2 * N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      w[i] = l[i];
      w[N + i] = 0;
    }
    return redc(w);
  }
};

// BLS12-381 base field p (381 bits), little-endian 32-bit limbs.
struct FpParams {
  static constexpr int kN = 12;
  __host__ __device__ static constexpr u32 p(int i) {
    constexpr u32 v[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                 0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    return v[i];
  }
  static constexpr u32 kInv = 0xfffcfffd;  // -p^-1 mod 2^32
  // R mod p, R = 2^384.
  __host__ __device__ static constexpr u32 one(int i) {
    constexpr u32 v[12] = {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857,
                                   0x70525745, 0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3};
    return v[i];
  }
};

// BLS12-381 scalar field r (255 bits).
struct FrParams {
  static constexpr int kN = 8;
  __host__ __device__ static constexpr u32 p(int i) {
    constexpr u32 v[8] = {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402,
                                0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753};
    return v[i];
  }
  static constexpr u32 kInv = 0xffffffff;  // -r^-1 mod 2^32 (r = 1 mod 2^32)
  // R mod r, R = 2^256.
  __host__ __device__ static constexpr u32 one(int i) {
    constexpr u32 v[8] = {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa,
                                  0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159};
    return v[i];
  }
};

using Fp = Field<FpParams>;
using Fr = Field<FrParams>;

// Fp2 = Fp[u]/(u^2 + 1), same layout as the host's {c0, c1}.
struct Fp2 {
  Fp c0, c1;

  __device__ __forceinline__ static Fp2 zero() { return {Fp::zero(), Fp::zero()}; }
  __device__ __forceinline__ static Fp2 one() { return {Fp::one(), Fp::zero()}; }
  __device__ __forceinline__ bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  __device__ __forceinline__ bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  __device__ __forceinline__ bool operator!=(const Fp2& o) const { return !(*this == o); }
  __device__ __forceinline__ friend Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  __device__ __forceinline__ friend Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  __device__ __forceinline__ Fp2 operator-() const { return {-c0, -c1}; }
  __device__ __forceinline__ Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  // Karatsuba: (a0 b0 - a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u, 3 Fp mul.
  __device__ __forceinline__ friend Fp2 operator*(const Fp2& a, const Fp2& b) {
    const Fp v0 = a.c0 * b.c0;
    const Fp v1 = a.c1 * b.c1;
    return {v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
  }
  // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u, 2 Fp mul.
  __device__ __forceinline__ Fp2 sqr() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
};

}  // namespace cuzk::gpu::dev
