// x_{i+1} = x_i^2 + i: public x_0 and x_n, aux x_1..x_{n-1}, one row per step,
// so corrupting aux k breaks row k first (and row k + 1). Small, with a known
// first failing row, for the satisfaction and evaluation tests.
#pragma once

#include <cstddef>

#include "groth16/constraint_system.hpp"

namespace cuzk::groth16::test {

struct SquareChain {
  std::size_t n;
  ff::Fr x0;
  void synthesize(ConstraintSystem& cs) const {
    ff::Fr x = x0;
    Variable v = cs.alloc_input("x0", x0);
    for (std::size_t i = 0; i < n; ++i) {
      ff::Fr next = x * x + ff::Fr::from_u64(i);
      Variable w = (i + 1 == n) ? cs.alloc_input("out", next) : cs.alloc(Name("x", i + 1), next);
      cs.enforce(Name("step", i), v, v, LinearCombination(w) - ff::Fr::from_u64(i) * cs.one());
      v = w;
      x = next;
    }
  }
};

}  // namespace cuzk::groth16::test
