// Fr NTT kernels: radix-2 decimation in frequency, several stages per kernel in
// shared memory, then an in-place bit-reversal pass that also applies the
// inverse's 1/n and the coset's g^-i. Device::ntt and GpuProver's H stage run
// them below 2^6 (ntt_lean::kLogMin: the lean passes need 3 stages per pass
// plus 2 "other" index bits); the bit-reversal pass also serves the two-vector
// H stage's in-place transform, and ntt_power_table builds every size's
// twiddles.
//
// A pass covers stages s_hi..s_lo (butterfly half-size h = 2^s). One block owns
// a tile of 2^T elements: the K = s_hi - s_lo + 1 "mid" index bits that the
// pass's butterflies mix, times 2^L consecutive "low" elements so that global
// loads come in runs of 2^L * 32 B. The tile lives in shared memory limb-major
// (limb l of element e at l * 2^T + e), so a warp touching consecutive elements
// hits 32 distinct banks.
#include <algorithm>

#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "gpu/kernels.hpp"

namespace cuzk::gpu::kernels {
namespace {

using dev::Fr;
using u64 = std::uint64_t;

constexpr int kTileBitsMax = 11;  // 2^11 elements * 32 B = 64 KiB of shared memory
constexpr int kPassThreads = 256;

__device__ __forceinline__ Fr load_fr(const u32* p, u64 i) {
  const uint4* q = reinterpret_cast<const uint4*>(p + i * 8);
  const uint4 a = q[0], b = q[1];
  return Fr{{a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w}};
}
__device__ __forceinline__ void store_fr(u32* p, u64 i, const Fr& v) {
  uint4* q = reinterpret_cast<uint4*>(p + i * 8);
  q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
  q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
}

__global__ void power_table_kernel(u32* tw, const u32* hi, const u32* lo, int lo_bits, u64 count) {
  const u64 j = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= count) return;
  const u64 mask = (u64{1} << lo_bits) - 1;
  store_fr(tw, j, load_fr(hi, j >> lo_bits) * load_fr(lo, j & mask));
}

__global__ void scale_kernel(u32* data, u64 n, const u32* hi, const u32* lo, int lo_bits) {
  const u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u64 mask = (u64{1} << lo_bits) - 1;
  const Fr f = load_fr(hi, i >> lo_bits) * load_fr(lo, i & mask);
  store_fr(data, i, load_fr(data, i) * f);
}

__global__ void __launch_bounds__(kPassThreads)
    dif_pass_kernel(u32* data, const u32* tw, int log_n, int s_lo, int k_stages, int l_bits, bool inverse) {
  extern __shared__ u32 shm[];
  const int t_bits = k_stages + l_bits;
  const u32 tile = 1u << t_bits;
  const u32 l_mask = (1u << l_bits) - 1;
  const int lowblk_bits = s_lo - l_bits;
  const u64 b = blockIdx.x;
  const u64 lowblk = b & ((u64{1} << lowblk_bits) - 1);
  const u64 high = b >> lowblk_bits;
  // Global index of tile element e: high | mid << s_lo | lowblk << l_bits | low.
  const u64 base = (high << (s_lo + k_stages)) | (lowblk << l_bits);

  for (u32 e = threadIdx.x; e < tile; e += kPassThreads) {
    const u64 gi = base | (u64(e >> l_bits) << s_lo) | (e & l_mask);
    const Fr v = load_fr(data, gi);
#pragma unroll
    for (int l = 0; l < 8; ++l) shm[l * tile + e] = v.l[l];
  }
  __syncthreads();

  const u64 half_n = u64{1} << (log_n - 1);
  for (int k = k_stages - 1; k >= 0; --k) {
    const int s = s_lo + k;
    const u32 hm = 1u << k;
    for (u32 q = threadIdx.x; q < tile / 2; q += kPassThreads) {
      const u32 low = q & l_mask;
      const u32 m = q >> l_bits;
      const u32 j = m & (hm - 1);
      const u32 a_mid = ((m >> k) << (k + 1)) | j;
      const u32 ea = (a_mid << l_bits) | low;
      const u32 eb = ea + (hm << l_bits);
      Fr x, y;
#pragma unroll
      for (int l = 0; l < 8; ++l) {
        x.l[l] = shm[l * tile + ea];
        y.l[l] = shm[l * tile + eb];
      }
      // Butterfly (x, y) -> (x + y, (x - y) w_{2h}^(i mod h)), w_{2h} = w_n^(n/2h).
      const u64 i_mod_h = (u64(j) << s_lo) | (lowblk << l_bits) | low;
      const u64 e_tw = i_mod_h << (log_n - 1 - s);
      const Fr sum = x + y;
      Fr diff;
      if (e_tw == 0) {
        diff = x - y;
      } else if (!inverse) {
        diff = (x - y) * load_fr(tw, e_tw);
      } else {
        // w^-e = -w^(n/2 - e).
        diff = (y - x) * load_fr(tw, half_n - e_tw);
      }
#pragma unroll
      for (int l = 0; l < 8; ++l) {
        shm[l * tile + ea] = sum.l[l];
        shm[l * tile + eb] = diff.l[l];
      }
    }
    __syncthreads();
  }

  for (u32 e = threadIdx.x; e < tile; e += kPassThreads) {
    const u64 gi = base | (u64(e >> l_bits) << s_lo) | (e & l_mask);
    Fr v;
#pragma unroll
    for (int l = 0; l < 8; ++l) v.l[l] = shm[l * tile + e];
    store_fr(data, gi, v);
  }
}

__global__ void bitrev_scale_kernel(u32* data, int log_n, const u32* hi, const u32* lo, int lo_bits) {
  const u64 n = u64{1} << log_n;
  const u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const u64 j = __brevll(i) >> (64 - log_n);
  if (j < i) return;  // the pair is handled by thread j
  const u64 mask = (u64{1} << lo_bits) - 1;
  Fr vi = load_fr(data, i);
  Fr vj = load_fr(data, j);
  if (hi != nullptr) {
    // Element from j lands at i and is scaled by f(i); likewise the other way.
    const Fr fi = lo != nullptr ? load_fr(hi, i >> lo_bits) * load_fr(lo, i & mask) : load_fr(hi, 0);
    const Fr fj = lo != nullptr ? load_fr(hi, j >> lo_bits) * load_fr(lo, j & mask) : fi;
    vj = vj * fi;
    if (j != i) vi = vi * fj;
  }
  store_fr(data, i, vj);
  if (j != i) store_fr(data, j, vi);
}

}  // namespace

