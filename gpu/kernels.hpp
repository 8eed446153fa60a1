// Host-callable launchers of the CUDA kernels (defined in the .cu files).
// Internal to cuzk_gpu: pointers are device pointers to little-endian 32-bit
// limb arrays in the layouts of gpu/ff/field.cuh and gpu/ec/xyzz.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cuzk::gpu::kernels {

using u32 = std::uint32_t;

inline constexpr int kFrLimbs = 8;
inline constexpr int kFpLimbs = 12;

// ---- NTT (gpu/ntt/ntt.cu); all Fr arrays are 8 limbs per element ----------
// tw[j] = hi[j >> lo_bits] * lo[j & (2^lo_bits - 1)] for j < count.
void ntt_power_table(cudaStream_t s, u32* tw, const u32* hi, const u32* lo, int lo_bits, std::size_t count);
// All log_n decimation-in-frequency stages: natural order in, bit-reversed out.
// tw holds w^j for j < n/2; inverse uses w^-j = -w^(n/2-j).
void ntt_dif(cudaStream_t s, u32* data, const u32* tw, int log_n, bool inverse);
// Bit-reversal permutation in place, then (when hi != nullptr) scaling of the
// element at final position i by hi[i >> lo_bits] * lo[i & mask] (lo may be
// nullptr with lo_bits = 0 for a constant factor hi[0]).
void ntt_bitrev_scale(cudaStream_t s, u32* data, int log_n, const u32* hi, const u32* lo, int lo_bits);
// data[i] *= hi[i >> lo_bits] * lo[i & mask].
void ntt_scale(cudaStream_t s, u32* data, std::size_t n, const u32* hi, const u32* lo, int lo_bits);

// ---- MSM (gpu/msm/msm.cu) --------------------------------------------------
// bases: n packed affine points (x, y; identity = zeros); scalars: n Fr in
// Montgomery form. Returns the W = ceil(256 / window_bits) window sums in XYZZ
// form (x, y, zz, zzz; 4 * 12 limbs each for G1, 4 * 24 for G2), window 0
// first, after waiting for the stream; the MSM is sum_w 2^(w c) window_w.
// phases (may be null) receives per-phase device times.
struct MsmPhaseMs {
  float digits_ms = 0, sort_ms = 0, accumulate_ms = 0, reduce_ms = 0;
};
std::vector<u32> msm_g1(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n, int window_bits,
                        MsmPhaseMs* phases);
std::vector<u32> msm_g2(cudaStream_t s, const u32* bases, const u32* scalars, std::size_t n, int window_bits,
                        MsmPhaseMs* phases);

// ---- Field self-tests (gpu/ff/field_ops.cu) --------------------------------
enum class FieldKind { kFp, kFr, kFp2 };
enum class FieldOpKind { kAdd, kSub, kMul, kSqr, kFromMont };
void field_op(cudaStream_t s, FieldKind field, FieldOpKind op, const u32* a, const u32* b, u32* out, std::size_t n);

}  // namespace cuzk::gpu::kernels
