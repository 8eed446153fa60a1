// Device prime fields in Montgomery form with 32-bit limbs.
//
// Layout contract: an element is N little-endian 32-bit limbs holding x*R mod p
// with R = 2^(32N), fully reduced (< p). The host's MontField (src/ff/mont.hpp)
// stores the same integer as N/2 little-endian 64-bit limbs with the same R
// (2^384 for Fp, 2^256 for Fr), so on a little-endian host a memcpy of a host
// array is the device array and vice versa.
//
// Two forms of the Montgomery multiplication, both callable by name so that one
// binary can time them (bench_gpu field); CUZK_FIELD_MUL picks the one behind
// operator* and sqr() in every kernel.
//  - CIOS (mul_cios, sqr_cios): per row the accumulator t (N+1 limbs) gets a*b_i
//    (two chains, low and high halves of the 32x32 products) and then m*p with
//    m = t0 * (-p^-1) (two more chains), then shifts down one limb. Each chain
//    reads the limbs the previous one wrote, so a row is four dependent chains.
//  - Even/odd accumulators (mul_evenodd, sqr_evenodd): the products a_j*b_i of
//    even j tile limbs j, j+1 without overlap, so they form ONE alternating
//    lo/hi chain into an aligned accumulator; those of odd j form another chain
//    into an accumulator offset by one limb. The two chains of a row share no
//    limb, so ptxas (which turns the carry flag into predicate carries) can run
//    them side by side; the shift by one limb per row swaps the two roles
//    (details and carry bounds at mul_evenodd). Because a lo/hi pair lands in
//    two consecutive limbs of one chain, ptxas fuses most pairs into a single
//    IMAD.WIDE.U32(.X) with the carries in predicates. sm_90 SASS, static
//    count of one Fp mul (nvcc 13, bench_gpu field's 1-chain loop): CIOS 1256
//    instructions (IMAD/IMAD.HI 607, IADD3 565), even/odd 440 (IMAD.WIDE
//    279, IMAD/IMAD.HI 26, IADD3 59); Fr mul 640 -> 288 (IMAD.WIDE 114,
//    IMAD 8). An IMAD.WIDE takes 2 multiply-pipe slots, IMAD 1, IMAD.HI 2,
//    so an unfused pair costs 1.5x: see wide_product and opaque below.
// Cost: 2N^2 + N full products (Fp 300, Fr 136) for either multiplication;
// for Fr, r = 1 - 2^32 mod 2^64 and -r^-1 = -1 mod 2^32 turn 24 of the 136
// into adds in the even/odd form (reduction_factor, add_even_products,
// add_odd_modulus_products_unit_low): 112 on the multiply pipe.
// Squaring forms the 2N-limb square with doubled off-diagonal products
// (N(N-1)/2 + N products) and then Montgomery-reduces (N^2 + N): Fp 234 vs 300.
//
// Every function is __host__ __device__: on the device each primitive below is
// one PTX instruction; in nvcc's host pass (the CI test, no GPU needed) the
// primitives emulate the PTX carry flag CC.CF in a per-thread variable, so the
// host runs exactly the device's instruction sequence, carries included.
#pragma once

#include <cstdint>

// 0: row-wise CIOS; 1: even/odd accumulators (the default). Flips operator*
// and sqr() of every device field (NTT, MSM, setup, prover kernels) at once.
// H200, bench_gpu field (4 chains per thread, 32x32 product pairs per clock
// per SM): Fp mul 16.8 -> 30.0, Fr mul 19.0 -> 26.7; in the kernels NTT 2^27
// 59.0 -> 41.5 ms, G1 MSM 2^24 202.9 -> 117.4 ms (bench/RESULTS.md, 2026-11-30).
#ifndef CUZK_FIELD_MUL
#define CUZK_FIELD_MUL 1
#endif

// 0: Fp2 product as three full Montgomery products (Fp2::mul_karatsuba3);
// 1: lazily reduced, three double-width products and one reduction per output
// coefficient (Fp2::mul_lazy, the default). Flips Fp2's operator* and the
// bucket reduction's slot products (gpu/msm/msm_reduce.cu) at once.
#ifndef CUZK_FP2_MUL
#define CUZK_FP2_MUL 1
#endif

#define CUZK_FF_HD __host__ __device__ __forceinline__
// Unrolling matters on the device only (limb indices become registers and
// immediates); the host compiler would warn about the unknown pragma.
#ifdef __CUDA_ARCH__
#define CUZK_FF_UNROLL _Pragma("unroll")
#else
#define CUZK_FF_UNROLL
#endif

