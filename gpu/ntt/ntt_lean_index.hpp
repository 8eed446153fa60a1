// Index math and butterflies of the lean radix-4 DIF NTT (gpu/ntt/ntt_lean.cu,
// the device NTT from 2^6 on). Plain C++ with no CUDA types, so that the
// host emulation test (tests/gpu/ntt_lean_test.cpp) runs this very text with
// the host Fr: the kernel compiles it as __device__ code (nvcc), the test as
// inline host code (g++).
//
// Why this shape (bench/gpu/NOTES.md, "NTT: lean radix-4 passes"): radix-4/8 kernels holding 4
// or 8 elements per thread in registers kept too few warps resident (spills,
// or one block per SM) to hide the Fr multiply's carry chains (H200, 2^27
// forward: radix-8 80.4 ms, radix-4 93.6, against 65.6 for radix-2). Here a thread holds only 4 elements (one radix-4
// group, 2 stages) at a time, blocks are 256 threads over a 2^11-element tile
// (64 KiB of shared memory), so 3 blocks = 24 warps fit on an SM at <= 80
// registers per thread. Per element and 2 stages the tile is read and written
// once (8 + 8 shared accesses of 32 bits per 2 butterflies, radix-2 needs 32),
// the group's index math is paid once per 4 butterflies and 3 twiddle loads
// serve 4 butterflies.
//
// Pass layout (decimation in frequency, natural order in, bit-reversed out;
// stage s pairs (i, i + 2^s), twiddle w^((i mod 2^s) n / 2^(s+1))):
//   a pass runs stages [s_lo, s_lo + k) on tiles of 2^T elements, T = k + L
//   (L = 2 "other" index bits so global accesses come in runs of 4 elements =
//   128 B): other bits are index bits [0, 2) when s_lo >= 2, or [k, k + 2)
//   for the bottom pass (s_lo = 0, whose mid bits are already the lowest
//   bits), or its top two bits when that pass stores in bit-reversed
//   position (natural order out, out of place). Tile index
//   e = mid << L | other; the rest of the index bits are the block number.
//   Stages run in groups of 2 (tile bits [S, S + 2), S = g_lo + L) from the
//   top down; an odd k leaves one radix-2 group on top.
// Shared memory is limb-major: limb l of element e at l * 2^11 + swz(e), with
//   swz(e) = e xor (e5 << 2) xor (e6 << 3) xor (e6 << 4)   (e_b = bit b of e),
// a bijection (it only xors bits 5, 6 into bits 2..4). Bank = swz(e) mod 32.
// A warp's 32 lanes take 32 consecutive group numbers q, i.e. they vary the
// 5 lowest tile bits outside [S, S + 2):
//   S = 2: bits {0,1,4,5,6} -> bank vectors {b0, b1, b4, b2, b3+b4}: a basis;
//   S = 4: bits {0,1,2,3,6} -> {b0, b1, b2, b3, b3+b4}: a basis;
//   S >= 5 (and the load / store loops over consecutive e): bits 0..4 -> the
//   identity plus a constant. So every shared access is conflict free; only a
//   radix-2 group at S = 4 (k = 3, tiny sizes) is 2-way.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define CUZK_LEAN_FN __device__ __forceinline__
#define CUZK_LEAN_HD __host__ __device__ __forceinline__
#define CUZK_LEAN_UNROLL _Pragma("unroll")
#else
#define CUZK_LEAN_FN inline
#define CUZK_LEAN_HD inline
#define CUZK_LEAN_UNROLL
#endif

