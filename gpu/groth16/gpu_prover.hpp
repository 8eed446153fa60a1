// The Groth16 prover on one CUDA device: same math and same bytes as
// groth16::CpuProver (src/groth16/prover.hpp), with the heavy stages on the GPU.
//
// Per instance:
//   1. host:   a, b, c = A.w, B.w, C.w (groth16::evaluate_into), zero-padded to m,
//              optionally checking a_i * b_i == c_i on the way (SatisfactionCheck);
//   2. device: H = ((A B - C) / Z on the coset g<w>) back to coefficients, the
//              first m - 1 of them left on the device as the H MSM's scalars.
//              Six lean NTTs (gpu/ntt/ntt_lean.cu): a and b to their coset
//              evaluations (iNTT, coset NTT), c's iNTT over Z, and the coset
//              iNTT of A B with the product on its first pass's load and the
//              subtraction of c / Z on its last pass's store (GpuProver::queue_h
//              says why that equals the quotient's). Below 2^6 radix-2 in place
//              with a separate quotient kernel;
//   3. device: MSMs H, L (aux), A (inputs ++ aux selected by a_aux density),
//              B_G1 and B_G2 (inputs by b_input density ++ aux by b_aux density)
//              over SRS bases kept resident across proofs (ResidentSrs); the
//              witness MSMs optionally split their scalars (GpuProverOptions);
//   4. host:   groth16::assemble_proof with the caller's r, s.
// Each MSM over a concatenation of bases equals the CPU's sum of two MSMs as a
// group element, so the affine proof points are identical.
//
// Every proof runs as three steps (gpu/groth16/staged_prove.cpp): prepare
// (host only: step 1 and the witness MSMs' selection + split, into a
// ProveStaging of pinned memory), enqueue (the device thread queues steps 2
// and 3 and the downloads of the MSMs' window sums and point sums, and
// returns a Fence without waiting; in two or three steps, each resumed
// after a fence, when the MSMs' sizes come from the device's split),
// finish (host: Horner over the window sums, step 4). prove() is prepare, enqueue, wait, finish; a service keeps
// two stagings so that one instance prepares while another is on the device,
// and awaits the fence on its event loop (Fence::on_done).
//
// Measured on one H200 (`bench_gpu partition --log-domain 27`: a 32 GiB PoRep
// partition's shape, SRS resident; bench/RESULTS.md, 2026-12-02, c7ad2fe):
// H stage 226.4 ms, H MSM 578.8, L 92.1, A 90.6, B_G1 + B_G2 98.6; 1086.8 ms
// of device time per partition (supraseal-c2: 1824 ms on an RTX 5070 Ti).
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

#include "gpu/fence.hpp"
#include "gpu/gpu.hpp"
#include "gpu/groth16/srs_placement.hpp"
#include "gpu/msm/point_source.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu {

struct DeviceSrsBases;  // below

// What a ResidentSrs does with the bases its device budget cannot hold.
enum class SrsOverflow {
  kFail,            // throw Error{kOutOfDeviceMemory}: all five vectors on the device or nothing
  kStreamFromHost,  // keep them in a pinned host copy that the MSMs stream (srs_placement.hpp)
};

// The five SRS vectors (h, l, a, b_g1 as G1; b_g2 as G2) of one
// groth16::Parameters object, kept across proofs until destroyed: in one
// device's memory, or (SrsOverflow::kStreamFromHost) a prefix of each vector
// there and the rest in page-locked host memory in the device's packed layout,
// copied to the device chunk by chunk while the MSMs run (PCIe per proof:
// host_bytes()). The Parameters object must outlive it (matches() compares
// its address).
class ResidentSrs {
 public:
  // Bytes the bases of `params` take in the device layout: 96 per G1 point,
  // 192 per G2 point (device and pinned host together).
  static std::size_t bytes_for(const groth16::Parameters& params);
  // Points of each vector, for srs_placement.hpp.
  static SrsPoints points_for(const groth16::Parameters& params);

