// A demo circuit with parameters, a good witness and a broken copy, for the
// satisfaction-check tests of the GPU prover (host and device evaluation).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <optional>

#include "circuits/demo.hpp"
#include "ff/fp.hpp"
#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu::test {

struct UnsatisfiedDemo {
  groth16::R1cs r1cs;
  groth16::Parameters params;
  groth16::Witness good, bad;
  std::size_t bad_row = 0;  // the smallest failing row, per groth16::first_unsatisfied
};

// The demo circuit of domain 2^log_domain and witness seed `seed`; `bad` adds
// one to the aux values at the given fractions of the aux vector (e.g. 1/2).
inline UnsatisfiedDemo make_unsatisfied_demo(unsigned log_domain, std::uint64_t seed,
                                             std::initializer_list<double> broken_at, ThreadPool& pool) {
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
  UnsatisfiedDemo d{groth16::compile(circuits::DemoCircuit(rounds, std::nullopt)), {}, {}, {}, 0};
  d.params = groth16::generate_parameters(d.r1cs, groth16::random_toxic_waste(), pool);
  d.good = groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)));
  d.bad = d.good;
  for (double at : broken_at) d.bad.aux.at(std::size_t(double(d.bad.aux.size()) * at)) += ff::Fr::one();
  const std::optional<std::size_t> row = groth16::first_unsatisfied(d.r1cs, d.bad.inputs, d.bad.aux, pool);
  if (!row) std::abort();  // the corruption must break a row
  d.bad_row = *row;
  return d;
}

// The row of the groth16::UnsatisfiedError f() throws, nullopt when it returns.
template <class F>
std::optional<std::size_t> unsatisfied_row(F&& f) {
  try {
    f();
  } catch (const groth16::UnsatisfiedError& e) {
    return e.row();
  }
  return std::nullopt;
}

}  // namespace cuzk::gpu::test
