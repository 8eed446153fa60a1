// A compiled R1CS (groth16::R1cs) resident in device memory, and the sparse
// mat-vec a = A.w, b = B.w, c = C.w (plus the satisfaction check) on the GPU.
//
// Why: on a 32 GiB PoRep partition (130.3M rows, 722M non-zeros) the host
// spends ~16 thread-s in groth16::evaluate_into and the prover then uploads
// a, b, c (3 x 2^27 x 32 B = 12.9 GB, 232 ms on an H200's PCIe). With the
// matrices kept in HBM only the witness travels (130.2M x 32 B = 4.2 GB) and
// the mat-vec reads ~7.3 GB of matrix from HBM instead.
//
// The three density bit vectors of the witness MSMs (a_aux, b_input, b_aux;
// 64-bit words, ~33 MB for PoRep) live here too: the device split of the
// witness MSMs' scalars (gpu/groth16/witness_split_device.hpp) reads them.
//
// Device layout (per matrix, as the host CSR): row_start as u32 when the
// matrix's non-zeros fit in 32 bits (PoRep's largest, A, has 309M: halves the
// 3 x 1 GB of u64 offsets), else u64; col and coeff_id as u32 (8 B per
// non-zero); the coefficient table as device Fr (Montgomery limbs, the host's
// bytes). PoRep 32 GiB: 5.8 GB of entries + 1.6 GB of offsets.
//
// Work mapping (evaluate). Rows are uneven: boolean rows have 1 term,
// SHA-256 packing rows ~256, Poseidon rows ~12. A row's "terms" are its
// non-zeros in A, B and C together; one agent computes all three of a row's
// values, so the satisfaction check a_i * b_i == c_i runs in the same pass:
//   - short rows (terms <= thread_row_max_terms): one thread per row. A warp
//     takes 32 consecutive rows; its time is that of its longest row, so the
//     cap bounds the imbalance to cap / mean terms (PoRep mean 5.5);
//   - long rows: one warp per row (listed once, at upload): the lanes stride
//     over the row's terms, then a 5-step shuffle tree adds the 32 partial
//     sums. A 256-term packing row takes 8 steps instead of 256 on one lane.
// Field addition is exact (fully reduced), so any summation order gives the
// host's bytes. Rows in [num_constraints, m) are written as zero.
// The check keeps the smallest failing row: per warp a ballot picks the
// first failing lane's row, and one atomicMin per warp (skipped once a
// smaller row is already recorded) updates a device word, so a random
// witness (every row failing) costs one atomic per warp, not per row.
//
// Used by GpuProver with GpuProverOptions::abc_source = AbcSource::kDevice
// (gpu/groth16/staged_prove.cpp: one DeviceR1cs per prover, built by the
// first enqueue of an R1cs); bench_gpu spmv times it against the host.
// CUDA types appear here (cudaStream_t): internal to cuzk_gpu and its tests.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "gpu/cuda_rt.hpp"

namespace cuzk::groth16 {
class R1cs;
}

namespace cuzk::gpu {

struct DeviceR1csOptions {
  // Rows with more terms (A + B + C non-zeros) than this run warp per row.
  // 32: a packing row (256+) or a wide Poseidon row never stalls a warp of
  // 1-3 term rows; below ~8 the warp path wastes most of its lanes.
  std::uint32_t thread_row_max_terms = 32;
  // Device bytes the matrices may take (a memory policy's share), on top of
  // the device's free memory less the CUDA reserve.
  std::size_t budget_bytes = std::numeric_limits<std::size_t>::max();
};

// Value of the first-unsatisfied word when every row is satisfied.
inline constexpr std::uint64_t kAllRowsSatisfied = std::numeric_limits<std::uint64_t>::max();

class DeviceR1cs {
 public:
  // Device bytes an R1cs takes (matrices, coefficient table, long-row list),
  // without uploading anything.
  static std::size_t bytes_for(const groth16::R1cs& r1cs, const DeviceR1csOptions& options = {});

  // Uploads on `stream` (on the current device) and waits for the copies.
  // Throws Error{kOutOfDeviceMemory} before allocating anything when
  // bytes_for() exceeds options.budget_bytes or the device's free memory
  // less the CUDA reserve. The R1cs is not referenced afterwards.
  DeviceR1cs(const groth16::R1cs& r1cs, cudaStream_t stream, const DeviceR1csOptions& options = {});
  DeviceR1cs(DeviceR1cs&&) noexcept = default;
  DeviceR1cs& operator=(DeviceR1cs&&) noexcept = default;
  DeviceR1cs(const DeviceR1cs&) = delete;
  DeviceR1cs& operator=(const DeviceR1cs&) = delete;

