// The Groth16 prover on one CUDA device: same math and same bytes as
// groth16::CpuProver (src/groth16/prover.hpp), with the heavy stages on the GPU.
//
// Per instance:
//   1. host:   a, b, c = A.w, B.w, C.w (groth16::evaluate_into), zero-padded to m;
//   2. device: for each of a, b, c: iNTT, then coset NTT (the iNTT's 1/m and the
//              coset's g^i are one scaling pass); a <- (a.b - c) * (g^m - 1)^-1
//              in one fused kernel; coset iNTT; H = the first m - 1 coefficients,
//              left on the device as the H MSM's scalars. With a fused NTT
//              algorithm (Device::set_ntt_algorithm, CUZK_NTT_ALGO) the scaling,
//              the quotient and the final bit reversal ride on the NTT passes:
//              iNTT as DIF (bit-reversed out), coset NTT as DIT (bit-reversed
//              in, scaled on load), coset iNTT as DIF with the quotient in its
//              first pass and bit reversal + m^-1 g^-j in its last;
//   3. device: MSMs H, L (aux), A (inputs ++ aux selected by a_aux density),
//              B_G1 and B_G2 (inputs by b_input density ++ aux by b_aux density)
//              over SRS bases kept resident across proofs (ResidentSrs); the
//              witness MSMs optionally split their scalars (GpuProverOptions);
//   4. host:   groth16::assemble_proof with the caller's r, s.
// Each MSM over a concatenation of bases equals the CPU's sum of two MSMs as a
// group element, so the affine proof points are identical.
//
// Measured on one H200 (demo circuit, 16 host threads, SRS resident, the MSM
// kernels of gpu/msm as of this writing): domain 2^20: 300-375 ms per proof
// (a, b, c 4 ms; 7 NTTs + quotient 4.7 ms; H MSM 30 ms; L 35-60 ms; A 57-79 ms;
// B_G1 + B_G2 167-194 ms, mostly G2) against 4.3 s for CpuProver. Domain 2^18:
// 4.0 s, because the G1 MSM at 2^18 points (window 14) takes 1.3 s, 40 times
// its 2^20 time: an MSM kernel issue, not this file's.
//
// No CUDA types appear here: host code compiled by g++ includes this header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpu/gpu.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu {

// The five SRS vectors (h, l, a, b_g1 as G1; b_g2 as G2) of one
// groth16::Parameters object, resident in one device's memory until destroyed.
// The Parameters object must outlive it (matches() compares its address).
class ResidentSrs {
 public:
  // Device bytes the bases of `params` take: 96 per G1 point, 192 per G2 point.
  static std::size_t bytes_for(const groth16::Parameters& params);

  // Uploads the bases to `device`. Before allocating anything, throws
  // Error{kOutOfDeviceMemory} when bytes_for(params) exceeds budget_bytes (the
  // caller's share of the device, e.g. from a memory policy) or does not fit in
  // the device's free memory less the CUDA reserve.
  ResidentSrs(Device& device, const groth16::Parameters& params,
              std::size_t budget_bytes = std::numeric_limits<std::size_t>::max());
  ~ResidentSrs();
  ResidentSrs(ResidentSrs&&) noexcept;
  ResidentSrs& operator=(ResidentSrs&&) noexcept;

  std::size_t bytes() const;
  int device_ordinal() const;
  const groth16::Parameters& params() const;
  // True when `params` is the object this SRS was uploaded from, with the same
  // verifying key and vector lengths (guards against a reused address).
  bool matches(const groth16::Parameters& params) const;

