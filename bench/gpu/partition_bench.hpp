// bench_gpu partition: GPU time of one 32 GiB PoRep C2 partition's device
// stages (bench/gpu/partition_bench.cpp).
#pragma once

#include "gpu/gpu.hpp"

namespace cuzk::bench {

// Parses its own options from argv (--log-domain N, --full-width-percent P,
// --reps R) and prints a table; returns the process exit code.
int bench_partition(gpu::Device& device, int argc, char** argv);

}  // namespace cuzk::bench
