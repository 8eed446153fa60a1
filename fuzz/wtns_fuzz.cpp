// circom .wtns witnesses (groth16/circom.cpp parse_circom_wtns). Only
// R1csError may come out.
#include "fuzz_util.hpp"
#include "groth16/circom.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    std::vector<ff::Fr> wires = groth16::parse_circom_wtns({data, size});
    fuzz::require(wires.size() * 32 <= size, "more wires than bytes");
  } catch (const groth16::R1csError&) {
  }
  return 0;
}
