// Lean radix-4 DIF passes: see gpu/ntt/ntt_lean_index.hpp for the layout and
// why it looks this way; the arithmetic model is in bench/gpu/NOTES.md
// ("NTT: lean radix-4 passes").
#include <cstdlib>

#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "gpu/ntt/ntt_lean.hpp"
#include "gpu/ntt/ntt_lean_index.hpp"

namespace cuzk::gpu::kernels {
namespace {

using dev::Fr;
using u64 = std::uint64_t;
namespace nl = ntt_lean;

__device__ __forceinline__ Fr ld_fr(const u32* p, u64 i) {
  const uint4* q = reinterpret_cast<const uint4*>(p + i * 8);
  const uint4 a = q[0], b = q[1];
  return Fr{{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
}
__device__ __forceinline__ void st_fr(u32* p, u64 i, const Fr& v) {
  uint4* q = reinterpret_cast<uint4*>(p + i * 8);
  q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
  q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
}

struct LeanPassParams {
  u32* data;
  const u32* tw;
  int log_n, s_lo, k, o_pos;
  // First pass only: x_i *= sc_hi[i >> sc_lo_bits] * sc_lo[i mod 2^sc_lo_bits]
  // (or the constant sc_hi[0] without sc_lo).
  const u32* sc_hi;
  const u32* sc_lo;
  int sc_lo_bits;
  const u32* ld_mul;  // first pass: then x_i *= ld_mul[i]
  // Bottom pass only, when out is set: element i goes to out[bitrev(i)],
  // scaled by st_hi[j >> st_lo_bits] * st_lo[j mod 2^st_lo_bits] (or st_hi[0])
  // at its natural position j = bitrev(i) when st_hi is set.
  u32* out;
  const u32* st_hi;
  const u32* st_lo;
  int st_lo_bits;
  const u32* st_sub;  // then out[j] -= st_sub[j]
};

__device__ __forceinline__ Fr table_factor(const u32* hi, const u32* lo, int lo_bits, u64 i) {
  if (lo == nullptr) return ld_fr(hi, 0);
  return ld_fr(hi, i >> lo_bits) * ld_fr(lo, i & ((u64{1} << lo_bits) - 1));
}

struct TwiddleTable {
  const u32* tw;
  __device__ __forceinline__ Fr operator()(u32 j) const { return ld_fr(tw, j); }
};

// One pass: global -> tile, rounds of radix-4 (and one radix-2) groups in
// registers, tile -> global, in place. Each thread owns tile / 256 elements in
// the load / store loops and tile / 1024 groups per round.
template <bool kInverse>
__global__ void __launch_bounds__(nl::kThreads, nl::kMinBlocksPerSm) lean_dif_pass_kernel(const LeanPassParams p) {
  extern __shared__ u32 shm[];
  const u32 tile = 1u << (p.k + nl::kOtherBits);
  const u64 base = nl::block_base(blockIdx.x, p.s_lo, p.k, p.o_pos);
  const auto tile_ld = [&](u32 e) {
    Fr v;
#pragma unroll
    for (int l = 0; l < 8; ++l) v.l[l] = shm[nl::slot(e, l)];
    return v;
  };
  const auto tile_st = [&](u32 e, const Fr& v) {
#pragma unroll
    for (int l = 0; l < 8; ++l) shm[nl::slot(e, l)] = v.l[l];
  };

  if (p.sc_hi == nullptr && p.ld_mul == nullptr) {
    // Four of a thread's loads in flight before its first store to the tile
    // (one at a time, each store waited for HBM: ncu put 5% of the pass's
    // stall samples on those stores). H200, 2^27 forward: 41.20 -> 41.02 ms
    // (and 56 B of spill instead of 72); all 8 of a 2^11 tile: 42.01 (140 B).
    constexpr int kBatch = 4;
    for (u32 e0 = threadIdx.x; e0 < tile; e0 += kBatch * nl::kThreads) {
      Fr v[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const u32 e = e0 + u32(j) * nl::kThreads;
        if (e < tile) v[j] = ld_fr(p.data, nl::global_index(base, e, p.s_lo, p.o_pos));
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const u32 e = e0 + u32(j) * nl::kThreads;
        if (e < tile) tile_st(e, v[j]);
      }
    }
  } else {
    for (u32 e = threadIdx.x; e < tile; e += nl::kThreads) {
      const u64 gi = nl::global_index(base, e, p.s_lo, p.o_pos);
      Fr v = ld_fr(p.data, gi);
      if (p.sc_hi != nullptr) v = v * table_factor(p.sc_hi, p.sc_lo, p.sc_lo_bits, gi);
      if (p.ld_mul != nullptr) v = v * ld_fr(p.ld_mul, gi);
      tile_st(e, v);
    }
  }
  __syncthreads();

  const TwiddleTable tw{p.tw};
  const int n_rounds = nl::rounds(p.k);
  for (int i = 0; i < n_rounds; ++i) {
    const int g_lo = nl::round_g_lo(p.k, i);
    if (nl::round_radix_log(p.k, i) == 2 && p.s_lo + g_lo == 0) {
#pragma unroll 1
      for (u32 q = threadIdx.x; q < tile / 4; q += nl::kThreads) {
        nl::run_group<2, Fr, true>(q, g_lo, base, p.s_lo, p.o_pos, p.log_n, kInverse, tw, tile_ld, tile_st);
      }
    } else if (nl::round_radix_log(p.k, i) == 2) {
#pragma unroll 1
      for (u32 q = threadIdx.x; q < tile / 4; q += nl::kThreads) {
        nl::run_group<2, Fr>(q, g_lo, base, p.s_lo, p.o_pos, p.log_n, kInverse, tw, tile_ld, tile_st);
      }
    } else {
#pragma unroll 1
      for (u32 q = threadIdx.x; q < tile / 2; q += nl::kThreads) {
        nl::run_group<1, Fr>(q, g_lo, base, p.s_lo, p.o_pos, p.log_n, kInverse, tw, tile_ld, tile_st);
      }
    }
    __syncthreads();
  }

  for (u32 e = threadIdx.x; e < tile; e += nl::kThreads) {
    const u64 gi = nl::global_index(base, e, p.s_lo, p.o_pos);
    Fr v = tile_ld(e);
    if (p.out == nullptr) {
      st_fr(p.data, gi, v);
    } else {
      const u64 j = nl::bit_reverse(gi, p.log_n);
      if (p.st_hi != nullptr) v = v * table_factor(p.st_hi, p.st_lo, p.st_lo_bits, j);
      if (p.st_sub != nullptr) v = v - ld_fr(p.st_sub, j);
      st_fr(p.out, j, v);
    }
  }
}

template <bool kInverse>
void launch_pass(cudaStream_t s, const LeanPassParams& p) {
  constexpr std::size_t shm_bytes = std::size_t{nl::kTileWords} * 4;  // 64 KiB: see nl::slot
  CUZK_CUDA_CHECK(cudaFuncSetAttribute(lean_dif_pass_kernel<kInverse>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shm_bytes)));
  const int t_bits = p.k + nl::kOtherBits;
  const unsigned blocks = static_cast<unsigned>(std::size_t{1} << (p.log_n - t_bits));
  lean_dif_pass_kernel<kInverse><<<blocks, nl::kThreads, shm_bytes, s>>>(p);
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace

int ntt_lean_passes(int log_n) {
  nl::Pass plan[8];
  return nl::plan(log_n, plan);
}

void ntt_lean_dif(cudaStream_t s, u32* data, const u32* tw, int log_n, bool inverse, const LeanNttIo& io) {
  // Shapes the kernel cannot run are caller bugs (Device::ntt checks sizes).
  if (log_n < nl::kLogMin || log_n > 32 || io.load_scale.bitrev_index || io.store_scale.bitrev_index) std::abort();
  if (io.out == data || (io.out == nullptr && (io.store_scale.hi != nullptr || io.store_sub != nullptr))) std::abort();
  if (io.load_mul == data || io.store_sub == data) std::abort();  // data is rewritten pass by pass
  nl::Pass plan[8];
  const int passes = nl::plan(log_n, plan);
  // DIF: the top pass first; the load scaling rides on it.
  for (int i = passes - 1; i >= 0; --i) {
    LeanPassParams p{};
    p.data = data;
    p.tw = tw;
    p.log_n = log_n;
    p.s_lo = plan[i].s_lo;
    p.k = plan[i].k;
    p.o_pos = nl::other_pos(p.s_lo, p.k, log_n, i == 0 && io.out != nullptr);
    if (i == passes - 1) {
      p.sc_hi = io.load_scale.hi;
      p.sc_lo = io.load_scale.lo;
      p.sc_lo_bits = io.load_scale.lo_bits;
      p.ld_mul = io.load_mul;
    }
    if (i == 0) {  // the bottom pass, last to run (at least 2 passes: not the top one)
      p.out = io.out;
      p.st_hi = io.store_scale.hi;
      p.st_lo = io.store_scale.lo;
      p.st_lo_bits = io.store_scale.lo_bits;
      p.st_sub = io.store_sub;
    }
    inverse ? launch_pass<true>(s, p) : launch_pass<false>(s, p);
  }
}

}  // namespace cuzk::gpu::kernels
