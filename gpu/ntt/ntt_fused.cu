// Fr NTT passes with radix-4/8 butterflies in registers and fused pre/post
// processing (gpu::NttAlgorithm::kRadix4 / kRadix8; the radix-2 kernels of
// ntt.cu stay the default until these are validated on the H200).
//
// Why: the radix-2 pass (ntt.cu) moves every element through shared memory
// once per stage (16 loads + 16 stores of 32-bit words per butterfly). Here a
// thread loads 2^r elements (r <= R = 2 or 3 stages) from the shared tile into
// registers, runs r stages there and writes them back: shared traffic per
// stage drops by r, index arithmetic is paid once per group, and 2^(r-1)
// independent butterflies per stage give the multiplier chains ILP. Twiddle
// loads drop from one per butterfly to 2^r - 1 per r * 2^(r-1) butterflies
// (7 per 12 for radix-8). The 7 NTTs of a Groth16 H then need no separate
// passes: coset scaling, 1/n, the quotient (a b - c) / Z and the final bit
// reversal (out of place) ride on the first / last pass.
//
// Tile: one block owns 2^T elements, T = k + L: the k "mid" index bits
// [s_lo, s_lo + k) that the pass's stages mix, and L = 5 - R "other" bits at
// [o_pos, o_pos + L) (the lowest index bits, so global accesses come in runs of
// 2^L elements = 128/256 B; for the bottom pass the bits above the mid bits,
// or the top bits when the output is bit-reversed, so the permuted stores also
// come in runs of 2^L). The remaining index bits are the block number.
// Tile-local index e = mid << L | other.
//
// Shared memory is limb-major (limb l of element e at l * 2^T + swz(e)) with
// the swizzle swz(e) = e ^ (((e >> 5) mod 2^R) << L), a bijection touching
// only bits L..4. A group of r stages occupying tile bits [S, S + r) is
// served by a warp whose 32 lanes vary the five lowest bits of e outside the
// group. Groups are laid out so that only the lowest group has S < 5, and it
// starts at S = L with r = min(k, R) stages, so its lanes' bits are
// {0..L-1} U {5..4+r'}: the swizzle maps bits 5.. onto bank bits L.. and all
// 32 lanes hit distinct banks. Every other group has S >= 5 and its lanes vary
// bits 0..4 only (bank = e's low bits xor a constant). Loads / stores of the
// tile run over consecutive e: conflict free too.
//
// Butterflies (stage s, h = 2^s, pair (i, i + h) with bit s of i clear,
// twiddle w^(e), e = (i mod h) * n / (2h); tw[j] = w^j for j < n/2):
//   DIF (natural in, bit-reversed out): (x, y) -> (x + y, (x - y) w^e)
//   DIT (bit-reversed in, natural out): (x, y) -> (x + w^e y, x - w^e y)
// The inverse uses w^-e = -w^(n/2 - e) for e > 0: the sign is folded into the
// subtraction (DIF) or the final swap (DIT).
// For a group of r stages with lowest stage g over elements b + t 2^g
// (t < 2^r, bits g..g+r-1 of b clear, c = b mod 2^g), stage g + j pairs
// (t, t + 2^j) with twiddle exponent
//   (c + (t mod 2^j) 2^g) 2^(log_n - 1 - g - j)
// = (c << (log_n - 1 - g - j)) + (t mod 2^j) * n / 2^(j+1)   (< n/2).
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "gpu/kernels.hpp"

