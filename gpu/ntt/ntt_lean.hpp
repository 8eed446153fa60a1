// Lean radix-4 DIF NTT passes (the NTT of Device::ntt and GpuProver; kernels in
// gpu/ntt/ntt_lean.cu, index math in gpu/ntt/ntt_lean_index.hpp). Internal to
// cuzk_gpu and cuzk_gpu_groth16, like gpu/kernels.hpp.
#pragma once

#include "gpu/kernels.hpp"

namespace cuzk::gpu::kernels {

// What the lean passes do beside the transform; every field is optional.
struct LeanNttIo {
  // First pass: element i is scaled by load_scale(i) as it is loaded (the
  // coset's g^i; bitrev_index must be false), then multiplied by load_mul[i]
  // (a pointwise product fused into the load: A.B on the coset for H).
  NttScaleTable load_scale;
  const u32* load_mul = nullptr;
  // When out is set (!= data) the last pass writes natural order into out
  // instead (the bit reversal fused, out of place; data is left partly
  // transformed): the element at natural position j scaled by store_scale(j)
  // when store_scale.hi is set (1/n, or n^-1 g^-j for the coset inverse),
  // minus store_sub[j] when that is set. load_mul and store_sub may be out
  // (the first pass has read load_mul before the last pass writes).
  u32* out = nullptr;
  NttScaleTable store_scale;
  const u32* store_sub = nullptr;
};

// All log_n decimation-in-frequency stages in place, natural order in,
// bit-reversed out: the same contract as ntt_dif (tw holds w^j for j < n/2;
// the inverse uses w^-1 and omits 1/n), for ntt_lean::kLogMin <= log_n <= 32,
// with io's fused loads and stores. The kernel's __launch_bounds__ asks for
// 3 blocks per SM (ntt_lean::kMinBlocksPerSm: 24 warps per SM; H200, 2^27
// forward 34.95 ms against 36.34 at 2 blocks per SM, bench/RESULTS.md).
// Runs ntt_lean_passes(log_n) kernels on s.
void ntt_lean_dif(cudaStream_t s, u32* data, const u32* tw, int log_n, bool inverse, const LeanNttIo& io = {});
int ntt_lean_passes(int log_n);

}  // namespace cuzk::gpu::kernels
