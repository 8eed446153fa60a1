// Shared helpers for the GPU tests: device detection and random inputs.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "gpu/gpu.hpp"

namespace cuzk::gpu::test {

// Every GPU test starts with this: CI has nvcc but no GPU, so the binary must
// run there and skip loudly.
#define CUZK_REQUIRE_GPU()                                \
  do {                                                    \
    if (::cuzk::gpu::device_count() == 0) {               \
      GTEST_SKIP() << "no CUDA device: GPU test skipped"; \
    }                                                     \
  } while (0)

// One Device per test binary would be a global; tests create their own (cheap
// after the first, which pays for context creation).
inline std::unique_ptr<Device> make_device() { return std::make_unique<Device>(0); }

inline std::mt19937_64 seeded_rng(std::uint64_t salt) {
  std::random_device rd;
  const std::uint64_t seed = (std::uint64_t(rd()) << 32) ^ rd() ^ salt;
  std::printf("[ seed %llu ]\n", static_cast<unsigned long long>(seed));
  return std::mt19937_64(seed);
}

}  // namespace cuzk::gpu::test
