#include "cuzkctl/filecoin_job.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/post_prove.hpp"
#include "circuits/filecoin/update_prove.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "engine/filecoin_request.hpp"
#include "groth16/params.hpp"
#include "groth16/verifier.hpp"

namespace cuzkctl {
namespace {

namespace fc = cuzk::circuits::filecoin;
namespace eng = cuzk::engine;
using nlohmann::json;

std::vector<std::uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ManifestError("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

json read_manifest(const std::filesystem::path& path) {
  const std::vector<std::uint8_t> text = read_file(path);
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    throw ManifestError(path.string() + ": " + e.what());
  }
}

// 64 hex digits of the 32 LE bytes (what the generators write).
std::array<std::uint8_t, 32> unhex32(const std::string& s, const char* what) {
  if (s.size() != 64) throw ManifestError(std::string(what) + ": expected 64 hex digits");
  std::array<std::uint8_t, 32> d{};
  for (std::size_t i = 0; i < 64; ++i) {
    const char c = s[i];
    const int v = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (v < 0) throw ManifestError(std::string(what) + ": not hex");
    d[i / 2] = static_cast<std::uint8_t>(d[i / 2] | (v << (i % 2 == 0 ? 4 : 0)));
  }
  return d;
}

bool verify_with(const eng::ProofOutput& out, const std::vector<std::vector<cuzk::ff::Fr>>& inputs, std::string& why) {
  try {
    const auto pvk = cuzk::groth16::prepare_verifying_key(cuzk::groth16::decode_vk(out.vk_bytes));
    std::string detail;
    const auto verdict = fc::verify_porep_proof(pvk, out.proof, inputs, &detail);
    why = std::string(cuzk::groth16::to_string(verdict)) + (detail.empty() ? "" : ": " + detail);
    return verdict == cuzk::groth16::VerifyResult::kValid;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

// The job of a PoSt request whose fields are set, and its local check (the
// public inputs derived here from the same vanilla proofs).
FilecoinJob post_job_of(eng::ProofKind kind, fc::PostProof proof, eng::PostRequest r) {
  const fc::PostProofInfo& info = fc::post_proof_info(proof);
  FilecoinJob job;
  std::vector<fc::FallbackPostSectorProof> sectors;
  for (const auto& bytes : r.vanilla_proofs) {
    // For the local check only; the daemon does its own parse.
    try {
      sectors.push_back(fc::parse_sector_proof(bytes, proof));
    } catch (const fc::PostError&) {
    }
  }
  job.what = std::string(info.name) + ": " + std::to_string(r.vanilla_proofs.size()) + " sector(s), partition " +
             std::to_string(r.partition_index);
  fc::Digest32 randomness{};
  std::copy_n(r.randomness.begin(), std::min<std::size_t>(32, r.randomness.size()), randomness.begin());
  const std::size_t sent = r.vanilla_proofs.size();
  const fc::Digest32 prover_id = fc::prover_id_from_actor(r.miner_id);
  const std::uint32_t partition = r.partition_index;
  job.request.kind = kind;
  job.request.input = eng::encode_post_request(r);
  auto parsed = std::make_shared<std::vector<fc::FallbackPostSectorProof>>(std::move(sectors));
  job.verify = [proof, randomness, prover_id, partition, parsed, sent](const eng::ProofOutput& out, std::string& why) {
    if (parsed->size() != sent) {
      why = "a vanilla proof does not parse here";
      return false;
    }
    try {
      const fc::PostPartition p = fc::make_post_partition(proof, randomness, prover_id, partition, *parsed);
      return verify_with(out, {fc::post_public_inputs(p)}, why);
    } catch (const std::exception& e) {
      why = e.what();
      return false;
    }
  };
  return job;
}

FilecoinJob post_job(eng::ProofKind kind, const std::filesystem::path& dir) {
  const json m = read_manifest(dir / "post.json");
  try {
    const auto proof = fc::post_proof_from_name(m.at("registered_proof").get<std::string>());
    if (!proof) throw ManifestError("post.json: unknown registered_proof");
    eng::PostRequest r;
    r.registered_proof = fc::post_proof_info(*proof).registered_id;
    r.miner_id = m.at("actor_id").get<std::uint64_t>();
    r.partition_index = m.value("partition", 0u);
    const auto randomness = unhex32(m.at("randomness").get<std::string>(), "randomness");
    r.randomness.assign(randomness.begin(), randomness.end());
    for (const json& f : m.at("files")) r.vanilla_proofs.push_back(read_file(dir / f.get<std::string>()));
    return post_job_of(kind, *proof, std::move(r));
  } catch (const json::exception& e) {
    throw ManifestError(std::string("post.json: ") + e.what());
  }
}

FilecoinJob snap_job(const std::filesystem::path& dir) {
  const json m = read_manifest(dir / "update.json");
  FilecoinJob job;
  try {
    const auto proof = fc::update_proof_from_name(m.at("registered_proof").get<std::string>());
    if (!proof) throw ManifestError("update.json: unknown registered_proof");
    eng::SnapRequest r;
    r.registered_proof = static_cast<std::uint64_t>(*proof);  // go-state-types order (update_proof_from_id)
    r.comm_r_old = unhex32(m.at("comm_r_old").get<std::string>(), "comm_r_old");
    r.comm_d_new = unhex32(m.at("comm_d_new").get<std::string>(), "comm_d_new");
    r.comm_r_new = unhex32(m.at("comm_r_new").get<std::string>(), "comm_r_new");
    for (const json& f : m.at("partitions")) r.vanilla_proofs.push_back(read_file(dir / f.get<std::string>()));
    job.what = "EmptySectorUpdate " + std::string(fc::update_proof_info(*proof).name) + ": " +
               std::to_string(r.vanilla_proofs.size()) + " partition(s)";
    job.request.kind = eng::ProofKind::kSnapDeals;
    job.request.input = eng::encode_snap_request(r);
    // The public inputs need only the commitments and the partition count.
    std::shared_ptr<const std::vector<std::vector<cuzk::ff::Fr>>> inputs;
    try {
      const fc::UpdateInputs in =
          fc::parse_update_inputs(*proof, r.comm_r_old, r.comm_d_new, r.comm_r_new, r.vanilla_proofs);
      inputs = std::make_shared<const std::vector<std::vector<cuzk::ff::Fr>>>(fc::update_public_inputs_all(in));
    } catch (const fc::UpdateError&) {
    }
    job.verify = [inputs](const eng::ProofOutput& out, std::string& why) {
      if (!inputs) {
        why = "the partition proofs do not parse here";
        return false;
      }
      return verify_with(out, *inputs, why);
    };
  } catch (const json::exception& e) {
    throw ManifestError(std::string("update.json: ") + e.what());
  }
  return job;
}

}  // namespace

FilecoinJob load_filecoin_job(eng::ProofKind kind, const std::filesystem::path& dir) {
  if (kind == eng::ProofKind::kSnapDeals) return snap_job(dir);
  return post_job(kind, dir);
}

FilecoinJob load_post_files(eng::ProofKind kind, const PostFiles& f) {
  const fc::PostKind want = kind == eng::ProofKind::kWinningPost ? fc::PostKind::kWinning : fc::PostKind::kWindow;
  const std::optional<fc::PostProof> proof = fc::post_proof_for(want, f.sector_bytes);
  if (!proof) throw ManifestError("no PoSt proof for a sector of " + std::to_string(f.sector_bytes) + " bytes");
  eng::PostRequest r;
  r.registered_proof = fc::post_proof_info(*proof).registered_id;
  r.miner_id = f.prover_id;
  r.partition_index = f.partition;
  r.randomness.assign(f.randomness.begin(), f.randomness.end());
  for (const std::filesystem::path& file : f.files) r.vanilla_proofs.push_back(read_file(file));
  return post_job_of(kind, *proof, std::move(r));
}

}  // namespace cuzkctl
