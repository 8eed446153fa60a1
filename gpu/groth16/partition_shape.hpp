// The shape of one 32 GiB PoRep C2 partition (/work/shared/docs/FILECOIN.md
// section 4: 130,278,869 constraints incl. 328 input constraints, 328 inputs,
// 130,169,893 aux; popcount a_aux 129,753,292, b_aux 33,112,281, b_input 1),
// scaled to a domain of 2^log_domain, as a synthetic circuit with exactly that
// density structure. Used by the partition benchmark (bench_gpu partition,
// which generates the witness and a, b, c directly at 2^27) and by its test
// (tests/gpu/groth16_shape_test.cpp, which synthesizes the circuit at 2^10).
//
// Aux variables, in allocation order:
//   v_i, p_i (i < nv, interleaved): v_i * v_i = p_i and p_i * 1 = p_i
//        (v in A and B: the b_aux density; p in A and C);
//   u_j (j < nu):                   u_j * 1 = u_j (A and C only);
//   c_k (k < nc):                   (u_k + u_k) * 1 = c_k (C only: the part
//        of aux missing from the a_aux density).
// Every constraint has B = v or the constant ONE, so b_input has ONE only (as
// in PoRep). Witness values (v, u, public inputs) follow a ValueMix: mostly
// bits like the SHA-256 / insertion gadgets' booleans, some full-width
// elements like labels and Poseidon states (an assumption: supraseal does not
// publish its tail sizes).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "ff/fp.hpp"
#include "groth16/constraint_system.hpp"

namespace cuzk::gpu::shape {

using ff::Fr;

inline constexpr int kPorepLogDomain = 27;
inline constexpr std::size_t kPorepAux = 130'169'893;
inline constexpr std::size_t kPorepAAux = 129'753'292;
inline constexpr std::size_t kPorepBAux = 33'112'281;
inline constexpr std::size_t kPorepInputs = 328;  // incl. ONE

struct PartitionCounts {
  int log_domain = 0;
  std::size_t inputs = 0;  // incl. ONE
  std::size_t nv = 0, nu = 0, nc = 0;
  std::size_t aux() const { return 2 * nv + nu + nc; }
  std::size_t a_aux() const { return 2 * nv + nu; }
  std::size_t b_aux() const { return nv; }
  std::size_t constraints() const { return 2 * nv + nu + nc; }  // plus one per input (added by the R1CS)
};

// PoRep's counts times 2^(log_domain - 27), rounded; exact at 27.
inline PartitionCounts partition_counts(int log_domain) {
  const double scale = std::ldexp(1.0, log_domain - kPorepLogDomain);
  auto scaled = [&](std::size_t x) { return static_cast<std::size_t>(std::llround(double(x) * scale)); };
  PartitionCounts c;
  c.log_domain = log_domain;
  c.inputs = std::clamp<std::size_t>(scaled(kPorepInputs), 2, kPorepInputs);
  const std::size_t aux = scaled(kPorepAux);
  c.nv = scaled(kPorepBAux);
  c.nc = std::max<std::size_t>(1, scaled(kPorepAux - kPorepAAux));
  c.nu = aux - 2 * c.nv - c.nc;
  return c;
}

// Witness values: P(0) = zero, P(1) = one, the rest uniform in Fr.
struct ValueMix {
  double zero = 0.45;
  double one = 0.45;
};

template <class Rng>
Fr draw_value(Rng& rng, const ValueMix& mix) {
  const double x = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  if (x < mix.zero) return Fr::zero();
  if (x < mix.zero + mix.one) return Fr::one();
  return Fr::random(rng);
}

// The synthetic circuit itself (small sizes: it holds its values).
class PartitionShapeCircuit final : public groth16::Circuit {
 public:
  template <class Rng>
  PartitionShapeCircuit(const PartitionCounts& counts, const ValueMix& mix, Rng& rng) : counts_(counts) {
    for (std::size_t i = 0; i + 1 < counts.inputs; ++i) public_.push_back(Fr::random(rng));
    for (std::size_t i = 0; i < counts.nv; ++i) v_.push_back(draw_value(rng, mix));
    for (std::size_t j = 0; j < counts.nu; ++j) u_.push_back(draw_value(rng, mix));
  }

  void synthesize(groth16::ConstraintSystem& cs) const override {
    using groth16::LinearCombination;
    using groth16::Name;
    const LinearCombination one(groth16::Variable::one());
    for (std::size_t i = 0; i < public_.size(); ++i) (void)cs.alloc_input(Name("in", i), public_[i]);
    for (std::size_t i = 0; i < v_.size(); ++i) {
      const groth16::Variable v = cs.alloc(Name("v", i), v_[i]);
      const groth16::Variable p = cs.alloc(Name("p", i), v_[i] * v_[i]);
      cs.enforce(Name("vv", i), LinearCombination(v), LinearCombination(v), LinearCombination(p));
      cs.enforce(Name("p1", i), LinearCombination(p), one, LinearCombination(p));
    }
    std::vector<groth16::Variable> us;
    for (std::size_t j = 0; j < u_.size(); ++j) {
      us.push_back(cs.alloc(Name("u", j), u_[j]));
      cs.enforce(Name("u1", j), LinearCombination(us.back()), one, LinearCombination(us.back()));
    }
    for (std::size_t k = 0; k < counts_.nc; ++k) {
      const groth16::Variable c = cs.alloc(Name("c", k), u_[k] + u_[k]);
      cs.enforce(Name("c", k), LinearCombination(groth16::Term{us[k], Fr::from_u64(2)}), one, LinearCombination(c));
    }
  }

 private:
  PartitionCounts counts_;
  std::vector<Fr> public_, v_, u_;
};

}  // namespace cuzk::gpu::shape
