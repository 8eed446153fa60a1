// circom .r1cs constraint systems (groth16/circom.cpp parse_circom_r1cs).
// Only R1csError may come out; a system that parses has the wire count of
// its header.
#include "fuzz_util.hpp"
#include "groth16/circom.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    groth16::CircomR1cs c = groth16::parse_circom_r1cs({data, size});
    fuzz::require(c.r1cs.num_variables() == std::max<std::size_t>(1, c.header.n_wires), "r1cs wire count");
  } catch (const groth16::R1csError&) {
  }
  return 0;
}
