// A circuit compiled to R1CS together with the witness of the same synthesis,
// for the GPU prover tests (they prove it on the GPU and on the CPU).
#pragma once

#include <utility>

#include "groth16/constraint_system.hpp"
#include "groth16/r1cs.hpp"

namespace cuzk::gpu::testing {

struct Compiled {
  groth16::R1cs r1cs;
  groth16::Witness w;
};

template <class C>
Compiled compile_with_witness(const C& circuit) {
  groth16::RecordingCs cs(groth16::RecordingCs::Values::kCollect);
  circuit.synthesize(cs);
  groth16::Witness w = cs.take_witness();
  return {cs.finish(), std::move(w)};
}

}  // namespace cuzk::gpu::testing
