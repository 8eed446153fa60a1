#include "circuits/demo.hpp"

#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits {

using groth16::ConstraintSystem;
using groth16::LinearCombination;
using groth16::Name;
using groth16::Variable;

std::vector<Fr> demo_round_constants(std::size_t rounds) {
  std::vector<Fr> c;
  c.reserve(rounds);
  Fr x = Fr::from_u64(42);
  for (std::size_t i = 0; i < rounds; ++i) {
    c.push_back(x);
    x = x.square() + Fr::one();
  }
  return c;
}

Fr demo_chain(const Fr& x0, std::size_t rounds) {
  Fr x = x0;
  for (const Fr& c : demo_round_constants(rounds)) {
    Fr t = x + c;
    Fr t2 = t.square();
    x = t2.square() * t;
  }
  return x;
}

DemoCircuit::DemoCircuit(std::size_t rounds, std::optional<Fr> x0)
    : rounds_(rounds), x0_(x0), constants_(demo_round_constants(rounds)) {
  if (rounds_ == 0) {
    std::fprintf(stderr, "DemoCircuit: rounds must be >= 1\n");
    std::abort();
  }
}

std::size_t DemoCircuit::rounds_for_log_domain(unsigned log_domain) {
  // 3 * rounds + 3 <= 2^k.
  std::uint64_t m = std::uint64_t{1} << log_domain;
  if (m < kConstraintsPerRound + kNumInputs) return 1;
  return std::size_t((m - kNumInputs) / kConstraintsPerRound);
}

void DemoCircuit::synthesize(ConstraintSystem& cs) const {
  std::optional<Fr> x = x0_;
  Variable xv = cs.alloc_input("x0", x);
  for (std::size_t i = 0; i < rounds_; ++i) {
    auto ns = cs.ns("round", i);
    const Fr& c = constants_[i];
    // t = x + c as a linear combination; its value only when x is known.
    LinearCombination t = LinearCombination(xv) + LinearCombination::constant(c);
    std::optional<Fr> tv, t2v, t4v, next;
    if (x) {
      tv = *x + c;
      t2v = tv->square();
      t4v = t2v->square();
      next = *t4v * *tv;
    }
    Variable t2 = cs.alloc("t2", t2v);
    cs.enforce("t2 = t*t", t, t, t2);
    Variable t4 = cs.alloc("t4", t4v);
    cs.enforce("t4 = t2*t2", t2, t2, t4);
    Variable out = (i + 1 == rounds_) ? cs.alloc_input("y", next) : cs.alloc("x", next);
    cs.enforce("x' = t4*t", t4, t, out);
    xv = out;
    x = next;
  }
}

}  // namespace cuzk::circuits
