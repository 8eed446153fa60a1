// Per-size NTT tables of one Device (internal to cuzk_gpu and cuzk_gpu_groth16):
// built on first use on the Device's stream (fully synchronized before
// ntt_tables() returns, so any stream of the same device may read them) and
// kept until the Device dies.
#pragma once

#include "ff/fp.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/gpu.hpp"
#include "gpu/kernels.hpp"

namespace cuzk::gpu::detail {

// Twiddles w^j for j < n/2 (2 GiB at n = 2^27); coset factors as two small
// tables hi[i >> coset_lo_bits] * lo[i mod 2^coset_lo_bits] (kernels::NttScaleTable).
struct NttTables {
  DeviceBuffer<kernels::u32> twiddles;
  DeviceBuffer<kernels::u32> n_inv;                       // 1/n (one element)
  DeviceBuffer<kernels::u32> coset_hi, coset_lo;          // g^i
  DeviceBuffer<kernels::u32> coset_inv_hi, coset_inv_lo;  // n^-1 g^-i
  DeviceBuffer<kernels::u32> coset_ninv_hi, coset_ninv_lo;  // n^-1 g^i
  int coset_lo_bits = 0;
  ff::Fr vanishing_inv;  // (g^n - 1)^-1: 1/Z(x) on the coset g<w>

  kernels::NttScaleTable coset() const { return {coset_hi.get(), coset_lo.get(), coset_lo_bits, false}; }
  kernels::NttScaleTable coset_inv() const { return {coset_inv_hi.get(), coset_inv_lo.get(), coset_lo_bits, false}; }
  kernels::NttScaleTable coset_ninv() const {
    return {coset_ninv_hi.get(), coset_ninv_lo.get(), coset_lo_bits, false};
  }
  kernels::NttScaleTable inv_size() const { return {n_inv.get(), nullptr, 0, false}; }
};

// The tables of size 2^log_n (1 <= log_n <= 32) of `device`.
const NttTables& ntt_tables(Device& device, int log_n);

// kernels::NttFusedArgs's radix fields for a fused algorithm (not kRadix2).
inline void set_fused_radix(NttAlgorithm algorithm, kernels::NttFusedArgs& args) {
  args.radix_log = algorithm == NttAlgorithm::kRadix4 ? 2 : 3;
  args.wide_registers = algorithm == NttAlgorithm::kRadix8Wide;
}

}  // namespace cuzk::gpu::detail