  // Device state, defined in gpu_prover.cpp.
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Witness MSMs (L, A, B_G1, B_G2): whether to split their scalars.
//   kAuto: skip the zero scalars, add the bases of the scalar-one entries with
//          a plain point sum (one mixed add per point instead of one per
//          window) and run the MSM on the remaining "tail" only (supraseal's
//          split; Filecoin witnesses are mostly bits). As in supraseal, an MSM
//          whose tail is over half its points runs unsplit: gathering the
//          tail's bases then costs more than the split saves (H200, demo
//          circuit 2^20, random scalars: 344 ms per proof split, 301 ms not).
//   kOff:  one MSM over all scalars.
enum class WitnessScalarSplit { kAuto, kOff };

struct GpuProverOptions {
  WitnessScalarSplit witness_split = WitnessScalarSplit::kAuto;
  // Start the H stage's NTTs only after all of a, b, c are on the device
  // (benchmarks: h_gpu_ms is then the NTT pipeline alone). Default: the NTTs
  // of a overlap the uploads of b and c.
  bool h_uploads_first = false;
};

// How a witness MSM's scalars were split (all tail when the split is off).
struct GpuSplitCounts {
  std::size_t zeros = 0, ones = 0, tail = 0;
  bool split = false;  // whether the split ran (else one MSM over all scalars)
};

// The last instance proved: wall-clock times in milliseconds (device stages
// include waiting for the device) and the witness MSMs' splits.
struct GpuProveStats {
  double evaluate_ms = 0;  // host: a, b, c
  double h_ms = 0;         // uploads of a, b, c, 7 NTTs, quotient kernel
  double h_upload_ms = 0;  // device time of the a, b, c uploads (copy stream, CUDA events)
  double h_gpu_ms = 0;     // device time of the NTTs + quotient (compute stream; includes
                           // waiting for b, c unless h_uploads_first)
  double h_msm_ms = 0;     // H MSM
  double l_msm_ms = 0;     // L: split, uploads, sum of ones, tail MSM
  double a_msm_ms = 0;     // A: selection, split, uploads, sum of ones, tail MSM
  double b_msm_ms = 0;     // B_G1 and B_G2 (one selection and split)
  double l_host_ms = 0, a_host_ms = 0, b_host_ms = 0;  // host selection / split inside the three above
  double assemble_ms = 0;  // host: blinding and affine conversion
  GpuSplitCounts l, a, b;
};

// Device addresses of one SRS's packed affine bases (gpu/ec layout: x, y; the
// identity as zeros). For SRS that exist only on the device (the partition
// benchmark's replicated random points); prove() builds one from a ResidentSrs.
struct DeviceSrsBases {
  const std::uint32_t* h = nullptr;     // >= m - 1 G1 points
  const std::uint32_t* l = nullptr;     // >= aux.size() G1 points
  const std::uint32_t* a = nullptr;     // a_count G1 points
  std::size_t a_count = 0;              // inputs + popcount(a_aux_density)
  const std::uint32_t* b_g1 = nullptr;  // b_count G1 points
  const std::uint32_t* b_g2 = nullptr;  // b_count G2 points
  std::size_t b_count = 0;              // popcount(b_input_density) + popcount(b_aux_density)
};

// The device stages' inputs: a, b, c evaluated on the host over the domain of
// size 2^log_m (3 * 2^log_m values, a then b then c; pinned memory uploads
// faster), and the witness with the circuit's densities (non-null).
struct DeviceStageInputs {
  int log_m = 0;
  std::span<const ff::Fr> abc;
  std::span<const ff::Fr> inputs, aux;
  const groth16::BitVec* a_aux_density = nullptr;
  const groth16::BitVec* b_input_density = nullptr;
  const groth16::BitVec* b_aux_density = nullptr;
};

// SRS bases for shape benchmarks that exist only on the device: a few
// distinct points replicated to each vector's length (device-to-device
// doubling copies; the MSM bench's method), so the 44 GiB PoRep SRS needs no
// host memory. Throws Error{kOutOfDeviceMemory} when it does not fit.
class ReplicatedSrs {
 public:
  ReplicatedSrs(Device& device, std::span<const ec::G1Affine> g1, std::span<const ec::G2Affine> g2,
                std::size_t h_count, std::size_t l_count, std::size_t a_count, std::size_t b_count);
  ~ReplicatedSrs();
  ReplicatedSrs(ReplicatedSrs&&) noexcept;
  ReplicatedSrs& operator=(ReplicatedSrs&&) noexcept;
  DeviceSrsBases bases() const;
  std::size_t bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Called on the prover's thread at the start of each stage of a proof:
// "evaluate" and "assemble" (host; stream 0), then "h_ntt", "h_msm", "l_msm",
// "a_msm", "b_msm" with the CUDA stream the stage's work is queued on (its
// handle value; no CUDA types in this header). It runs inside the stages:
// keep it cheap, and it must not throw.
using StageObserver = std::function<void(std::string_view stage, std::uintptr_t stream)>;

class GpuProver final : public groth16::Prover {
 public:
  // CUDA streams the prover owns for its whole life (compute and copy).
  static constexpr std::uint32_t kStreams = 2;

  // `device` and `pool` (used for evaluation and host-side scalar selection)
  // must outlive the prover. Not thread safe: one owner, like Device.
  GpuProver(Device& device, ThreadPool& pool, GpuProverOptions options = {});
  ~GpuProver() override;
  GpuProver(const GpuProver&) = delete;
  GpuProver& operator=(const GpuProver&) = delete;

  // Uploads params' SRS the first time this Parameters object is seen and
  // keeps it resident for later calls; a different object replaces it (the old
  // bases are freed first). Throws groth16::ParamsError on shape mismatches and
  // gpu::Error when the device cannot hold the work.
  std::vector<groth16::Proof> prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding) override;

  // Same with an SRS the caller keeps resident (for example one per circuit).
  std::vector<groth16::Proof> prove(const ResidentSrs& srs, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding);

  // Stages 2 and 3 (H, then the MSMs H, L, A, B_G1, B_G2) without an R1CS or
  // Parameters: what prove() runs between evaluation and assembly. Fills
  // last_stats() (evaluate_ms and assemble_ms 0). Throws Error{kInvalidArgument}
  // when the sizes disagree.
  groth16::MsmResults device_stages(const DeviceSrsBases& bases, const DeviceStageInputs& in);

  // Stage 2 alone, downloaded: the m - 1 coefficients of H (as groth16::compute_h).
  std::vector<ff::Fr> compute_h(const groth16::R1cs& r1cs, const groth16::Witness& w);

  // The SRS cached by prove(params, ...), or null; and how many uploads it took.
  const ResidentSrs* cached_srs() const { return cached_srs_.get(); }
  // Frees the cached SRS's device memory (the service evicts its parameter
  // set); the next prove(params, ...) uploads again.
  void release_cached_srs() { cached_srs_.reset(); }
  std::size_t srs_uploads() const { return srs_uploads_; }
  const GpuProveStats& last_stats() const { return last_stats_; }
  // Stage reports for status; empty: none.
  void set_stage_observer(StageObserver observer) { stage_observer_ = std::move(observer); }

  // Device state (NTT tables, stream), defined in gpu_prover.cpp.
  struct Impl;

 private:
  groth16::Proof prove_one(const ResidentSrs& srs, const groth16::R1cs& r1cs, const groth16::Witness& w,
                           const groth16::Blinding& blinding);

  Device& device_;
  ThreadPool& pool_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<ResidentSrs> cached_srs_;
  std::size_t srs_uploads_ = 0;
  GpuProverOptions options_;
  GpuProveStats last_stats_;
  StageObserver stage_observer_;
  void stage(std::string_view name, std::uintptr_t stream) const {
    if (stage_observer_) stage_observer_(name, stream);
  }
};

}  // namespace cuzk::gpu
