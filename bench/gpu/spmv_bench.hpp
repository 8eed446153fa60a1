// bench_gpu spmv: the device-resident R1CS mat-vec (gpu/groth16/r1cs_device.hpp)
// on a PoRep-shaped synthetic R1CS against the host's groth16::evaluate_into
// (bench/gpu/spmv_bench.cpp).
#pragma once

#include "gpu/gpu.hpp"

namespace cuzk::bench {

// Parses its own options from argv (--log-rows N, --reps R, --caps LIST,
// --host-threads T) and prints a table; returns the process exit code.
int bench_spmv(gpu::Device& device, int argc, char** argv);

}  // namespace cuzk::bench
