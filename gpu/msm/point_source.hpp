// Where the packed affine bases of an MSM (or of the witness split's passes)
// are: a prefix in device memory, the rest in pinned host memory that the MSM
// streams to the device chunk by chunk (gpu/msm/base_stager.hpp). No CUDA
// types: the prover's public header carries these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

namespace cuzk::gpu {

struct PointSource {
  static constexpr std::size_t kAllPoints = std::numeric_limits<std::size_t>::max();

  // Points [0, device_points) at device (limbs_per_point 32-bit limbs each);
  // point i >= device_points at host + (i - device_points) * limbs_per_point,
  // page-locked (cudaHostAlloc) so that the copies are asynchronous DMA.
  const std::uint32_t* device = nullptr;
  std::size_t device_points = kAllPoints;
  const std::uint32_t* host = nullptr;

  PointSource() = default;
  // All points in device memory: what every caller that holds a device
  // pointer means, hence implicit.
  PointSource(const std::uint32_t* device_bases) : device(device_bases) {}  // NOLINT(google-explicit-constructor)
  PointSource(const std::uint32_t* device_prefix, std::size_t prefix_points, const std::uint32_t* host_rest)
      : device(device_prefix), device_points(prefix_points), host(host_rest) {}

  // Whether the first n points are all in device memory.
  bool on_device(std::size_t n) const { return n <= device_points; }
};

}  // namespace cuzk::gpu
