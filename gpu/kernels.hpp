// Host-callable launchers of the CUDA kernels (defined in the .cu files).
// Internal to cuzk_gpu: pointers are device pointers to little-endian 32-bit
// limb arrays in the layouts of gpu/ff/field.cuh and gpu/ec/xyzz.cuh.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/gpu.hpp"
#include "gpu/msm/msm_plan.hpp"
#include "gpu/msm/point_source.hpp"

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

// Element p is scaled by hi[i >> lo_bits] * lo[i mod 2^lo_bits] with
// i = p, or bitrev(p) when bitrev_index (lo == nullptr: the constant hi[0]).
// The lean NTT passes take these as their fused load and store scalings
// (gpu/ntt/ntt_lean.hpp).
struct NttScaleTable {
  const u32* hi = nullptr;
  const u32* lo = nullptr;
  int lo_bits = 0;
  bool bitrev_index = false;
};

// ---- MSM (gpu/msm/msm.cu) --------------------------------------------------
// Device scratch of the MSM (gpu/msm/msm_plan.hpp lays it out): one device
// allocation, grown when a call needs more and otherwise reused, so an MSM
// makes no cudaMalloc/cudaFree (which synchronize the device). One per Device.
// MSMs on one stream are ordered by it; an MSM queued without waiting
// (msm_g1_enqueue) leaves the arena busy until its stream passes, so an MSM
// on another stream first waits for the arena's last recorded use
// (after_last_use / record_use).
class MsmScratch {
 public:
  std::size_t capacity_bytes() const { return buffer_.bytes(); }
  // At least `bytes` of device memory; the old contents are not kept.
  unsigned char* reserve(std::size_t bytes) {
    if (bytes > buffer_.bytes()) {
      buffer_.reset();  // cudaFree waits for the device: no MSM is using it
      buffer_ = detail::DeviceBuffer<unsigned char>(bytes, "msm scratch arena");
    }
    return buffer_.get();
  }
  void release() { buffer_.reset(); }
  // Stream s waits (on the device, not the host) for the arena's last recorded use.
  void after_last_use(cudaStream_t s) {
    if (last_use_) CUZK_CUDA_CHECK(cudaStreamWaitEvent(s, last_use_->get(), 0));
  }
  // Records the end of a use queued on s (the event is made on first use, on
  // the device current then: the arena's).
  void record_use(cudaStream_t s) {
    if (!last_use_) last_use_ = std::make_unique<detail::Event>();
    last_use_->record(s);
  }
  // The stream that copies bases streamed from host memory into the arena's
  // staging slots (gpu/msm/base_stager.hpp), created on first use.
  cudaStream_t copy_stream() {
    if (!copy_stream_) copy_stream_ = std::make_unique<detail::Stream>();
    return copy_stream_->get();
  }
  // A second compute stream for work an MSM splits in two (the affine tree's
  // slabs), with the events that fork it from and join it back into the
  // MSM's stream; created on first use.
  struct Side {
    detail::Stream stream;
    detail::Event fork, join;
  };
  Side& side() {
    if (!side_) side_ = std::make_unique<Side>();
    return *side_;
  }

 private:
  detail::DeviceBuffer<unsigned char> buffer_;
  std::unique_ptr<detail::Stream> copy_stream_;
  std::unique_ptr<Side> side_;
  std::unique_ptr<detail::Event> last_use_;
};

struct MsmConfig {
  int window_bits = 0;  // 0: chosen by msm::plan
  // Upper bound on the arena; the MSM also stays within the free device memory
  // (less detail::kDeviceMemoryReserveBytes) and chunks the points to fit.
  std::size_t scratch_limit_bytes = kDefaultMsmScratchBytes;
  // Set by msm_g1_enqueue / msm_g2_enqueue: pinned host memory that receives
  // the window sums when the stream gets there (null: msm_g1 / msm_g2 wait).
  u32* window_sums_out = nullptr;
};

// The MSM configuration a Device's tuning gives its G1 and G2 MSMs.
inline MsmConfig msm_config(const Device::MsmTuning& t) {
  MsmConfig c;
  c.window_bits = t.window_bits;
  c.scratch_limit_bytes = t.scratch_limit_bytes;
  return c;
}

// bases: n packed affine points (x, y; identity = zeros), on the device or
// partly in pinned host memory (streamed through two staging slots of the
// arena by the scratch's copy stream while earlier chunks accumulate; the
// plan counts the slots; a bases prefix on the device is read in place);
// scalars: n Fr in Montgomery form. Returns the W = ceil(256 / window_bits)
// window sums in XYZZ form (x, y, zz, zzz; 4 * 12 limbs each for G1, 4 * 24
// for G2), window 0 first, after waiting for the stream; the MSM is
// sum_w 2^(w c) window_w.
// phases (may be null) receives per-phase device times (summed over chunks).
// Throws Error{kOutOfDeviceMemory} when not even the smallest chunking fits,
// Error{kInvalidArgument} for a window size out of 2..24.
struct MsmPhaseMs {
  float digits_ms = 0, sort_ms = 0, accumulate_ms = 0, reduce_ms = 0;
};
struct MsmWindows {
  std::vector<u32> sums;  // W XYZZ points, window 0 first (empty for n = 0 and when enqueued)
  int window_bits = 0;
  int windows = 0;  // W (0 for n = 0)
  std::size_t chunks = 0;
  bool reduced_by_trees = false;  // the affine tree's tree reduction (msm::TreeReduceShape)
};
MsmWindows msm_g1(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n, const MsmConfig& config,
                  MsmScratch& scratch, MsmPhaseMs* phases);
MsmWindows msm_g2(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n, const MsmConfig& config,
                  MsmScratch& scratch, MsmPhaseMs* phases);

// The most window sums an MSM produces: W = ceil(256 / 2) for the smallest
// window (msm::kMinWindowBits).
inline constexpr int kMsmMaxWindows = 128;
// The same MSMs queued on s without waiting: the W window sums reach
// window_sums_out (pinned host memory with room for kMsmMaxWindows XYZZ
// points: 4 x 12 limbs each for G1, 4 x 24 for G2) when the stream gets
// there; the result's sums stay empty. The caller keeps bases and scalars
// alive until then. Planning may still synchronize (growing the arena).
MsmWindows msm_g1_enqueue(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n,
                          const MsmConfig& config, MsmScratch& scratch, u32* window_sums_out);
MsmWindows msm_g2_enqueue(cudaStream_t s, const PointSource& bases, const u32* scalars, std::size_t n,
                          const MsmConfig& config, MsmScratch& scratch, u32* window_sums_out);

// ---- Field self-tests (gpu/ff/field_ops.cu) --------------------------------
enum class FieldKind { kFp, kFr, kFp2 };
enum class FieldOpKind { kAdd, kSub, kMul, kSqr, kFromMont, kMulCios, kMulEvenOdd, kSqrCios, kSqrEvenOdd };
void field_op(cudaStream_t s, FieldKind field, FieldOpKind op, const u32* a, const u32* b, u32* out, std::size_t n);

}  // namespace cuzk::gpu::kernels
