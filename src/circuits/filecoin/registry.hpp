// Filecoin's registered PoRep (seal) proofs and their public parameters.
//
// Facts from rust-filecoin-proofs-api (src/registry.rs) and rust-fil-proofs
// (filecoin-proofs/src/constants.rs, parameters.rs):
//   - porep_id is 32 bytes: the registered-proof id as u64 LE in bytes 0..8,
//     the nonce (always 0) as u64 LE in bytes 8..16, zeros after. It keys the
//     DRG seed, the Feistel keys and the replica id.
//   - ids: 2KiB V1 = 0, 8MiB = 1, 512MiB = 2, 32GiB = 3, 64GiB = 4; the V1_1
//     names are 5..9. (Synthetic 10..14 and NI 15..19 are not handled here.)
//   - V1 proofs run under ApiVersion 1.0.0, V1_1 under 1.1.0. The api version
//     changes the DRG parent order (predecessor last vs first) and the
//     expander's u32 truncation (see graph.hpp).
//   - challenges per partition = ceil(minimum challenges / partitions).
//   - the vanilla-proof enum key in C1 JSON is always the V1 name of the size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace cuzk::circuits::filecoin {

using PorepId = std::array<std::uint8_t, 32>;

enum class ApiVersion : std::uint8_t { V1_0_0, V1_1_0 };

enum class SealProof : std::uint8_t {
  StackedDrg2KiBV1,
  StackedDrg8MiBV1,
  StackedDrg512MiBV1,
  StackedDrg32GiBV1,
  StackedDrg64GiBV1,
  StackedDrg2KiBV1_1,
  StackedDrg8MiBV1_1,
  StackedDrg512MiBV1_1,
  StackedDrg32GiBV1_1,
  StackedDrg64GiBV1_1,
};

struct SealProofInfo {
  SealProof proof;
  std::string_view name;        // serde unit-variant name, e.g. "StackedDrg32GiBV1_1"
  std::string_view v1_name;     // vanilla_proofs enum key for the size
  std::uint64_t registered_id;  // porep_id bytes 0..8
  ApiVersion api_version;
  std::uint64_t sector_bytes;
  std::uint64_t nodes;  // sector_bytes / 32
  std::uint32_t layers;
  std::uint32_t partitions;
  std::uint32_t challenges_per_partition;
  // Tree R and tree C shape: base arity 8, then optional sub and top levels.
  std::uint32_t base_arity;
  std::uint32_t sub_arity;      // 0 = none
  std::uint32_t top_arity;      // 0 = none
  std::uint32_t base_levels;    // octal levels inside one base tree
  std::uint32_t comm_d_levels;  // binary SHA-256 levels = log2(nodes)
};

// All ten proofs, V1 sizes first (index = SealProof value).
std::span<const SealProofInfo> seal_proofs();
const SealProofInfo& seal_proof_info(SealProof p);
std::optional<SealProof> seal_proof_from_name(std::string_view name);

// rust-filecoin-proofs-api RegisteredSealProof::porep_id.
PorepId porep_id(SealProof p);
PorepId porep_id_from_number(std::uint64_t registered_id, std::uint64_t nonce = 0);

}  // namespace cuzk::circuits::filecoin
