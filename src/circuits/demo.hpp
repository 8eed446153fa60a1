// The embedded demo circuit: a MiMC-style x^5 hash chain of adjustable size,
// proved by the README's walkthrough and used by benchmarks that need a
// circuit of a given domain size without Filecoin inputs.
//
//   x_{i+1} = (x_i + c_i)^5,  i = 0 .. rounds-1,   y = x_rounds
//
// Public inputs: x_0 and y (so inputs = ONE, x_0, y). Each round costs three
// multiplications, t2 = (x+c)^2, t4 = t2^2, x' = t4 * (x+c); the addition of
// c_i is free inside the linear combinations. Hence
//   constraints = 3 * rounds,  aux = 3 * rounds - 1  (the last x' is y),
//   rows incl. the 3 input constraints = 3 * rounds + 3.
// x -> x^5 is a permutation of Fr (gcd(5, r - 1) = 1), so the chain is a
// bijection of x_0 like MiMC's; it is a demo, not a vetted hash.
//
// Round constants: c_0 = 42, c_{i+1} = c_i^2 + 1 in Fr (fixed and cheap; any
// non-trivial sequence would do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "groth16/constraint_system.hpp"

namespace cuzk::circuits {

using groth16::Fr;

// The round constants c_0 .. c_{rounds-1}.
std::vector<Fr> demo_round_constants(std::size_t rounds);

// Native twin: y = chain(x_0).
Fr demo_chain(const Fr& x0, std::size_t rounds);

class DemoCircuit final : public groth16::Circuit {
 public:
  static constexpr std::size_t kConstraintsPerRound = 3;
  static constexpr std::size_t kNumInputs = 3;  // ONE, x_0, y

  // x0 absent: shape-only synthesis (compiling the R1cs).
  DemoCircuit(std::size_t rounds, std::optional<Fr> x0);

  // The largest round count whose rows (input constraints included) fit a
  // domain of 2^log_domain; at least 1.
  static std::size_t rounds_for_log_domain(unsigned log_domain);

  std::size_t rounds() const { return rounds_; }
  std::size_t num_constraints() const { return kConstraintsPerRound * rounds_; }

  void synthesize(groth16::ConstraintSystem& cs) const override;

 private:
  std::size_t rounds_;
  std::optional<Fr> x0_;
  std::vector<Fr> constants_;
};

}  // namespace cuzk::circuits
