#include "circuits/filecoin/seal_record.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "circuits/filecoin/derive.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "util/json_input.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using json = nlohmann::json;

const json& field(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) throw SealRecordError(where + ": not an object");
  auto it = obj.find(key);
  if (it == obj.end()) throw SealRecordError(where + "/" + key + ": missing");
  return *it;
}

std::uint64_t to_u64(const json& v, const std::string& where) {
  if (!v.is_number_unsigned()) throw SealRecordError(where + ": not an unsigned integer");
  return v.get<std::uint64_t>();
}

std::vector<std::uint8_t> to_bytes(const json& v, const std::string& where) {
  if (!v.is_array()) throw SealRecordError(where + ": not an array");
  std::vector<std::uint8_t> out;
  out.reserve(v.size());
  for (const json& b : v) {
    if (!b.is_number_unsigned() || b.get<std::uint64_t>() > 255) {
      throw SealRecordError(where + ": element is not a byte");
    }
    out.push_back(std::uint8_t(b.get<std::uint64_t>()));
  }
  return out;
}

template <std::size_t N>
std::array<std::uint8_t, N> to_array(const json& v, const std::string& where) {
  const auto bytes = to_bytes(v, where);
  if (bytes.size() != N) throw SealRecordError(where + ": expected " + std::to_string(N) + " bytes");
  std::array<std::uint8_t, N> out{};
  std::copy(bytes.begin(), bytes.end(), out.begin());
  return out;
}

template <class Bytes>
json bytes_json(const Bytes& b) {
  json a = json::array();
  for (std::uint8_t x : b) a.push_back(x);
  return a;
}

}  // namespace

SealRecord parse_seal_record(std::string_view line) {
  json j;
  try {
    j = parse_json_input(line);
  } catch (const JsonInputError& e) {
    throw SealRecordError(std::string("not valid JSON: ") + e.what());
  }
  SealRecord r;
  const json& cfg = field(j, "porep_config", "");
  r.sector_size = to_u64(field(cfg, "sector_size", "/porep_config"), "/porep_config/sector_size");
  const std::uint64_t partitions = to_u64(field(cfg, "partitions", "/porep_config"), "/porep_config/partitions");
  if (partitions == 0 || partitions > 64) throw SealRecordError("/porep_config/partitions: out of range");
  r.partitions = std::uint32_t(partitions);
  r.porep_id = to_array<32>(field(cfg, "porep_id", "/porep_config"), "/porep_config/porep_id");
  const json& api = field(cfg, "api_version", "/porep_config");
  if (!api.is_string()) throw SealRecordError("/porep_config/api_version: not a string");
  r.api_version = api.get<std::string>();
  // Absent in older records: no features.
  if (auto it = cfg.find("api_features"); it != cfg.end()) {
    if (!it->is_array()) throw SealRecordError("/porep_config/api_features: not an array");
    for (const json& f : *it) {
      if (!f.is_string()) throw SealRecordError("/porep_config/api_features: not a string");
      r.api_features.push_back(f.get<std::string>());
    }
  }
  r.comm_r = to_array<32>(field(j, "comm_r", ""), "/comm_r");
  r.comm_d = to_array<32>(field(j, "comm_d", ""), "/comm_d");
  r.prover_id = to_array<32>(field(j, "prover_id", ""), "/prover_id");
  r.sector_id = to_u64(field(j, "sector_id", ""), "/sector_id");
  r.ticket = to_array<32>(field(j, "ticket", ""), "/ticket");
  r.seed = to_array<32>(field(j, "seed", ""), "/seed");
  r.proof = to_bytes(field(j, "proof", ""), "/proof");
  return r;
}

std::string to_json_line(const SealRecord& r) {
  // ordered_json keeps the keys in rust-fil-proofs' struct order.
  nlohmann::ordered_json cfg;
  cfg["sector_size"] = r.sector_size;
  cfg["partitions"] = r.partitions;
  cfg["porep_id"] = bytes_json(r.porep_id);
  cfg["api_version"] = r.api_version;
  cfg["api_features"] = r.api_features;
  nlohmann::ordered_json j;
  j["porep_config"] = cfg;
  j["comm_r"] = bytes_json(r.comm_r);
  j["comm_d"] = bytes_json(r.comm_d);
  j["prover_id"] = bytes_json(r.prover_id);
  j["sector_id"] = r.sector_id;
  j["ticket"] = bytes_json(r.ticket);
  j["seed"] = bytes_json(r.seed);
  j["proof"] = bytes_json(r.proof);
  return j.dump();
}

std::string_view to_string(RecordStatus s) {
  switch (s) {
    case RecordStatus::kValid:
      return "valid";
    case RecordStatus::kInvalid:
      return "invalid";
    case RecordStatus::kSkipped:
      return "skipped";
  }
  return "unknown";
}

RecordCheck verify_seal_record(const SealRecord& r, const groth16::PreparedVerifyingKey& pvk) {
  if (!r.api_features.empty()) {
    // Synthetic PoRep derives its challenges differently (not handled).
    return {RecordStatus::kSkipped, "api feature " + r.api_features.front() + " not supported"};
  }
  const std::optional<SealProof> proof = seal_proof_from_porep_id(r.porep_id);
  if (!proof) return {RecordStatus::kSkipped, "porep_id is not a registered PoRep"};
  const SealProofInfo& info = seal_proof_info(*proof);
  if (info.sector_bytes != r.sector_size || info.partitions != r.partitions) {
    return {RecordStatus::kSkipped, "porep_id does not match sector size / partitions"};
  }
  // V1_0_0 records carry V1 porep_ids, V1_1_0 and V1_2_0 ones V1_1 ids: the
  // registered id fixes the graph's api version (1.2.0 only adds features).
  const bool v1 = info.api_version == ApiVersion::V1_0_0;
  if (v1 != (r.api_version == "V1_0_0")) {
    return {RecordStatus::kSkipped, "api_version " + r.api_version + " does not match porep_id"};
  }
  const Digest32 rid = replica_id(r.prover_id, r.sector_id, r.ticket, r.comm_d, r.porep_id);
  const auto inputs = porep_public_inputs(*proof, rid, r.comm_d, r.comm_r, r.seed);
  if (r.proof.size() != inputs.size() * groth16::kProofBytes) {
    return {RecordStatus::kInvalid, "proof is " + std::to_string(r.proof.size()) + " bytes"};
  }
  std::string detail;
  const groth16::VerifyResult v = verify_porep_proof(pvk, r.proof, inputs, &detail);
  return {v == groth16::VerifyResult::kValid ? RecordStatus::kValid : RecordStatus::kInvalid, detail};
}

}  // namespace cuzk::circuits::filecoin
