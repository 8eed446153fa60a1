// The partitioned kinds' preparation by kind (engine/filecoin_work.hpp): the
// submit-time screen, the batch key and prepare_filecoin_work route to the
// kind's file (porep_work.cpp, post_work.cpp, snap_work.cpp).
#include "engine/filecoin_work.hpp"

#include <utility>

#include "engine/work_detail.hpp"

namespace cuzk::engine {

namespace work_detail {

std::string size_label(std::uint64_t bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  while (unit < 4 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + kUnits[unit];
}

}  // namespace work_detail

using namespace work_detail;

namespace {

constexpr auto kLastPostProof = fc::PostProof::Window64GiBV1_2;

}  // namespace

std::optional<CircuitSetSpec> circuit_set_spec(std::string_view id) {
  for (const fc::SealProofInfo& info : fc::seal_proofs())
    if (porep_srs_id(info.proof) == id) return porep_spec(info.proof);
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
    case ProofKind::kPoRepC2:
      return prepare_porep_work(input, &pool);
    default:
      return Error{ErrorKind::kInternal, "prepare_filecoin_work: not a partitioned Filecoin kind"};
  }
}

}  // namespace cuzk::engine