  // Places the bases by place_srs(points_for(params), budget) and uploads
  // them. kFail: before allocating anything, throws Error{kOutOfDeviceMemory}
  // when bytes_for(params) exceeds budget_bytes (the caller's share of the
  // device, e.g. from a memory policy) or does not fit in the device's free
  // memory less the CUDA reserve. kStreamFromHost: the budget is also cut to
  // that free memory, and what does not fit is packed into pinned host memory
  // (page-locking GiBs takes seconds; Error{kOutOfHostMemory} when the host
  // cannot pin it).
  ResidentSrs(Device& device, const groth16::Parameters& params,
              std::size_t budget_bytes = std::numeric_limits<std::size_t>::max(),
              SrsOverflow overflow = SrsOverflow::kFail);
  ~ResidentSrs();
  ResidentSrs(ResidentSrs&&) noexcept;
  ResidentSrs& operator=(ResidentSrs&&) noexcept;

  std::size_t bytes() const;         // bytes_for(params): both tiers
  std::size_t device_bytes() const;  // in device memory
  std::size_t pinned_bytes() const;  // in pinned host memory, streamed by every proof
  const SrsPlacement& placement() const;
  int device_ordinal() const;
  const groth16::Parameters& params() const;
  // Where the bases are (for GpuProver::enqueue): device prefixes and pinned
  // host rests.
  DeviceSrsBases device_bases() const;
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

// Where a, b, c = A.w, B.w, C.w are evaluated.
//   kHost:   prepare() runs groth16::evaluate_into into pinned memory and
//            enqueue() uploads 3 m Fr (32 GiB PoRep: 12.9 GB, ~16 thread-s).
//   kDevice: the prover keeps the R1CS's matrices in device memory
//            (DeviceR1cs, gpu/groth16/r1cs_device.hpp; 32 GiB PoRep ~7.4 GB),
//            prepare() stages only the witness (inputs ++ aux, 4.2 GB) and
//            enqueue() runs the mat-vec on the device before the NTTs. The
//            first enqueue of an R1cs uploads its matrices (waiting for the
//            copies, once), after the workspace is allocated. When they do
//            not fit, that instance's a, b, c are evaluated on the host by
//            enqueue itself (on the device thread, in a transient pageable
//            buffer: GpuProveStats::abc_fallback) and later prepares of that
//            R1cs on this prover evaluate on the host as kHost does.
//            SatisfactionCheck::kCheck runs in the device mat-vec: the
//            witness still goes through the device stages, and finish()
//            throws groth16::UnsatisfiedError (the first failing row, as the
//            host check). The R1cs must outlive the enqueue of its instances.
enum class AbcSource { kHost, kDevice };

struct GpuProverOptions {
  WitnessScalarSplit witness_split = WitnessScalarSplit::kAuto;
  // Device memory for the SRS that prove(params, ...) caches; the rest of it
  // is streamed from pinned host memory (ResidentSrs, kStreamFromHost).
  // kSrsDeviceBudgetAuto: all of it when it fits beside the prover's working
  // set, else what is left beside it (srs_device_budget_for below). The
  // daemon sets it from [gpu] srs_device_budget; 0 streams the whole SRS.
  std::size_t srs_device_budget_bytes = kSrsDeviceBudgetAuto;
  // Start the H stage's NTTs only after all of a, b, c are on the device
  // (benchmarks: h_gpu_ms is then the NTT pipeline alone). Default: the NTTs
  // of a overlap the uploads of b and c.
  bool h_uploads_first = false;
  // The H stage in two device vectors of m Fr instead of four (8.6 GB less at
  // m = 2^27, for devices of 16-24 GB): a, b, c uploaded one after another
  // as the transforms free room (no overlap of b's and c's uploads with the
  // NTTs, and a, b, c evaluated on the host). enqueue() takes it by itself
  // when the four vectors do not fit; true forces it (tests, benches).
  bool compact_h_stage = false;
  // a, b, c on the host (default) or from a device-resident R1CS (A/B switch).
  AbcSource abc_source = AbcSource::kHost;
  // prove(): kCheck checks every constraint where a, b, c are evaluated
  // (fused: one Fr multiplication per row) and throws
  // groth16::UnsatisfiedError: from prepare() on the host, before anything
  // reaches the device; from finish() when a, b, c came from the device.
  groth16::SatisfactionCheck satisfaction = groth16::SatisfactionCheck::kSkip;
  // The prover's streams at the device's greatest priority: a second prover
  // on the same card (its own Device object, so its own MSM arena and NTT
  // tables) proves a small circuit while this card's main prover runs a
  // long partition, its kernels' blocks started ahead of the partition's
  // pending ones (the service's critical lane, gpu_service::GpuBackend).
  bool high_priority_streams = false;
};

// How a witness MSM's scalars were split (all tail when the split is off).
struct GpuSplitCounts {
  std::size_t zeros = 0, ones = 0, tail = 0;
  bool split = false;  // whether the split ran (else one MSM over all scalars)
};

// One instance, in milliseconds: host steps timed by the clock, device stages
// by CUDA events on the prover's streams (device time only: a stage queued
// behind another instance's work does not count the wait); the witness MSMs'
// splits.
struct GpuProveStats {
  // host, prepare()
  double evaluate_ms = 0;      // a, b, c (kDevice: the witness copied to pinned memory)
  bool abc_on_device = false;  // a, b, c came from the device-resident R1CS
  // kDevice: the witness was staged but the matrices did not fit this
  // device, so enqueue() evaluated a, b, c on the host (a transient
  // pageable buffer of 3 m Fr outside the staging; evaluate_ms counts it).
  bool abc_fallback = false;
  // The H stage ran in two device vectors (GpuProverOptions::compact_h_stage,
  // forced or because the four did not fit).
  bool compact_h = false;
  double l_host_ms = 0, a_host_ms = 0, b_host_ms = 0;  // selection + split of the witness MSMs' scalars
  // kDevice: the selection + split ran on the device (enqueue), from the
  // witness the mat-vec reads; split_wait_ms is the time from queueing the
  // count pass (behind the witness upload) to the next step using its
  // totals (the MSMs' sizes): the count's read-back latency, during which
  // no thread waits on the service's path (enqueue_start / continue).
  bool split_on_device = false;
  double split_wait_ms = 0;
  double prepare_ms = 0;  // all of prepare()
  // host, enqueue(): queueing the device work (growing device buffers included)
  double enqueue_ms = 0;
  // device
  double h_ms = 0;         // from the first upload of a, b, c to the end of H (uploads, 6 or 7 NTTs)
  double h_upload_ms = 0;  // the a, b, c uploads (copy stream); kDevice: witness upload + device mat-vec;
                           // compact_h: b's and c's wait for the transforms, so most of the H stage
  double h_gpu_ms = 0;     // the NTTs + quotient (compute stream; includes waiting for b, c
                           // unless h_uploads_first)
  double h_msm_ms = 0;     // H MSM
  double l_msm_ms = 0;     // L: sum of the ones' bases, tail gather and MSM (split uploaded during H)
  double a_msm_ms = 0;     // A: same
  double b_msm_ms = 0;     // B_G1 and B_G2 (one split)
  double device_ms = 0;    // first upload to the last download
  // host, finish()
  double assemble_ms = 0;  // window sums combined (Horner), blinding, affine conversion
  GpuSplitCounts l, a, b;
};

// One instance's state between GpuProver's three steps (prepare, enqueue,
// finish): the page-locked host buffers prepare() fills and the device reads
// (a, b, c; each witness MSM's split: indices of the ones, the tail's indices
// and values, or all selected scalars when unsplit), the page-locked buffers
// the device writes its window sums and point sums to, the stage events and
// the fence. Reused across instances: buffers grow to the largest instance
// seen and stay allocated (pinning GiBs costs seconds). A 32 GiB PoRep
// partition holds 12.9 GB of a, b, c plus the three splits (about 1.6 GB for
// Filecoin's mostly-bit witnesses; host_bytes_bound() is the worst case).
// One step at a time, in order; any thread.
class ProveStaging {
 public:
  ProveStaging();
  // Waits for the fence of an enqueued instance: the device reads and writes
  // the buffers until then.
  ~ProveStaging();
  ProveStaging(ProveStaging&&) noexcept;
  ProveStaging& operator=(ProveStaging&&) noexcept;
  ProveStaging(const ProveStaging&) = delete;
  ProveStaging& operator=(const ProveStaging&) = delete;

