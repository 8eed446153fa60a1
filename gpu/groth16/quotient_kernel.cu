// The Groth16 quotient step (a.b - c) / Z on the coset, fused into one pass.
//
// Built into cuzk_gpu by gpu/CMakeLists.txt's recursive glob of *.cu (it needs
// only the device field); the prover library cuzk_gpu_groth16 calls it.
#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "gpu/groth16/quotient_kernel.hpp"

namespace cuzk::gpu::groth16_kernels {
namespace {

using dev::Fr;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr unsigned kThreads = 256;

// 32-byte elements as two 128-bit accesses (cudaMalloc memory is 256-byte aligned).
__device__ __forceinline__ Fr load(const u32* p, u64 i) {
  const uint4* q = reinterpret_cast<const uint4*>(p + i * 8);
  const uint4 lo = q[0], hi = q[1];
  return Fr{{lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w}};
}
__device__ __forceinline__ void store(u32* p, u64 i, const Fr& v) {
  uint4* q = reinterpret_cast<uint4*>(p + i * 8);
  q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
  q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
}

__global__ void __launch_bounds__(kThreads) quotient_kernel(u32* a, const u32* b, const u32* c, Fr z_inv, u64 n) {
  const u64 i = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // 2 Montgomery products and one subtraction per element.
  store(a, i, (load(a, i) * load(b, i) - load(c, i)) * z_inv);
}

}  // namespace

void quotient_on_coset(cudaStream_t stream, u32* a, const u32* b, const u32* c, const u32 (&z_inv)[8], std::size_t n) {
  if (n == 0) return;
  Fr z;
  for (int i = 0; i < 8; ++i) z.l[i] = z_inv[i];
  quotient_kernel<<<detail::grid_for(n, kThreads), kThreads, 0, stream>>>(a, b, c, z, n);
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace cuzk::gpu::groth16_kernels