namespace cuzk::gpu::dev {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

enum class MulForm { kCios, kEvenOdd };
inline constexpr MulForm kMulForm = CUZK_FIELD_MUL == 1 ? MulForm::kEvenOdd : MulForm::kCios;
enum class Fp2MulForm { kKaratsuba3, kLazy };
inline constexpr Fp2MulForm kFp2MulForm = CUZK_FP2_MUL == 1 ? Fp2MulForm::kLazy : Fp2MulForm::kKaratsuba3;

#ifndef __CUDA_ARCH__
namespace host_emu {
// CC.CF of the calling host thread. Add chains store the carry out (0/1);
// subtract chains store the borrow (1 when the result wrapped), as PTX does.
inline u32& carry_flag() {
  static thread_local u32 cf = 0;
  return cf;
}
// sum < 2^33; the low 32 bits, CF = bit 32 when set_cf.
inline u32 add_out(u64 sum, bool set_cf) {
  if (set_cf) carry_flag() = u32(sum >> 32);
  return u32(sum);
}
// a - (b + CF_in): CF = borrow when set_cf.
inline u32 sub_out(u32 a, u64 b_plus_borrow, bool set_cf) {
  if (set_cf) carry_flag() = b_plus_borrow > a ? 1u : 0u;
  return u32(u64(a) - b_plus_borrow);
}
inline u64 lo_product(u32 a, u32 b) { return u64(a) * b & 0xffffffffu; }
inline u64 hi_product(u32 a, u32 b) { return (u64(a) * b) >> 32; }
}  // namespace host_emu
#define CUZK_FF_EMU(expr)   \
  using namespace host_emu; \
  return expr
#endif

// Single-instruction PTX wrappers. Carry-flag users are `asm volatile` so that
// the compiler keeps them in program order; ptxas keeps CC.CF between them.
#ifdef __CUDA_ARCH__
#define CUZK_FF_PTX2(op)                                      \
  u32 r;                                                      \
  asm volatile(op " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); \
  return r
#define CUZK_FF_PTX3(op)                                                  \
  u32 r;                                                                  \
  asm volatile(op " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); \
  return r
#define CUZK_FF_OP2(op, emu) CUZK_FF_PTX2(op)
#define CUZK_FF_OP3(op, emu) CUZK_FF_PTX3(op)
#else
#define CUZK_FF_OP2(op, emu) CUZK_FF_EMU(emu)
#define CUZK_FF_OP3(op, emu) CUZK_FF_EMU(emu)
#endif

CUZK_FF_HD u32 add_cc(u32 a, u32 b) { CUZK_FF_OP2("add.cc.u32", add_out(u64(a) + b, true)); }
CUZK_FF_HD u32 addc_cc(u32 a, u32 b) { CUZK_FF_OP2("addc.cc.u32", add_out(u64(a) + b + carry_flag(), true)); }
CUZK_FF_HD u32 addc(u32 a, u32 b) { CUZK_FF_OP2("addc.u32", add_out(u64(a) + b + carry_flag(), false)); }
CUZK_FF_HD u32 sub_cc(u32 a, u32 b) { CUZK_FF_OP2("sub.cc.u32", sub_out(a, b, true)); }
CUZK_FF_HD u32 subc_cc(u32 a, u32 b) { CUZK_FF_OP2("subc.cc.u32", sub_out(a, u64(b) + carry_flag(), true)); }
CUZK_FF_HD u32 subc(u32 a, u32 b) { CUZK_FF_OP2("subc.u32", sub_out(a, u64(b) + carry_flag(), false)); }
// c + lo(a*b) / c + hi(a*b), starting (mad) or continuing (madc) a chain; .cc
// forms write the carry out.
CUZK_FF_HD u32 mad_lo_cc(u32 a, u32 b, u32 c) { CUZK_FF_OP3("mad.lo.cc.u32", add_out(lo_product(a, b) + c, true)); }
CUZK_FF_HD u32 madc_lo_cc(u32 a, u32 b, u32 c) {
  CUZK_FF_OP3("madc.lo.cc.u32", add_out(lo_product(a, b) + c + carry_flag(), true));
}
CUZK_FF_HD u32 mad_hi_cc(u32 a, u32 b, u32 c) { CUZK_FF_OP3("mad.hi.cc.u32", add_out(hi_product(a, b) + c, true)); }
CUZK_FF_HD u32 madc_hi_cc(u32 a, u32 b, u32 c) {
  CUZK_FF_OP3("madc.hi.cc.u32", add_out(hi_product(a, b) + c + carry_flag(), true));
}
CUZK_FF_HD u32 madc_hi(u32 a, u32 b, u32 c) {
  CUZK_FF_OP3("madc.hi.u32", add_out(hi_product(a, b) + c + carry_flag(), false));
}
// (lo, hi) = a*b as one 64-bit product: ptxas emits one IMAD.WIDE.U32 (2
// multiply-pipe slots) where a separate lo and hi (IMAD + IMAD.HI) take 3.
// Static sm_90 SASS, first rows of one mul: Fr 8 IMAD + 14 IMAD.HI -> 0;
// Fp IMAD.HI 35 -> 12.
CUZK_FF_HD void wide_product(u32 a, u32 b, u32& lo, u32& hi) {
  const u64 w = u64(a) * b;
  lo = u32(w);
  hi = u32(w >> 32);
}

// x, through an identity byte permute (PRMT, ALU pipe) that ptxas does not see
// through. Fr's reduction factor is m = -t0: seeing the negation, ptxas
// computes each lo(m p_j) as lo(t0 (-p_j)) and so splits every m p_j
// pair into IMAD + IMAD.HI (3 multiply-pipe slots) instead of one
// IMAD.WIDE (2 slots). Static sm_90 SASS of one Fr mul (nvcc 13):
// IMAD.WIDE 58 -> 100, IMAD.HI 56 -> 14, IMAD 63 -> 24. H200, with
// wide_product: bench_gpu field Fr mul 53.4 -> 63.2 Gops/s,
// NTT 2^27 forward 41.0 -> 38.3 ms, partition GPU total 1147 -> 1108 ms.
CUZK_FF_HD u32 opaque(u32 x) {
#ifdef __CUDA_ARCH__
  u32 r;
  asm("prmt.b32 %0, %1, 0, 0x3210;" : "=r"(r) : "r"(x));
  return r;
#else
  return x;
#endif
}

#undef CUZK_FF_OP2
#undef CUZK_FF_OP3
#ifdef __CUDA_ARCH__
#undef CUZK_FF_PTX2
#undef CUZK_FF_PTX3
#else
#undef CUZK_FF_EMU
#endif

// P provides: kN (limb count), p(i) (modulus limbs), kInv (-p^-1 mod 2^32), one(i) (limbs of R mod p).
// Limbs come from constexpr functions so that unrolled loops fold them into immediates.
// 16-byte alignment lets the compiler move elements with 128-bit loads (every
// element size, 32/48/96 B, is a multiple of 16).
template <class P>
struct alignas(16) Field {
  static constexpr int N = P::kN;
  u32 l[N];

  CUZK_FF_HD static Field zero() {
    Field r;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) r.l[i] = 0;
    return r;
  }
  CUZK_FF_HD static Field one() {
    Field r;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) r.l[i] = P::one(i);
    return r;
  }
  CUZK_FF_HD bool is_zero() const {
    u32 acc = 0;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) acc |= l[i];
    return acc == 0;
  }
  CUZK_FF_HD bool operator==(const Field& o) const {
    u32 acc = 0;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) acc |= l[i] ^ o.l[i];
    return acc == 0;
  }
  CUZK_FF_HD bool operator!=(const Field& o) const { return !(*this == o); }

  // r = t - p if t >= p else t (t < 2p, N limbs; spare top bit means no carry limb).
  CUZK_FF_HD static void reduce_once(u32 (&t)[N]) {
    u32 s[N];
    s[0] = sub_cc(t[0], P::p(0));
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) s[i] = subc_cc(t[i], P::p(i));
    const u32 borrow = subc(0, 0);  // 0xffffffff when t < p
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) t[i] = borrow ? t[i] : s[i];
  }

  CUZK_FF_HD friend Field operator+(const Field& a, const Field& b) {
    Field r;
    r.l[0] = add_cc(a.l[0], b.l[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) r.l[i] = addc_cc(a.l[i], b.l[i]);
    reduce_once(r.l);  // a + b < 2p < 2^(32N): no carry out
    return r;
  }
  CUZK_FF_HD friend Field operator-(const Field& a, const Field& b) {
    Field r;
    r.l[0] = sub_cc(a.l[0], b.l[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) r.l[i] = subc_cc(a.l[i], b.l[i]);
    const u32 mask = subc(0, 0);  // all ones on borrow: add p back
    r.l[0] = add_cc(r.l[0], P::p(0) & mask);
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) r.l[i] = addc_cc(r.l[i], P::p(i) & mask);
    return r;
  }
  CUZK_FF_HD Field operator-() const { return zero() - *this; }
  CUZK_FF_HD Field dbl() const { return *this + *this; }

  // The multiplication and squaring every kernel uses (CUZK_FIELD_MUL).
  CUZK_FF_HD friend Field operator*(const Field& a, const Field& b) {
    if constexpr (kMulForm == MulForm::kEvenOdd) {
      return mul_evenodd(a, b);
    } else {
      return mul_cios(a, b);
    }
  }
  CUZK_FF_HD Field sqr() const {
    if constexpr (kMulForm == MulForm::kEvenOdd) {
      return sqr_evenodd();
    } else {
      return sqr_cios();
    }
  }
  // Montgomery reduction of a 2N-limb value w < p R (not only w < p^2: the
  // lazy Fp2 product feeds it up to 2 p^2 and p R - 1): returns w / R mod p,
  // fully reduced. Both forms end with (w + M p) / R < w / R + p < 2p (M < R
  // the accumulated reduction factor) and one conditional subtraction.
  CUZK_FF_HD static Field redc(const u32 (&w)[2 * N]) {
    if constexpr (kMulForm == MulForm::kEvenOdd) {
      return redc_evenodd(w);
    } else {
      return redc_cios(w);
    }
  }
  // Montgomery -> standard integer (x*R -> x): one reduction of x*R padded with zeros.
  CUZK_FF_HD Field from_mont() const {
    u32 w[2 * N];
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) {
      w[i] = l[i];
      w[N + i] = 0;
    }
    return redc(w);
  }

  // ---- row-wise CIOS ----------------------------------------------------------

  CUZK_FF_HD static Field mul_cios(const Field& a, const Field& b) {
    u32 t[N + 1];
    CUZK_FF_UNROLL
    for (int i = 0; i <= N; ++i) t[i] = 0;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) {
      const u32 bi = b.l[i];
      // t += a * b_i: low halves into t[0..N-1] (carry into t[N]) ...
      t[0] = mad_lo_cc(a.l[0], bi, t[0]);
      CUZK_FF_UNROLL
      for (int j = 1; j < N; ++j) t[j] = madc_lo_cc(a.l[j], bi, t[j]);
      t[N] = addc(t[N], 0);
      // ... high halves into t[1..N].
      t[1] = mad_hi_cc(a.l[0], bi, t[1]);
      CUZK_FF_UNROLL
      for (int j = 1; j < N - 1; ++j) t[j + 1] = madc_hi_cc(a.l[j], bi, t[j + 1]);
      t[N] = madc_hi(a.l[N - 1], bi, t[N]);
      // t += m * p with m chosen so that t[0] becomes 0, then t >>= 32.
      const u32 m = t[0] * P::kInv;
      t[0] = mad_lo_cc(m, P::p(0), t[0]);
      CUZK_FF_UNROLL
      for (int j = 1; j < N; ++j) t[j] = madc_lo_cc(m, P::p(j), t[j]);
      t[N] = addc(t[N], 0);
      t[1] = mad_hi_cc(m, P::p(0), t[1]);
      CUZK_FF_UNROLL
      for (int j = 1; j < N - 1; ++j) t[j + 1] = madc_hi_cc(m, P::p(j), t[j + 1]);
      t[N] = madc_hi(m, P::p(N - 1), t[N]);
      CUZK_FF_UNROLL
      for (int j = 0; j < N; ++j) t[j] = t[j + 1];
      t[N] = 0;
    }
    Field r;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) r.l[i] = t[i];
    reduce_once(r.l);
    return r;
  }

  CUZK_FF_HD Field sqr_cios() const {
    const u32* a = l;
    u32 w[2 * N];
    CUZK_FF_UNROLL
    for (int i = 0; i < 2 * N; ++i) w[i] = 0;
    // Off-diagonal products a_i a_j (i < j) at limb i + j, one row per i. Row i's
    // low chain ends at limb i+N-1 and carries into limb i+N, which no earlier
    // row has touched; the partial sum always fits in limbs 0..i+N.
    CUZK_FF_UNROLL
    for (int i = 0; i < N - 1; ++i) {
      w[2 * i + 1] = mad_lo_cc(a[i], a[i + 1], w[2 * i + 1]);
      CUZK_FF_UNROLL
      for (int j = i + 2; j < N; ++j) w[i + j] = madc_lo_cc(a[i], a[j], w[i + j]);
      w[i + N] = addc(0, 0);
      if (i + 1 < N - 1) {
        w[2 * i + 2] = mad_hi_cc(a[i], a[i + 1], w[2 * i + 2]);
        CUZK_FF_UNROLL
        for (int j = i + 2; j < N - 1; ++j) w[i + j + 1] = madc_hi_cc(a[i], a[j], w[i + j + 1]);
        w[i + N] = madc_hi(a[i], a[N - 1], w[i + N]);
      } else {
        // Last row (i = N-2) has the single product a_{N-2} a_{N-1}.
        w[i + N] = mad_hi_cc(a[i], a[i + 1], w[i + N]);
      }
    }
    // Double the off-diagonal sum (w[0] is 0), then add the diagonal a_i^2.
    w[1] = add_cc(w[1], w[1]);
    CUZK_FF_UNROLL
    for (int i = 2; i < 2 * N; ++i) w[i] = addc_cc(w[i], w[i]);
    w[0] = mad_lo_cc(a[0], a[0], w[0]);
    w[1] = madc_hi_cc(a[0], a[0], w[1]);
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) {
      w[2 * i] = madc_lo_cc(a[i], a[i], w[2 * i]);
      if (i + 1 < N) {
        w[2 * i + 1] = madc_hi_cc(a[i], a[i], w[2 * i + 1]);
      } else {
        w[2 * i + 1] = madc_hi(a[i], a[i], w[2 * i + 1]);
      }
    }
    return redc_cios(w);
  }

  CUZK_FF_HD static Field redc_cios(const u32 (&w)[2 * N]) {
    u32 t[N + 1];
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) t[i] = w[i];
    t[N] = 0;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) {
      const u32 m = t[0] * P::kInv;
      t[0] = mad_lo_cc(m, P::p(0), t[0]);
      CUZK_FF_UNROLL
      for (int j = 1; j < N; ++j) t[j] = madc_lo_cc(m, P::p(j), t[j]);
      t[N] = addc(t[N], 0);
      t[1] = mad_hi_cc(m, P::p(0), t[1]);
      CUZK_FF_UNROLL
      for (int j = 1; j < N - 1; ++j) t[j + 1] = madc_hi_cc(m, P::p(j), t[j + 1]);
      t[N] = madc_hi(m, P::p(N - 1), t[N]);
      CUZK_FF_UNROLL
      for (int j = 0; j < N; ++j) t[j] = t[j + 1];
      // Bring in the next limb of the high half.
      t[N - 1] = add_cc(t[N - 1], w[N + i]);
      t[N] = addc(0, 0);
    }
    Field r;
    CUZK_FF_UNROLL
    for (int i = 0; i < N; ++i) r.l[i] = t[i];
    reduce_once(r.l);
    return r;
  }

  // ---- even/odd accumulators ----------------------------------------------------
  //
  // A row adds x*y (x one limb, y = a or p) to two accumulators:
  //   even[k] at limb k (k <= N; even[N] only gathers carries out of limb N-1)
  //     += lo(x y_k) for even k, hi(x y_{k-1}) for odd k: the products of even j;
  //   odd[k] at limb k+1 (k < N)
  //     += lo(x y_{k+1}) for even k, hi(x y_k) for odd k: the products of odd j.
  // Each is one alternating mad.lo/madc.hi chain, and the two chains share no
  // register. (N is even for both fields, so each chain has N steps.)
  //
  // Shift by one limb between rows: with limb 0 cleared by m*p, the value / 2^32
  // is odd[k] at limb k and even[k] at limb k-1. So the old odd array becomes
  // the new aligned accumulator (plus even[1] at limb 0, a merge add whose carry
  // into limb 1 the next offset chain takes as its carry in), and even[2..N]
  // becomes the new offset accumulator (limbs 1..N-1, 0 at limb N). With full
  // unrolling the role swap is register renaming, no moves.
  //
  // Carry bounds, per row: T < 2p at the row start (the usual CIOS invariant:
  // (T + a b_i + m p) / 2^32 < (2p + 2 (2^32-1) p) / 2^32 = 2p). Inside the row
  // every partial sum is at most V = T + a b_i + m p < 2^33 p <= 2^(32N+32)
  // (Fp: 2^33 p < 2^414 <= 2^416; Fr: 2^33 r < 2^288 = 2^(32*9)), and all parts
  // are nonnegative. Hence odd * 2^32 <= V < 2^(32N+32): an offset chain never
  // carries out of odd[N-1] (its last step drops the carry flag), and even <= V
  // means even[N] never wraps. The final merge odd + even/2^32 = T_N < 2p <
  // 2^(32N) has no carry out either, and one conditional subtraction reduces it.

  // y_j limbs of the multiplicand a, or of the modulus (folded to immediates).
  struct Limbs {
    const u32* v;
    CUZK_FF_HD u32 operator()(int j) const { return v[j]; }
  };
  struct Modulus {
    CUZK_FF_HD u32 operator()(int j) const { return P::p(j); }
  };

  // even (odd) = the products of even (odd) j of x*y, on an empty accumulator
  // (the first row): the even products tile limbs 0..N-1 without overlap and
  // the odd ones limbs 1..N, so there is nothing to add.
  template <class Y>
  CUZK_FF_HD static void set_even_products(u32 (&even)[N + 1], u32 x, Y y) {
    CUZK_FF_UNROLL
    for (int j = 0; j < N; j += 2) {
      wide_product(x, y(j), even[j], even[j + 1]);
    }
    even[N] = 0;
  }
  template <class Y>
  CUZK_FF_HD static void set_odd_products(u32 (&odd)[N], u32 x, Y y) {
    CUZK_FF_UNROLL
    for (int j = 1; j < N; j += 2) {
      wide_product(x, y(j), odd[j - 1], odd[j]);
    }
  }

  // odd += products of odd j (offset chain, limbs 1..N). kCarryIn: the chain
  // takes a pending carry into limb 1 (from the merge add just before it). The
  // caller's bound (above) makes the carry out of limb N zero.
  template <bool kCarryIn, class Y>
  CUZK_FF_HD static void add_odd_products(u32 (&odd)[N], u32 x, Y y) {
    odd[0] = kCarryIn ? madc_lo_cc(x, y(1), odd[0]) : mad_lo_cc(x, y(1), odd[0]);
    odd[1] = madc_hi_cc(x, y(1), odd[1]);
    add_odd_products_from_3(odd, x, y);
  }
  // The offset chain's steps from the product x y_3 on (limbs 2..N), carry
  // pending in CC.CF.
  template <class Y>
  CUZK_FF_HD static void add_odd_products_from_3(u32 (&odd)[N], u32 x, Y y) {
    CUZK_FF_UNROLL
    for (int k = 2; k < N - 1; ++k) {
      odd[k] = k % 2 == 1 ? madc_hi_cc(x, y(k), odd[k]) : madc_lo_cc(x, y(k + 1), odd[k]);
    }
    odd[N - 1] = madc_hi(x, y(N - 1), odd[N - 1]);
  }

  // even += products of even j (aligned chain, limbs 0..N-1, carry into even[N]).
  // kUnitY0: y_0 = 1 (the modulus r of Fr, r = 1 mod 2^32): lo(x y_0) = x and
  // hi(x y_0) = 0, so the first two steps are plain adds (integer ALU, not the
  // multiply pipe).
  template <bool kUnitY0, class Y>
  CUZK_FF_HD static void add_even_products(u32 (&even)[N + 1], u32 x, Y y) {
    if constexpr (kUnitY0) {
      even[0] = add_cc(even[0], x);
      even[1] = addc_cc(even[1], 0);
    } else {
      even[0] = mad_lo_cc(x, y(0), even[0]);
      even[1] = madc_hi_cc(x, y(0), even[1]);
    }
    CUZK_FF_UNROLL
    for (int k = 2; k < N; ++k) {
      even[k] = k % 2 == 0 ? madc_lo_cc(x, y(k), even[k]) : madc_hi_cc(x, y(k - 1), even[k]);
    }
    even[N] = addc(even[N], 0);
  }

  // m = -t0 / p mod 2^32, the multiple of p that clears limb 0. For r = 1 mod
  // 2^32 (Fr, kInv = 2^32 - 1) it is the negation, an add instead of a
  // multiply, written as opaque(0) - t0 (see opaque): with opaque(0 - t0)
  // ptxas formed the negation as an IMAD.MOV on the multiply pipe (8 per
  // product; static SASS of the lean NTT pass: IMAD 253 -> 173, IADD3 866 ->
  // 946, and the PRMT is computed once per thread instead of once per row).
  CUZK_FF_HD static u32 reduction_factor(u32 t0) {
    if constexpr (P::kInv == 0xffffffffu) {
      return opaque(0u) - t0;
    } else {
      return t0 * P::kInv;
    }
  }

  // Fr's r = 1 - 2^32 mod 2^64: m = -t0, and m p_1 = m (2^32 - 1) has the
  // halves lo = -m = t0 and hi = m - 1 = ~t0 (both 0 when t0 = 0), so the odd
  // chain's first product becomes two adds of ALU results. Saves one of the
  // row's 2N products on the multiply pipe (8 of Fr's 136 per mul). H200:
  // bench_gpu field Fr mul 26.7 -> 27.5 P/clk/SM; NTT 2^27
  // forward 41.5 -> 41.1 ms; the partition's H stage 270.0 -> 267.8 ms.
  static constexpr bool kUnitLowWord = P::kInv == 0xffffffffu && P::p(0) == 1 && P::p(1) == 0xffffffffu;

  // odd += m p's products of odd j when p = 1 - 2^32 mod 2^64, from t0 = -m
  // (the limb m clears) and hi = unit_low_hi(t0). kCarryIn as add_odd_products.
  CUZK_FF_HD static u32 unit_low_hi(u32 t0) { return t0 == 0 ? 0u : ~t0; }
  template <bool kCarryIn>
  CUZK_FF_HD static void add_odd_modulus_products_unit_low(u32 (&odd)[N], u32 m, u32 t0, u32 hi) {
    odd[0] = kCarryIn ? addc_cc(odd[0], t0) : add_cc(odd[0], t0);
    odd[1] = addc_cc(odd[1], hi);
    add_odd_products_from_3(odd, m, Modulus{});
  }

  // even/odd += m p with m clearing limb 0 (t0 = even[0], which becomes 0 mod 2^32).
  CUZK_FF_HD static void reduce_row(u32 (&even)[N + 1], u32 (&odd)[N], u32 t0) {
    const u32 m = reduction_factor(t0);
    if constexpr (kUnitLowWord) {
      add_odd_modulus_products_unit_low<false>(odd, m, t0, unit_low_hi(t0));
    } else {
      add_odd_products<false>(odd, m, Modulus{});
    }
    add_even_products<P::p(0) == 1>(even, m, Modulus{});
  }

  // Divides even + odd*2^32 (limb 0 zero) by 2^32 into the next row's roles:
  // returns with the merge's carry into limb 1 pending in CC.CF, for the next
  // add_odd_products<true> on `odd_next`. No instruction in between may touch CF.
  CUZK_FF_HD static void shift_rows(const u32 (&even)[N + 1], const u32 (&odd)[N], u32 (&even_next)[N + 1],
                                    u32 (&odd_next)[N]) {
    CUZK_FF_UNROLL
    for (int k = 1; k < N; ++k) even_next[k] = odd[k];
    even_next[N] = 0;
    CUZK_FF_UNROLL
    for (int k = 0; k + 2 <= N; ++k) odd_next[k] = even[k + 2];
    odd_next[N - 1] = 0;
    even_next[0] = add_cc(odd[0], even[1]);
  }

  // The next row's accumulators become the current ones (register renames
  // once unrolled; one place for the row loops of mul, mul_wide and redc).
  CUZK_FF_HD static void take_rows(const u32 (&ev)[N + 1], const u32 (&od)[N], u32 (&even)[N + 1], u32 (&odd)[N]) {
    CUZK_FF_UNROLL
    for (int k = 0; k < N; ++k) {
      even[k] = ev[k];
      odd[k] = od[k];
    }
    even[N] = ev[N];
  }

  // even/2^32 + odd, the value after the last row (< 2p, no carry out).
  CUZK_FF_HD static void merge(const u32 (&even)[N + 1], const u32 (&odd)[N], u32 (&r)[N]) {
    r[0] = add_cc(odd[0], even[1]);
    CUZK_FF_UNROLL
    for (int k = 1; k < N - 1; ++k) r[k] = addc_cc(odd[k], even[k + 1]);
    r[N - 1] = addc(odd[N - 1], even[N]);
  }

  CUZK_FF_HD static Field mul_evenodd(const Field& a, const Field& b) {
    static_assert(N % 2 == 0, "even/odd chains assume an even limb count");
    const Limbs ya{a.l};
    u32 even[N + 1], odd[N];
    // Row 0: a b_0 needs no additions.
    set_even_products(even, b.l[0], ya);
    set_odd_products(odd, b.l[0], ya);
    reduce_row(even, odd, even[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) {
      u32 ev[N + 1], od[N];
      shift_rows(even, odd, ev, od);
      add_odd_products<true>(od, b.l[i], ya);  // takes shift_rows' carry into limb 1
      add_even_products<false>(ev, b.l[i], ya);
      reduce_row(ev, od, ev[0]);
      take_rows(ev, od, even, odd);
    }
    Field r;
    merge(even, odd, r.l);
    reduce_once(r.l);
    return r;
  }

  // Squaring: the off-diagonal sum S = sum_{i<j} a_i a_j 2^(32(i+j)) in two
  // 2N-limb accumulators, then w = 2S + sum a_i^2 2^(64i), then redc_evenodd.
  // Row i's products a_i a_j (lo at limb i+j, hi at i+j+1) split by the parity
  // of j - i: j = i+1, i+3, ... is one alternating chain from limb 2i+1 (into
  // x), j = i+2, i+4, ... one from limb 2i+2 (into y); the two are independent.
  // Each chain carries into the limb after its last one, c: for x, c = i+N+1
  // for even i (no earlier row reached it: fresh) and i+N for odd i (holding
  // only row i-1's carry); for y the same with the parities swapped. So the
  // carry limb holds at most 1 before and 2 after: it never carries further.
  // Row 0 adds into empty accumulators: both of its chains tile without
  // overlap, plain products. Every partial is at most S < p^2 / 2 < 2^(64N-1).
  CUZK_FF_HD Field sqr_evenodd() const {
    static_assert(N % 2 == 0, "even/odd chains assume an even limb count");
    const u32* a = l;
    u32 x[2 * N], y[2 * N];
    CUZK_FF_UNROLL
    for (int k = 0; k < 2 * N; ++k) {
      x[k] = 0;
      y[k] = 0;
    }
    CUZK_FF_UNROLL
    for (int j = 1; j < N; j += 2) {
      wide_product(a[0], a[j], x[j], x[j + 1]);
    }
    CUZK_FF_UNROLL
    for (int j = 2; j < N; j += 2) {
      wide_product(a[0], a[j], y[j], y[j + 1]);
    }
    CUZK_FF_UNROLL
    for (int i = 1; i < N - 1; ++i) {
      row_chain(x, a, i, i + 1);
      if (i + 2 < N) row_chain(y, a, i, i + 2);
    }
    // S = x + y (x[0] = y[0] = y[1] = 0; S < 2^(64N-1): no carry out), then
    // w = 2S (a funnel shift per limb: no carry chain) + the diagonal products
    // a_i^2 at limbs 2i, 2i+1 (one alternating chain, a^2 < p^2: no carry out).
    u32 s[2 * N];
    s[0] = 0;
    s[1] = x[1];
    s[2] = add_cc(x[2], y[2]);
    CUZK_FF_UNROLL
    for (int k = 3; k < 2 * N - 1; ++k) s[k] = addc_cc(x[k], y[k]);
    s[2 * N - 1] = addc(x[2 * N - 1], y[2 * N - 1]);
    u32 w[2 * N];
    w[0] = 0;
    CUZK_FF_UNROLL
    for (int k = 1; k < 2 * N; ++k) w[k] = (s[k] << 1) | (s[k - 1] >> 31);
    w[0] = mad_lo_cc(a[0], a[0], w[0]);
    w[1] = madc_hi_cc(a[0], a[0], w[1]);
    CUZK_FF_UNROLL
    for (int i = 1; i < N - 1; ++i) {
      w[2 * i] = madc_lo_cc(a[i], a[i], w[2 * i]);
      w[2 * i + 1] = madc_hi_cc(a[i], a[i], w[2 * i + 1]);
    }
    w[2 * N - 2] = madc_lo_cc(a[N - 1], a[N - 1], w[2 * N - 2]);
    w[2 * N - 1] = madc_hi(a[N - 1], a[N - 1], w[2 * N - 1]);
    return redc_evenodd(w);
  }

  // acc += a_i * (a_j0, a_j0+2, ...) for j < N: lo at i+j, hi at i+j+1, one
  // chain from limb i+j0, then the carry into the next limb (bounds at sqr_evenodd).
  CUZK_FF_HD static void row_chain(u32 (&acc)[2 * N], const u32* a, int i, int j0) {
    acc[i + j0] = mad_lo_cc(a[i], a[j0], acc[i + j0]);
    acc[i + j0 + 1] = madc_hi_cc(a[i], a[j0], acc[i + j0 + 1]);
    int j = j0 + 2;
    CUZK_FF_UNROLL
    for (; j < N; j += 2) {
      acc[i + j] = madc_lo_cc(a[i], a[j], acc[i + j]);
      acc[i + j + 1] = madc_hi_cc(a[i], a[j], acc[i + j + 1]);
    }
    acc[i + j] = addc(acc[i + j], 0);
  }

  // Montgomery reduction with even/odd accumulators: the N rows of m*p on the
  // low half (even starts as w_lo, odd empty: row 0's odd products need no
  // adds), then + w_hi. Bounds: every row's value is below w_lo + 2^32 p <
  // 2^(32N+32), as in mul_evenodd; (w_lo + M p) / R < (R + R p) / R, so the
  // merge is at most p, and + w_hi (< p^2 / R < p) stays below 2p.
  CUZK_FF_HD static Field redc_evenodd(const u32 (&w)[2 * N]) {
    static_assert(N % 2 == 0, "even/odd chains assume an even limb count");
    u32 even[N + 1], odd[N];
    CUZK_FF_UNROLL
    for (int k = 0; k < N; ++k) even[k] = w[k];
    even[N] = 0;
    {
      const u32 m = reduction_factor(even[0]);
      set_odd_products(odd, m, Modulus{});
      add_even_products<P::p(0) == 1>(even, m, Modulus{});
    }
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) {
      // m from the merged limb 0, computed before the merge's add.cc so that no
      // instruction sits between that add and the chain taking its carry.
      const u32 t0 = odd[0] + even[1];
      const u32 m = reduction_factor(t0);
      u32 ev[N + 1], od[N];
      if constexpr (kUnitLowWord) {
        const u32 hi = unit_low_hi(t0);
        shift_rows(even, odd, ev, od);
        add_odd_modulus_products_unit_low<true>(od, m, t0, hi);
      } else {
        shift_rows(even, odd, ev, od);
        add_odd_products<true>(od, m, Modulus{});
      }
      add_even_products<P::p(0) == 1>(ev, m, Modulus{});
      take_rows(ev, od, even, odd);
    }
    Field r;
    merge(even, odd, r.l);
    r.l[0] = add_cc(r.l[0], w[N]);
    CUZK_FF_UNROLL
    for (int k = 1; k < N - 1; ++k) r.l[k] = addc_cc(r.l[k], w[N + k]);
    r.l[N - 1] = addc(r.l[N - 1], w[2 * N - 1]);
    reduce_once(r.l);
    return r;
  }

  // ---- double-width integers (lazily reduced products) ------------------------
  //
  // A 2N-limb integer is a plain u32[2N], little-endian. These serve products
  // that combine several a*b before one Montgomery reduction (Fp2::mul_lazy).

  // w = a b as a 2N-limb integer, for any a, b < 2^(32N) (they need not be
  // reduced: Fp2::mul_lazy passes sums < 2p). mul_evenodd's rows without the
  // m p half: after row i the accumulator's limb 0 is final (limb i of w) and
  // shift_rows drops it. Bounds: after row i the shifted value is
  // floor(a (b mod 2^(32(i+1))) / 2^(32i)) < a 2^32 < 2^(32N+32), the same
  // bound as mul_evenodd's V, so no chain carries out (see there); the
  // high half, even/2^32 + odd = floor(a b / 2^(32N)) < 2^(32N), merges with
  // no carry out. Cost: N^2 products (Fp 144) and N - 1 merge adds.
  CUZK_FF_HD static void mul_wide(const Field& a, const Field& b, u32 (&w)[2 * N]) {
    static_assert(N % 2 == 0, "even/odd chains assume an even limb count");
    const Limbs ya{a.l};
    u32 even[N + 1], odd[N];
    set_even_products(even, b.l[0], ya);
    set_odd_products(odd, b.l[0], ya);
    w[0] = even[0];
    CUZK_FF_UNROLL
    for (int i = 1; i < N; ++i) {
      u32 ev[N + 1], od[N];
      shift_rows(even, odd, ev, od);
      add_odd_products<true>(od, b.l[i], ya);  // takes shift_rows' carry into limb 1
      add_even_products<false>(ev, b.l[i], ya);
      w[i] = ev[0];
      take_rows(ev, od, even, odd);
    }
    u32 hi[N];
    merge(even, odd, hi);
    CUZK_FF_UNROLL
    for (int k = 0; k < N; ++k) w[N + k] = hi[k];
  }

  // a + b without the conditional subtraction: < 2p for reduced inputs, so
  // NOT a valid element (2p < 2^(32N): no carry out). Only an input of mul_wide.
  CUZK_FF_HD static Field add_unreduced(const Field& a, const Field& b) {
    Field r;
    r.l[0] = add_cc(a.l[0], b.l[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < N - 1; ++i) r.l[i] = addc_cc(a.l[i], b.l[i]);
    r.l[N - 1] = addc(a.l[N - 1], b.l[N - 1]);
    return r;
  }

  // r = a + b (2N limbs); the caller guarantees a + b < 2^(64N).
  CUZK_FF_HD static void add_wide(const u32 (&a)[2 * N], const u32 (&b)[2 * N], u32 (&r)[2 * N]) {
    r[0] = add_cc(a[0], b[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < 2 * N - 1; ++i) r[i] = addc_cc(a[i], b[i]);
    r[2 * N - 1] = addc(a[2 * N - 1], b[2 * N - 1]);
  }

  // r = a - b (2N limbs); the caller guarantees a >= b.
  CUZK_FF_HD static void sub_wide(const u32 (&a)[2 * N], const u32 (&b)[2 * N], u32 (&r)[2 * N]) {
    r[0] = sub_cc(a[0], b[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < 2 * N - 1; ++i) r[i] = subc_cc(a[i], b[i]);
    r[2 * N - 1] = subc(a[2 * N - 1], b[2 * N - 1]);
  }

  // r = a - b, plus p R when a < b (p R = p in the high half, 0 in the low):
  // for a, b < p^2 the result is in [0, p R), a valid redc input congruent to
  // a - b mod p. (a < b: a - b + p R > p R - p^2 > 0 as p < R; a >= b:
  // a - b < p^2 < p R.) The 2N-limb subtraction wraps by 2^(64N) when a < b
  // and adding p R wraps it back: the final carry is dropped on purpose.
  CUZK_FF_HD static void sub_wide_mod_pr(const u32 (&a)[2 * N], const u32 (&b)[2 * N], u32 (&r)[2 * N]) {
    r[0] = sub_cc(a[0], b[0]);
    CUZK_FF_UNROLL
    for (int i = 1; i < 2 * N; ++i) r[i] = subc_cc(a[i], b[i]);
    const u32 mask = subc(0, 0);  // all ones on borrow: add p R
    r[N] = add_cc(r[N], P::p(0) & mask);
    CUZK_FF_UNROLL
    for (int i = 1; i < N - 1; ++i) r[N + i] = addc_cc(r[N + i], P::p(i) & mask);
    r[2 * N - 1] = addc(r[2 * N - 1], P::p(N - 1) & mask);
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

  CUZK_FF_HD static Fp2 zero() { return {Fp::zero(), Fp::zero()}; }
  CUZK_FF_HD static Fp2 one() { return {Fp::one(), Fp::zero()}; }
  CUZK_FF_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  CUZK_FF_HD bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  CUZK_FF_HD bool operator!=(const Fp2& o) const { return !(*this == o); }
  CUZK_FF_HD friend Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  CUZK_FF_HD friend Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  CUZK_FF_HD Fp2 operator-() const { return {-c0, -c1}; }
  CUZK_FF_HD Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  // The product every kernel uses (CUZK_FP2_MUL).
  CUZK_FF_HD friend Fp2 operator*(const Fp2& a, const Fp2& b) {
    if constexpr (kFp2MulForm == Fp2MulForm::kLazy) {
      return mul_lazy(a, b);
    } else {
      return mul_karatsuba3(a, b);
    }
  }
  // Karatsuba: (a0 b0 - a1 b1) + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u, 3 Fp
  // mul, each with its own reduction: 3 x (144 + 156) = 900 product pairs.
  CUZK_FF_HD static Fp2 mul_karatsuba3(const Fp2& a, const Fp2& b) {
    const Fp v0 = a.c0 * b.c0;
    const Fp v1 = a.c1 * b.c1;
    return {v0 - v1, (a.c0 + a.c1) * (b.c0 + b.c1) - v0 - v1};
  }
  CUZK_FF_HD static Fp2 mul_lazy(const Fp2& a, const Fp2& b) {
    return mul_lazy_from([&] { return a.c0; }, [&] { return a.c1; }, [&] { return b.c0; }, [&] { return b.c1; });
  }

  // Lazily reduced Karatsuba: the same three products as double-width
  // integers, combined before ONE Montgomery reduction per coefficient:
  // 3 x 144 + 2 x 156 = 744 product pairs instead of 900 (-17%).
  //   t0 = a0 b0 < p^2, t1 = a1 b1 < p^2                       (2N limbs)
  //   c0: t0 - t1, plus p R when negative: in [0, p R)   (sub_wide_mod_pr)
  //   s = t0 + t1 < 2 p^2
  //   t2 = (a0 + a1)(b0 + b1), sums unreduced (< 2p < 2^382): t2 < 4 p^2
  //   c1: t2 - s = a0 b1 + a1 b0, exact and >= 0, < 2 p^2 < p R (2p < 2^382 < R)
  // redc is exact for every input below p R (comment at Field::redc) and its
  // output is fully reduced; p R adds a multiple of p, so c0 is unchanged mod
  // p. The operands come from callables, called where each is needed (a0, b0
  // for t0; a1, b1 for t1; all four for the sums): a caller holding them in
  // shared memory (msm_reduce.cu) reloads them instead of keeping 48 limbs
  // live across the first two products. Live state peaks at the third
  // product: s and c0 (36 limbs) beside the product's own ~60.
  template <class A0, class A1, class B0, class B1>
  CUZK_FF_HD static Fp2 mul_lazy_from(const A0& a0, const A1& a1, const B0& b0, const B1& b1) {
    constexpr int N = Fp::N;
    u32 t0[2 * N], t1[2 * N], w[2 * N];
    Fp::mul_wide(a0(), b0(), t0);
    Fp::mul_wide(a1(), b1(), t1);
    Fp::sub_wide_mod_pr(t0, t1, w);
    Fp::add_wide(t0, t1, t0);  // s = t0 + t1
    Fp2 r;
    r.c0 = Fp::redc(w);
    Fp::mul_wide(Fp::add_unreduced(a0(), a1()), Fp::add_unreduced(b0(), b1()), t1);  // t2
    Fp::sub_wide(t1, t0, w);
    r.c1 = Fp::redc(w);
    return r;
  }
  // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u, 2 Fp mul.
  CUZK_FF_HD Fp2 sqr() const { return {(c0 + c1) * (c0 - c1), (c0 * c1).dbl()}; }
  // The norm N(a) = a conj(a) = c0^2 + c1^2 in Fp, zero only for a = 0 (p = 3
  // mod 4: -1 is not a square). Both squares double-width, one reduction:
  // c0^2 + c1^2 < 2 p^2 < p R is a valid redc input. 2 x 144 + 156 products.
  CUZK_FF_HD Fp norm() const {
    constexpr int N = Fp::N;
    u32 t0[2 * N], t1[2 * N];
    Fp::mul_wide(c0, c0, t0);
    Fp::mul_wide(c1, c1, t1);
    Fp::add_wide(t0, t1, t0);
    return Fp::redc(t0);
  }
  // 1 / a from n_inv = 1 / N(a): conj(a) n_inv (2 Fp mul).
  CUZK_FF_HD Fp2 inverse_from_norm(const Fp& n_inv) const { return {c0 * n_inv, -(c1 * n_inv)}; }
};

}  // namespace cuzk::gpu::dev
