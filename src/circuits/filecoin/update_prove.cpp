#include "circuits/filecoin/update_prove.hpp"

#include <cstdio>

#include "circuits/filecoin/graph.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/setup.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::string stem(UpdateProof proof) {
  const auto s = update_tree_r_shape(update_proof_info(proof).nodes);
  const std::string id = update_params_identifier(proof);
  const Digest32 h = native::sha256({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  return "v28-empty-sector-update-merkletree-poseidon_hasher-" + std::to_string(s.base_arity) +
         "-" + std::to_string(s.sub_arity) + "-" + std::to_string(s.top_arity) + "-" + to_hex(h);
}

groth16::Parameters load_checked(const std::filesystem::path& path, const groth16::R1cs& r1cs,
                                 ThreadPool& pool) {
  groth16::Parameters p;
  try {
    p = groth16::read_params(path, pool);
    groth16::check_shape(
        p, groth16::ExpectedShape{r1cs.num_inputs(), r1cs.num_aux(), groth16::domain_size(r1cs),
                                  r1cs.num_inputs() + r1cs.a_aux_density().popcount(),
                                  r1cs.b_input_density().popcount() +
                                      r1cs.b_aux_density().popcount()});
  } catch (const groth16::ParamsError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kParams, path.string() + ": " + e.what());
  }
  return p;
}

}  // namespace

std::string update_params_identifier(UpdateProof proof) {
  return "empty_sector_update::PublicParams{ sector_nodes: " +
         std::to_string(update_proof_info(proof).nodes) + " }";
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
  return groth16::compile(
      UpdateCircuit::blank(update_proof_info(proof).nodes, UpdateVariant::kSha256TreeD));
}

LoadedParams ensure_update_dev_params(UpdateProof proof, const std::filesystem::path& dir,
                                      const groth16::R1cs& r1cs, ThreadPool& pool,
                                      const ParamsGenerator& generate) {
  LoadedParams out;
  const ParamFileNames official = update_official_param_names(proof);
  if (std::filesystem::exists(dir / official.params)) {
    out.params_path = dir / official.params;
    out.vk_path = dir / official.vk;
    out.params = load_checked(out.params_path, r1cs, pool);
    return out;
  }
  const ParamFileNames dev = update_dev_param_names(proof);
  out.params_path = dir / dev.params;
  out.vk_path = dir / dev.vk;
  out.origin = ParamsOrigin::kDevelopment;
  if (std::filesystem::exists(out.params_path)) {
    out.params = load_checked(out.params_path, r1cs, pool);
    return out;
  }
  std::fprintf(stderr,
               "WARNING: generating DEVELOPMENT Groth16 parameters for SnapDeals %s: the toxic "
               "waste was known to this process; never use them for Filecoin.\n",
               std::string(update_proof_info(proof).name).c_str());
  try {
    out.params = generate ? generate(r1cs, pool)
                          : groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool);
  } catch (const groth16::SetupError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kParams, std::string("setup: ") + e.what());
  }
  out.origin = ParamsOrigin::kDevelopmentGenerated;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  try {
    // The .vk first: the .params decides presence.
    groth16::write_vk(out.params.vk, out.vk_path);
    groth16::write_params(out.params, out.params_path);
  } catch (const std::exception& e) {
    std::error_code rm;
    std::filesystem::remove(out.params_path, rm);
    std::fprintf(stderr, "update: cannot write DEVELOPMENT parameters to %s (%s)\n", dir.c_str(),
                 e.what());
    out.persisted = false;
  }
  return out;
}

groth16::Witness synthesize_update_partition(const UpdateInputs& in, std::size_t k,
                                             ThreadPool* pool) {
  try {
    const UpdateCircuit circuit = update_circuit_from_proof(in, k);
    if (pool != nullptr) return circuit.generate_witness(*pool);
    groth16::WitnessCs cs;
    circuit.synthesize(cs);
    return cs.take_witness();
  } catch (const groth16::SynthesisError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kSynthesis,
                       "partition " + std::to_string(k) + ": " + e.what());
  }
}

std::vector<std::vector<Fr>> update_public_inputs_all(const UpdateInputs& in) {
  std::vector<std::vector<Fr>> out;
  for (std::size_t k = 0; k < update_partition_count(in.nodes()); ++k)
    out.push_back(update_partition_public_inputs(in, k));
  return out;
}

std::vector<std::uint8_t> prove_update(const UpdateInputs& in, const groth16::Parameters& params,
                                       const groth16::R1cs& r1cs, groth16::Prover& prover,
                                       ThreadPool& pool) {
  const auto inputs = update_public_inputs_all(in);
  if (in.partitions.size() != inputs.size()) {
    throw PorepC2Error(PorepC2ErrorKind::kPartitionCount,
                       std::to_string(in.partitions.size()) + " partition proofs");
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