  // Page-locked host bytes held now.
  std::size_t pinned_bytes() const;
  // Page-locked bytes an instance of r1cs can need at most with a, b, c
  // from `source`: kHost a, b, c (3 m Fr), kDevice the witness (inputs ++
  // aux, one Fr each; prepare() frees the other path's buffer, so a staging
  // holds one of the two); plus 40 B per selected scalar of L, A and B (a
  // split never takes more), the result slots and the check word. Not
  // counted: kDevice's host paths (the fallback's transient pageable a, b,
  // c; a prepare after the matrices did not fit pins a, b, c), which the
  // service logs.
  static std::size_t host_bytes_bound(const groth16::R1cs& r1cs, AbcSource source = AbcSource::kHost);
  // Frees the buffers (after waiting for the fence).
  void release();
  // The last enqueue's fence (ready when nothing is in flight).
  const Fence& fence() const;
  // Times and splits of the instance last prepared / enqueued / finished here.
  const GpuProveStats& stats() const;

  struct Impl;  // gpu/groth16/prover_impl.hpp
  Impl& impl() { return *impl_; }
  const Impl& impl() const { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Device addresses of one SRS's packed affine bases (gpu/ec layout: x, y; the
// identity as zeros). For SRS that exist only on the device (the partition
// benchmark's replicated random points); prove() builds one from a ResidentSrs.
// Each vector may be streamed: a device prefix and a pinned host rest (PointSource).
struct DeviceSrsBases {
  PointSource h;            // >= m - 1 G1 points
  PointSource l;            // >= aux.size() G1 points
  PointSource a;            // a_count G1 points
  std::size_t a_count = 0;  // inputs + popcount(a_aux_density)
  PointSource b_g1;         // b_count G1 points
  PointSource b_g2;         // b_count G2 points
  std::size_t b_count = 0;  // popcount(b_input_density) + popcount(b_aux_density)
};

// The device budget GpuProver gives the ResidentSrs of params: `requested`
// (at most the usable free memory) unless kSrsDeviceBudgetAuto, then
// srs_device_budget() with the device's free memory and the working set of
// params' shape (prover_working_bytes, with the Device's MSM scratch limit).
// extra_working_bytes joins the working set: with AbcSource::kDevice the
// R1CS matrices and the witness buffer (device_abc_working_bytes), which the
// placement leaves room for rather than stream less of the SRS: streaming 12
// GB more per 32 GiB partition costs ~0.25 s of PCIe (overlapped with the
// MSMs), matrices that do not fit cost ~16 thread-s of host a, b, c and a
// 12.9 GB upload per partition (an 80 GB card holds the 44.1 GB SRS and the
// working set, but not the 7.3 GB matrices and 4.2 GB witness beside them).
std::size_t srs_device_budget_for(Device& device, const groth16::Parameters& params, std::size_t requested,
                                  std::size_t extra_working_bytes = 0);
// The same from values measured earlier on the device's thread (its free
// memory, before the CUDA reserve is taken off, and its MSM scratch limit):
// for estimates made off that thread (the service's srs_device_bytes).
std::size_t srs_device_budget_for(const groth16::Parameters& params, std::size_t requested,
                                  std::size_t device_free_bytes, std::size_t msm_scratch_limit_bytes,
                                  std::size_t extra_working_bytes = 0);
// Device bytes AbcSource::kDevice adds to a proof of r1cs: the resident
// matrices and densities (DeviceR1cs::bytes_for), the witness buffer and the
// split's block counts. O(rows) on the host (~0.3 s for PoRep 32 GiB).
std::size_t device_abc_working_bytes(const groth16::R1cs& r1cs);

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

// SRS bases for shape benchmarks: a few distinct points replicated to each
// vector's length (device-to-device doubling copies; the MSM bench's
// method), so the 44 GiB PoRep SRS needs no host memory. With a device budget
// below the whole, the vectors are placed as ResidentSrs places them and the
// rest is replicated in pinned host memory (streamed by the MSMs). Throws
// Error{kOutOfDeviceMemory} when the device part does not fit.
class ReplicatedSrs {
 public:
  ReplicatedSrs(Device& device, std::span<const ec::G1Affine> g1, std::span<const ec::G2Affine> g2, std::size_t h_count,
                std::size_t l_count, std::size_t a_count, std::size_t b_count,
                std::size_t device_budget_bytes = std::numeric_limits<std::size_t>::max());
  ~ReplicatedSrs();
  ReplicatedSrs(ReplicatedSrs&&) noexcept;
  ReplicatedSrs& operator=(ReplicatedSrs&&) noexcept;
  DeviceSrsBases bases() const;
  std::size_t bytes() const;
  const SrsPlacement& placement() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Called at the start of each stage of a proof: "evaluate" (host; stream 0)
// on the thread running prepare(); "h_ntt", "h_msm", "l_msm", "a_msm",
// "b_msm" with the CUDA stream the stage runs on (its handle value; no CUDA
// types in this header) from CUDA's callback thread when the DEVICE gets
// there; "assemble" (stream 0) on the thread running finish(). So it may be
// called from several threads at once: it must be thread-safe, cheap, must
// not call CUDA and must not throw.
using StageObserver = std::function<void(std::string_view stage, std::uintptr_t stream)>;

class GpuProver final : public groth16::Prover {
 public:
  // CUDA streams the prover owns for its whole life (compute and copy).
  static constexpr std::uint32_t kStreams = 2;

  // `device` and `pool` (used for evaluation and host-side scalar selection)
  // must outlive the prover. One owner thread, like Device, except for
  // prepare() and finish(), which other threads may run meanwhile.
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
  // Each instance goes through the three steps below (prepare, enqueue, wait
  // for the fence, finish) in the prover's own staging.
  std::vector<groth16::Proof> prove(const ResidentSrs& srs, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding);

  // ---- One instance in three steps -----------------------------------------
  // A service overlaps the host steps of one instance with the device work of
  // another (two stagings) and awaits the fence on its event loop.
  //
  // 1. Host only, any thread, no device access (uses the prover's ThreadPool,
  //    which serializes concurrent callers): a, b, c evaluated into the
  //    staging (AbcSource::kDevice: the witness copied there instead), and
  //    the L, A, B scalars selected and split there. The witness is not
  //    referenced afterwards. Throws groth16::ParamsError when the witness
  //    does not fit r1cs, gpu::Error{kInvalidArgument} for a domain over
  //    2^27, and with kCheck on the host path groth16::UnsatisfiedError (the
  //    first row with a * b != c, checked during the evaluation; the staging
  //    is then left unprepared; with a, b, c on the device finish() throws
  //    it). The staging must not be in flight (enqueued, not finished).
  void prepare(const groth16::R1cs& r1cs, const groth16::Witness& w, ProveStaging& staging,
               groth16::SatisfactionCheck check = groth16::SatisfactionCheck::kSkip) const;
  // Before 1 (optional), any thread, no device access: grows the staging's
  // page-locked buffer that prepare() fills for r1cs (the witness with a, b,
  // c from the device, else a, b, c), so that a prepare() which follows only
  // copies. Pinning is the slow part: ~2.3 s for a 32 GiB PoRep partition's
  // 4.2 GB witness on an H100 host, against ~70 ms to fill it once pinned.
  // The staging must not be in flight.
  void reserve_staging(const groth16::R1cs& r1cs, ProveStaging& staging) const;
  // 2. The prover's owner thread (like every device call): queues the
  //    uploads, the H stage, every MSM and point sum and the downloads of
  //    their results into the staging on the prover's streams, and returns
  //    without waiting for the device. Work queued by an earlier enqueue runs
  //    first. Growing the prover's device buffers (first instance of a larger
  //    shape) waits for the device, as does the first upload of an R1cs's
  //    matrices (kDevice). Throws groth16::ParamsError when the SRS does not
  //    fit the prepared instance, gpu::Error{kOutOfDeviceMemory} (nothing
  //    queued then), and groth16::UnsatisfiedError when kDevice fell back to
  //    the host evaluation with kCheck and the witness fails.
  //    With the witness split on the device, the MSMs' sizes come from the
  //    device's count pass (and, for a streamed SRS, their index lists
  //    too): enqueue() waits for them between its steps. A service whose
  //    device thread must not wait takes the steps itself: enqueue_start,
  //    then, whenever a step says `more`, enqueue_continue on the device
  //    thread once that step's fence has passed (Fence::on_done posting
  //    back to the thread). The last step's fence is the instance's. A step
  //    that throws leaves the staging's fence() after whatever it had
  //    queued (wait for it before preparing the staging again).
  struct EnqueueStep {
    Fence fence;
    bool more = false;
  };
  Fence enqueue(const ResidentSrs& srs, ProveStaging& staging);
  Fence enqueue(const DeviceSrsBases& bases, ProveStaging& staging);
  EnqueueStep enqueue_start(const ResidentSrs& srs, ProveStaging& staging);
  EnqueueStep enqueue_start(const DeviceSrsBases& bases, ProveStaging& staging);
  EnqueueStep enqueue_continue(ProveStaging& staging);
  // Whether an enqueue waits for enqueue_continue.
  bool enqueue_pending() const;
  // 3. Host, any thread, once the fence has passed (waits for it otherwise):
  //    the window sums combined and the proof assembled with `blinding`.
  //    Throws groth16::UnsatisfiedError when the device's satisfaction check
  //    (kDevice with kCheck) found a failing row; the staging is then idle.
  groth16::Proof finish(const ResidentSrs& srs, ProveStaging& staging, const groth16::Blinding& blinding) const;
  // Same with the verifying key of the parameters the SRS came from (the
  // resident SRS may have been replaced meanwhile).
  groth16::Proof finish(const groth16::VerifyingKey& vk, ProveStaging& staging,
                        const groth16::Blinding& blinding) const;
  // Step 3 without assembly: the five MSMs.
  groth16::MsmResults finish_msms(ProveStaging& staging) const;

  // CUDA host callbacks (stage reports and fences) queued on the prover's
  // streams and not yet reached by the device. Thread-safe.
  std::uint32_t callbacks_in_flight() const { return callbacks_->in_flight(); }
  // Frees the prover's reused device buffers (a, b, c; splits; gathers) and
  // the Device's MSM arena, after waiting for the device; the next enqueue
  // allocates them again.
  void release_workspace();

  // Stages 2 and 3 (H, then the MSMs H, L, A, B_G1, B_G2) without an R1CS or
  // Parameters: what prove() runs between evaluation and assembly, through
  // the same prepare (selection and split only) / enqueue / finish steps.
  // `in.abc` must stay valid until it returns. Fills last_stats()
  // (evaluate_ms and assemble_ms 0). Throws Error{kInvalidArgument} when the
  // sizes disagree.
  groth16::MsmResults device_stages(const DeviceSrsBases& bases, const DeviceStageInputs& in);

  // Stage 2 alone, downloaded: the m - 1 coefficients of H (as groth16::compute_h,
  // throwing groth16::UnsatisfiedError as it does with kCheck).
  std::vector<ff::Fr> compute_h(const groth16::R1cs& r1cs, const groth16::Witness& w,
                                groth16::SatisfactionCheck check = groth16::SatisfactionCheck::kSkip);

  // The SRS of params, uploaded (and cached, replacing another) the first
  // time this Parameters object is seen, as prove(params, ...) does; for
  // enqueue(). Device thread. A small SRS (at most 1/kSideSrsRatio of the
  // cached one's bytes: a WinningPoSt's 0.2 GB beside a PoRep's, WindowPoSt's
  // or SnapDeals' tens of GB) is kept beside the cached one instead of
  // replacing it, whole on the device when it fits in the free memory with
  // kSideSrsMarginBytes to spare, else streamed from pinned host memory by
  // every proof (device_bytes() 0): the large job's next partition would
  // otherwise upload its SRS again (a 32 GiB SnapDeals SRS: 6.7 s on an
  // H100; a 32 GiB PoRep's SRS and matrices: 18 s, after reading them back).
  // The other way round, a small cached SRS (whole on the device) that a
  // large one replaces stays as the side SRS while the large one still fits
  // whole beside it.
  static constexpr std::size_t kSideSrsRatio = 8;
  // Free device memory left beside a side SRS for its proofs' tables and the
  // large job's lazily grown scratch.
  static constexpr std::size_t kSideSrsMarginBytes = std::size_t{1} << 30;
  // With r1cs (AbcSource::kDevice for it), an upload leaves room for its
  // device a, b, c (device_abc_working_bytes) beside the workspace.
  const ResidentSrs& cache_srs(const groth16::Parameters& params, const groth16::R1cs* r1cs = nullptr);
  // The SRS cached by prove(params, ...), or null; and how many uploads it took.
  const ResidentSrs* cached_srs() const { return cached_srs_.get(); }
  // Frees the cached SRS's device memory and the workspace (the service
  // evicts its parameter set); the next prove(params, ...) uploads again.
  void release_cached_srs() {
    side_srs_.reset();
    cached_srs_.reset();
    release_workspace();
  }
  // The small SRS kept beside the cached one, or null.
  const ResidentSrs* side_srs() const { return side_srs_.get(); }
  std::size_t srs_uploads() const { return srs_uploads_; }
  const GpuProverOptions& options() const { return options_; }
  // Device bytes of the resident R1CS matrices (kDevice; 0 when none). Any thread.
  std::size_t device_r1cs_bytes() const;
  // Where prepare() would put r1cs's a, b, c now: kDevice unless the option
  // is kHost, its matrices did not fit this device, or another R1cs at least
  // kSideSrsRatio times its rows has its matrices on the device (a small
  // circuit's a, b, c cost milliseconds on the host; swapping a 32 GiB
  // SnapDeals partition's matrices out and back cost that job 1.0-1.7 s on
  // an H100). Any thread.
  AbcSource abc_source_for(const groth16::R1cs& r1cs) const;
  const GpuProveStats& last_stats() const { return last_stats_; }
  // Stage reports for status; empty: none. Set it while nothing is in flight.
  void set_stage_observer(StageObserver observer) { stage_observer_ = std::move(observer); }

  // Device state (NTT tables, stream), defined in gpu_prover.cpp.
  struct Impl;

 private:
  // The witness MSMs' part of prepare() (device_stages has a, b, c already).
  void prepare_witness_msms(std::span<const ff::Fr> inputs, std::span<const ff::Fr> aux,
                            const groth16::BitVec& a_aux_density, const groth16::BitVec& b_input_density,
                            const groth16::BitVec& b_aux_density, ProveStaging& staging) const;
  ProveStaging& own_staging();
  // The enqueue's steps after the split's counts (staged_prove.cpp).
  EnqueueStep enqueue_split_fill(ProveStaging& staging);
  EnqueueStep enqueue_rest(ProveStaging& staging);
  // After a step threw: the staging's fence after everything queued.
  void abandon_enqueue(ProveStaging& staging);
  const std::uint32_t* queue_h(std::uint32_t* abc_dev, int log_m, ProveStaging& staging);
  const std::uint32_t* queue_h_compact(std::uint32_t* abc_dev, int log_m, const ff::Fr* abc_host,
                                       ProveStaging& staging);

  Device& device_;
  ThreadPool& pool_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<ResidentSrs> cached_srs_;
  std::unique_ptr<ResidentSrs> side_srs_;  // a small SRS beside cached_srs_ (cache_srs)
  std::size_t srs_uploads_ = 0;
  GpuProverOptions options_;
  GpuProveStats last_stats_;
  StageObserver stage_observer_;
  std::shared_ptr<FenceCounter> callbacks_ = std::make_shared<FenceCounter>();
  std::unique_ptr<ProveStaging> own_staging_;  // prove() and device_stages()
  void stage(std::string_view name, std::uintptr_t stream) const {
    if (stage_observer_) stage_observer_(name, stream);
  }
};

}  // namespace cuzk::gpu
