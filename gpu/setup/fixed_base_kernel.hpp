// Launchers of the fixed-base multiplication kernels (gpu/setup/fixed_base.cu).
// Internal to cuzk_gpu / cuzk_gpu_setup: pointers are device pointers to
// little-endian 32-bit limb arrays in the layouts of gpu/ff/field.cuh and
// gpu/ec/xyzz.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace cuzk::gpu::kernels {

// Window layout of the table, the same as groth16::FixedBaseTable's:
// entry w * kFixedBaseDigits + (d - 1) is d * 2^(8w) * base, for 32 windows
// of 8 bits and digits d = 1..255 (a scalar < r < 2^255 has 32 bytes).
inline constexpr int kFixedBaseWindowBits = 8;
inline constexpr int kFixedBaseWindows = 32;
inline constexpr int kFixedBaseDigits = 255;
inline constexpr std::size_t kFixedBaseTableEntries = std::size_t(kFixedBaseWindows) * kFixedBaseDigits;

// Bytes of device memory per point: XYZZ scratch (4 coordinates), packed affine output (2 coordinates).
inline constexpr std::size_t kG1XyzzBytes = 4 * 48, kG1AffineBytes = 2 * 48;
inline constexpr std::size_t kG2XyzzBytes = 4 * 96, kG2AffineBytes = 2 * 96;
inline constexpr std::size_t kFrBytes = 32;

// out[i] = scalars[i] * base for i < n, as packed affine points (x, y in
// Montgomery form; the identity as x = y = 0). table: kFixedBaseTableEntries
// packed affine points (no identity among them). scalars: Fr in Montgomery
// form (the host's ff::Fr bytes). scratch: n XYZZ points. Asynchronous on s.
void fixed_base_g1(cudaStream_t s, const std::uint32_t* table, const std::uint32_t* scalars, std::size_t n,
                   std::uint32_t* scratch, std::uint32_t* out);
void fixed_base_g2(cudaStream_t s, const std::uint32_t* table, const std::uint32_t* scalars, std::size_t n,
                   std::uint32_t* scratch, std::uint32_t* out);

}  // namespace cuzk::gpu::kernels
