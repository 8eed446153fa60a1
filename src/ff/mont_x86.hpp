// x86-64 Montgomery multiplication for 4 limbs (Fr) and 6 limbs (Fp) with
// BMI2 mulx and the two independent ADX carry chains (adcx on CF, adox on OF),
// plus branch-free modular addition and subtraction. mont.hpp routes run-time
// MontField *, + and - here; constant evaluation keeps the portable code.
//
// Same algorithm as the portable no-carry CIOS in mont.hpp, one row per limb
// b[i] of the second operand:
//   multiply row:  (t_0..t_N) = t + a * b[i]     mulx a[j]*b[i] = hi:lo,
//                                                 lo -> t_j on the OF chain,
//                                                 hi -> t_{j+1} on the CF chain
//   reduce row:    m = t_0 * (-p^-1) mod 2^64
//                  t = (t + m * p) / 2^64        lo -> t_j on CF, hi -> t_{j+1} on OF;
//                                                 t_0 + lo(m*p_0) == 0 mod 2^64
// Instead of moving limbs down after the division by 2^64, the register that
// held t_0 (now exactly zero) becomes the next row's top word: the N+1 working
// registers rotate by one name per row, so rows are written with a macro whose
// arguments are the rotated operand names. Invariant (needs p < 2^(64N-1)):
// t < 2p before each row, t + a*b[i] < 2^(64(N+1)), hence one final
// conditional subtraction, done branch-free with cmov (constant time).
//
// Measured latency (dependent chain, CPU time, g++ 12 -O3), against blst's
// mulx_mont_384 / mulx_mont_sparse_256 built from source on the same host:
//   AMD EPYC Zen 5 (~4.1 GHz), build host: Fp 28.5 ns (blst 24.0, portable 47),
//                                          Fr 12.9 ns (blst 14.1, portable 19)
//   Intel Xeon (16-core lent host):       Fp 56 ns (blst 56), Fr 28-30 ns (blst 33)
// g++ 12 lowers _addcarryx_u64 to a single adc chain (it never emits adox),
// hence inline asm rather than intrinsics.
#pragma once

#include <array>

#include "ff/bigint.hpp"

// Never in a CUDA device pass (nvcc predefines the host's __x86_64__ there).
#if defined(__x86_64__) && defined(__ADX__) && defined(__BMI2__) && !defined(CUZK_PORTABLE) && !defined(__CUDA_ARCH__)
#define CUZK_FF_X86_MONT 1
#else
#define CUZK_FF_X86_MONT 0
#endif

#if CUZK_FF_X86_MONT

