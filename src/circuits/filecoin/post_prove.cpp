#include "circuits/filecoin/post_prove.hpp"

#include <cstdio>

#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/proof.hpp"
#include "groth16/setup.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::string to_hex(const Digest32& d) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : d) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 15]);
  }
  return s;
}

std::string param_stem(PostProof proof) {
  const PostProofInfo& info = post_proof_info(proof);
  const std::string id = post_params_identifier(proof);
  const Digest32 h = native::sha256({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  return "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-" + std::to_string(info.tree.base_arity) +
         "-" + std::to_string(info.tree.sub_arity) + "-" + std::to_string(info.tree.top_arity) + "-" + to_hex(h);
}

groth16::Parameters load_checked(const std::filesystem::path& path, const groth16::R1cs& r1cs, ThreadPool& pool) {
  groth16::Parameters p;
  try {
    p = groth16::read_params(path, pool);
  } catch (const groth16::ParamsError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kParams, path.string() + ": " + e.what());
  }
  const groth16::ExpectedShape shape{r1cs.num_inputs(), r1cs.num_aux(), groth16::domain_size(r1cs),
                                     r1cs.num_inputs() + r1cs.a_aux_density().popcount(),
                                     r1cs.b_input_density().popcount() + r1cs.b_aux_density().popcount()};
  try {
    groth16::check_shape(p, shape);
  } catch (const groth16::ParamsError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kShapeMismatch, path.string() + ": " + e.what());
  }
  return p;
}

}  // namespace

std::string post_params_identifier(PostProof proof) {
  const PostProofInfo& info = post_proof_info(proof);
  return "FallbackPoSt::PublicParams{sector_size: " + std::to_string(info.sector_bytes) +
         ", challenge_count: " + std::to_string(info.circuit_challenge_count) +
         ", sector_count: " + std::to_string(info.circuit_sector_count) + "}";
}

ParamFileNames post_official_param_names(PostProof proof) {
  const std::string stem = param_stem(proof);
  return {stem + ".params", stem + ".vk"};
}

ParamFileNames post_dev_param_names(PostProof proof) {
  const std::string stem = param_stem(proof) + "-dev";
  return {stem + ".params", stem + ".vk"};
}

groth16::R1cs compile_post_shape(PostProof proof) {
  return groth16::compile(FallbackPostCircuit::blank(post_shape(proof)));
}

LoadedParams ensure_post_dev_params(PostProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                                    ThreadPool& pool) {
  LoadedParams out;
  const ParamFileNames official = post_official_param_names(proof);
  if (std::filesystem::exists(dir / official.params)) {
    out.params_path = dir / official.params;
    out.vk_path = dir / official.vk;
    out.params = load_checked(out.params_path, r1cs, pool);
    return out;
  }
  const ParamFileNames dev = post_dev_param_names(proof);
  out.params_path = dir / dev.params;
  out.vk_path = dir / dev.vk;
  out.origin = ParamsOrigin::kDevelopment;
  if (std::filesystem::exists(out.params_path)) {
    out.params = load_checked(out.params_path, r1cs, pool);
    return out;
  }
  std::fprintf(stderr,
               "\n*****************************************************************\n"
               "* WARNING: generating DEVELOPMENT Groth16 parameters for %s.\n"
               "* FOR DEVELOPMENT ONLY: this process knew the toxic waste.\n"
               "* Production needs the ceremony's %s.\n"
               "*****************************************************************\n\n",
               std::string(post_proof_info(proof).name).c_str(), official.params.c_str());
  try {
    out.params = groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool);
  } catch (const groth16::SetupError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kParams, std::string("setup: ") + e.what());
  }
  out.origin = ParamsOrigin::kDevelopmentGenerated;
  try {
    std::filesystem::create_directories(dir);
    groth16::write_vk(out.params.vk, out.vk_path);  // .vk first: the .params decides presence
    groth16::write_params(out.params, out.params_path);
  } catch (const std::exception& e) {
    std::error_code ec;
    std::filesystem::remove(out.params_path, ec);
    std::fprintf(stderr, "post: DEVELOPMENT parameters not written to %s (%s)\n", dir.c_str(), e.what());
    out.persisted = false;
  }
  return out;
}

std::vector<std::uint8_t> prove_post_partition(const PostPartition& p, const groth16::Parameters& params,
                                               const groth16::R1cs& r1cs, groth16::Prover& prover,
                                               ThreadPool& pool) {
  const std::vector<ff::Fr> inputs = post_public_inputs(p);
  groth16::Witness w;
  try {
    w = post_partition_circuit(p).generate_witness(pool);
  } catch (const groth16::SynthesisError& e) {
    throw PorepC2Error(PorepC2ErrorKind::kSynthesis, e.what());
  }
  check_partition_witness(r1cs, w, inputs, p.partition_index, pool);
  const groth16::Witness ws[1] = {std::move(w)};
  const groth16::Blinding blinding[1] = {groth16::random_blinding()};
  const std::vector<groth16::Proof> proofs = prover.prove(params, r1cs, ws, blinding);
  std::vector<std::uint8_t> bytes = groth16::encode_proofs(proofs);
  std::string detail;
  if (verify_post_proof(groth16::prepare_verifying_key(params.vk), bytes, inputs, &detail) !=
      groth16::VerifyResult::kValid) {
    throw PorepC2Error(PorepC2ErrorKind::kInvalidProof,
                       "the proof does not verify under the parameters' key (" + detail + ")");
  }
  return bytes;
}

groth16::VerifyResult verify_post_proof(const groth16::PreparedVerifyingKey& pvk,
                                        std::span<const std::uint8_t> proof_bytes,
                                        std::span<const ff::Fr> public_inputs, std::string* detail) {
  const std::vector<ff::Fr> in(public_inputs.begin(), public_inputs.end());
  return verify_porep_proof(pvk, proof_bytes, std::span<const std::vector<ff::Fr>>(&in, 1), detail);
}

}  // namespace cuzk::circuits::filecoin
