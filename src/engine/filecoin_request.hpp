// The fields of a PoSt or SnapDeals request as ONE byte string
// (JobRequest::input), so that the journal, the request digest and the
// idempotency check treat every Filecoin kind like PoRep's C1 JSON.
//
// Encoding (little-endian, version 1):
//   PoSt:  u8 1 | u64 registered proof | u64 miner id | u32 partition index |
//          u32 randomness bytes | randomness | u32 n | n x (u32 bytes | bincode)
//   Snap:  u8 1 | u64 registered proof | comm_r_old 32 | comm_d_new 32 |
//          comm_r_new 32 | u32 n | n x (u32 bytes | bincode)
// The RPC layer encodes what the client sent (sizes unchecked: the job's
// parse reports them); decode checks only the framing, with typed errors.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/types.hpp"

namespace cuzk::engine {

struct PostRequest {
  std::uint64_t registered_proof = 0;                     // rust-filecoin-proofs-api RegisteredPoStProof
  std::uint64_t miner_id = 0;                             // actor id (the prover id is its LEB128)
  std::uint32_t partition_index = 0;                      // WindowPoSt; 0 for WinningPoSt
  std::vector<std::uint8_t> randomness;                   // 32 bytes (checked by the job)
  std::vector<std::vector<std::uint8_t>> vanilla_proofs;  // bincode FallbackPoStSectorProof each
};

struct SnapRequest {
  std::uint64_t registered_proof = 0;  // RegisteredUpdateProof
  std::array<std::uint8_t, 32> comm_r_old{}, comm_d_new{}, comm_r_new{};
  std::vector<std::vector<std::uint8_t>> vanilla_proofs;  // bincode PartitionProof per partition
};

std::string encode_post_request(const PostRequest& r);
std::string encode_snap_request(const SnapRequest& r);
// kInvalidInput naming what is wrong with the framing.
Result<PostRequest> decode_post_request(std::string_view bytes);
Result<SnapRequest> decode_snap_request(std::string_view bytes);

// What the framing says without copying a vanilla proof: the whole encoding
// is walked (same errors as decode), for the submit-time screen on the event
// loop. randomness_bytes is 0 for SnapDeals.
struct FilecoinRequestHeader {
  std::uint64_t registered_proof = 0;
  std::size_t randomness_bytes = 0;
  std::size_t vanilla_proofs = 0;
};
Result<FilecoinRequestHeader> peek_post_request(std::string_view bytes);
Result<FilecoinRequestHeader> peek_snap_request(std::string_view bytes);

}  // namespace cuzk::engine
