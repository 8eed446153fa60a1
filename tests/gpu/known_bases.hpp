// MSM test bases with known discrete logs, shared by the GPU MSM tests: the
// expected MSM is then sum a_i log_i times the generator, one host scalar
// multiplication instead of a host MSM.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

#include "ec/point.hpp"
#include "ff/fp.hpp"
#include "host_ref.hpp"

namespace cuzk::gpu::testing {

template <class F>
struct KnownBases {
  std::vector<ec::Affine<F>> points;
  std::vector<ff::Fr> logs;  // points[i] = logs[i] * generator
};

// `distinct` points s_j G with s_j = s_0 + j q (one host addition each),
// replicated to n like the benchmarks' bases (so equal points share buckets);
// point 1 is the identity (log 0) when n > 1.
template <class F>
KnownBases<F> make_known_bases(std::mt19937_64& rng, const ec::Affine<F>& generator, std::size_t n,
                               std::size_t distinct) {
  const ff::Fr s0 = ff::Fr::random(rng), q = ff::Fr::random(rng);
  const ec::Jacobian<F> g = ref::from_affine(generator);
  const ec::Jacobian<F> qg = ref::mul(g, q.to_int());
  std::vector<ec::Jacobian<F>> jac(distinct);
  std::vector<ff::Fr> logs(distinct);
  jac[0] = ref::mul(g, s0.to_int());
  logs[0] = s0;
  for (std::size_t j = 1; j < distinct; ++j) {
    jac[j] = ref::add(jac[j - 1], qg);
    logs[j] = logs[j - 1] + q;
  }
  const std::vector<ec::Affine<F>> aff = ref::to_affine<F>(jac);
  KnownBases<F> b;
  b.points.resize(n);
  b.logs.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    b.points[i] = aff[i % distinct];
    b.logs[i] = logs[i % distinct];
  }
  if (n > 1) {
    b.points[1] = ec::Affine<F>::identity();
    b.logs[1] = ff::Fr::zero();
  }
  return b;
}

}  // namespace cuzk::gpu::testing
