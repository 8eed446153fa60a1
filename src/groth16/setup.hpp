// Development parameter generation with bellperson's generator semantics.
//
// FOR DEVELOPMENT ONLY: a single party knows the toxic waste (tau, alpha, beta,
// gamma, delta) while it runs, so anyone who kept it could forge proofs.
// Filecoin's real parameters come from a multi-party ceremony.
//
// Semantics (bellperson groth16/generator.rs): evaluate every variable's
// A, B, C polynomials at tau through the Lagrange basis of the domain of size
// m; then
//   h_i  = tau^i t(tau) / delta            i < m - 1,  t(x) = x^m - 1
//   ic_k = (beta A_k + alpha B_k + C_k) / gamma   inputs
//   l_k  = (beta A_k + alpha B_k + C_k) / delta   aux (all must be non-zero:
//          an unconstrained aux variable is an error, as in bellperson)
//   a    = A_k(tau) for inputs and the aux in a_aux density
//   b    = B_k(tau) in G1 and G2 for b_input density then b_aux density.
//
// Cost: one fixed-base multiplication per vector element (m - 1 + aux + |a| +
// |b| in G1, |b| in G2), spread over the pool.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>

#include "ff/fp.hpp"
#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

struct ToxicWaste {
  ff::Fr tau, alpha, beta, gamma, delta;
};
// Fresh toxic waste from the kernel's CSPRNG.
ToxicWaste random_toxic_waste();

class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `progress(done, total)` is called from the calling thread between chunks
// of fixed-base multiplications (may be empty).
Parameters generate_parameters(const R1cs& r1cs, const ToxicWaste& tw, ThreadPool& pool,
                               const std::function<void(std::uint64_t, std::uint64_t)>& progress = {});

}  // namespace cuzk::groth16