namespace cuzk::ff::x86 {

// Operand names used by the row macros: rotating words r0..rN, scratch lo/hi,
// the pointers ap/bp and pc, which points at the modulus limbs followed by
// inv = -p^-1 mod 2^64. 6 limbs need 13 general registers in all, so the
// modulus is addressed through one pointer rather than as separate operands.
#define CUZK_X86_OP(name) "%[" #name "]"

// The asm reads a[] and b[] through pointers; with optimisation on, "m"
// operands tell the compiler exactly which memory is read. Without it (-O0)
// each "m" operand would take an address register of its own and the 6-limb
// asm would run out of registers, so a "memory" clobber stands in.
#ifdef __OPTIMIZE__
#define CUZK_X86_READS(a, b, n) , "m"(*reinterpret_cast<const u64(*)[n]>(a)), "m"(*reinterpret_cast<const u64(*)[n]>(b))
#define CUZK_X86_MEMORY_CLOBBER
#else
#define CUZK_X86_READS(a, b, n)
#define CUZK_X86_MEMORY_CLOBBER , "memory"
#endif

// ---- 4 limbs ------------------------------------------------------------------

// t = a * b[0]   (a single adc chain: t starts at zero)
#define CUZK_X86_FIRST4(T0, T1, T2, T3, A) \
  "movq 0(%[bp]), %%rdx\n\t"                                     \
  "mulxq 0(%[ap]), " CUZK_X86_OP(T0) ", " CUZK_X86_OP(T1) "\n\t" \
  "mulxq 8(%[ap]), %[lo], " CUZK_X86_OP(T2) "\n\t"               \
  "addq %[lo], " CUZK_X86_OP(T1) "\n\t"                          \
  "mulxq 16(%[ap]), %[lo], " CUZK_X86_OP(T3) "\n\t"              \
  "adcq %[lo], " CUZK_X86_OP(T2) "\n\t"                          \
  "mulxq 24(%[ap]), %[lo], " CUZK_X86_OP(A) "\n\t"               \
  "adcq %[lo], " CUZK_X86_OP(T3) "\n\t"                          \
  "adcq $0, " CUZK_X86_OP(A) "\n\t"

// t += a * b[I]; A is zero on entry (it held t_0 of the previous reduction).
#define CUZK_X86_MULROW4(I, T0, T1, T2, T3, A) \
  "movq 8*" #I "(%[bp]), %%rdx\n\t"                                        \
  "xorl %k[" #A "], %k[" #A "]\n\t" /* clears CF and OF */                 \
  "mulxq 0(%[ap]), %[lo], %[hi]\n\t"                                       \
  "adoxq %[lo], " CUZK_X86_OP(T0) "\n\t"                                   \
  "adcxq %[hi], " CUZK_X86_OP(T1) "\n\t"                                   \
  "mulxq 8(%[ap]), %[lo], %[hi]\n\t"                                       \
  "adoxq %[lo], " CUZK_X86_OP(T1) "\n\t"                                   \
  "adcxq %[hi], " CUZK_X86_OP(T2) "\n\t"                                   \
  "mulxq 16(%[ap]), %[lo], %[hi]\n\t"                                      \
  "adoxq %[lo], " CUZK_X86_OP(T2) "\n\t"                                   \
  "adcxq %[hi], " CUZK_X86_OP(T3) "\n\t"                                   \
  "mulxq 24(%[ap]), %[lo], %[hi]\n\t"                                      \
  "adoxq %[lo], " CUZK_X86_OP(T3) "\n\t"                                   \
  "adcxq %[hi], " CUZK_X86_OP(A) "\n\t" /* A was 0: no CF out */           \
  "movl $0, %k[lo]\n\t"                                                    \
  "adoxq %[lo], " CUZK_X86_OP(A) "\n\t"

// t = (t + m*p) / 2^64 with m = t_0 * inv; leaves T0 == 0.
#define CUZK_X86_REDROW4(T0, T1, T2, T3, A, N) \
  "movq " CUZK_X86_OP(T0) ", %%rdx\n\t"                  \
  "imulq 8*" #N "(%[pc]), %%rdx\n\t"                              \
  "xorl %k[lo], %k[lo]\n\t" /* clears CF and OF */       \
  "mulxq 0(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T0) "\n\t" /* -> 0, CF */  \
  "adoxq %[hi], " CUZK_X86_OP(T1) "\n\t"                 \
  "mulxq 8(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T1) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T2) "\n\t"                 \
  "mulxq 16(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T2) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T3) "\n\t"                 \
  "mulxq 24(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T3) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(A) "\n\t"                  \
  "adcxq " CUZK_X86_OP(T0) ", " CUZK_X86_OP(A) "\n\t"

