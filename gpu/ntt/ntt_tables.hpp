// Per-size NTT tables of one Device (internal to cuzk_gpu and cuzk_gpu_groth16):
// built on first use on the Device's stream (fully synchronized before
// ntt_tables() returns, so any stream of the same device may read them) and
// kept until the Device dies.
#pragma once

#include <cstdlib>

#include "ff/fp.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/gpu.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ntt/ntt_lean.hpp"
#include "gpu/ntt/ntt_lean_index.hpp"

namespace cuzk::gpu::detail {

// Twiddles w^j for j <= n/2 (2 GiB at n = 2^27; the last, w^(n/2) = -1, serves
// the lean inverse butterfly); coset factors as two small tables
// hi[i >> coset_lo_bits] * lo[i mod 2^coset_lo_bits] (kernels::NttScaleTable).
struct NttTables {
  DeviceBuffer<kernels::u32> twiddles;
  DeviceBuffer<kernels::u32> n_inv;                         // 1/n (one element)
  DeviceBuffer<kernels::u32> coset_hi, coset_lo;            // g^i
  DeviceBuffer<kernels::u32> coset_inv_hi, coset_inv_lo;    // n^-1 g^-i
  DeviceBuffer<kernels::u32> coset_ninv_hi, coset_ninv_lo;  // n^-1 g^i
  DeviceBuffer<kernels::u32> coset_inv_z_hi;                // (n Z)^-1 g^-i, high factors (low: coset_inv_lo)
  DeviceBuffer<kernels::u32> n_inv_z;                       // (n Z)^-1 (one element)
  // Their negations, for the two-vector H stage (GpuProver, compact_h_stage).
  DeviceBuffer<kernels::u32> neg_coset_inv_z_hi, neg_n_inv_z;
  int coset_lo_bits = 0;
  ff::Fr vanishing_inv;  // (g^n - 1)^-1: 1/Z(x) on the coset g<w>

  kernels::NttScaleTable coset() const { return {coset_hi.get(), coset_lo.get(), coset_lo_bits, false}; }
  kernels::NttScaleTable coset_inv() const { return {coset_inv_hi.get(), coset_inv_lo.get(), coset_lo_bits, false}; }
  kernels::NttScaleTable coset_ninv() const { return {coset_ninv_hi.get(), coset_ninv_lo.get(), coset_lo_bits, false}; }
  kernels::NttScaleTable inv_size() const { return {n_inv.get(), nullptr, 0, false}; }
  // The H stage's iNTT of c and coset iNTT of a b, each divided by Z (the
  // constant g^n - 1 on the coset) as well: (n Z)^-1, (n Z)^-1 g^-i.
  kernels::NttScaleTable inv_size_z() const { return {n_inv_z.get(), nullptr, 0, false}; }
  kernels::NttScaleTable coset_inv_z() const {
    return {coset_inv_z_hi.get(), coset_inv_lo.get(), coset_lo_bits, false};
  }
  kernels::NttScaleTable neg_inv_size_z() const { return {neg_n_inv_z.get(), nullptr, 0, false}; }
  kernels::NttScaleTable neg_coset_inv_z() const {
    return {neg_coset_inv_z_hi.get(), coset_inv_lo.get(), coset_lo_bits, false};
  }
};

// The tables of size 2^log_n (1 <= log_n <= 32) of `device`.
const NttTables& ntt_tables(Device& device, int log_n);

// All DIF stages in place (natural in, bit-reversed out, the inverse without
// 1/n): the lean radix-4 passes from 2^ntt_lean::kLogMin on, kernels::ntt_dif
// (radix-2) below. load_scale (the coset's g^i) is applied before the
// transform: fused into the first lean pass, a separate kernels::ntt_scale
// pass for radix-2.
inline void ntt_dif(cudaStream_t s, kernels::u32* data, const kernels::u32* twiddles, int log_n, bool inverse,
                    const kernels::NttScaleTable& load_scale = {}) {
  if (log_n >= ntt_lean::kLogMin) {
    kernels::LeanNttIo io;
    io.load_scale = load_scale;
    kernels::ntt_lean_dif(s, data, twiddles, log_n, inverse, io);
    return;
  }
  if (load_scale.hi != nullptr) {
    if (load_scale.bitrev_index) std::abort();  // no caller needs it; ntt_scale indexes naturally
    kernels::ntt_scale(s, data, std::size_t{1} << log_n, load_scale.hi, load_scale.lo, load_scale.lo_bits);
  }
  kernels::ntt_dif(s, data, twiddles, log_n, inverse);
}

}  // namespace cuzk::gpu::detail
