// bench_gpu field: throughput and latency of the device field multiplication
// forms (gpu/ff/field.cuh) in isolation (bench/gpu/field_bench.cu).
#pragma once

#include "gpu/gpu.hpp"

namespace cuzk::bench {

// Parses its own options from argv (--ops-per-thread K, --waves W, --reps R)
// and prints a table; returns the process exit code (1 when two forms disagree).
int bench_field(gpu::Device& device, int argc, char** argv);

}  // namespace cuzk::bench
