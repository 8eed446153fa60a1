// WindowPoSt and WinningPoSt jobs made ready for the partition pipeline
// (engine/filecoin_work.hpp): the request decoded, every sector's vanilla
// proof parsed (bincode FallbackPoStSectorProof) and checked natively
// (challenged leaves derived from the randomness, roots, comm_r; the Merkle
// paths are left to the circuit and hashed natively only to name a bad one
// when the partition fails), one partition circuit over its sectors.
#include <algorithm>
#include <memory>
#include <utility>

#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/post_prove.hpp"
#include "engine/work_detail.hpp"

namespace cuzk::engine::work_detail {

CircuitSetSpec post_spec(fc::PostProof proof) {
  const fc::PostProofInfo& info = fc::post_proof_info(proof);
  CircuitSetSpec s;
  s.id = post_set_id(proof);
  s.what = std::string(info.name);
  s.expected_inputs = 1 + std::size_t{info.circuit_sector_count} * (1 + info.circuit_challenge_count);
  s.compile = [proof] { return fc::compile_post_shape(proof); };
  s.official = fc::post_official_param_names(proof);
  s.dev = fc::post_dev_param_names(proof);
  return s;
}

std::optional<Error> screen_post(ProofKind kind, const FilecoinRequestHeader& h) {
  const std::optional<fc::PostProof> proof = fc::post_proof_from_id(h.registered_proof);
  if (!proof) return invalid("unknown registered PoSt proof " + std::to_string(h.registered_proof));
  const fc::PostProofInfo& info = fc::post_proof_info(*proof);
  const fc::PostKind want = kind == ProofKind::kWinningPost ? fc::PostKind::kWinning : fc::PostKind::kWindow;
  if (info.kind != want) {
    return invalid("registered proof " + std::string(info.name) + " is not a " +
                   (want == fc::PostKind::kWinning ? "WinningPoSt" : "WindowPoSt") + " proof");
  }
  if (h.randomness_bytes != 32)
    return invalid("randomness is " + std::to_string(h.randomness_bytes) + " bytes, not 32");
  if (h.vanilla_proofs == 0) return invalid("no vanilla proofs");
  if (h.vanilla_proofs > info.circuit_sector_count) {
    return invalid(std::to_string(h.vanilla_proofs) + " vanilla proofs; a " + std::string(info.name) +
                   " partition holds at most " + std::to_string(info.circuit_sector_count));
  }
  return std::nullopt;
}

Result<FilecoinWork> prepare_post(ProofKind kind, std::string_view input, ThreadPool& pool) {
  Result<PostRequest> req = decode_post_request(input);
  if (!req) return req.error();
  PostRequest& r = req.value();
  if (auto bad = screen_post(kind, {r.registered_proof, r.randomness.size(), r.vanilla_proofs.size()})) return *bad;
  const std::optional<fc::PostProof> proof = fc::post_proof_from_id(r.registered_proof);  // known: screened
  const fc::PostProofInfo& info = fc::post_proof_info(*proof);
  fc::Digest32 randomness{};
  std::copy(r.randomness.begin(), r.randomness.end(), randomness.begin());

  std::vector<fc::FallbackPostSectorProof> sectors;
  sectors.reserve(r.vanilla_proofs.size());
  for (std::size_t i = 0; i < r.vanilla_proofs.size(); ++i) {
    auto bad = input_errors("vanilla proof " + std::to_string(i) + ": ",
                            [&] { sectors.push_back(fc::parse_sector_proof(r.vanilla_proofs[i], *proof)); });
    if (bad) return *bad;
    r.vanilla_proofs[i] = {};  // parsed: its bytes are not needed any more
  }
  auto partition = std::make_shared<fc::PostPartition>();
  if (auto bad = input_errors("", [&] {
        *partition = fc::make_post_partition(*proof, randomness, fc::prover_id_from_actor(r.miner_id),
                                             r.partition_index, std::move(sectors));
        // The paths' ~235,000 Poseidon hashes (32 GiB WindowPoSt) are left
        // to the circuit, which the prover checks: explain_invalid names a
        // bad path if the partition then fails.
        fc::check_post_partition(*partition, &pool, fc::PostPaths::kLeaveToCircuit);
      }))
    return *bad;

  FilecoinWork w;
  w.set = post_spec(*proof);
  w.partitions = 1;
  w.public_inputs.push_back(fc::post_public_inputs(*partition));
  w.parallel_synthesis = true;
  w.critical_synthesis_pool = critical_pool_kind(kind);
  w.description = std::string(info.name) + ", " + std::to_string(partition->sectors.size()) + " sector(s), partition " +
                  std::to_string(partition->partition_index);
  std::shared_ptr<const fc::PostPartition> p = std::move(partition);
  w.explain_invalid = [p, pool = &pool]() -> std::optional<Error> {
    return input_errors("", [&] { fc::check_post_partition(*p, pool); });
  };
  w.synthesize = [p](std::uint32_t, ThreadPool* on, groth16::WitnessShape shape, groth16::Witness storage) {
    const fc::FallbackPostCircuit c = fc::post_partition_circuit(*p);
    return on != nullptr ? c.generate_witness(*on, std::move(storage))
                         : groth16::generate_witness(c, shape, std::move(storage));
  };
  return w;
}

}  // namespace cuzk::engine::work_detail

namespace cuzk::engine {

std::string post_set_id(circuits::filecoin::PostProof proof) {
  const circuits::filecoin::PostProofInfo& info = circuits::filecoin::post_proof_info(proof);
  return std::string(info.kind == circuits::filecoin::PostKind::kWinning ? "winning-post-" : "window-post-") +
         work_detail::size_label(info.sector_bytes);
}

}  // namespace cuzk::engine
