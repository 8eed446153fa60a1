// Internal state of GpuProver and ProveStaging (gpu/groth16/gpu_prover.hpp),
// shared by the prover's translation units. CUDA types allowed: cuzk_gpu only.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>

#include "gpu/cuda_rt.hpp"
#include "gpu/fence.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/groth16/r1cs_device.hpp"
#include "gpu/kernels.hpp"

namespace cuzk::gpu {

namespace staging {

// The witness MSMs, in the order the device runs them.
enum WitnessMsm : int { kL = 0, kA = 1, kB = 2, kWitnessMsms = 3 };
// Result slots in the staging's pinned results buffer.
enum MsmSlot : int { kSlotH = 0, kSlotL, kSlotA, kSlotBG1, kSlotBG2, kMsmSlots };
// Limbs of one XYZZ point: 4 coordinates of 12 (Fp) or 24 (Fp2) limbs.
inline constexpr std::size_t kG1XyzzLimbs = 48;
inline constexpr std::size_t kG2XyzzLimbs = 96;
// One slot: kMsmMaxWindows window sums, then one point sum (the ones of a
// split), sized for G2.
inline constexpr std::size_t kSumOffsetLimbs = std::size_t{kernels::kMsmMaxWindows} * kG2XyzzLimbs;
inline constexpr std::size_t kSlotLimbs = kSumOffsetLimbs + kG2XyzzLimbs;

// Points on the streams, recorded by enqueue, read by finish (device times).
enum StageEvent : int {
  kUploadBegin = 0,  // copy stream, before a
  kUploadedA,        // copy stream, after a (then b, c: kUploadedA + 1, + 2)
  kUploadedB,
  kUploadedC,
  kSplitUploaded,  // copy stream, after L's split (A's and B's: + 1, + 2)
  kSplitUploadedA,
  kSplitUploadedB,
  kHBegin,   // compute stream, NTTs begin
  kHEnd,     // H's scalars ready
  kHMsmEnd,  // then the L, A, B ends
  kLEnd,
  kAEnd,
  kBEnd,
  kStageEvents
};

// Host side of one witness MSM: its selected scalars, split or not.
struct WitnessMsmHost {
  std::size_t n = 0;      // scalars selected (the MSM's points)
  GpuSplitCounts counts;  // counts.split: ones / tail_idx / values[0, tail), else values[0, n)
  detail::PinnedBuffer<std::uint32_t> ones, tail_idx;
  detail::PinnedBuffer<ff::Fr> values;
  std::size_t bytes() const { return (ones.size() + tail_idx.size()) * 4 + values.size() * sizeof(ff::Fr); }
};

// What the device wrote into a result slot.
struct MsmResultMeta {
  int window_bits = 0;
  int windows = 0;       // 0: no Pippenger MSM ran (no points, or only ones)
  bool has_sum = false;  // the split's sum of the ones' bases is in the slot
};

enum class Step { kIdle, kPrepared, kEnqueued };

[[noreturn]] inline void misuse(const char* what) {
  std::fprintf(stderr, "cuzk: GpuProver staging misused: %s\n", what);
  std::abort();
}

}  // namespace staging

struct ProveStaging::Impl {
  staging::Step step = staging::Step::kIdle;
  int log_m = -1;
  detail::PinnedBuffer<ff::Fr> abc_own;  // a, b, c (m each), evaluated by prepare()
  const ff::Fr* abc = nullptr;           // abc_own, or the caller's (device_stages)
  // AbcSource::kDevice: inputs ++ aux for the device mat-vec over r1cs (abc is
  // then null).
  detail::PinnedBuffer<ff::Fr> witness_own;
  const groth16::R1cs* r1cs = nullptr;
  // The satisfaction check prepare() was asked for. With a, b, c from the
  // device it runs in the mat-vec (device_check set by enqueue), and the
  // smallest failing row lands in first_unsatisfied (pinned, written by the
  // device before the fence) for finish to throw groth16::UnsatisfiedError.
  groth16::SatisfactionCheck check = groth16::SatisfactionCheck::kSkip;
  bool device_check = false;
  detail::PinnedBuffer<std::uint64_t> first_unsatisfied;  // one word
  // kDevice: prepare() left the witness MSMs' selection + split to enqueue,
  // which runs it on the device (msm[k].n set, counts not yet).
  bool split_on_device = false;
  std::array<staging::WitnessMsmHost, staging::kWitnessMsms> msm;
  detail::PinnedBuffer<std::uint32_t> results;  // kMsmSlots slots of kSlotLimbs
  std::array<staging::MsmResultMeta, staging::kMsmSlots> meta;
  // Made on the device thread by the first enqueue (events belong to a device).
  std::unique_ptr<std::array<detail::Event, staging::kStageEvents>> events;
  int events_ordinal = -1;
  Fence fence;
  GpuProveStats stats;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
    fence.wait();  // the device may still read or write the buffers
    if (events) {
      detail::DeviceGuard guard(events_ordinal);
      events.reset();
    }
  }
  // A new instance: not while the device owns the buffers.
  void begin_prepare() {
    if (step == staging::Step::kEnqueued && !fence.ready()) staging::misuse("prepare while in flight");
    step = staging::Step::kIdle;
    stats = GpuProveStats{};
    abc = nullptr;
    r1cs = nullptr;
    check = groth16::SatisfactionCheck::kSkip;
    device_check = false;
    split_on_device = false;
    log_m = -1;
  }
  cudaEvent_t event(staging::StageEvent e) const { return (*events)[e].get(); }
  std::uint32_t* slot(int k) const { return results.get() + std::size_t(k) * staging::kSlotLimbs; }
};