void ntt_power_table(cudaStream_t s, u32* tw, const u32* hi, const u32* lo, int lo_bits, std::size_t count) {
  if (count == 0) return;
  power_table_kernel<<<detail::grid_for(count, 256), 256, 0, s>>>(tw, hi, lo, lo_bits, count);
  CUZK_CUDA_CHECK_LAUNCH();
}

void ntt_scale(cudaStream_t s, u32* data, std::size_t n, const u32* hi, const u32* lo, int lo_bits) {
  scale_kernel<<<detail::grid_for(n, 256), 256, 0, s>>>(data, n, hi, lo, lo_bits);
  CUZK_CUDA_CHECK_LAUNCH();
}

void ntt_dif(cudaStream_t s, u32* data, const u32* tw, int log_n, bool inverse) {
  const std::size_t shm_max_bytes = (std::size_t{1} << kTileBitsMax) * 32;
  CUZK_CUDA_CHECK(cudaFuncSetAttribute(dif_pass_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shm_max_bytes)));
  // Split the log_n stages into the fewest passes of <= kTileBitsMax stages,
  // as evenly as possible (the last pass, s_lo = 0, gets any extra stage).
  const int passes = (log_n + kTileBitsMax - 1) / kTileBitsMax;
  int s_hi = log_n - 1;
  for (int p = 0; p < passes; ++p) {
    const int remaining_passes = passes - p;
    const int k = (s_hi + 1) / remaining_passes;
    const int s_lo = s_hi - k + 1;
    const int l_bits = std::min(s_lo, kTileBitsMax - k);
    const int t_bits = k + l_bits;
    const std::size_t blocks = std::size_t{1} << (log_n - t_bits);
    const std::size_t shm_bytes = (std::size_t{1} << t_bits) * 32;
    dif_pass_kernel<<<static_cast<unsigned>(blocks), kPassThreads, shm_bytes, s>>>(data, tw, log_n, s_lo, k, l_bits,
                                                                                   inverse);
    CUZK_CUDA_CHECK_LAUNCH();
    s_hi = s_lo - 1;
  }
}

void ntt_bitrev_scale(cudaStream_t s, u32* data, int log_n, const u32* hi, const u32* lo, int lo_bits) {
  const std::size_t n = std::size_t{1} << log_n;
  bitrev_scale_kernel<<<detail::grid_for(n, 256), 256, 0, s>>>(data, log_n, hi, lo, lo_bits);
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace cuzk::gpu::kernels