  std::size_t bytes() const { return bytes_; }
  int device_ordinal() const { return ordinal_; }
  std::size_t num_inputs() const { return num_inputs_; }
  std::size_t num_aux() const { return num_aux_; }
  std::size_t num_variables() const { return num_inputs_ + num_aux_; }
  std::size_t num_constraints() const { return rows_; }
  std::size_t nnz() const { return nnz_[0] + nnz_[1] + nnz_[2]; }
  std::size_t long_rows() const { return long_rows_.size(); }
  std::uint32_t thread_row_max_terms() const { return thread_row_max_terms_; }
  bool wide_row_offsets() const { return wide_offsets_; }  // u64 row_start
  // Matrix bytes one evaluate reads (offsets, col, coeff_id, long-row list),
  // for bandwidth figures; the witness gathers and the outputs come on top.
  std::size_t matrix_bytes() const;

  // The witness MSMs' densities (gpu/groth16/witness_split_device.hpp).
  enum class Density { kAAux = 0, kBInput = 1, kBAux = 2 };
  const std::uint64_t* density(Density d) const { return densities_[static_cast<int>(d)].get(); }

  // Queues on `stream`: a, b, c (each m Fr, device, 8 Montgomery limbs per
  // element) = A.w, B.w, C.w for rows < num_constraints(), zero for rows in
  // [num_constraints(), m). `witness` holds num_variables() Fr, inputs then
  // aux (the unified column space). When first_unsatisfied (a device word)
  // is non-null, the smallest row with a*b != c is min'ed into it; the caller
  // sets it to kAllRowsSatisfied beforehand (reset_first_unsatisfied).
  // Throws Error{kInvalidArgument} when m < num_constraints().
  void evaluate(cudaStream_t stream, const std::uint32_t* witness, std::uint32_t* a, std::uint32_t* b, std::uint32_t* c,
                std::size_t m, std::uint64_t* first_unsatisfied = nullptr) const;
  static void reset_first_unsatisfied(cudaStream_t stream, std::uint64_t* first_unsatisfied);

 private:
  struct Matrix {
    detail::DeviceBuffer<std::uint32_t> row_start32;  // wide_offsets_ == false
    detail::DeviceBuffer<std::uint64_t> row_start64;  // wide_offsets_ == true
    detail::DeviceBuffer<std::uint32_t> col, coeff_id;
  };
  std::array<Matrix, 3> m_;                                       // A, B, C
  detail::DeviceBuffer<std::uint32_t> coeffs_;                    // 8 limbs per coefficient
  detail::DeviceBuffer<std::uint32_t> long_rows_;                 // rows with > thread_row_max_terms_ terms, increasing
  std::array<detail::DeviceBuffer<std::uint64_t>, 3> densities_;  // by Density
  std::array<std::size_t, 3> nnz_{};
  std::size_t rows_ = 0, num_inputs_ = 0, num_aux_ = 0, bytes_ = 0;
  std::uint32_t thread_row_max_terms_ = 0;
  bool wide_offsets_ = false;
  int ordinal_ = 0;
};

namespace r1cs_kernels {

// The kernels' view of one DeviceR1cs (gpu/groth16/r1cs_device.cu).
template <class Offset>
struct CsrView {
  const Offset* row_start;
  const std::uint32_t* col;
  const std::uint32_t* coeff_id;
};

template <class Offset>
struct SpmvArgs {
  CsrView<Offset> m[3];  // A, B, C
  const std::uint32_t* coeffs;
  const std::uint32_t* witness;
  std::uint32_t* out[3];  // a, b, c
  std::uint64_t rows, domain;
  std::uint32_t thread_row_max_terms;
  const std::uint32_t* long_rows;
  std::uint64_t long_row_count;
  std::uint64_t* first_unsatisfied;  // null: no check
};

void evaluate(cudaStream_t stream, const SpmvArgs<std::uint32_t>& args);
void evaluate(cudaStream_t stream, const SpmvArgs<std::uint64_t>& args);

}  // namespace r1cs_kernels

}  // namespace cuzk::gpu
