// The witness MSMs' selection + split on the device (gpu/groth16/witness_split_device.cu).
//
// Why: with a, b, c from the device-resident R1CS the witness is on the device
// already, and the host's fused select + split (gpu/groth16/witness_split.hpp)
// was the last per-partition host pass: ~0.54 s on 16 idle cores for a 32 GiB
// PoRep partition (L 217, A 232, B 90 ms) and ~1-2.5 s beside 8 synthesis
// lanes, which paced the end-to-end pipeline (partitions 2.5 s apart for
// 1.57 s of GPU work, bench/RESULTS.md 2026-11-30). On the device the same
// passes read the 4.2 GB witness a few times from HBM (milliseconds).
//
// Same outputs as detail::SelectSplit, in the same order (the tests compare
// them): a source is a range of the unified witness (inputs ++ aux), each
// half filtered by a density bit vector (null: every element); the selected
// index counts the selected elements in witness order. Two kernels per MSM:
// count (per block of kSplitBlockThreads elements: selected, ones, tail)
// then, after an exclusive scan of the block counts, fill (ranks by warp
// ballots). The host needs the totals to size and launch the MSMs, so
// count_witness_split() ends with their copy to a pinned word array and the
// caller waits for it; fill_witness_split() is queued after.
// Internal to the GPU prover (CUDA types).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/cuda_rt.hpp"

namespace cuzk::gpu::groth16_kernels {

inline constexpr unsigned kSplitBlockThreads = 512;

// One witness MSM's source: witness indices [begin, end); index i < n_inputs
// is selected when every_input or by bit i of density_inputs, index i >=
// n_inputs when every_aux or by bit i - n_inputs of density_aux (device,
// 64-bit words covering the indices in range).
struct SplitSource {
  const std::uint32_t* witness = nullptr;  // device, 8 Montgomery limbs per Fr
  std::uint64_t begin = 0, end = 0;
  std::uint64_t n_inputs = 0;
  bool every_input = true, every_aux = true;
  const std::uint64_t* density_inputs = nullptr;
  const std::uint64_t* density_aux = nullptr;
};

// Per-source block counts and their scan: 2 x (blocks + 1) x 3 words.
std::size_t split_counts_words(const SplitSource& source);
// CUB scratch bytes for a scan over the block counts of `source`.
std::size_t split_scan_temp_bytes(const SplitSource& source);

// Queues the count pass and the scan for `source` on `stream`, and the copy of
// its totals {selected, ones, tail} to host_totals[0..3) (pinned). counts:
// split_counts_words(source) words; temp: split_scan_temp_bytes(source) bytes.
void count_witness_split(cudaStream_t stream, const SplitSource& source, std::uint32_t* counts, void* temp,
                         std::size_t temp_bytes, std::uint32_t* host_totals);

// Queues the fill pass (after count_witness_split on the same stream, same
// `counts`). split: ones[0, ones) = selected indices of the scalars equal to
// one, tail_idx / values[0, tail) = selected indices and values (8 limbs) of
// the other non-zero ones; else values[0, selected) = every selected scalar.
void fill_witness_split(cudaStream_t stream, const SplitSource& source, const std::uint32_t* counts, bool split,
                        std::uint32_t* ones, std::uint32_t* tail_idx, std::uint32_t* values);

}  // namespace cuzk::gpu::groth16_kernels
