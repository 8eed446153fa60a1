// Public interface of the CUDA back end. No CUDA types appear here, so CPU-only
// code (and code compiled by g++) can include it and link cuzk_gpu.
//
// Data conventions: field elements and points are the host types of src/ff and
// src/ec; their Montgomery limbs are copied to the device unchanged (the device
// fields use the same R), so uploads are plain memcpys (plus packing of affine
// points, which drops the host's infinity flag: infinity becomes x = y = 0,
// which is not on either curve).
//
// Errors: operating conditions (no device, the request does not fit in device
// memory, bad sizes) throw gpu::Error with a kind; CUDA failures that leave the
// context unusable (sticky errors, launch failures) abort with the failing
// call, file and line, as a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "ec/point.hpp"
#include "gpu/error.hpp"
#include "gpu/msm/msm_plan.hpp"
#include "ff/fp.hpp"
#include "ff/fp2.hpp"

namespace cuzk::gpu {

// Number of usable CUDA devices; 0 when there is no driver or no device. Never throws.
int device_count() noexcept;

struct DeviceInfo {
  std::string name;
  int ordinal = 0;
  int sm_count = 0;
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t global_memory_bytes = 0;
};

enum class NttDirection { kForward, kInverse };
// kCoset evaluates on g * <w> with g = 7 (ff::kFrGenerator): forward scales
// coefficient i by g^i first, inverse scales by g^-i last.
enum class NttDomain { kStandard, kCoset };
// Device::ntt runs the lean radix-4 DIF passes (gpu/ntt/ntt_lean.cu): radix-4
// groups of 2 stages in registers, 4 elements per thread, 256 threads and 3
// blocks per SM (80 registers). Natural order in and out: the coset's g^i
// rides on the first pass's load, the bit reversal with 1/n or n^-1 g^-i on
// the last pass's store (out of place into a scratch vector that is swapped
// in). H200, 2^27 forward: 34.95 ms (bench/gpu/NOTES.md). Sizes below 2^6
// (ntt_lean::kLogMin) run the radix-2 kernels of gpu/ntt/ntt.cu.

class Device;
namespace kernels {
class MsmScratch;
}

// A vector of Fr (Montgomery form) resident in device memory.
class DeviceFrVector {
 public:
  DeviceFrVector();
  DeviceFrVector(DeviceFrVector&&) noexcept;
  DeviceFrVector& operator=(DeviceFrVector&&) noexcept;
  ~DeviceFrVector();
  std::size_t size() const;
  // Device address of the elements (8 little-endian 32-bit limbs each, the
  // layout of gpu/ff/field.cuh), for cuzk_gpu's own kernels; null when empty.
  std::uint32_t* device_limbs();
  const std::uint32_t* device_limbs() const;

 private:
  friend class Device;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Affine bases resident in device memory (96 B per G1 point, 192 B per G2 point).
class G1Bases {
 public:
  G1Bases();
  G1Bases(G1Bases&&) noexcept;
  G1Bases& operator=(G1Bases&&) noexcept;
  ~G1Bases();
  std::size_t size() const;