namespace cuzk::gpu::kernels {
namespace {

using dev::Fr;
using u64 = std::uint64_t;

constexpr int kFusedTileBits = 11;  // 2^11 elements * 32 B = 64 KiB of shared memory per block

__device__ __forceinline__ Fr ld(const u32* p, u64 i) {
  const uint4* q = reinterpret_cast<const uint4*>(p + i * 8);
  const uint4 a = q[0], b = q[1];
  return Fr{{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
}
__device__ __forceinline__ void st(u32* p, u64 i, const Fr& v) {
  uint4* q = reinterpret_cast<uint4*>(p + i * 8);
  q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
  q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
}
__device__ __forceinline__ u64 brev(u64 i, int log_n) { return __brevll(i) >> (64 - log_n); }

// hi[idx >> lo_bits] * lo[idx mod 2^lo_bits], or the constant hi[0] without lo.
__device__ __forceinline__ Fr scale_factor(const u32* hi, const u32* lo, int lo_bits, u64 idx) {
  if (lo == nullptr) return ld(hi, 0);
  return ld(hi, idx >> lo_bits) * ld(lo, idx & ((u64{1} << lo_bits) - 1));
}

struct PassParams {
  const u32* src;
  u32* dst;
  const u32* tw;
  int log_n, s_lo, k, o_pos;
  bool dit, inverse;
  // Before the transform (first pass only): x_p <- (x_p b_p - c_p) z when q_b
  // is set, then x_p <- x_p * F(p or bitrev(p)) when ld_hi is set.
  const u32* q_b;
  const u32* q_c;
  Fr q_z;
  const u32* ld_hi;
  const u32* ld_lo;
  int ld_lo_bits;
  bool ld_brev;
  // After the transform (last pass only): position p goes to bitrev(p) when
  // st_perm (dst != src), then is scaled by F(stored position, or its bitrev).
  bool st_perm;
  const u32* st_hi;
  const u32* st_lo;
  int st_lo_bits;
  bool st_brev;
};

template <int R>
struct Shape {
  static constexpr int kL = 5 - R;
  static constexpr unsigned kThreads = (1u << kFusedTileBits) >> R;
};

// Physical word of limb l of tile element e (see the header comment).
template <int R>
__device__ __forceinline__ u32 slot(u32 tile, u32 e, int l) {
  return l * tile + (e ^ (((e >> 5) & ((1u << R) - 1)) << Shape<R>::kL));
}

// Global index of tile element e: base (block bits) | mid << s_lo | other << o_pos.
struct TileIndex {
  u64 base;
  int s_lo, o_pos;
  __device__ __forceinline__ u64 operator()(u32 e, int l_bits) const {
    return base | (u64(e >> l_bits) << s_lo) | (u64(e & ((1u << l_bits) - 1)) << o_pos);
  }
};

// Spreads the block number over the index bits outside [p1, p1 + w1) and
// [p2, p2 + w2) (p1 + w1 <= p2), lowest bits first.
__device__ __forceinline__ u64 deposit_block(u64 b, int p1, int w1, int p2, int w2) {
  u64 r = b & ((u64{1} << p1) - 1);
  b >>= p1;
  const int gap = p2 - p1 - w1;
  r |= (b & ((u64{1} << gap) - 1)) << (p1 + w1);
  b >>= gap;
  r |= b << (p2 + w2);
  return r;
}

// Stage j (global stage g + j) of a group held in registers. kCZero: c = 0
// (the group of stage 0, where every block has c = 0), so the butterflies with
// t mod 2^j = 0 have twiddle w^0 = 1 and skip their product: all of stage 0,
// half of stage 1, ..., about 2 of the log n stages' products.
template <int r, bool kDit, bool kCZero>
// Exponents are below n/2 <= 2^31 (log_n <= 32): 32-bit index math.
__device__ __forceinline__ void stage(Fr (&x)[1 << r], int j, u32 c, int g, const PassParams& p, u32 half_n) {
  const u32 step = half_n >> j;  // n / 2^(j+1)
  const u32 e_c = kCZero ? 0 : c << (p.log_n - 1 - g - j);
#pragma unroll
  for (int t = 0; t < (1 << r); ++t) {
    if (((t >> j) & 1) != 0) continue;
    const int u = t + (1 << j);
    if (kCZero && (t & ((1 << j) - 1)) == 0) {
      // (x, y) -> (x + y, x - y) in both forms and directions.
      const Fr sum = x[t] + x[u];
      x[u] = x[t] - x[u];
      x[t] = sum;
      continue;
    }
    const u32 e_tw = e_c + u32(t & ((1 << j) - 1)) * step;
    const bool neg = p.inverse && e_tw != 0;  // w^-e = -w^(n/2 - e)
    const Fr w = ld(p.tw, neg ? half_n - e_tw : e_tw);
    if constexpr (!kDit) {
      // (x, y) -> (x + y, (x - y) w), or (y - x) w' for the inverse.
      Fr a, b;
#pragma unroll
      for (int l = 0; l < 8; ++l) {
        a.l[l] = neg ? x[u].l[l] : x[t].l[l];
        b.l[l] = neg ? x[t].l[l] : x[u].l[l];
      }
      x[t] = x[t] + x[u];
      x[u] = (a - b) * w;
    } else {
      // (x, y) -> (x + w y, x - w y), swapped for the inverse's -w'.
      const Fr wy = x[u] * w;
      const Fr a = x[t] + wy, b = x[t] - wy;
#pragma unroll
      for (int l = 0; l < 8; ++l) {
        x[t].l[l] = neg ? b.l[l] : a.l[l];
        x[u].l[l] = neg ? a.l[l] : b.l[l];
      }
    }
  }
}

// One group of r stages (lowest local stage g_lo) over the whole tile.
template <int R, int r>
__device__ __forceinline__ void run_group(u32* shm, u32 tile, int g_lo, const PassParams& p, const TileIndex& gidx) {
  constexpr int L = Shape<R>::kL;
  constexpr int kE = 1 << r;
  const int S = g_lo + L;      // tile-index bit of the group's lowest stage
  const int g = p.s_lo + g_lo;  // its global stage
  const u32 half_n = u32{1} << (p.log_n - 1);
  for (u32 q = threadIdx.x; q < (tile >> r); q += blockDim.x) {
    const u32 e0 = ((q >> S) << (S + r)) | (q & ((1u << S) - 1));
    Fr x[kE];
#pragma unroll
    for (int t = 0; t < kE; ++t) {
      const u32 e = e0 | (u32(t) << S);
#pragma unroll
      for (int l = 0; l < 8; ++l) x[t].l[l] = shm[slot<R>(tile, e, l)];
    }
    const u32 c = static_cast<u32>(gidx(e0, L) & ((u64{1} << g) - 1));  // < 2^g <= 2^31
    // Stage order is a compile-time unrolled loop in each branch, so every x[]
    // index is a constant and x stays in registers.
    if (p.dit && g == 0) {
#pragma unroll
      for (int j = 0; j < r; ++j) stage<r, true, true>(x, j, c, g, p, half_n);
    } else if (p.dit) {
#pragma unroll
      for (int j = 0; j < r; ++j) stage<r, true, false>(x, j, c, g, p, half_n);
    } else if (g == 0) {
#pragma unroll
      for (int j = r - 1; j >= 0; --j) stage<r, false, true>(x, j, c, g, p, half_n);
    } else {
#pragma unroll
      for (int j = r - 1; j >= 0; --j) stage<r, false, false>(x, j, c, g, p, half_n);
    }
#pragma unroll
    for (int t = 0; t < kE; ++t) {
      const u32 e = e0 | (u32(t) << S);
#pragma unroll
      for (int l = 0; l < 8; ++l) shm[slot<R>(tile, e, l)] = x[t].l[l];
    }
  }
}

// kMinBlocks = 2 caps radix-8 at 128 registers (16 warps per SM; ptxas spills
// ~136 B per thread); 1 lets it take ~200 (8 warps per SM, no spills).
template <int R, int kMinBlocks>
__global__ void __launch_bounds__(Shape<R>::kThreads, kMinBlocks) fused_pass_kernel(const PassParams p) {
  extern __shared__ u32 shm[];
  constexpr int L = Shape<R>::kL;
  const u32 tile = 1u << (p.k + L);
  TileIndex gidx;
  gidx.s_lo = p.s_lo;
  gidx.o_pos = p.o_pos;
  gidx.base = p.o_pos < p.s_lo ? deposit_block(blockIdx.x, p.o_pos, L, p.s_lo, p.k)
                               : deposit_block(blockIdx.x, p.s_lo, p.k, p.o_pos, L);

  for (u32 e = threadIdx.x; e < tile; e += blockDim.x) {
    const u64 gi = gidx(e, L);
    Fr v = ld(p.src, gi);
    if (p.q_b != nullptr) v = (v * ld(p.q_b, gi) - ld(p.q_c, gi)) * p.q_z;
    if (p.ld_hi != nullptr) v = v * scale_factor(p.ld_hi, p.ld_lo, p.ld_lo_bits, p.ld_brev ? brev(gi, p.log_n) : gi);
#pragma unroll
    for (int l = 0; l < 8; ++l) shm[slot<R>(tile, e, l)] = v.l[l];
  }
  __syncthreads();

  // Groups from the bottom: [0, r0) with r0 = min(k, R), then R stages each,
  // the top one holding the remainder. DIF runs them top down, DIT bottom up.
  const int r0 = min(p.k, R);
  const int groups = 1 + (p.k - r0 + R - 1) / R;
  for (int i = 0; i < groups; ++i) {
    const int gsel = p.dit ? i : groups - 1 - i;
    const int g_lo = gsel == 0 ? 0 : r0 + (gsel - 1) * R;
    const int r = gsel == 0 ? r0 : min(R, p.k - g_lo);
    if (r == 1) {
      run_group<R, 1>(shm, tile, g_lo, p, gidx);
    } else if (r == 2) {
      run_group<R, 2>(shm, tile, g_lo, p, gidx);
    } else if constexpr (R >= 3) {
      run_group<R, 3>(shm, tile, g_lo, p, gidx);
    }
    __syncthreads();
  }

  for (u32 e = threadIdx.x; e < tile; e += blockDim.x) {
    u64 gi = gidx(e, L);
    Fr v;
#pragma unroll
    for (int l = 0; l < 8; ++l) v.l[l] = shm[slot<R>(tile, e, l)];
    if (p.st_perm) gi = brev(gi, p.log_n);
    if (p.st_hi != nullptr) v = v * scale_factor(p.st_hi, p.st_lo, p.st_lo_bits, p.st_brev ? brev(gi, p.log_n) : gi);
    st(p.dst, gi, v);
  }
}

struct PassPlan {
  int s_lo, k;
};

// Passes from the bottom stage up: the fewest passes of at most
// kFusedTileBits - L stages (and at most log_n - L, so the other bits exist),
// sizes as even as possible (each >= L, so every s_lo is 0 or >= L).
std::vector<PassPlan> plan_passes(int log_n, int radix_log) {
  const int l_bits = 5 - radix_log;
  const int k_max = std::min(kFusedTileBits - l_bits, log_n - l_bits);
  const int passes = (log_n + k_max - 1) / k_max;
  std::vector<PassPlan> plan;
  int s = 0;
  for (int i = 0; i < passes; ++i) {
    const int k = log_n / passes + (i < log_n % passes ? 1 : 0);
    if (k < l_bits) std::abort();  // every s_lo must be 0 or >= L (see the header comment)
    plan.push_back({s, k});
    s += k;
  }
  return plan;
}

template <int R, int kMinBlocks>
void launch_pass(cudaStream_t s, const PassParams& p) {
  const int t_bits = p.k + Shape<R>::kL;
  const std::size_t shm_bytes = (std::size_t{1} << t_bits) * 32;
  CUZK_CUDA_CHECK(cudaFuncSetAttribute(fused_pass_kernel<R, kMinBlocks>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>((std::size_t{1} << kFusedTileBits) * 32)));
  const unsigned blocks = static_cast<unsigned>(std::size_t{1} << (p.log_n - t_bits));
  fused_pass_kernel<R, kMinBlocks><<<blocks, Shape<R>::kThreads, shm_bytes, s>>>(p);
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace

int ntt_fused_passes(int log_n, int radix_log) {
  return static_cast<int>(plan_passes(log_n, radix_log).size());
}

void ntt_fused(cudaStream_t s, const NttFusedArgs& a) {
  // Shapes the kernel cannot run are caller bugs (the callers check sizes).
  if ((a.radix_log != 2 && a.radix_log != 3) || a.log_n < kNttFusedLogMin || a.log_n > 32) std::abort();
  if (a.store_bitrev && (a.dit || a.out == nullptr || a.out == a.data)) std::abort();
  const int l_bits = 5 - a.radix_log;
  const std::vector<PassPlan> plan = plan_passes(a.log_n, a.radix_log);
  const int passes = static_cast<int>(plan.size());
  for (int i = 0; i < passes; ++i) {
    // DIF runs the passes top down, DIT bottom up.
    const PassPlan& pp = a.dit ? plan[i] : plan[passes - 1 - i];
    const bool first = i == 0, last = i == passes - 1;
    PassParams p{};
    p.src = a.data;
    p.dst = last && a.store_bitrev ? a.out : a.data;
    p.tw = a.twiddles;
    p.log_n = a.log_n;
    p.s_lo = pp.s_lo;
    p.k = pp.k;
    p.o_pos = pp.s_lo >= l_bits ? 0 : (last && a.store_bitrev ? a.log_n - l_bits : pp.k);
    p.dit = a.dit;
    p.inverse = a.inverse;
    if (first) {
      p.q_b = a.quotient_b;
      p.q_c = a.quotient_c;
      for (int l = 0; l < 8; ++l) p.q_z.l[l] = a.quotient_z[l];
      p.ld_hi = a.load_scale.hi;
      p.ld_lo = a.load_scale.lo;
      p.ld_lo_bits = a.load_scale.lo_bits;
      p.ld_brev = a.load_scale.bitrev_index;
    }
    if (last) {
      p.st_perm = a.store_bitrev;
      p.st_hi = a.store_scale.hi;
      p.st_lo = a.store_scale.lo;
      p.st_lo_bits = a.store_scale.lo_bits;
      p.st_brev = a.store_scale.bitrev_index;
    }
    if (a.radix_log == 2) {
      launch_pass<2, 1>(s, p);
    } else if (a.wide_registers) {
      launch_pass<3, 1>(s, p);
    } else {
      launch_pass<3, 2>(s, p);
    }
  }
}

}  // namespace cuzk::gpu::kernels