struct GpuProver::Impl {
  explicit Impl(bool high_priority) : compute(high_priority), copy(high_priority) {}
  int ordinal = 0;
  detail::Stream compute;
  detail::Stream copy;  // uploads of a, b, c and the splits, overlapping the NTTs
  // Device workspace, reused by every enqueue and grown when an instance
  // needs more: a cudaMalloc / cudaFree per instance would synchronize the
  // device each time (the device thread would wait for the previous
  // instance). The copy stream waits for `idle` (recorded on the compute
  // stream after the previous instance's last use), so an instance enqueued
  // before the previous one finished does not overwrite its inputs.
  detail::DeviceBuffer<std::uint32_t> abc;  // 3 m Fr
  struct SplitDevice {
    detail::DeviceBuffer<std::uint32_t> ones, tail_idx, values;
  };
  std::array<SplitDevice, staging::kWitnessMsms> split;
  detail::DeviceBuffer<std::uint32_t> gathered;     // a split's tail bases, contiguous for the MSM
  detail::DeviceBuffer<unsigned char> sum_scratch;  // point sums' partials
  detail::Event idle;
  bool idle_recorded = false;
  // AbcSource::kDevice: the matrices of one R1cs (replaced by another's),
  // built by enqueue on this thread; other threads (prepare, the service's
  // status) read only the atomics: device_r1cs_for is published once
  // device_r1cs is complete.
  std::unique_ptr<DeviceR1cs> device_r1cs;
  std::atomic<const groth16::R1cs*> device_r1cs_for{nullptr};
  std::atomic<std::size_t> device_r1cs_bytes{0};  // device_r1cs->bytes(), 0 when none
  std::atomic<std::size_t> device_r1cs_rows{0};   // device_r1cs->num_constraints(), 0 when none
  // The last R1cs whose matrices did not fit: prepare() evaluates its
  // instances on the host, and enqueue does not try the upload again.
  std::atomic<const groth16::R1cs*> device_r1cs_unfit{nullptr};
  // The domain size whose four-vector H stage did not fit: enqueue goes
  // straight to two vectors for it (no cudaFree + failed allocation, which
  // would wait for the previous instance, per enqueue) until release_workspace.
  std::size_t h_compact_m = 0;
  detail::DeviceBuffer<std::uint32_t> witness;            // inputs ++ aux for the mat-vec
  detail::DeviceBuffer<std::uint64_t> first_unsatisfied;  // the mat-vec's check word (one)
  // The device split's block counts and scan scratch (per witness MSM: they
  // are counted together, then filled), and its totals for the host.
  std::array<detail::DeviceBuffer<std::uint32_t>, staging::kWitnessMsms> split_counts;
  detail::DeviceBuffer<unsigned char> split_temp;
  detail::PinnedBuffer<std::uint32_t> split_totals;  // 3 words per witness MSM
  // An enqueue waiting for the device to pass a fence (GpuProver::
  // enqueue_continue): the step it resumes at and what its first step set
  // up. One at a time per prover; nothing else touches the workspace or
  // the cached SRS meanwhile (the service holds the device).
  struct PendingEnqueue {
    enum class At {
      kSplitFill,    // the split's counts are in split_totals: size, fill
      kWitnessMsms,  // a streamed SRS's index lists are in the staging: the rest
    } at = At::kSplitFill;
    ProveStaging* staging = nullptr;
    DeviceSrsBases bases;
    std::uint32_t* abc_dev = nullptr;
    std::uint32_t* witness_dev = nullptr;
    const DeviceR1cs* r1cs_dev = nullptr;  // null: a, b, c from the host (abc_host)
    bool compact = false;
    // a, b, c evaluated on the host because the matrices do not fit (never
    // pending: no device split then), or the staging's.
    std::unique_ptr<ff::Fr[]> fallback_abc;
    const ff::Fr* abc_host = nullptr;
    std::chrono::steady_clock::time_point counted_at;  // the count passes queued
  };
  std::optional<PendingEnqueue> pending;
};

}  // namespace cuzk::gpu