// out = a * b * 2^-256 mod p, all operands fully reduced (< p).
// pc = {p_0..p_3, -p^-1 mod 2^64}.
inline void mont_mul4(u64 out[4], const u64 a[4], const u64 b[4], const u64 pc[5]) {
  u64 r0, r1, r2, r3, r4, lo, hi;
  const u64* ap = a;
  const u64* bp = b;
  // Row i works on t_j = r[(i+j) mod 5] with top word r[(i+4) mod 5].
  __asm__(CUZK_X86_FIRST4(r0, r1, r2, r3, r4)      //
          CUZK_X86_REDROW4(r0, r1, r2, r3, r4, 4)  //
          CUZK_X86_MULROW4(1, r1, r2, r3, r4, r0)  //
          CUZK_X86_REDROW4(r1, r2, r3, r4, r0, 4)  //
          CUZK_X86_MULROW4(2, r2, r3, r4, r0, r1)  //
          CUZK_X86_REDROW4(r2, r3, r4, r0, r1, 4)  //
          CUZK_X86_MULROW4(3, r3, r4, r0, r1, r2)  //
          CUZK_X86_REDROW4(r3, r4, r0, r1, r2, 4)  //
          // t = (r4, r0, r1, r2) < 2p; subtract p, keep t when that borrows.
          "movq %[r4], %[lo]\n\t"
          "subq 0(%[pc]), %[lo]\n\t"
          "movq %[r0], %[hi]\n\t"
          "sbbq 8(%[pc]), %[hi]\n\t"
          "movq %[r1], %[r3]\n\t"
          "sbbq 16(%[pc]), %[r3]\n\t"
          "movq %[r2], %%rdx\n\t"
          "sbbq 24(%[pc]), %%rdx\n\t"
          "cmovncq %[lo], %[r4]\n\t"
          "cmovncq %[hi], %[r0]\n\t"
          "cmovncq %[r3], %[r1]\n\t"
          "cmovncq %%rdx, %[r2]\n\t"
          : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [lo] "=&r"(lo),
            [hi] "=&r"(hi), [ap] "+r"(ap), [bp] "+r"(bp)
          : [pc] "r"(pc)CUZK_X86_READS(a, b, 4)
          : "rdx", "cc" CUZK_X86_MEMORY_CLOBBER);
  out[0] = r4;
  out[1] = r0;
  out[2] = r1;
  out[3] = r2;
}

// ---- 6 limbs ------------------------------------------------------------------

#define CUZK_X86_FIRST6(T0, T1, T2, T3, T4, T5, A) \
  "movq 0(%[bp]), %%rdx\n\t"                                     \
  "mulxq 0(%[ap]), " CUZK_X86_OP(T0) ", " CUZK_X86_OP(T1) "\n\t" \
  "mulxq 8(%[ap]), %[lo], " CUZK_X86_OP(T2) "\n\t"               \
  "addq %[lo], " CUZK_X86_OP(T1) "\n\t"                          \
  "mulxq 16(%[ap]), %[lo], " CUZK_X86_OP(T3) "\n\t"              \
  "adcq %[lo], " CUZK_X86_OP(T2) "\n\t"                          \
  "mulxq 24(%[ap]), %[lo], " CUZK_X86_OP(T4) "\n\t"              \
  "adcq %[lo], " CUZK_X86_OP(T3) "\n\t"                          \
  "mulxq 32(%[ap]), %[lo], " CUZK_X86_OP(T5) "\n\t"              \
  "adcq %[lo], " CUZK_X86_OP(T4) "\n\t"                          \
  "mulxq 40(%[ap]), %[lo], " CUZK_X86_OP(A) "\n\t"               \
  "adcq %[lo], " CUZK_X86_OP(T5) "\n\t"                          \
  "adcq $0, " CUZK_X86_OP(A) "\n\t"

