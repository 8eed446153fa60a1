// PoRep C2 jobs made ready for the partition pipeline (declared in
// engine/filecoin_work.hpp): the C1 output parsed, its partition count
// checked against the registered proof, and each partition's public inputs
// derived from public data only (replica_id, comm_d, comm_r, seed), never
// from the witness.
#include <memory>
#include <string>
#include <utility>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "engine/engine_internal.hpp"
#include "engine/filecoin_work.hpp"
#include "engine/work_detail.hpp"

namespace cuzk::engine {

std::string porep_srs_id(fc::SealProof proof) {
  std::string_view name = fc::seal_proof_info(proof).name;  // "StackedDrg32GiBV1_1"
  constexpr std::string_view kPrefix = "StackedDrg";
  name.remove_prefix(kPrefix.size());
  return "porep-" + std::string(name.substr(0, name.rfind('V')));
}

namespace work_detail {

// The shape and parameter files are PorepC2's for the proof (ParamSets::get).
CircuitSetSpec porep_spec(fc::SealProof proof) {
  CircuitSetSpec spec;
  spec.id = porep_srs_id(proof);
  spec.what = std::string(fc::seal_proof_info(proof).name);
  spec.porep = proof;
  return spec;
}

}  // namespace work_detail

Result<FilecoinWork> prepare_porep_work(std::string_view c1_json, ThreadPool* pool) {
  return porep_call<FilecoinWork>([&] {
    auto c1 = std::make_shared<const fc::C1Output>(fc::parse_c1(c1_json, pool));
    const fc::SealProofInfo& info = c1->info();
    if (c1->vanilla_proofs.size() != info.partitions) {
      throw fc::PorepC2Error(fc::PorepC2ErrorKind::kPartitionCount, std::to_string(c1->vanilla_proofs.size()) +
                                                                        " partitions, " + std::string(info.name) +
                                                                        " has " + std::to_string(info.partitions));
    }
    FilecoinWork w;
    w.set = work_detail::porep_spec(c1->registered_proof);
    w.partitions = static_cast<std::uint32_t>(info.partitions);
    w.public_inputs = fc::porep_public_inputs(c1->registered_proof, c1->replica_id, c1->comm_d, c1->comm_r, c1->seed);
    w.description = std::string(info.name) + ", " + std::to_string(w.partitions) + " partition(s)";
    w.synthesize = [c1](std::uint32_t k, ThreadPool* on, groth16::WitnessShape shape, groth16::Witness storage) {
      return fc::synthesize_partition(*c1, k, on, shape, std::move(storage));
    };
    // The member's proofs verified together at the end, as a verifier reads
    // them (prove_c2's final check), besides each partition's own check.
    w.final_check = [inputs = w.public_inputs](const groth16::PreparedVerifyingKey& pvk,
                                               const std::vector<std::uint8_t>& proof_bytes) -> std::optional<Error> {
      std::string detail;
      if (fc::verify_porep_proof(pvk, proof_bytes, inputs, &detail) == groth16::VerifyResult::kValid)
        return std::nullopt;
      return Error{ErrorKind::kInternal, "the partition proofs do not batch-verify (" + detail + ")"};
    };
    return w;
  });
}

}  // namespace cuzk::engine
