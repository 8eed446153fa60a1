// PoSt and SnapDeals requests for the daemon, built from the directories the
// offline generators write (`cuzkctl post gen` -> post.json + vanilla-*.bin,
// `cuzkctl update gen` -> update.json + partition-*.bin), with the local
// check of the daemon's answer: the proof must verify under the verifying key
// the daemon returned, against public inputs derived HERE from the manifest's
// public data (sector ids, comm_r, randomness, prover id; or the three
// commitments), never from anything the daemon computed.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/types.hpp"
#include "engine/views.hpp"

namespace cuzkctl {

struct FilecoinJob {
  cuzk::engine::JobRequest request;
  std::string what;  // "StackedDrgWindow2KiBV1_2: 2 sector(s), partition 0"
  std::function<bool(const cuzk::engine::ProofOutput& out, std::string& why)> verify;
};

struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// kind: kWindowPost / kWinningPost (post.json) or kSnapDeals (update.json).
// Throws ManifestError for an unreadable or malformed directory. The vanilla
// proofs are sent as they are: the daemon parses and checks them.
FilecoinJob load_filecoin_job(cuzk::engine::ProofKind kind, const std::filesystem::path& dir);

// A PoSt request from vanilla proof files as the Filecoin stack hands them
// (one bincode FallbackPoStSectorProof each) and its public data: the
// registered proof is the current one of the kind for the sector size.
struct PostFiles {
  std::uint64_t sector_bytes = 0;
  std::array<std::uint8_t, 32> randomness{};
  std::uint64_t prover_id = 0;  // miner actor id
  std::uint32_t partition = 0;  // WindowPoSt partition index
  std::vector<std::filesystem::path> files;
};
// Throws ManifestError for an unreadable file or an unsupported size.
FilecoinJob load_post_files(cuzk::engine::ProofKind kind, const PostFiles& f);

}  // namespace cuzkctl
