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
#include <span>
#include <stdexcept>
#include <vector>

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

// The field half of the setup: every scalar that multiplies a generator, in
// the order of the parameter vectors. Shared by generate_parameters above and
// the GPU generator (gpu/setup/gpu_setup.hpp), which differ only in who does
// the fixed-base multiplications, so the two cannot drift apart.
//
// Memory: the A, B, C column evaluations are turned into a, b and l in place;
// the m - 1 h scalars are not stored (h_range computes any slice), so at the
// 32 GiB PoRep shape this holds about 3 x 130M x 32 B = 12.5 GB.
struct SetupScalars {
  ToxicWaste tw;
  std::size_t num_h = 0;  // m - 1
  Fr h0;                  // t(tau) / delta; h_i = h0 tau^i
  std::vector<Fr> ic;     // (beta A_k + alpha B_k + C_k) / gamma, inputs
  std::vector<Fr> l;      // (beta A_k + alpha B_k + C_k) / delta, aux
  std::vector<Fr> a;      // A_k(tau): inputs, then aux in a_aux density
  std::vector<Fr> b;      // B_k(tau): b_input density, then b_aux density (G1 and G2)

  // h_i for i in [begin, begin + out.size()) (begin + out.size() <= num_h), split over the pool.
  void h_range(std::size_t begin, std::span<Fr> out, ThreadPool& pool) const;
  // Fixed-base multiplications of the vectors (h, ic, l, a, b in G1, b in G2):
  // the `total` that progress reports.
  std::uint64_t total_multiplications() const { return num_h + ic.size() + l.size() + a.size() + 2 * b.size(); }
};
// Throws SetupError when tau is a root of unity of the domain or an aux
// variable is unconstrained (bellperson's UnconstrainedVariable).
SetupScalars compute_setup_scalars(const R1cs& r1cs, const ToxicWaste& tw, ThreadPool& pool);

// Building blocks of compute_setup_scalars, public for their tests.
namespace setup_detail {
// L_j(tau), j < m, for the domain of size m (a power of two):
// omega^j (tau^m - 1) / (m (tau - omega^j)). Throws SetupError when tau is in the domain.
std::vector<Fr> lagrange_at(const Fr& tau, std::size_t m, ThreadPool& pool);
// out[col] = sum over rows of coeff(row, col) * lagrange[row]: the matrix's
// column polynomials evaluated at tau. out has r1cs.num_variables() entries.
std::vector<Fr> evaluate_columns(const R1cs& r1cs, const CsrMatrix& mat, std::span<const Fr> lagrange,
                                 ThreadPool& pool);
}  // namespace setup_detail

}  // namespace cuzk::groth16