#define CUZK_X86_MULROW6(I, T0, T1, T2, T3, T4, T5, A) \
  "movq 8*" #I "(%[bp]), %%rdx\n\t"                          \
  "xorl %k[" #A "], %k[" #A "]\n\t"                          \
  "mulxq 0(%[ap]), %[lo], %[hi]\n\t"                         \
  "adoxq %[lo], " CUZK_X86_OP(T0) "\n\t"                     \
  "adcxq %[hi], " CUZK_X86_OP(T1) "\n\t"                     \
  "mulxq 8(%[ap]), %[lo], %[hi]\n\t"                         \
  "adoxq %[lo], " CUZK_X86_OP(T1) "\n\t"                     \
  "adcxq %[hi], " CUZK_X86_OP(T2) "\n\t"                     \
  "mulxq 16(%[ap]), %[lo], %[hi]\n\t"                        \
  "adoxq %[lo], " CUZK_X86_OP(T2) "\n\t"                     \
  "adcxq %[hi], " CUZK_X86_OP(T3) "\n\t"                     \
  "mulxq 24(%[ap]), %[lo], %[hi]\n\t"                        \
  "adoxq %[lo], " CUZK_X86_OP(T3) "\n\t"                     \
  "adcxq %[hi], " CUZK_X86_OP(T4) "\n\t"                     \
  "mulxq 32(%[ap]), %[lo], %[hi]\n\t"                        \
  "adoxq %[lo], " CUZK_X86_OP(T4) "\n\t"                     \
  "adcxq %[hi], " CUZK_X86_OP(T5) "\n\t"                     \
  "mulxq 40(%[ap]), %[lo], %[hi]\n\t"                        \
  "adoxq %[lo], " CUZK_X86_OP(T5) "\n\t"                     \
  "adcxq %[hi], " CUZK_X86_OP(A) "\n\t"                      \
  "movl $0, %k[lo]\n\t"                                      \
  "adoxq %[lo], " CUZK_X86_OP(A) "\n\t"

#define CUZK_X86_REDROW6(T0, T1, T2, T3, T4, T5, A, N) \
  "movq " CUZK_X86_OP(T0) ", %%rdx\n\t"                  \
  "imulq 8*" #N "(%[pc]), %%rdx\n\t"                              \
  "xorl %k[lo], %k[lo]\n\t"                              \
  "mulxq 0(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T0) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T1) "\n\t"                 \
  "mulxq 8(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T1) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T2) "\n\t"                 \
  "mulxq 16(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T2) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T3) "\n\t"                 \
  "mulxq 24(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T3) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T4) "\n\t"                 \
  "mulxq 32(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T4) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(T5) "\n\t"                 \
  "mulxq 40(%[pc]), %[lo], %[hi]\n\t"                        \
  "adcxq %[lo], " CUZK_X86_OP(T5) "\n\t"                 \
  "adoxq %[hi], " CUZK_X86_OP(A) "\n\t"                  \
  "adcxq " CUZK_X86_OP(T0) ", " CUZK_X86_OP(A) "\n\t"

