// FallbackPoSt (WindowPoSt and WinningPoSt): the registered proof types and
// the vanilla proofs as the Filecoin stack hands them to a prover.
//
// Registered types (rust-filecoin-proofs-api src/registry.rs, append-only):
//   0..4   StackedDrgWinning{2KiB,8MiB,512MiB,32GiB,64GiB}V1    ApiVersion 1.0.0
//   5..9   StackedDrgWindow{..}V1                               ApiVersion 1.0.0
//   10..14 StackedDrgWindow{..}V1_2 (FFI "V1_1")                ApiVersion 1.2.0
// PoStConfig (filecoin-proofs constants.rs): Window 10 challenges per sector,
// sector_count 2 (2 KiB .. 512 MiB), 2349 (32 GiB) or 2300 (64 GiB);
// Winning sector_count 1, challenge_count 66, which the circuit turns into
// 66 sector slots of 1 challenge (parameters.rs winning_post_setup_params).
// Tree R shape per size: 8-0-0 (2 KiB, 8 MiB, 512 MiB), 8-8-0 (32 GiB),
// 8-8-2 (64 GiB), Poseidon.
//
// One vanilla proof per sector: bincode (1.3 defaults: LE integers, u64
// sequence lengths, u32 enum tags, [u8; 32] raw) of
//   FallbackPoStSectorProof { sector_id: u64, comm_r: [32],
//     vanilla_proof: { sectors: Vec<SectorProof> } }
//   SectorProof { inclusion_proofs: Vec<MerkleProof>, comm_c: [32], comm_r_last: [32] }
//   MerkleProof = tag u32 0 Single { root, leaf, path: Vec<PathElement> }
//               |         1 Sub    { base: Vec<E>, sub: Vec<E>, root, leaf }
//               |         2 Top    { base, sub, top, root, leaf }
//   PathElement { hashes: Vec<[32]> (arity - 1), index: u64 (< arity) }
// (rfp storage-proofs-post fallback/vanilla.rs, storage-proofs-core
// merkle/proof.rs). Window and Winning proofs both hold ONE SectorProof with
// 10 resp. 66 inclusion proofs.
//
// parse_sector_proof reads untrusted bytes: every length is checked against
// the registered shape (exact counts) before anything is allocated, so the
// memory used is bounded by the expected proof size; truncation, trailing
// bytes, a wrong enum tag, a sibling count or index that does not fit the
// arity, and Poseidon values that are not canonical field elements are
// typed errors naming the sector and the field.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/registry.hpp"
#include "circuits/gadgets/por.hpp"

namespace cuzk::circuits::filecoin {

enum class PostKind : std::uint8_t { kWinning, kWindow };
// rfp ApiVersion as PoSt sees it: V1_0_0 and V1_1_0 behave the same.
enum class PostApiVersion : std::uint8_t { kV1_0, kV1_2 };

enum class PostProof : std::uint8_t {
  Winning2KiBV1,
  Winning8MiBV1,
  Winning512MiBV1,
  Winning32GiBV1,
  Winning64GiBV1,
  Window2KiBV1,
  Window8MiBV1,
  Window512MiBV1,
  Window32GiBV1,
  Window64GiBV1,
  Window2KiBV1_2,
  Window8MiBV1_2,
  Window512MiBV1_2,
  Window32GiBV1_2,
  Window64GiBV1_2,
};

struct PostProofInfo {
  PostProof proof;
  std::string_view name;  // e.g. "StackedDrgWindow32GiBV1_2"
  std::uint64_t registered_id;
  PostKind kind;
  PostApiVersion api_version;
  std::uint64_t sector_bytes;
  std::uint64_t nodes;                   // leaves of tree R
  gadgets::TreeShape tree;               // tree R shape (Poseidon)
  std::uint32_t base_levels;             // levels inside one base tree
  std::uint32_t config_sector_count;     // PoStConfig sector_count
  std::uint32_t config_challenge_count;  // PoStConfig challenge_count
  // What one partition circuit holds (Winning: 66 x 1).
  std::uint32_t circuit_sector_count;
  std::uint32_t circuit_challenge_count;
  // Inclusion proofs in one sector's vanilla proof (10 / 66).
  std::uint32_t vanilla_challenges() const { return config_challenge_count; }
  // Path levels of one inclusion proof.
  std::uint32_t path_levels() const { return base_levels + (tree.sub_arity ? 1 : 0) + (tree.top_arity ? 1 : 0); }
};

std::span<const PostProofInfo> post_proofs();
const PostProofInfo& post_proof_info(PostProof p);
std::optional<PostProof> post_proof_from_name(std::string_view name);
std::optional<PostProof> post_proof_from_id(std::uint64_t registered_id);
// The type a current node registers: Winning*V1, Window*V1_2.
std::optional<PostProof> post_proof_for(PostKind kind, std::uint64_t sector_bytes);

struct PostSectorProof {  // rfp fallback::SectorProof
  std::vector<MerkleProof> inclusion_proofs;
  Digest32 comm_c{};
  Digest32 comm_r_last{};
  bool operator==(const PostSectorProof&) const = default;
};

struct FallbackPostSectorProof {  // rfp filecoin-proofs types FallbackPoStSectorProof
  std::uint64_t sector_id = 0;
  Digest32 comm_r{};
  std::vector<PostSectorProof> sectors;  // always one
  bool operator==(const FallbackPostSectorProof&) const = default;
};

enum class PostErrorKind : std::uint8_t {
  // Malformed input (the request cannot be proved as given):
  kTruncated,        // the bytes end inside a field
  kTrailingBytes,    // bytes after the proof
  kLength,           // a sequence length differs from the registered shape
  kProofShape,       // MerkleProof enum tag is not the tree shape's (or unknown)
  kPathArity,        // a path index >= arity
  kNonCanonical,     // a Poseidon value >= r
  kUnknownProof,     // registered proof / kind / size not supported
  kSectorCount,      // no sectors, or more than one partition holds
  kDuplicateSector,  // the same sector id twice in one request
  kRandomness,       // randomness is not 32 bytes
  // Invalid proof (well formed, but it does not prove what it should):
  kCommRMismatch,      // comm_r != Poseidon2(comm_c, comm_r_last)
  kRootMismatch,       // an inclusion proof's root != comm_r_last
  kChallengeMismatch,  // a path opens another leaf than the derived challenge
  kPathMismatch,       // a path does not hash to its root
};
std::string_view to_string(PostErrorKind k);
// True for the kinds that mean "well formed but not valid".
bool is_invalid_proof(PostErrorKind k);

class PostError : public std::runtime_error {
 public:
  // sector_id: the sector concerned (nullopt: the request); field: a path
  // such as "vanilla_proof.sectors[0].inclusion_proofs[3].base_proof[2].index".
  PostError(PostErrorKind kind, std::optional<std::uint64_t> sector_id, std::string field, const std::string& detail);
  PostErrorKind kind() const { return kind_; }
  const std::optional<std::uint64_t>& sector_id() const { return sector_id_; }
  const std::string& field() const { return field_; }

 private:
  PostErrorKind kind_;
  std::optional<std::uint64_t> sector_id_;
  std::string field_;
};

// Parses one sector's bincode vanilla proof for `proof`; throws PostError.
FallbackPostSectorProof parse_sector_proof(std::span<const std::uint8_t> bytes, PostProof proof);
// bincode serialisation (byte-identical to rfp's for the same value).
std::vector<std::uint8_t> to_bincode(const FallbackPostSectorProof& p);

}  // namespace cuzk::circuits::filecoin
