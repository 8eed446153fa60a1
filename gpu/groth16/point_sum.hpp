// Host launchers of the witness-scalar split's kernels (gpu/groth16/point_sum.cu).
// Internal to the GPU prover. Bases are packed affine points as cuzk_gpu
// uploads them (x then y, Montgomery limbs; the identity as zeros): 24 32-bit
// limbs per G1 point, 48 per G2 point. Indices are 32-bit.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuzk::gpu::groth16_kernels {

// sum_i bases[idx[i]] for i < count, returned (after waiting for the stream)
// as one XYZZ point: x, y, zz, zzz of 12 limbs each for G1, 24 for G2.
std::vector<std::uint32_t> sum_points_g1(cudaStream_t stream, const std::uint32_t* bases, const std::uint32_t* idx,
                                         std::size_t count);
std::vector<std::uint32_t> sum_points_g2(cudaStream_t stream, const std::uint32_t* bases, const std::uint32_t* idx,
                                         std::size_t count);

// out[i] = bases[idx[i]] for i < count; points of limbs_per_point limbs (24 or 48).
void gather_points(cudaStream_t stream, const std::uint32_t* bases, const std::uint32_t* idx, std::size_t count,
                   std::size_t limbs_per_point, std::uint32_t* out);

}  // namespace cuzk::gpu::groth16_kernels