// out = a * b * 2^-384 mod p, all operands fully reduced (< p).
// pc = {p_0..p_5, -p^-1 mod 2^64}.
inline void mont_mul6(u64 out[6], const u64 a[6], const u64 b[6], const u64 pc[7]) {
  u64 r0, r1, r2, r3, r4, r5, r6, lo, hi;
  const u64* ap = a;
  const u64* bp = b;
  // Row i works on t_j = r[(i+j) mod 7] with top word r[(i+6) mod 7].
  __asm__(CUZK_X86_FIRST6(r0, r1, r2, r3, r4, r5, r6)      //
          CUZK_X86_REDROW6(r0, r1, r2, r3, r4, r5, r6, 6)  //
          CUZK_X86_MULROW6(1, r1, r2, r3, r4, r5, r6, r0)  //
          CUZK_X86_REDROW6(r1, r2, r3, r4, r5, r6, r0, 6)  //
          CUZK_X86_MULROW6(2, r2, r3, r4, r5, r6, r0, r1)  //
          CUZK_X86_REDROW6(r2, r3, r4, r5, r6, r0, r1, 6)  //
          CUZK_X86_MULROW6(3, r3, r4, r5, r6, r0, r1, r2)  //
          CUZK_X86_REDROW6(r3, r4, r5, r6, r0, r1, r2, 6)  //
          CUZK_X86_MULROW6(4, r4, r5, r6, r0, r1, r2, r3)  //
          CUZK_X86_REDROW6(r4, r5, r6, r0, r1, r2, r3, 6)  //
          CUZK_X86_MULROW6(5, r5, r6, r0, r1, r2, r3, r4)  //
          CUZK_X86_REDROW6(r5, r6, r0, r1, r2, r3, r4, 6)  //
          // t = (r6, r0, r1, r2, r3, r4) < 2p; r5 == 0 and the pointers are
          // free now, so they take t - p; keep t when that borrows.
          "movq %[r6], %[lo]\n\t"
          "subq 0(%[pc]), %[lo]\n\t"
          "movq %[r0], %[hi]\n\t"
          "sbbq 8(%[pc]), %[hi]\n\t"
          "movq %[r1], %[r5]\n\t"
          "sbbq 16(%[pc]), %[r5]\n\t"
          "movq %[r2], %[ap]\n\t"
          "sbbq 24(%[pc]), %[ap]\n\t"
          "movq %[r3], %[bp]\n\t"
          "sbbq 32(%[pc]), %[bp]\n\t"
          "movq %[r4], %%rdx\n\t"
          "sbbq 40(%[pc]), %%rdx\n\t"
          "cmovncq %[lo], %[r6]\n\t"
          "cmovncq %[hi], %[r0]\n\t"
          "cmovncq %[r5], %[r1]\n\t"
          "cmovncq %[ap], %[r2]\n\t"
          "cmovncq %[bp], %[r3]\n\t"
          "cmovncq %%rdx, %[r4]\n\t"
          : [r0] "=&r"(r0), [r1] "=&r"(r1), [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [r5] "=&r"(r5),
            [r6] "=&r"(r6), [lo] "=&r"(lo), [hi] "=&r"(hi), [ap] "+r"(ap), [bp] "+r"(bp)
          : [pc] "r"(pc)CUZK_X86_READS(a, b, 6)
          : "rdx", "cc" CUZK_X86_MEMORY_CLOBBER);
  out[0] = r6;
  out[1] = r0;
  out[2] = r1;
  out[3] = r2;
  out[4] = r3;
  out[5] = r4;
}

// ---- addition and subtraction ------------------------------------------------
//
// g++ 12 compiles the portable unsigned __int128 carry chains of MontField's
// + and - to about 5 ns (Fr) and 9 ns (Fp) on the build host; these take 1-3 ns.
// All are branch-free. pc = {p_0..p_(N-1), inv, (2^(64N) - p)_0..} (see
// kMontConstants): for 6 limbs there are not enough registers to hold t and
// t - p at once, so the conditional "- p" is an addition of 2^(64N) - p whose
// limbs are selected with cmov, on the adcx chain (adcx leaves ZF alone).

// out = a + b mod p: t = a + b < 2p < 2^256; keep t - p unless it borrows.
inline void add4(u64 out[4], const u64 a[4], const u64 b[4], const u64 pc[9]) {
  u64 t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], s0, s1, s2, s3;
  __asm__(
      "addq 0(%[b]), %[t0]\n\t"
      "adcq 8(%[b]), %[t1]\n\t"
      "adcq 16(%[b]), %[t2]\n\t"
      "adcq 24(%[b]), %[t3]\n\t"
      "movq %[t0], %[s0]\n\t"
      "subq 0(%[pc]), %[s0]\n\t"
      "movq %[t1], %[s1]\n\t"
      "sbbq 8(%[pc]), %[s1]\n\t"
      "movq %[t2], %[s2]\n\t"
      "sbbq 16(%[pc]), %[s2]\n\t"
      "movq %[t3], %[s3]\n\t"
      "sbbq 24(%[pc]), %[s3]\n\t"
      "cmovncq %[s0], %[t0]\n\t"
      "cmovncq %[s1], %[t1]\n\t"
      "cmovncq %[s2], %[t2]\n\t"
      "cmovncq %[s3], %[t3]\n\t"
      : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2),
        [s3] "=&r"(s3)
      : [b] "r"(b), [pc] "r"(pc)CUZK_X86_READS(b, b, 4)
      : "cc" CUZK_X86_MEMORY_CLOBBER);
  out[0] = t0;
  out[1] = t1;
  out[2] = t2;
  out[3] = t3;
}

