// A cryptographically secure 64-bit generator backed by the kernel's
// getrandom(2). Used for toxic waste in development setups and for the
// prover's blinding scalars r and s. Satisfies UniformRandomBitGenerator so
// Field::random(rng) works with it. Aborts if the kernel refuses randomness:
// proving with predictable r, s would leak the witness.
#pragma once

#include <cstdint>
#include <limits>

namespace cuzk {

class SecureRandom {
 public:
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()();

 private:
  std::uint64_t buf_[32];
  unsigned left_ = 0;
};

}  // namespace cuzk