 private:
  friend class Device;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class G2Bases {
 public:
  G2Bases();
  G2Bases(G2Bases&&) noexcept;
  G2Bases& operator=(G2Bases&&) noexcept;
  ~G2Bases();
  std::size_t size() const;

 private:
  friend class Device;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One CUDA device with one in-order stream. Every method runs on that stream;
// methods that return host data wait for it. Not thread safe: one owner.
class Device {
 public:
  explicit Device(int ordinal = 0);  // throws Error{kNoDevice}
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const;
  std::size_t free_memory_bytes() const;
  void synchronize();

  DeviceFrVector upload(std::span<const ff::Fr> values);
  DeviceFrVector allocate(std::size_t n);  // uninitialized
  void download(const DeviceFrVector& values, std::span<ff::Fr> out);

  // In-place NTT of size 2^k (1 <= k <= 27), natural order in and out:
  // forward X_j = sum_i x_i w^(ij) with w = 7^((r-1)/2^32) squared 32-k times;
  // inverse returns x (the 1/n is included).
  void ntt(DeviceFrVector& values, NttDirection direction, NttDomain domain);
  void ntt(std::span<ff::Fr> values, NttDirection direction, NttDomain domain);  // host round trip
  // The NTT keeps one n-element scratch vector (the out-of-place last pass)
  // for the next call of the same size; this frees it.
  void release_ntt_scratch();

  G1Bases upload_g1_bases(std::span<const ec::G1Affine> points);
  G2Bases upload_g2_bases(std::span<const ec::G2Affine> points);
  // Device time of the MSM's phases (filled when a pointer is passed).
  struct MsmPhaseTimes {
    float digits_ms = 0;            // Montgomery conversion and signed-digit recoding
    float sort_ms = 0;              // radix sort and bucket bounds (all phases summed over the chunks)
    float accumulate_ms = 0;        // bucket accumulation (mixed adds)
    float reduce_ms = 0;            // buckets to window sums, copied back (the host combines the windows)
    int window_bits = 0;            // the window the plan chose
    std::size_t chunks = 0;         // point chunks the scratch limit required
    bool reduced_by_trees = false;  // the affine tree reduced its buckets by trees (<= 2 chunks)
  };
  // sum_i scalars[i] * bases[i] over the first scalars.size() bases. Scalars are
  // Fr in Montgomery form (converted on the device).
  ec::G1Jacobian msm(const G1Bases& bases, const DeviceFrVector& scalars, MsmPhaseTimes* phases = nullptr);
  ec::G1Jacobian msm(const G1Bases& bases, std::span<const ff::Fr> scalars);
  ec::G2Jacobian msm(const G2Bases& bases, const DeviceFrVector& scalars, MsmPhaseTimes* phases = nullptr);
  ec::G2Jacobian msm(const G2Bases& bases, std::span<const ff::Fr> scalars);

  // Window size in bits the MSM uses for n points by default (modelled for a
  // 132-SM H200 when memory is not the limit; the MSM itself plans with this
  // device's SM count and its scratch limit).
  static int msm_window_bits(std::size_t n);

  // Tuning knobs of the MSM (the daemon sets scratch_limit_bytes from its
  // [gpu] msm_scratch; bench_gpu from --msm-window-bits / --msm-scratch-mib).
  // Every MSM accumulates with the affine pairwise tree (gpu/msm/msm_tree.cu;
  // H200: G1 2^24 85.4 ms, 2^26 304.6 (2026-12-02); G2 2^25 398.4 ms
  // (2026-12-01; bench/RESULTS.md); bench/gpu/NOTES.md "Variants measured
  // and deleted" has the alternatives it beat).
  struct MsmTuning {
    int window_bits = 0;  // 0: chosen by gpu/msm/msm_plan.hpp; otherwise 2..24
    // Device scratch of one MSM (sort pairs, buckets, bounds), allocated once
    // per Device and reused; larger MSMs are processed in chunks of points
    // that fit. The MSM also stays within the free device memory. A Device
    // starts with default_msm_scratch_bytes(its memory) (8..64 GiB).
    std::size_t scratch_limit_bytes = kDefaultMsmScratchBytes;
  };
  void set_msm_tuning(const MsmTuning& tuning);
  const MsmTuning& msm_tuning() const;
  // The MSM's scratch arena (for cuzk_gpu's own code: gpu/groth16 runs MSMs on
  // its own stream through kernels::msm_g1/g2). Released by release_msm_scratch()
  // or with the Device.
  kernels::MsmScratch& msm_scratch();
  void release_msm_scratch();
  // Device bytes the arena holds now (0 after release_msm_scratch).
  std::size_t msm_scratch_bytes() const;

  // Internal state (defined in device.cpp); for cuzk_gpu's own code.
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Device time between two points on a Device's stream, measured with CUDA events.
class StreamTimer {
 public:
  explicit StreamTimer(Device& device);
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;
  void start();
  void stop();
  float elapsed_ms();  // waits for the stop event

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cuzk::gpu