// out = a - b mod p: t = a - b; add p back (masked by the borrow).
inline void sub4(u64 out[4], const u64 a[4], const u64 b[4], const u64 pc[9]) {
  u64 t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], s0, s1, s2, s3;
  __asm__(
      "subq 0(%[b]), %[t0]\n\t"
      "sbbq 8(%[b]), %[t1]\n\t"
      "sbbq 16(%[b]), %[t2]\n\t"
      "sbbq 24(%[b]), %[t3]\n\t"
      "sbbq %[s3], %[s3]\n\t"  // all ones on borrow
      "movq 0(%[pc]), %[s0]\n\t"
      "andq %[s3], %[s0]\n\t"
      "movq 8(%[pc]), %[s1]\n\t"
      "andq %[s3], %[s1]\n\t"
      "movq 16(%[pc]), %[s2]\n\t"
      "andq %[s3], %[s2]\n\t"
      "andq 24(%[pc]), %[s3]\n\t"
      "addq %[s0], %[t0]\n\t"
      "adcq %[s1], %[t1]\n\t"
      "adcq %[s2], %[t2]\n\t"
      "adcq %[s3], %[t3]\n\t"
      : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [s0] "=&r"(s0), [s1] "=&r"(s1), [s2] "=&r"(s2),
        [s3] "=&r"(s3)
      : [b] "r"(b), [pc] "r"(pc)CUZK_X86_READS(b, b, 4)
      : "cc" CUZK_X86_MEMORY_CLOBBER);
  out[0] = t0;
  out[1] = t1;
  out[2] = t2;
  out[3] = t3;
}

// out = a + b mod p: t = a + b; the borrow of t - p (computed and discarded)
// decides whether 2^384 - p is added, i.e. p subtracted.
inline void add6(u64 out[6], const u64 a[6], const u64 b[6], const u64 pc[13]) {
  u64 t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], t4 = a[4], t5 = a[5], s, m;
  __asm__(
      "addq 0(%[b]), %[t0]\n\t"
      "adcq 8(%[b]), %[t1]\n\t"
      "adcq 16(%[b]), %[t2]\n\t"
      "adcq 24(%[b]), %[t3]\n\t"
      "adcq 32(%[b]), %[t4]\n\t"
      "adcq 40(%[b]), %[t5]\n\t"
      "movq %[t0], %[s]\n\t"
      "subq 0(%[pc]), %[s]\n\t"
      "movq %[t1], %[s]\n\t"
      "sbbq 8(%[pc]), %[s]\n\t"
      "movq %[t2], %[s]\n\t"
      "sbbq 16(%[pc]), %[s]\n\t"
      "movq %[t3], %[s]\n\t"
      "sbbq 24(%[pc]), %[s]\n\t"
      "movq %[t4], %[s]\n\t"
      "sbbq 32(%[pc]), %[s]\n\t"
      "movq %[t5], %[s]\n\t"
      "sbbq 40(%[pc]), %[s]\n\t"
      "sbbq %[m], %[m]\n\t"   // all ones when t < p
      "testq %[m], %[m]\n\t"  // ZF: t >= p; clears CF
      "movl $0, %k[s]\n\t"
      "cmovzq 56(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t0]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovzq 64(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t1]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovzq 72(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t2]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovzq 80(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t3]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovzq 88(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t4]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovzq 96(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t5]\n\t"
      : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [t4] "+&r"(t4), [t5] "+&r"(t5), [s] "=&r"(s),
        [m] "=&r"(m)
      : [b] "r"(b), [pc] "r"(pc)CUZK_X86_READS(b, b, 6)
      : "cc" CUZK_X86_MEMORY_CLOBBER);
  out[0] = t0;
  out[1] = t1;
  out[2] = t2;
  out[3] = t3;
  out[4] = t4;
  out[5] = t5;
}

