#include "circuits/filecoin/update_prove.hpp"

#include <cstdio>

#include "circuits/filecoin/graph.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::string stem(UpdateProof proof) {
  const auto s = update_tree_r_shape(update_proof_info(proof).nodes);
  const std::string id = update_params_identifier(proof);
  const Digest32 h = native::sha256({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  return "v28-empty-sector-update-merkletree-poseidon_hasher-" + std::to_string(s.base_arity) + "-" +
         std::to_string(s.sub_arity) + "-" + std::to_string(s.top_arity) + "-" + to_hex(h);
}

}  // namespace

std::string update_params_identifier(UpdateProof proof) {
  return "empty_sector_update::PublicParams{ sector_nodes: " + std::to_string(update_proof_info(proof).nodes) + " }";
}

ParamFileNames update_official_param_names(UpdateProof proof) {
  const std::string s = stem(proof);
  return {s + ".params", s + ".vk"};
}

ParamFileNames update_dev_param_names(UpdateProof proof) {
  const std::string s = stem(proof) + "-dev";
  return {s + ".params", s + ".vk"};
}

groth16::R1cs compile_update_shape(UpdateProof proof) {
  return groth16::compile(UpdateCircuit::blank(update_proof_info(proof).nodes, UpdateVariant::kSha256TreeD));
}

LoadedParams ensure_update_dev_params(UpdateProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                                      ThreadPool& pool, const ParamsGenerator& generate) {
  return ensure_dev_params(update_official_param_names(proof), update_dev_param_names(proof),
                           "SnapDeals " + std::string(update_proof_info(proof).name), dir, r1cs, pool, generate);
}

groth16::Witness synthesize_update_partition(const UpdateInputs& in, std::size_t k, ThreadPool* pool,
                                             groth16::WitnessShape shape, groth16::Witness storage) {
  try {
    const UpdateCircuit circuit = update_circuit_from_proof(in, k);
    if (pool != nullptr) return circuit.generate_witness(*pool, shape, std::move(storage));
    return groth16::generate_witness(circuit, shape, std::move(storage));
  } catch (const groth16::SynthesisError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kSynthesis, "partition " + std::to_string(k) + ": " + e.what());
  }
}

std::vector<std::vector<Fr>> update_public_inputs_all(const UpdateInputs& in) {
  std::vector<std::vector<Fr>> out;
  for (std::size_t k = 0; k < update_partition_count(in.nodes()); ++k)
    out.push_back(update_partition_public_inputs(in, k));
  return out;
}

std::vector<std::uint8_t> prove_update(const UpdateInputs& in, const groth16::Parameters& params,
                                       const groth16::R1cs& r1cs, groth16::Prover& prover, ThreadPool& pool) {
  const auto inputs = update_public_inputs_all(in);
  if (in.partitions.size() != inputs.size()) {
    throw PorepC2Error(PorepC2ErrorKind::kPartitionCount, std::to_string(in.partitions.size()) + " partition proofs");
  }
  std::vector<groth16::Witness> witnesses;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    witnesses.push_back(synthesize_update_partition(in, k, &pool));
    check_partition_witness(r1cs, witnesses.back(), inputs[k], k, pool);
  }
  std::vector<groth16::Blinding> blinding;
  for (std::size_t k = 0; k < witnesses.size(); ++k) blinding.push_back(groth16::random_blinding());
  const std::vector<groth16::Proof> proofs = prover.prove(params, r1cs, witnesses, blinding);
  std::vector<std::uint8_t> bytes = groth16::encode_proofs(proofs);
  std::string detail;
  if (verify_porep_proof(groth16::prepare_verifying_key(params.vk), bytes, inputs, &detail) !=
      groth16::VerifyResult::kValid) {
    throw PorepC2Error(PorepC2ErrorKind::kInvalidProof,
                       "the proofs do not verify under the parameters' key (" + detail + ")");
  }
  return bytes;
}

}  // namespace cuzk::circuits::filecoin
