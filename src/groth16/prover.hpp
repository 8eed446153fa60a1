// The Groth16 prover interface and its CPU back end (the reference every faster
// back end is tested against).
//
// The math is bellperson's / supraseal-c2's, step for step, so that proofs
// made with Filecoin's parameters verify under Filecoin's keys:
//   1. a, b, c = A.w, B.w, C.w over all constraints (input constraints included),
//      zero-padded to the domain size m;
//   2. H: iNTT each; coset NTT (g = 7); a <- (a.b - c) * (g^m - 1)^-1; coset
//      iNTT; keep the first m - 1 coefficients;
//   3. MSMs: H over h, L over l (aux), A over a (inputs + aux selected by the
//      a_aux density), B in G1 and G2 over b_g1 / b_g2 (inputs selected by
//      b_input density, aux by b_aux density);
//   4. A = alpha + A_ans + r delta_1, B = beta_2 + B2_ans + s delta_2,
//      C = s A_ans + r B1_ans + r s delta_1 + s alpha + r beta_1 + H + L.
#pragma once

#include <span>
#include <vector>

#include "ff/fp.hpp"
#include "groth16/constraint_system.hpp"
#include "groth16/params.hpp"
#include "groth16/proof.hpp"
#include "groth16/r1cs.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

// The prover's blinding scalars. Secret: they hide the witness.
struct Blinding {
  ff::Fr r, s;
};
// Fresh r, s from the kernel's CSPRNG.
Blinding random_blinding();

// The results of the witness-dependent MSMs of one instance, before blinding.
struct MsmResults {
  ec::G1Jacobian h, l, a, b_g1;
  ec::G2Jacobian b_g2;
};

class Prover {
 public:
  virtual ~Prover() = default;
  // Proves witnesses.size() instances of the circuit `r1cs` (for example the
  // partitions of one PoRep) with one blinding pair per instance.
  virtual std::vector<Proof> prove(const Parameters& params, const R1cs& r1cs, std::span<const Witness> witnesses,
                                   std::span<const Blinding> blinding) = 0;
};

// How a prover treats its witnesses.
struct ProveOptions {
  // kCheck: every constraint is checked while a, b, c are evaluated (fused,
  // evaluate_checked_into: +10-12% of the evaluation on SHA-256 rows
  // instead of +110-127% for a second pass over the R1cs); a witness that
  // does not satisfy the circuit throws UnsatisfiedError naming the first
  // bad row, before any NTT or MSM.
  SatisfactionCheck satisfaction = SatisfactionCheck::kSkip;
};

class CpuProver final : public Prover {
 public:
  explicit CpuProver(ThreadPool& pool, ProveOptions options = {}) : pool_(pool), options_(options) {}
  std::vector<Proof> prove(const Parameters& params, const R1cs& r1cs, std::span<const Witness> witnesses,
                           std::span<const Blinding> blinding) override;

 private:
  ThreadPool& pool_;
  ProveOptions options_;
};

// The stages, exposed so other back ends and tests can reuse or compare them.
// Coefficients of H (m - 1 of them) for one witness. With kCheck, throws
// UnsatisfiedError when w does not satisfy r1cs.
std::vector<ff::Fr> compute_h(const R1cs& r1cs, const Witness& w, ThreadPool& pool,
                              SatisfactionCheck check = SatisfactionCheck::kSkip);
MsmResults compute_msms(const Parameters& params, const R1cs& r1cs, const Witness& w, std::span<const ff::Fr> h,
                        ThreadPool& pool);
Proof assemble_proof(const VerifyingKey& vk, const MsmResults& m, const Blinding& rs);

// Checks the witness length and the parameter vector lengths against the
// circuit; throws ParamsError (kShapeMismatch) naming the first difference.
void check_inputs(const Parameters& params, const R1cs& r1cs, const Witness& w);

}  // namespace cuzk::groth16
