// ResidentSrs and ReplicatedSrs: the SRS bases on the device (and in pinned
// host memory when the device budget is short). The prover's
// steps (host orchestration of the device stages: cuzk_gpu's kernel launchers
// on the prover's own streams) are in gpu/groth16/staged_prove.cpp.
#include "gpu/groth16/gpu_prover.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/groth16/quotient_kernel.hpp"
#include "gpu/groth16/r1cs_device.hpp"
#include "gpu/groth16/witness_split.hpp"
#include "gpu/kernels.hpp"
#include "gpu/ntt/ntt_tables.hpp"
#include "gpu/upload_points.hpp"
#include "groth16/r1cs.hpp"

namespace cuzk::gpu {

using detail::DeviceBuffer;
using detail::DeviceGuard;
using detail::PinnedBuffer;
using detail::upload_points;
using ff::Fr;
using kernels::u32;

static_assert(sizeof(Fr) == 32 && std::is_trivially_copyable_v<Fr>);

namespace {

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

void require_fits(Device& device, std::size_t bytes, const char* what) {
  const std::size_t free_bytes = device.free_memory_bytes();
  if (bytes + detail::kDeviceMemoryReserveBytes > free_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory, std::string(what) + " needs " + mib(bytes) + " of device memory, " +
                                                   mib(free_bytes) + " free (" +
                                                   mib(detail::kDeviceMemoryReserveBytes) + " kept in reserve)");
  }
}

// Free device memory less the CUDA reserve.
std::size_t usable_device_bytes(std::size_t free_bytes) {
  return free_bytes > detail::kDeviceMemoryReserveBytes ? free_bytes - detail::kDeviceMemoryReserveBytes : 0;
}
std::size_t usable_device_bytes(Device& device) { return usable_device_bytes(device.free_memory_bytes()); }

// Page-locked host memory of `count` 32-bit limbs (cudaHostAlloc). Unlike
// detail::PinnedBuffer (whose small staging buffers abort on failure), failing
// to pin GiBs of SRS is an operating condition: the host is short of memory or
// of its locked-memory limit. It is reported as Error{kOutOfHostMemory}.
class PinnedLimbs {
 public:
  PinnedLimbs() = default;
  PinnedLimbs(std::size_t count, const char* what) {
    if (count == 0) return;
    void* p = nullptr;
    const cudaError_t err = cudaHostAlloc(&p, count * 4, cudaHostAllocDefault);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it
      throw Error(ErrorKind::kOutOfHostMemory,
                  std::string("pinning ") + mib(count * 4) + " of host memory for " + what + " failed");
    }
    CUZK_CUDA_CHECK(err);
    ptr_ = static_cast<u32*>(p);
    count_ = count;
  }
  PinnedLimbs(PinnedLimbs&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedLimbs& operator=(PinnedLimbs&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedLimbs(const PinnedLimbs&) = delete;
  PinnedLimbs& operator=(const PinnedLimbs&) = delete;
  ~PinnedLimbs() { reset(); }
  void reset() {
    if (ptr_ != nullptr) CUZK_CUDA_CHECK(cudaFreeHost(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  u32* get() const { return ptr_; }
  std::size_t size() const { return count_; }

 private:
  u32* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// One SRS vector as placed: the prefix [0, device_points) in device memory,
// the rest in page-locked host memory, both in the device's packed layout.
//
// The host rest is a cudaHostAlloc'd copy (PinnedLimbs) packed once here,
// not cudaHostRegister over the Parameters' own vectors: registering would
// save the copy, but an ec::G1Affine is x, y and an infinity flag padded to
// 104 B (G2: 200 B) where the kernels read packed 96 B (192 B) points with
// the identity as zeros. Registered memory could be neither DMA'd into the
// staging slots as is nor read by the kernels, and the padding would cross
// PCIe on every proof. (Parameters also stays pageable for the CPU prover.)
struct PlacedVector {
  DeviceBuffer<u32> device;
  PinnedLimbs host;
  std::size_t device_points = 0;
  PointSource source() const { return {device.get(), device_points, host.get()}; }
};

template <class HostPoint>
PlacedVector place_vector(cudaStream_t s, std::span<const HostPoint> points, std::size_t device_points,
                          const char* what) {
  constexpr std::size_t kLimbs = detail::kPackedPointLimbs<HostPoint>;
  PlacedVector v;
  v.device_points = device_points;
  v.device = DeviceBuffer<u32>(device_points * kLimbs, what);
  upload_points<HostPoint>(s, points.first(device_points), v.device.get());
  const std::span<const HostPoint> rest = points.subspan(device_points);
  v.host = PinnedLimbs(rest.size() * kLimbs, what);
  detail::pack_points<HostPoint>(rest, v.host.get());
  return v;
}

}  // namespace

// ---- ResidentSrs -----------------------------------------------------------

struct ResidentSrs::Impl {
  const groth16::Parameters* params = nullptr;
  int ordinal = 0;
  std::size_t bytes = 0;
  SrsPlacement placement;
  PlacedVector h, l, a, b_g1, b_g2;
};

std::size_t ResidentSrs::bytes_for(const groth16::Parameters& p) { return srs_bytes(points_for(p)); }

SrsPoints ResidentSrs::points_for(const groth16::Parameters& p) {
  SrsPoints n{};
  n[std::size_t(SrsVector::kH)] = p.h.size();
  n[std::size_t(SrsVector::kL)] = p.l.size();
  n[std::size_t(SrsVector::kA)] = p.a.size();
  n[std::size_t(SrsVector::kBG1)] = p.b_g1.size();
  n[std::size_t(SrsVector::kBG2)] = p.b_g2.size();
  return n;
}

ResidentSrs::ResidentSrs(Device& device, const groth16::Parameters& params, std::size_t budget_bytes,
                         SrsOverflow overflow) {
  const std::size_t need = bytes_for(params);
  const int ordinal = device.info().ordinal;
  DeviceGuard guard(ordinal);
  std::size_t device_budget = budget_bytes;
  if (overflow == SrsOverflow::kFail) {
    if (need > budget_bytes) {
      throw Error(ErrorKind::kOutOfDeviceMemory,
                  "resident SRS needs " + mib(need) + ", over its budget of " + mib(budget_bytes));
    }
    require_fits(device, need, "resident SRS");
  } else {
    device_budget = std::min(budget_bytes, usable_device_bytes(device));
  }
  auto impl = std::make_unique<Impl>();
  impl->params = &params;
  impl->ordinal = ordinal;
  impl->bytes = need;
  impl->placement = place_srs(points_for(params), device_budget);
  const SrsPlacement& p = impl->placement;
  detail::Stream stream;
  impl->h = place_vector<ec::G1Affine>(stream.get(), params.h, p[SrsVector::kH].device_points, "SRS h");
  impl->l = place_vector<ec::G1Affine>(stream.get(), params.l, p[SrsVector::kL].device_points, "SRS l");
  impl->a = place_vector<ec::G1Affine>(stream.get(), params.a, p[SrsVector::kA].device_points, "SRS a");
  impl->b_g1 = place_vector<ec::G1Affine>(stream.get(), params.b_g1, p[SrsVector::kBG1].device_points, "SRS b_g1");
  impl->b_g2 = place_vector<ec::G2Affine>(stream.get(), params.b_g2, p[SrsVector::kBG2].device_points, "SRS b_g2");
  impl_ = std::move(impl);
}

ResidentSrs::~ResidentSrs() {
  if (!impl_) return;
  DeviceGuard guard(impl_->ordinal);  // cudaFree on the owning device
  impl_.reset();
}
ResidentSrs::ResidentSrs(ResidentSrs&&) noexcept = default;
ResidentSrs& ResidentSrs::operator=(ResidentSrs&&) noexcept = default;

std::size_t ResidentSrs::bytes() const { return impl_->bytes; }
std::size_t ResidentSrs::device_bytes() const { return impl_->placement.device_bytes(); }
std::size_t ResidentSrs::pinned_bytes() const { return impl_->placement.host_bytes(); }
const SrsPlacement& ResidentSrs::placement() const { return impl_->placement; }
int ResidentSrs::device_ordinal() const { return impl_->ordinal; }
const groth16::Parameters& ResidentSrs::params() const { return *impl_->params; }

DeviceSrsBases ResidentSrs::device_bases() const {
  DeviceSrsBases d;
  d.h = impl_->h.source();
  d.l = impl_->l.source();
  d.a = impl_->a.source();
  d.a_count = impl_->params->a.size();
  d.b_g1 = impl_->b_g1.source();
  d.b_g2 = impl_->b_g2.source();
  d.b_count = impl_->params->b_g1.size();
  return d;
}

bool ResidentSrs::matches(const groth16::Parameters& p) const {
  const groth16::Parameters& q = *impl_->params;
  return &p == &q && p.h.size() == q.h.size() && p.l.size() == q.l.size() && p.a.size() == q.a.size() &&
         p.b_g1.size() == q.b_g1.size() && p.b_g2.size() == q.b_g2.size() && bytes_for(p) == impl_->bytes &&
         p.vk == q.vk;
}

std::size_t srs_device_budget_for(Device& device, const groth16::Parameters& params, std::size_t requested,
                                  std::size_t extra_working_bytes) {
  return srs_device_budget_for(params, requested, device.free_memory_bytes(), device.msm_tuning().scratch_limit_bytes,
                               extra_working_bytes);
}

std::size_t device_abc_working_bytes(const groth16::R1cs& r1cs) {
  // Block counts of the three split sources: 2 x 3 words per 512 elements each.
  const std::size_t split_counts_bytes = 3 * (r1cs.num_variables() / 512 + 2) * 2 * 3 * 4;
  return DeviceR1cs::bytes_for(r1cs) + r1cs.num_variables() * sizeof(ff::Fr) + split_counts_bytes;
}

std::size_t srs_device_budget_for(const groth16::Parameters& params, std::size_t requested,
                                  std::size_t device_free_bytes, std::size_t msm_scratch_limit_bytes,
                                  std::size_t extra_working_bytes) {
  // h holds m - 1 points for a domain of m.
  const std::size_t m = std::bit_ceil(params.h.size() + 1);
  const WitnessMsmPoints w{params.l.size(), params.a.size(), params.b_g1.size()};
  const std::size_t staging_bytes = 2 * groth16_kernels::kStreamedSplitChunkPoints * kSrsG2PointBytes;
  const std::size_t usable = usable_device_bytes(device_free_bytes);
  // Where the four-vector H stage would not fit beside the rest, the prover
  // runs the two-vector one (GpuProver::enqueue), so budget for that.
  std::size_t working = prover_working_bytes(m, w, msm_scratch_limit_bytes, staging_bytes) + extra_working_bytes;
  if (working > usable) {
    working = prover_working_bytes(m, w, msm_scratch_limit_bytes, staging_bytes, /*h_vectors=*/2) + extra_working_bytes;
  }
  return srs_device_budget(ResidentSrs::bytes_for(params), requested, usable, working);
}

// ---- ReplicatedSrs ---------------------------------------------------------

struct ReplicatedSrs::Impl {
  int ordinal = 0;
  std::size_t a_count = 0, b_count = 0, bytes = 0;
  SrsPlacement placement;
  PlacedVector h, l, a, b_g1, b_g2;
};

namespace {

// dst[0, count) = points[i mod points.size()]: the distinct points once over
// PCIe, then device-to-device copies doubling the filled prefix.
template <class HostPoint>
DeviceBuffer<u32> replicate_points(cudaStream_t s, std::span<const HostPoint> points, std::size_t count,
                                   const char* what) {
  constexpr std::size_t kPointLimbs = 2 * sizeof(points[0].x) / 4;
  DeviceBuffer<u32> buf(count * kPointLimbs, what);
  if (count == 0) return buf;
  if (points.empty()) throw Error(ErrorKind::kInvalidArgument, "ReplicatedSrs: no points to replicate");
  std::size_t have = std::min(points.size(), count);
  upload_points<HostPoint>(s, points.first(have), buf.get());
  while (have < count) {
    const std::size_t n = std::min(have, count - have);
    CUZK_CUDA_CHECK(
        cudaMemcpyAsync(buf.get() + have * kPointLimbs, buf.get(), n * kPointLimbs * 4, cudaMemcpyDeviceToDevice, s));
    have += n;
  }
  return buf;
}

// The same sequence's points [first, first + count) packed into pinned host
// memory: the distinct points once, then host copies doubling the prefix.
template <class HostPoint>
PinnedLimbs replicate_points_host(std::span<const HostPoint> points, std::size_t first, std::size_t count,
                                  const char* what) {
  constexpr std::size_t kPointLimbs = detail::kPackedPointLimbs<HostPoint>;
  PinnedLimbs buf(count * kPointLimbs, what);
  if (count == 0) return buf;
  if (points.empty()) throw Error(ErrorKind::kInvalidArgument, "ReplicatedSrs: no points to replicate");
  const std::size_t period = std::min(points.size(), count);
  for (std::size_t j = 0; j < period; ++j) {
    detail::pack_points<HostPoint>(points.subspan((first + j) % points.size(), 1), buf.get() + j * kPointLimbs);
  }
  // Copies of whole periods: `have` stays a multiple of points.size().
  std::size_t have = period;
  while (have < count) {
    const std::size_t n = std::min(have, count - have);
    std::memcpy(buf.get() + have * kPointLimbs, buf.get(), n * kPointLimbs * 4);
    have += n;
  }
  return buf;
}

template <class HostPoint>
PlacedVector replicate_placed(cudaStream_t s, std::span<const HostPoint> points, std::size_t count,
                              std::size_t device_points, const char* what) {
  PlacedVector v;
  v.device_points = device_points;
  v.device = replicate_points<HostPoint>(s, points, device_points, what);
  v.host = replicate_points_host<HostPoint>(points, device_points, count - device_points, what);
  return v;
}

}  // namespace

ReplicatedSrs::ReplicatedSrs(Device& device, std::span<const ec::G1Affine> g1, std::span<const ec::G2Affine> g2,
                             std::size_t h_count, std::size_t l_count, std::size_t a_count, std::size_t b_count,
                             std::size_t device_budget_bytes) {
  DeviceGuard guard(device.info().ordinal);
  SrsPoints points{};
  points[std::size_t(SrsVector::kH)] = h_count;
  points[std::size_t(SrsVector::kL)] = l_count;
  points[std::size_t(SrsVector::kA)] = a_count;
  points[std::size_t(SrsVector::kBG1)] = b_count;
  points[std::size_t(SrsVector::kBG2)] = b_count;
  const SrsPlacement p = place_srs(points, device_budget_bytes);
  require_fits(device, p.device_bytes(), "replicated SRS");
  auto impl = std::make_unique<Impl>();
  impl->ordinal = device.info().ordinal;
  impl->a_count = a_count;
  impl->b_count = b_count;
  impl->bytes = srs_bytes(points);
  impl->placement = p;
  detail::Stream stream;
  const cudaStream_t s = stream.get();
  impl->h = replicate_placed<ec::G1Affine>(s, g1, h_count, p[SrsVector::kH].device_points, "replicated SRS h");
  impl->l = replicate_placed<ec::G1Affine>(s, g1, l_count, p[SrsVector::kL].device_points, "replicated SRS l");
  impl->a = replicate_placed<ec::G1Affine>(s, g1, a_count, p[SrsVector::kA].device_points, "replicated SRS a");
  impl->b_g1 = replicate_placed<ec::G1Affine>(s, g1, b_count, p[SrsVector::kBG1].device_points, "replicated SRS b_g1");
  impl->b_g2 = replicate_placed<ec::G2Affine>(s, g2, b_count, p[SrsVector::kBG2].device_points, "replicated SRS b_g2");
  stream.sync();
  impl_ = std::move(impl);
}
ReplicatedSrs::~ReplicatedSrs() {
  if (!impl_) return;
  DeviceGuard guard(impl_->ordinal);  // cudaFree on the owning device
  impl_.reset();
}
ReplicatedSrs::ReplicatedSrs(ReplicatedSrs&&) noexcept = default;
ReplicatedSrs& ReplicatedSrs::operator=(ReplicatedSrs&&) noexcept = default;
std::size_t ReplicatedSrs::bytes() const { return impl_->bytes; }
const SrsPlacement& ReplicatedSrs::placement() const { return impl_->placement; }

DeviceSrsBases ReplicatedSrs::bases() const {
  DeviceSrsBases d;
  d.h = impl_->h.source();
  d.l = impl_->l.source();
  d.a = impl_->a.source();
  d.a_count = impl_->a_count;
  d.b_g1 = impl_->b_g1.source();
  d.b_g2 = impl_->b_g2.source();
  d.b_count = impl_->b_count;
  return d;
}

// GpuProver itself: gpu/groth16/staged_prove.cpp.

}  // namespace cuzk::gpu
