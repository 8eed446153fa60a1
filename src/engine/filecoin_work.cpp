#include "engine/filecoin_work.hpp"

#include <memory>
#include <span>
#include <utility>

#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/post_prove.hpp"
#include "circuits/filecoin/update_prove.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "engine/filecoin_request.hpp"

namespace cuzk::engine {
namespace fc = circuits::filecoin;

namespace {

Error invalid(std::string message) { return Error{ErrorKind::kInvalidInput, std::move(message)}; }

// 2048 -> "2KiB", 34359738368 -> "32GiB".
std::string size_label(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

constexpr auto kLastPostProof = fc::PostProof::Window64GiBV1_2;

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

CircuitSetSpec snap_spec(fc::UpdateProof proof) {
  CircuitSetSpec s;
  s.id = snap_set_id(proof);
  s.what = "EmptySectorUpdate " + std::string(fc::update_proof_info(proof).name);
  s.expected_inputs = 5;  // ONE, k_and_h_select, comm_r_old, comm_d_new, comm_r_new
  s.compile = [proof] { return fc::compile_update_shape(proof); };
  s.official = fc::update_official_param_names(proof);
  s.dev = fc::update_dev_param_names(proof);
  return s;
}

// Runs f, turning the parsers' and checkers' typed exceptions into
// kInvalidInput (their messages name the sector or partition and the field).
template <class F>
std::optional<Error> input_errors(const std::string& prefix, F&& f) {
  try {
    f();
    return std::nullopt;
  } catch (const fc::PostError& e) {
    return invalid(prefix + e.what());
  } catch (const fc::UpdateError& e) {
    return invalid(prefix + e.what());
  }
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

std::optional<Error> screen_snap(const FilecoinRequestHeader& h) {
  const std::optional<fc::UpdateProof> proof = fc::update_proof_from_id(h.registered_proof);
  if (!proof) return invalid("unknown registered update proof " + std::to_string(h.registered_proof));
  const std::size_t want = fc::update_partition_count(fc::update_proof_info(*proof).nodes);
  if (h.vanilla_proofs != want) {
    return invalid(std::to_string(h.vanilla_proofs) + " partition proofs; " +
                   std::string(fc::update_proof_info(*proof).name) + " has " + std::to_string(want) + " partitions");
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
        fc::check_post_partition(*partition, &pool);
      }))
    return *bad;

  FilecoinWork w;
  w.set = post_spec(*proof);
  w.partitions = 1;
  w.public_inputs.push_back(fc::post_public_inputs(*partition));
  w.description = std::string(info.name) + ", " + std::to_string(partition->sectors.size()) + " sector(s), partition " +
                  std::to_string(partition->partition_index);
  std::shared_ptr<const fc::PostPartition> p = std::move(partition);
  w.synthesize = [p](std::uint32_t, ThreadPool* on, groth16::WitnessShape shape, groth16::Witness storage) {
    const fc::FallbackPostCircuit c = fc::post_partition_circuit(*p);
    return on != nullptr ? c.generate_witness(*on) : groth16::generate_witness(c, shape, std::move(storage));
  };
  return w;
}

Result<FilecoinWork> prepare_snap(std::string_view input) {
  Result<SnapRequest> req = decode_snap_request(input);
  if (!req) return req.error();
  const SnapRequest& r = req.value();
  if (auto bad = screen_snap({r.registered_proof, 0, r.vanilla_proofs.size()})) return *bad;
  const std::optional<fc::UpdateProof> proof = fc::update_proof_from_id(r.registered_proof);
  auto in = std::make_shared<fc::UpdateInputs>();
  if (auto bad = input_errors("", [&] {
        *in = fc::parse_update_inputs(*proof, r.comm_r_old, r.comm_d_new, r.comm_r_new, r.vanilla_proofs);
        fc::check_update(*in);
      }))
    return *bad;

  FilecoinWork w;
  w.set = snap_spec(*proof);
  w.partitions = static_cast<std::uint32_t>(in->partitions.size());
  w.public_inputs = fc::update_public_inputs_all(*in);
  w.description = "EmptySectorUpdate " + std::string(fc::update_proof_info(*proof).name) + ", " +
                  std::to_string(w.partitions) + " partition(s)";
  std::shared_ptr<const fc::UpdateInputs> shared = std::move(in);
  w.synthesize = [shared](std::uint32_t k, ThreadPool* on, groth16::WitnessShape shape, groth16::Witness storage) {
    return fc::synthesize_update_partition(*shared, k, on, shape, std::move(storage));
  };
  return w;
}

}  // namespace

std::string post_set_id(fc::PostProof proof) {
  const fc::PostProofInfo& info = fc::post_proof_info(proof);
  return std::string(info.kind == fc::PostKind::kWinning ? "winning-post-" : "window-post-") +
         size_label(info.sector_bytes);
}

std::string snap_set_id(fc::UpdateProof proof) {
  return "snap-deals-" + size_label(fc::update_proof_info(proof).sector_bytes);
}

std::optional<CircuitSetSpec> circuit_set_spec(std::string_view id) {
  for (int i = 0; i <= static_cast<int>(kLastPostProof); ++i) {
    const auto proof = static_cast<fc::PostProof>(i);
    if (post_set_id(proof) == id) return post_spec(proof);
  }
  for (const fc::UpdateProofInfo& info : fc::update_proofs())
    if (snap_set_id(info.proof) == id) return snap_spec(info.proof);
  return std::nullopt;
}

std::optional<Error> screen_filecoin_request(ProofKind kind, std::string_view input) {
  switch (kind) {
    case ProofKind::kWindowPost:
    case ProofKind::kWinningPost: {
      Result<FilecoinRequestHeader> h = peek_post_request(input);
      if (!h) return h.error();
      return screen_post(kind, h.value());
    }
    case ProofKind::kSnapDeals: {
      Result<FilecoinRequestHeader> h = peek_snap_request(input);
      if (!h) return h.error();
      return screen_snap(h.value());
    }
    default:
      return Error{ErrorKind::kInternal, "screen_filecoin_request: not a PoSt or SnapDeals kind"};
  }
}

std::optional<std::string> filecoin_set_of_request(ProofKind kind, std::string_view input) {
  switch (kind) {
    case ProofKind::kWindowPost:
    case ProofKind::kWinningPost: {
      Result<FilecoinRequestHeader> h = peek_post_request(input);
      if (!h || screen_post(kind, h.value())) return std::nullopt;
      return post_set_id(*fc::post_proof_from_id(h.value().registered_proof));
    }
    case ProofKind::kSnapDeals: {
      Result<FilecoinRequestHeader> h = peek_snap_request(input);
      if (!h || screen_snap(h.value())) return std::nullopt;
      return snap_set_id(*fc::update_proof_from_id(h.value().registered_proof));
    }
    default:
      return std::nullopt;
  }
}

Result<FilecoinWork> prepare_filecoin_work(ProofKind kind, std::string_view input, ThreadPool& pool) {
  switch (kind) {
    case ProofKind::kWindowPost:
    case ProofKind::kWinningPost:
      return prepare_post(kind, input, pool);
    case ProofKind::kSnapDeals:
      return prepare_snap(input);
    default:
      return Error{ErrorKind::kInternal, "prepare_filecoin_work: not a PoSt or SnapDeals kind"};
  }
}

}  // namespace cuzk::engine