namespace cuzk::gpu::ntt_lean {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

inline constexpr int kTileBitsMax = 11;                       // 2^11 elements * 32 B = 64 KiB of shared memory
inline constexpr int kOtherBits = 2;                          // L: runs of 4 elements (128 B) in global memory
inline constexpr int kThreads = 256;                          // per block; 3 blocks per SM
inline constexpr int kMinBlocksPerSm = 3;                     // __launch_bounds__: <= 80 registers
inline constexpr int kLogMin = 6;                             // smaller sizes run radix-2
inline constexpr int kStagesMax = kTileBitsMax - kOtherBits;  // 9

// One pass: stages [s_lo, s_lo + k) of a 2^log_n transform.
struct Pass {
  int s_lo = 0;
  int k = 0;
};

// The passes from the bottom stage up: the fewest with at most
// min(9, log_n - 2) stages each (the other bits must exist), sizes as even as
// possible (lower passes take the remainder). Every k >= 3 for log_n >= 6, so
// every s_lo is 0 or >= L. 2^27: 9 + 9 + 9; 2^24: 8 + 8 + 8.
// Writes at most 8 passes into out and returns their number (log_n <= 32).
inline int plan(int log_n, Pass (&out)[8]) {
  const int k_max = log_n - kOtherBits < kStagesMax ? log_n - kOtherBits : kStagesMax;
  const int passes = (log_n + k_max - 1) / k_max;
  int s = 0;
  for (int i = 0; i < passes; ++i) {
    const int k = log_n / passes + (i < log_n % passes ? 1 : 0);
    out[i] = {s, k};
    s += k;
  }
  return passes;
}

// Position o_pos of the other bits in the global index: bits [0, 2) above the
// bottom pass; for the bottom pass (s_lo = 0) just above its mid bits (k), or
// the top two bits (log_n - 2) when it stores bit-reversed (out of place), so
// that its stores at bitrev(i) also come in runs of 4 elements.
CUZK_LEAN_HD int other_pos(int s_lo, int k, int log_n, bool bitrev_store) {
  return s_lo != 0 ? 0 : (bitrev_store ? log_n - kOtherBits : k);
}

CUZK_LEAN_FN u32 swizzle(u32 e) {
  const u32 e5 = (e >> 5) & 1u, e6 = (e >> 6) & 1u;
  return e ^ (e5 << 2) ^ (e6 * 0x18u);
}
CUZK_LEAN_FN u64 bit_reverse(u64 i, int log_n) {
#if defined(__CUDA_ARCH__)
  return __brevll(i) >> (64 - log_n);
#else
  // Swap adjacent bits, pairs, nibbles, ... (the host emulation's copy of __brevll).
  u64 r = i;
  r = ((r >> 1) & 0x5555555555555555ull) | ((r & 0x5555555555555555ull) << 1);
  r = ((r >> 2) & 0x3333333333333333ull) | ((r & 0x3333333333333333ull) << 2);
  r = ((r >> 4) & 0x0f0f0f0f0f0f0f0full) | ((r & 0x0f0f0f0f0f0f0f0full) << 4);
  r = ((r >> 8) & 0x00ff00ff00ff00ffull) | ((r & 0x00ff00ff00ff00ffull) << 8);
  r = ((r >> 16) & 0x0000ffff0000ffffull) | ((r & 0x0000ffff0000ffffull) << 16);
  r = (r >> 32) | (r << 32);
  return r >> (64 - log_n);
#endif
}

// Word of limb l of tile element e. The limb stride is 2^kTileBitsMax words
// whatever the tile size (a block always takes 64 KiB; 3 blocks per SM are
// bound by registers anyway), so one address per element serves all 8 limbs as
// LDS/STS immediate offsets. With a stride of `tile` words ptxas formed each
// limb's address with an IMAD (7 per element access, 7 per product in a
// radix-4 group, on the multiply pipe the NTT is bound by).
inline constexpr u32 kLimbStride = 1u << kTileBitsMax;
inline constexpr u32 kTileWords = 8 * kLimbStride;
CUZK_LEAN_FN u32 slot(u32 e, int limb) { return u32(limb) * kLimbStride + swizzle(e); }

// Global index bits owned by block b, lowest first: for s_lo = 0 the bits
// [k, o_pos) and above o_pos + L; otherwise bits [L, s_lo) (low block bits, so
// that neighbouring blocks read neighbouring runs) and bits >= s_lo + k.
CUZK_LEAN_FN u64 block_base(u64 b, int s_lo, int k, int o_pos) {
  if (s_lo == 0) {
    const int gap = o_pos - k;
    const u64 low = b & ((u64{1} << gap) - 1);
    return ((b >> gap) << (o_pos + kOtherBits)) | (low << k);
  }
  const int low_bits = s_lo - kOtherBits;
  const u64 low = b & ((u64{1} << low_bits) - 1);
  return ((b >> low_bits) << (s_lo + k)) | (low << kOtherBits);
}
// Global index of tile element e = mid << L | other.
CUZK_LEAN_FN u64 global_index(u64 base, u32 e, int s_lo, int o_pos) {
  const u64 mid = e >> kOtherBits, other = e & ((1u << kOtherBits) - 1);
  return base | (mid << s_lo) | (other << o_pos);
}
// First tile element of group q of a round on tile bits [S, S + r): q with r
// zero bits inserted at S; the group's element t is e0 | t << S.
CUZK_LEAN_FN u32 group_e0(u32 q, int S, int r) { return ((q >> S) << (S + r)) | (q & ((1u << S) - 1)); }

// DIF butterfly (x, y) -> (x + y, (x - y) w^e), tw(j) = w^j for 0 <= j <= n/2
// (the table's extra entry w^(n/2) = -1). The inverse uses w^-e =
// -w^(n/2 - e), the sign folded into (y - x); for e = 0 that reads w^(n/2) =
// -1. No branch on e = 0: away from the bottom round (trivial_butterfly) a
// zero exponent is lane dependent, so skipping its product saved no warp time,
// while the branches cut each group into basic blocks ptxas could not
// interleave or hoist the twiddle loads across (H200, 2^27 forward: 36.15 ->
// 34.95 ms).
template <class F, class Tw>
CUZK_LEAN_FN void dif_butterfly(F& x, F& y, u32 e, bool inverse, u32 half_n, const Tw& tw) {
  F d;
  if (inverse) {
    d = y - x;
  } else {
    d = x - y;
  }
  x = x + y;
  y = d * tw(inverse ? half_n - e : e);  // one product site for both directions
}
// (x, y) -> (x + y, x - y): a butterfly whose twiddle is w^0 = 1 in both directions.
template <class F>
CUZK_LEAN_FN void trivial_butterfly(F& x, F& y) {
  const F s = x + y;
  y = x - y;
  x = s;
}

// One group (r = 2: radix-4, r = 1: radix-2) of the round with lowest local
// stage g_lo: reads its elements from the tile, runs its stages, writes them
// back. ld(e) / st(e, x) access tile element e (through slot()). kBottom:
// the radix-4 round on global stages 0 and 1 (s_lo + g_lo = 0), whose
// exponents are all 0 but one; the caller picks it per round (a uniform
// branch), so that its code stays out of the general round's registers
// (inside one run_group, ptxas spilled 24 B at 80 registers).
template <int r, class F, bool kBottom = false, class Tw, class Ld, class St>
CUZK_LEAN_FN void run_group(u32 q, int g_lo, u64 base, int s_lo, int o_pos, int log_n, bool inverse, const Tw& tw,
                            const Ld& ld, const St& st) {
  const int S = g_lo + kOtherBits;
  const int g = s_lo + g_lo;
  const u32 e0 = group_e0(q, S, r);
  // c = (global index of element 0) mod 2^g, g < 32: the low 32 bits suffice.
  const u32 mid = e0 >> kOtherBits, other = e0 & ((1u << kOtherBits) - 1);
  const u32 c = (static_cast<u32>(base) | (mid << s_lo) | (other << o_pos)) & ((1u << g) - 1);
  const u32 half_n = u32{1} << (log_n - 1);
  if constexpr (r == 2) {
    // Radix-4 DIF on elements x_t = e0 | t << S, t < 4 (global b + t 2^g,
    // c = b mod 2^g). Stage g + j pairs (t, t + 2^j) with exponent
    // (c + (t mod 2^j) 2^g) 2^(log_n - 1 - g - j):
    //   j = 1: (0, 2) at c 2^(log_n - 2 - g), (1, 3) at that + n/4;
    //   j = 0: (0, 1) and (2, 3) at c 2^(log_n - 1 - g).
    // (Interleaving the loads and stores with the butterflies, to keep 3
    // elements live instead of 4, made ptxas spill more at 80 registers: 48-56 B vs 32 B.)
    const u32 e_hi = c << (log_n - 2 - g);
    const u32 e_lo = c << (log_n - 1 - g);
    F x[4];
    CUZK_LEAN_UNROLL
    for (int t = 0; t < 4; ++t) x[t] = ld(e0 | (u32(t) << S));
    if constexpr (kBottom) {
      // The bottom round (g = 0: c = 0 for every group): only (1, 3) has a
      // non-trivial twiddle, w^(n/4).
      trivial_butterfly(x[0], x[2]);
      dif_butterfly(x[1], x[3], half_n >> 1, inverse, half_n, tw);
      trivial_butterfly(x[0], x[1]);
      trivial_butterfly(x[2], x[3]);
    } else {
      dif_butterfly(x[0], x[2], e_hi, inverse, half_n, tw);
      dif_butterfly(x[1], x[3], e_hi + (half_n >> 1), inverse, half_n, tw);
      dif_butterfly(x[0], x[1], e_lo, inverse, half_n, tw);
      dif_butterfly(x[2], x[3], e_lo, inverse, half_n, tw);
    }
    CUZK_LEAN_UNROLL
    for (int t = 0; t < 4; ++t) st(e0 | (u32(t) << S), x[t]);
  } else {
    F x = ld(e0), y = ld(e0 | (1u << S));
    dif_butterfly(x, y, c << (log_n - 1 - g), inverse, half_n, tw);
    st(e0, x);
    st(e0 | (1u << S), y);
  }
}

// Rounds of a pass from the top down: round i (0 <= i < rounds(k)) covers local
// stages [g_lo, g_lo + r).
CUZK_LEAN_FN int rounds(int k) { return (k + 1) / 2; }
CUZK_LEAN_FN int round_radix_log(int k, int i) { return (i == 0 && (k & 1)) ? 1 : 2; }
CUZK_LEAN_FN int round_g_lo(int k, int i) {
  // An odd k puts the radix-2 group on top (local stage k - 1), then radix-4
  // groups at k - 3, k - 5, ..., 0; an even k has radix-4 groups at k - 2, ..., 0.
  return (k & 1) ? (i == 0 ? k - 1 : k - 1 - 2 * i) : k - 2 - 2 * i;
}

}  // namespace cuzk::gpu::ntt_lean
