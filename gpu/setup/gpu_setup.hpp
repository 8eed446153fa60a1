// Development Groth16 parameters with the fixed-base multiplications on the
// GPU (library cuzk_gpu_setup). No CUDA types here: g++-compiled code includes it.
//
// The field work (Lagrange basis at tau, column evaluations, the scalars of
// every vector) is groth16::compute_setup_scalars, the same code the CPU
// generator runs; only the multiplications k * G move to the device, and the
// device returns the same affine points (fully reduced Montgomery
// coordinates), so the Parameters are bit-for-bit those of
// groth16::generate_parameters.
//
// Streaming: scalars go up in chunks of SetupOptions::chunk_points; while the
// device multiplies chunk k the host prepares chunk k + 1 and unpacks chunk
// k - 1 (two pinned buffers). Device memory: about chunk x 320 B (G1) or
// chunk x 608 B (G2) plus a 0.8 / 1.6 MB table: 2.6 GB at the default
// 2^22. Host memory: the Parameters plus the SetupScalars (12.5 GB at the
// 32 GiB PoRep shape) plus 2 x chunk x 224 B pinned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "ec/point.hpp"
#include "ff/fp.hpp"
#include "gpu/gpu.hpp"
#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu {

struct SetupOptions {
  // Scalars per device chunk (>= 1; tests force tiny chunks to cross boundaries).
  std::size_t chunk_points = std::size_t{1} << 22;
};

// Device bytes one fixed-base run of `points` (capped at the chunk) needs, G1 or G2.
std::size_t fixed_base_device_bytes(std::size_t points, bool g2, const SetupOptions& options = {});

// scalars[i] * base for every scalar (ff::Fr, Montgomery form as on the host),
// as affine points equal to ec::to_affine of the CPU product (the identity for
// a zero scalar). Throws Error{kOutOfDeviceMemory} when a chunk does not fit,
// Error{kInvalidArgument} for chunk_points == 0.
std::vector<ec::G1Affine> fixed_base_g1(Device& device, const ec::G1Affine& base, std::span<const ff::Fr> scalars,
                                        ThreadPool& pool, const SetupOptions& options = {});
std::vector<ec::G2Affine> fixed_base_g2(Device& device, const ec::G2Affine& base, std::span<const ff::Fr> scalars,
                                        ThreadPool& pool, const SetupOptions& options = {});

// Same Parameters (bit for bit) as groth16::generate_parameters for the same
// r1cs and toxic waste; the same SetupError cases. `progress(done, total)`
// runs on the calling thread after every chunk (same total as the CPU's).
// Checks the device's free memory before any field work and throws
// Error{kOutOfDeviceMemory} when the chunks cannot fit.
groth16::Parameters generate_parameters(
    Device& device, const groth16::R1cs& r1cs, const groth16::ToxicWaste& tw, ThreadPool& pool,
    const std::function<void(std::uint64_t done, std::uint64_t total)>& progress = {},
    const SetupOptions& options = {});

}  // namespace cuzk::gpu
