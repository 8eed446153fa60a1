// Sums of selected bases (the "scalar = 1" part of the witness MSMs) and the
// gather of the remaining bases for the tail MSM.
//
// The sum runs in two kernels: every thread of a grid sized to fill the GPU
// walks a strided slice of the index list with XYZZ mixed additions (8M + 2S
// each) and writes one partial; one block then folds the partials (full XYZZ
// additions) and a shared-memory tree. Built into cuzk_gpu by the recursive
// *.cu glob of gpu/CMakeLists.txt.
#include <algorithm>

#include "gpu/cuda_rt.hpp"
#include "gpu/ec/xyzz.cuh"
#include "gpu/groth16/point_sum.hpp"

namespace cuzk::gpu::groth16_kernels {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr unsigned kPartialThreads = 128;
// Partials: at most this many threads (about 2 blocks per SM of an H200), and
// at least kMinAddsPerThread additions each so small sums do not pay for a
// large fold.
constexpr u64 kMaxPartials = 132 * 2 * kPartialThreads;
constexpr u64 kMinAddsPerThread = 32;
constexpr unsigned kFoldThreads = 64;

template <class F>
__global__ void __launch_bounds__(kPartialThreads)
    partial_sums_kernel(const dev::Affine<F>* bases, const u32* idx, u64 count, dev::Xyzz<F>* partials) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  const u64 stride = u64(gridDim.x) * blockDim.x;
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u64 i = t; i < count; i += stride) {
    const dev::Affine<F> a = bases[idx[i]];
    acc.add_affine(a.x, a.y);
  }
  partials[t] = acc;
}

template <class F>
__global__ void __launch_bounds__(kFoldThreads) fold_kernel(const dev::Xyzz<F>* partials, u64 count,
                                                            dev::Xyzz<F>* out) {
  __shared__ dev::Xyzz<F> folded[kFoldThreads];
  dev::Xyzz<F> acc = dev::Xyzz<F>::identity();
  for (u64 j = threadIdx.x; j < count; j += kFoldThreads) acc.add(partials[j]);
  folded[threadIdx.x] = acc;
  __syncthreads();
  for (unsigned stride = kFoldThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) {
      dev::Xyzz<F> a = folded[threadIdx.x];
      a.add(folded[threadIdx.x + stride]);
      folded[threadIdx.x] = a;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = folded[0];
}

__global__ void gather_kernel(const uint4* bases, const u32* idx, u64 count, u32 vecs_per_point, uint4* out) {
  const u64 t = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= count * vecs_per_point) return;
  const u64 i = t / vecs_per_point;
  out[t] = bases[u64(idx[i]) * vecs_per_point + t % vecs_per_point];
}

template <class F>
std::vector<u32> sum_points(cudaStream_t s, const u32* bases_raw, const u32* idx, std::size_t count) {
  using Point = dev::Xyzz<F>;
  std::vector<u32> result(sizeof(Point) / sizeof(u32), 0);  // zz = 0: the identity
  if (count == 0) return result;
  const u64 threads = std::max<u64>(1, std::min<u64>(kMaxPartials, count / kMinAddsPerThread));
  const unsigned blocks = static_cast<unsigned>((threads + kPartialThreads - 1) / kPartialThreads);
  const u64 partial_count = u64(blocks) * kPartialThreads;
  detail::DeviceBuffer<Point> partials(partial_count, "point sum partials");
  detail::DeviceBuffer<Point> sum(1, "point sum");
  partial_sums_kernel<F><<<blocks, kPartialThreads, 0, s>>>(reinterpret_cast<const dev::Affine<F>*>(bases_raw), idx,
                                                            count, partials.get());
  CUZK_CUDA_CHECK_LAUNCH();
  fold_kernel<F><<<1, kFoldThreads, 0, s>>>(partials.get(), partial_count, sum.get());
  CUZK_CUDA_CHECK_LAUNCH();
  CUZK_CUDA_CHECK(cudaMemcpyAsync(result.data(), sum.get(), sizeof(Point), cudaMemcpyDeviceToHost, s));
  CUZK_CUDA_CHECK(cudaStreamSynchronize(s));
  return result;
}

}  // namespace

std::vector<u32> sum_points_g1(cudaStream_t stream, const u32* bases, const u32* idx, std::size_t count) {
  return sum_points<dev::Fp>(stream, bases, idx, count);
}

std::vector<u32> sum_points_g2(cudaStream_t stream, const u32* bases, const u32* idx, std::size_t count) {
  return sum_points<dev::Fp2>(stream, bases, idx, count);
}

void gather_points(cudaStream_t stream, const u32* bases, const u32* idx, std::size_t count,
                   std::size_t limbs_per_point, u32* out) {
  if (count == 0) return;
  const u32 vecs = static_cast<u32>(limbs_per_point / 4);
  gather_kernel<<<detail::grid_for(count * vecs, 256), 256, 0, stream>>>(
      reinterpret_cast<const uint4*>(bases), idx, count, vecs, reinterpret_cast<uint4*>(out));
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace cuzk::gpu::groth16_kernels
