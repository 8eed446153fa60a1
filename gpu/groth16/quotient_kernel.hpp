// Host launcher of the Groth16 quotient kernel (gpu/groth16/quotient_kernel.cu).
// Internal to the GPU prover: pointers are device arrays of Fr in the layout of
// gpu/ff/field.cuh (8 little-endian 32-bit limbs, Montgomery form).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cuzk::gpu::groth16_kernels {

// a[i] = (a[i] * b[i] - c[i]) * z_inv for i < n: the pointwise step of H on the
// coset g<w>, where Z(x) = x^m - 1 is the constant g^m - 1 (z_inv its inverse,
// Montgomery limbs). One pass over a, b, c instead of a multiply pass followed
// by a subtract-and-scale pass.
void quotient_on_coset(cudaStream_t stream, std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
                       const std::uint32_t (&z_inv)[8], std::size_t n);

}  // namespace cuzk::gpu::groth16_kernels
