// Kernels of the device-resident R1CS (gpu/groth16/r1cs_device.hpp): the
// sparse mat-vec a, b, c = A.w, B.w, C.w over one compiled R1CS, with the
// satisfaction check in the same pass. The mapping (thread per short row,
// warp per long row) is explained in the header.
//
// Built into cuzk_gpu by gpu/CMakeLists.txt's recursive glob of *.cu (it
// needs only the device field); DeviceR1cs (r1cs_device.cpp, cuzk_gpu_groth16)
// owns the buffers and calls evaluate().
#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "gpu/groth16/r1cs_device.hpp"

namespace cuzk::gpu::r1cs_kernels {
namespace {

using dev::Fr;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr unsigned kThreads = 256;
constexpr unsigned kWarp = 32;
constexpr u32 kFullMask = 0xffffffffu;
// groth16::R1cs::kCoeffOne / kCoeffMinusOne (the host header is not compiled by nvcc).
constexpr u32 kCoeffOne = 0;
constexpr u32 kCoeffMinusOne = 1;

// 32-byte elements as two 128-bit read-only loads (cudaMalloc memory is
// 256-byte aligned, so element i is 32-byte aligned).
__device__ __forceinline__ Fr load(const u32* __restrict__ p, u64 i) {
  const uint4* q = reinterpret_cast<const uint4*>(p + i * 8);
  const uint4 lo = __ldg(q), hi = __ldg(q + 1);
  return Fr{{lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w}};
}
__device__ __forceinline__ void store(u32* p, u64 i, const Fr& v) {
  uint4* q = reinterpret_cast<uint4*>(p + i * 8);
  q[0] = make_uint4(v.l[0], v.l[1], v.l[2], v.l[3]);
  q[1] = make_uint4(v.l[4], v.l[5], v.l[6], v.l[7]);
}

// acc += coeff * w[col]: the +1 / -1 ids (most SHA-256 and boolean entries)
// cost one field add, any other one coefficient load and a Montgomery product
// (136 32-bit multiplies).
__device__ __forceinline__ void add_term(Fr& acc, u32 col, u32 id, const u32* __restrict__ witness,
                                         const u32* __restrict__ coeffs) {
  const Fr x = load(witness, col);
  if (id == kCoeffOne) {
    acc = acc + x;
  } else if (id == kCoeffMinusOne) {
    acc = acc - x;
  } else {
    acc = acc + load(coeffs, id) * x;
  }
}

// The smallest row of `failing` lanes (rows increase with the lane in the
// thread kernel) goes into *first; one atomic per warp, none when a smaller
// row is already there. Called by all lanes of the warp that are still active.
__device__ __forceinline__ void report_unsatisfied(u64* first, bool failing, u64 row, u32 active_mask) {
  const u32 ballot = __ballot_sync(active_mask, failing);
  if (ballot == 0) return;
  const u32 leader = __ffs(ballot) - 1;
  if ((threadIdx.x % kWarp) != leader) return;
  // A plain read first: once a small row is recorded, later warps skip the
  // atomic (a stale value only costs one atomic that does nothing).
  if (row < *reinterpret_cast<volatile u64*>(first)) {
    atomicMin(reinterpret_cast<unsigned long long*>(first), static_cast<unsigned long long>(row));
  }
}

// One thread per row: rows with at most thread_row_max_terms terms, and the
// zero padding up to the domain. Long rows are skipped (the warp kernel
// writes them); the test is the same sum of row lengths the host used to
// build the long-row list.
template <class Offset>
__global__ void __launch_bounds__(kThreads) short_rows_kernel(SpmvArgs<Offset> p) {
  const u64 row = u64(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= p.domain) return;
  // The lanes of this warp inside the domain (rows map linearly onto lanes
  // and blockDim is a multiple of 32): they all reach the ballot.
  const u64 warp_first_row = row - threadIdx.x % kWarp;
  const u64 warp_rows = p.domain - warp_first_row;
  const u32 active = warp_rows >= kWarp ? kFullMask : (1u << warp_rows) - 1;
  bool failing = false;
  if (row >= p.rows) {
#pragma unroll
    for (int k = 0; k < 3; ++k) store(p.out[k], row, Fr::zero());
  } else {
    Offset lo[3], hi[3];
    u64 terms = 0;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      lo[k] = p.m[k].row_start[row];
      hi[k] = p.m[k].row_start[row + 1];
      terms += hi[k] - lo[k];
    }
    if (terms <= p.thread_row_max_terms) {
      // a * b is formed before C's loop, which then keeps one product live
      // instead of a and b (8 registers fewer; sm_90: 61 registers, no spills).
      Fr v[3], ab;
#pragma unroll
      for (int k = 0; k < 3; ++k) {
        v[k] = Fr::zero();
        for (Offset e = lo[k]; e < hi[k]; ++e) {
          add_term(v[k], __ldg(p.m[k].col + e), __ldg(p.m[k].coeff_id + e), p.witness, p.coeffs);
        }
        store(p.out[k], row, v[k]);
        if (k == 1 && p.first_unsatisfied != nullptr) ab = v[0] * v[1];
      }
      failing = p.first_unsatisfied != nullptr && ab != v[2];
    }
  }
  if (p.first_unsatisfied != nullptr) report_unsatisfied(p.first_unsatisfied, failing, row, active);
}

// Sum of the warp's 32 partial sums: 5 butterfly steps, each 8 shuffles
// and a field add; every lane ends with the total.
__device__ __forceinline__ Fr warp_sum(Fr acc) {
#pragma unroll
  for (u32 lanes = kWarp / 2; lanes > 0; lanes /= 2) {
    Fr other;
#pragma unroll
    for (int i = 0; i < 8; ++i) other.l[i] = __shfl_xor_sync(kFullMask, acc.l[i], lanes);
    acc = acc + other;
  }
  return acc;
}

// One warp per long row: lane j takes terms j, j + 32, ... of each matrix's
// row (consecutive lanes read consecutive col / coeff_id words).
template <class Offset>
__global__ void __launch_bounds__(kThreads) long_rows_kernel(SpmvArgs<Offset> p) {
  const u64 warp = (u64(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
  const u32 lane = threadIdx.x % kWarp;
  if (warp >= p.long_row_count) return;  // whole warps leave (blockDim is a multiple of 32)
  const u64 row = p.long_rows[warp];
  Fr v[3];
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    Fr acc = Fr::zero();
    const Offset lo = p.m[k].row_start[row], hi = p.m[k].row_start[row + 1];
    for (Offset e = lo + lane; e < hi; e += kWarp) {
      add_term(acc, __ldg(p.m[k].col + e), __ldg(p.m[k].coeff_id + e), p.witness, p.coeffs);
    }
    v[k] = warp_sum(acc);
  }
  if (lane != 0) return;
#pragma unroll
  for (int k = 0; k < 3; ++k) store(p.out[k], row, v[k]);
  if (p.first_unsatisfied != nullptr && v[0] * v[1] != v[2]) {
    if (row < *reinterpret_cast<volatile u64*>(p.first_unsatisfied)) {
      atomicMin(reinterpret_cast<unsigned long long*>(p.first_unsatisfied), static_cast<unsigned long long>(row));
    }
  }
}

template <class Offset>
void launch(cudaStream_t stream, const SpmvArgs<Offset>& args) {
  if (args.domain > 0) {
    short_rows_kernel<Offset><<<detail::grid_for(args.domain, kThreads), kThreads, 0, stream>>>(args);
    CUZK_CUDA_CHECK_LAUNCH();
  }
  if (args.long_row_count > 0) {
    long_rows_kernel<Offset><<<detail::grid_for(args.long_row_count * kWarp, kThreads), kThreads, 0, stream>>>(args);
    CUZK_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

void evaluate(cudaStream_t stream, const SpmvArgs<std::uint32_t>& args) { launch(stream, args); }
void evaluate(cudaStream_t stream, const SpmvArgs<std::uint64_t>& args) { launch(stream, args); }

}  // namespace cuzk::gpu::r1cs_kernels