// out = a - b mod p: t = a - b; add p back when that borrowed.
inline void sub6(u64 out[6], const u64 a[6], const u64 b[6], const u64 pc[13]) {
  u64 t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], t4 = a[4], t5 = a[5], s, m;
  __asm__(
      "subq 0(%[b]), %[t0]\n\t"
      "sbbq 8(%[b]), %[t1]\n\t"
      "sbbq 16(%[b]), %[t2]\n\t"
      "sbbq 24(%[b]), %[t3]\n\t"
      "sbbq 32(%[b]), %[t4]\n\t"
      "sbbq 40(%[b]), %[t5]\n\t"
      "sbbq %[m], %[m]\n\t"   // all ones on borrow
      "testq %[m], %[m]\n\t"  // ZF: no borrow; clears CF
      "movl $0, %k[s]\n\t"
      "cmovnzq 0(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t0]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovnzq 8(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t1]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovnzq 16(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t2]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovnzq 24(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t3]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovnzq 32(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t4]\n\t"
      "movl $0, %k[s]\n\t"
      "cmovnzq 40(%[pc]), %[s]\n\t"
      "adcxq %[s], %[t5]\n\t"
      : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [t4] "+&r"(t4), [t5] "+&r"(t5), [s] "=&r"(s),
        [m] "=&r"(m)
      : [b] "r"(b), [pc] "r"(pc)CUZK_X86_READS(b, b, 6)
      : "cc" CUZK_X86_MEMORY_CLOBBER);
  out[0] = t0;
  out[1] = t1;
  out[2] = t2;
  out[3] = t3;
  out[4] = t4;
  out[5] = t5;
}

#undef CUZK_X86_FIRST4
#undef CUZK_X86_MULROW4
#undef CUZK_X86_REDROW4
#undef CUZK_X86_FIRST6
#undef CUZK_X86_MULROW6
#undef CUZK_X86_REDROW6
#undef CUZK_X86_OP
#undef CUZK_X86_READS
#undef CUZK_X86_MEMORY_CLOBBER

// Limb counts with an assembly kernel.
template <std::size_t N>
inline constexpr bool kHasMontMul = (N == 4 || N == 6);

// {p_0..p_(N-1), -p^-1 mod 2^64} of a MontField F, in static storage,
// followed by the limbs of 2^(64N) - p (used by add6).
template <class F>
inline constexpr auto kMontConstants = [] {
  constexpr std::size_t N = F::kLimbs;
  std::array<u64, 2 * N + 1> c{};
  for (std::size_t i = 0; i < N; ++i) c[i] = F::kModulus.limb[i];
  c[N] = F::kInv;
  BigInt<N> neg{};
  sub_with_borrow(neg, BigInt<N>{}, F::kModulus);  // 2^(64N) - p
  for (std::size_t i = 0; i < N; ++i) c[N + 1 + i] = neg.limb[i];
  return c;
}();

// out = a * b / 2^(64N) mod p for the field F (operands < p; out may alias).
template <class F>
inline void mont_mul(typename F::Int& out, const typename F::Int& a, const typename F::Int& b) {
  static_assert(kHasMontMul<F::kLimbs>);
  if constexpr (F::kLimbs == 4) {
    mont_mul4(out.limb.data(), a.limb.data(), b.limb.data(), kMontConstants<F>.data());
  } else {
    mont_mul6(out.limb.data(), a.limb.data(), b.limb.data(), kMontConstants<F>.data());
  }
}

// out = a + b mod p and out = a - b mod p (operands < p; out may alias).
template <class F>
inline void add_mod(typename F::Int& out, const typename F::Int& a, const typename F::Int& b) {
  if constexpr (F::kLimbs == 4) {
    add4(out.limb.data(), a.limb.data(), b.limb.data(), kMontConstants<F>.data());
  } else {
    add6(out.limb.data(), a.limb.data(), b.limb.data(), kMontConstants<F>.data());
  }
}
template <class F>
inline void sub_mod(typename F::Int& out, const typename F::Int& a, const typename F::Int& b) {
  if constexpr (F::kLimbs == 4) {
    sub4(out.limb.data(), a.limb.data(), b.limb.data(), kMontConstants<F>.data());
  } else {
    sub6(out.limb.data(), a.limb.data(), b.limb.data(), kMontConstants<F>.data());
  }
}

}  // namespace cuzk::ff::x86

#endif  // CUZK_FF_X86_MONT
