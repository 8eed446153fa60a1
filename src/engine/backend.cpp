#include "engine/backend.hpp"

namespace cuzk::engine {

std::uint64_t params_host_bytes(const groth16::Parameters& p) {
  const std::uint64_t g1 = p.h.size() + p.l.size() + p.a.size() + p.b_g1.size() + p.vk.ic.size();
  return g1 * sizeof(ec::G1Affine) + p.b_g2.size() * sizeof(ec::G2Affine);
}

std::uint64_t witness_bytes(const groth16::R1cs& r1cs) {
  return (static_cast<std::uint64_t>(r1cs.num_inputs()) + r1cs.num_aux()) * sizeof(ff::Fr);
}

std::uint64_t CpuBackend::host_bytes_per_instance(const groth16::R1cs& r1cs) const {
  // groth16::CpuProver: a, b, c over the domain plus one NTT scratch vector.
  return 4 * groth16::domain_size(r1cs) * sizeof(ff::Fr);
}

std::vector<groth16::Proof> CpuBackend::prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                              std::span<const groth16::Witness> witnesses,
                                              std::span<const groth16::Blinding> blinding,
                                              ProveBreakdown* breakdown) {
  groth16::CpuProver prover(math_);
  if (breakdown) *breakdown = ProveBreakdown{};
  return prover.prove(params, r1cs, witnesses, blinding);
}

}  // namespace cuzk::engine
