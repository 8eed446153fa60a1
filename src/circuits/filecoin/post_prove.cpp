#include "circuits/filecoin/post_prove.hpp"

#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/proof.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::string param_stem(PostProof proof) {
  const PostProofInfo& info = post_proof_info(proof);
  const std::string id = post_params_identifier(proof);
  const Digest32 h = native::sha256({reinterpret_cast<const std::uint8_t*>(id.data()), id.size()});
  return "v28-proof-of-spacetime-fallback-merkletree-poseidon_hasher-" + std::to_string(info.tree.base_arity) + "-" +
         std::to_string(info.tree.sub_arity) + "-" + std::to_string(info.tree.top_arity) + "-" + to_hex(h);
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

groth16::R1cs compile_post_shape(PostProof proof) { return compile_post_shape(post_shape(proof)); }

groth16::R1cs compile_post_shape(const PostShape& shape) {
  if (shape.sectors <= 3) return groth16::compile(FallbackPostCircuit::blank(shape));
  // Slots share only ONE, and every blank slot after the first records the
  // same rows over its own variables: three are synthesized, the third is
  // checked against the second and copied for the rest (the 32 GiB
  // WindowPoSt's 2349 slots took ~7 min to synthesize on a 16-core host).
  PostShape three = shape;
  three.sectors = 3;
  groth16::RecordingCs cs;
  std::vector<groth16::RecordingCs::Mark> marks{cs.mark()};
  FallbackPostCircuit::blank(three).synthesize_parts(cs, [&](std::size_t) { marks.push_back(cs.mark()); });
  if (marks.size() != 4 || !cs.repeats(marks[1], marks[2], marks[3]) || !cs.repeat_last(marks[2], shape.sectors - 3)) {
    return groth16::compile(FallbackPostCircuit::blank(shape));  // not repetitive: every slot synthesized
  }
  return cs.finish();
}

LoadedParams ensure_post_dev_params(PostProof proof, const std::filesystem::path& dir, const groth16::R1cs& r1cs,
                                    ThreadPool& pool) {
  return ensure_dev_params(post_official_param_names(proof), post_dev_param_names(proof), post_proof_info(proof).name,
                           dir, r1cs, pool, {});
}

std::vector<std::uint8_t> prove_post_partition(const PostPartition& p, const groth16::Parameters& params,
                                               const groth16::R1cs& r1cs, groth16::Prover& prover, ThreadPool& pool) {
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
