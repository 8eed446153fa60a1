// rust-fil-proofs' seal regression records (filecoin-proofs/tests/
// seal_regression_records-v16.json): one JSON object per line,
//
//   {"porep_config": {"sector_size": u64, "partitions": n, "porep_id": [32 u8],
//                     "api_version": "V1_0_0" | "V1_1_0" | "V1_2_0",
//                     "api_features": ["SyntheticPoRep", ...]},
//    "comm_r": [32], "comm_d": [32], "prover_id": [32], "sector_id": u64,
//    "ticket": [32], "seed": [32], "proof": [partitions x 192 u8]}
//
// and their verification: replica_id from (prover_id, sector_id, ticket,
// comm_d, porep_id), then the public inputs of every partition from
// (replica_id, comm_d, comm_r, seed), then one batch verification under a
// supplied verifying key. The records' proofs verify under the official .vk
// files; the same code checks our own proofs (written as records) under a
// development key.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "circuits/filecoin/registry.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/verifier.hpp"

namespace cuzk::circuits::filecoin {

using native::Digest32;

struct SealRecord {
  std::uint64_t sector_size = 0;
  std::uint32_t partitions = 0;
  PorepId porep_id{};
  std::string api_version;                // "V1_0_0", ...
  std::vector<std::string> api_features;  // e.g. "SyntheticPoRep"
  Digest32 comm_r{}, comm_d{}, prover_id{};
  std::uint64_t sector_id = 0;
  Digest32 ticket{}, seed{};
  std::vector<std::uint8_t> proof;  // partitions x 192
  bool operator==(const SealRecord&) const = default;
};

class SealRecordError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws SealRecordError naming the offending field.
SealRecord parse_seal_record(std::string_view json_line);
// One line, no trailing newline, keys in the order above.
std::string to_json_line(const SealRecord& r);

enum class RecordStatus : std::uint8_t {
  kValid,
  kInvalid,  // parsed and supported, but the proof does not verify
  kSkipped,  // not checkable here (synthetic PoRep, unknown porep_id, ...)
};
std::string_view to_string(RecordStatus s);

struct RecordCheck {
  RecordStatus status = RecordStatus::kSkipped;
  std::string detail;
};

// Derives the public inputs and batch-verifies the record's partitions.
// kWrongInputCount from the verifier (vk of another shape) is kInvalid with
// that detail.
RecordCheck verify_seal_record(const SealRecord& r, const groth16::PreparedVerifyingKey& pvk);

}  // namespace cuzk::circuits::filecoin
