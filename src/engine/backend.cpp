#include "engine/backend.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cuzk::engine {

std::uint64_t params_host_bytes(const groth16::Parameters& p) {
  const std::uint64_t g1 = p.h.size() + p.l.size() + p.a.size() + p.b_g1.size() + p.vk.ic.size();
  return g1 * sizeof(ec::G1Affine) + p.b_g2.size() * sizeof(ec::G2Affine);
}

std::uint64_t expected_params_host_bytes(const groth16::R1cs& r1cs) {
  const std::uint64_t inputs = r1cs.num_inputs(), aux = r1cs.num_aux();
  const std::uint64_t b = r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount();
  const std::uint64_t g1 =
      (groth16::domain_size(r1cs) - 1) + aux + (inputs + r1cs.a_aux_density().popcount()) + b + inputs;
  return g1 * sizeof(ec::G1Affine) + b * sizeof(ec::G2Affine);
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
                                              std::span<const groth16::Blinding> blinding, ProveBreakdown* breakdown) {
  groth16::CpuProver prover(math_);
  if (breakdown) *breakdown = ProveBreakdown{};
  return prover.prove(params, r1cs, witnesses, blinding);
}

// ---- Staged steps: the defaults prove in start() ------------------------------

namespace {

// References to the instance, and its proof once start() has run.
struct DefaultStaging final : InstanceStaging {
  const groth16::Parameters* params = nullptr;
  const groth16::R1cs* r1cs = nullptr;
  const groth16::Witness* witness = nullptr;
  groth16::Blinding blinding;
  groth16::SatisfactionCheck check = groth16::SatisfactionCheck::kSkip;
  std::optional<groth16::Proof> proof;
  ProveBreakdown breakdown;
};

DefaultStaging& as_default(InstanceStaging& s) {
  auto* d = dynamic_cast<DefaultStaging*>(&s);
  if (d == nullptr) std::abort();  // the engine checks can_use() first
  return *d;
}

}  // namespace

std::unique_ptr<InstanceStaging> DeviceBackend::make_staging() const { return std::make_unique<DefaultStaging>(); }

bool DeviceBackend::can_use(const InstanceStaging& staging) const {
  return dynamic_cast<const DefaultStaging*>(&staging) != nullptr;
}

void DeviceBackend::prepare(InstanceStaging& staging, const groth16::Parameters& params, const groth16::R1cs& r1cs,
                            const groth16::Witness& w, const groth16::Blinding& blinding,
                            groth16::SatisfactionCheck check) {
  DefaultStaging& d = as_default(staging);
  d.params = &params;
  d.r1cs = &r1cs;
  d.witness = &w;
  d.blinding = blinding;
  d.check = check;
  d.proof.reset();
  d.breakdown = ProveBreakdown{};
}

namespace {

// The default device step: one proof from `prove_one`, reported to `done`.
template <class ProveOne>
void run_default_step(DefaultStaging& d, const std::function<void(std::exception_ptr)>& done, ProveOne prove_one) {
  if (d.witness == nullptr) std::abort();  // not prepared
  std::exception_ptr error;
  try {
    std::vector<groth16::Proof> proofs = prove_one();
    if (proofs.size() != 1) {
      throw std::runtime_error("the back end returned " + std::to_string(proofs.size()) + " proofs for 1");
    }
    d.proof = proofs[0];
  } catch (...) {
    error = std::current_exception();
  }
  done(error);
}

}  // namespace

void DeviceBackend::start(InstanceStaging& staging, std::function<void(std::exception_ptr)> done) {
  DefaultStaging& d = as_default(staging);
  run_default_step(d, done, [&] {
    // prove() has no way to check: a back end that cannot honour a check
    // must not silently prove an unchecked witness.
    if (d.check == groth16::SatisfactionCheck::kCheck) {
      throw std::logic_error(name() + " cannot check satisfaction in its prove()");
    }
    return prove(*d.params, *d.r1cs, std::span(d.witness, 1), std::span(&d.blinding, 1), &d.breakdown);
  });
}

void CpuBackend::start(InstanceStaging& staging, std::function<void(std::exception_ptr)> done) {
  DefaultStaging& d = as_default(staging);
  run_default_step(d, done, [&] {
    groth16::CpuProver prover(math_, groth16::ProveOptions{.satisfaction = d.check});
    d.breakdown = ProveBreakdown{};
    return prover.prove(*d.params, *d.r1cs, std::span(d.witness, 1), std::span(&d.blinding, 1));
  });
}

groth16::Proof DeviceBackend::finish(InstanceStaging& staging, ProveBreakdown* breakdown) {
  DefaultStaging& d = as_default(staging);
  if (!d.proof) throw std::runtime_error("no proof: the device step did not complete");
  if (breakdown) *breakdown = d.breakdown;
  d.witness = nullptr;
  return *d.proof;
}

}  // namespace cuzk::engine
