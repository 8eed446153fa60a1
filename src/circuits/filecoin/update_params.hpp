// SnapDeals (EmptySectorUpdate) parameters, challenges and public inputs,
// exactly as rust-fil-proofs storage-proofs-update derives them
// (src/{constants,challenges,vanilla,circuit}.rs).
//
// Sizes are in sector nodes (32 B). Per sector size:
//   partitions:         <= 8 KiB: 1, <= 32 KiB: 2, <= 16 MiB: 4, else 16
//   challenges/part.:   <= 16 MiB: 10, else 86
//   apex leaves/part.:  <= 8 KiB: 8, else 128
//   hs:                 <= 32 KiB: [1; 6], else [7, 8, 9, 10, 11, 12]
//   h_default = hs[3];  h_select = 1 << index of h in hs
//   tree R shapes:      1K 8-4-0, 2K 8-0-0, 4K 8-2-0, 8K 8-4-0, 16K 8-8-0,
//                       32K 8-8-2, 8M 8-0-0, 16M 8-2-0, 512M 8-0-0,
//                       32G 8-8-0, 64G 8-8-2; tree D is binary SHA-256.
// The randomness hash ("GR") is Poseidon arity 2 with neptune's custom
// domain tag HashType::Custom(Arbitrary(1)) = 1 * 2^40:
//   phi = GR(comm_d_new, comm_r_old); rho(high) = GR(phi, high);
//   digest_j = GR(comm_r_new, j), j = k * digests_per_partition + local j.
// A challenge takes rb = log2(nodes) - log2(partitions) random bits from a
// digest's LE bits (floor(254 / rb) challenges per digest) and has the
// partition index k appended above them (k << rb).
// Public inputs (after ONE): k | (h_select << log2(partitions)), comm_r_old,
// comm_d_new, comm_r_new.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "circuits/gadgets/por.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::filecoin {

using Fr = ff::Fr;

// rust-filecoin-proofs-api RegisteredUpdateProof (one per production size).
enum class UpdateProof : std::uint8_t {
  StackedDrg2KiBV1,
  StackedDrg8MiBV1,
  StackedDrg512MiBV1,
  StackedDrg32GiBV1,
  StackedDrg64GiBV1,
};

struct UpdateProofInfo {
  UpdateProof proof;
  std::string_view name;  // api enum variant, e.g. "StackedDrg32GiBV1"
  std::uint64_t sector_bytes;
  std::uint64_t nodes;
};

std::span<const UpdateProofInfo> update_proofs();
const UpdateProofInfo& update_proof_info(UpdateProof p);
std::optional<UpdateProof> update_proof_from_name(std::string_view name);
std::optional<UpdateProof> update_proof_from_sector_bytes(std::uint64_t bytes);
// The wire value (go-state-types abi.RegisteredUpdateProof: 2 KiB = 0 ..
// 64 GiB = 4, the order of UpdateProof).
std::optional<UpdateProof> update_proof_from_id(std::uint64_t registered_id);

// True for the sector sizes rfp allows (the 11 of constants.rs ALLOWED_SECTOR_SIZES).
bool update_nodes_allowed(std::uint64_t nodes);

// rfp constants.rs, for an allowed size (aborts otherwise where noted).
std::size_t update_partition_count(std::uint64_t nodes);
std::size_t update_challenge_count(std::uint64_t nodes);
std::size_t update_challenge_count_poseidon(std::uint64_t nodes);  // count * partitions
std::size_t update_apex_leaf_count(std::uint64_t nodes);
std::array<std::size_t, 6> update_hs(std::uint64_t nodes);
std::size_t update_h_default(std::uint64_t nodes);
// 1 << index of h in hs; nullopt when h is not allowed for the size.
std::optional<std::uint64_t> update_h_select(std::uint64_t nodes, std::size_t h);
gadgets::TreeShape update_tree_r_shape(std::uint64_t nodes);  // aborts on a bad size

// The derived bit lengths of rfp PublicParams::from_sector_size.
struct UpdateLayout {
  std::uint64_t nodes = 0;
  std::size_t challenge_count = 0;
  std::size_t challenge_bit_len = 0;  // log2(nodes)
  std::size_t partition_count = 0;
  std::size_t partition_bit_len = 0;
  std::size_t apex_leaf_count = 0;
  std::size_t apex_leaf_bit_len = 0;
  gadgets::TreeShape tree_r;
  std::size_t random_bits_per_challenge() const { return challenge_bit_len - partition_bit_len; }
  // Tree D levels from a leaf up to its apex leaf.
  std::size_t apex_leaf_height() const { return challenge_bit_len - partition_bit_len - apex_leaf_bit_len; }
};
UpdateLayout update_layout(std::uint64_t nodes);

// Poseidon arity 2 with the custom tag 2^40 (the "GR" hash).
const native::PoseidonConstants& gen_randomness_constants();
Fr update_phi(const Fr& comm_d_new, const Fr& comm_r_old);
Fr update_rho(const Fr& phi, std::uint32_t high);

// rfp Challenges::new(nodes, comm_r_new, k), all challenge_count of them.
std::vector<std::uint32_t> update_challenges(std::uint64_t nodes, const Fr& comm_r_new, std::size_t k);
// rfp Challenges::new_poseidon: count * partitions challenges over the whole sector.
std::vector<std::uint32_t> update_challenges_poseidon(std::uint64_t nodes, const Fr& comm_r_new);

// k | (h_select << partition_bit_len); nullopt when k or h is out of range.
std::optional<std::uint64_t> update_k_and_h_select(std::uint64_t nodes, std::size_t k, std::size_t h);
// The 4 public inputs after ONE (rfp circuit::PublicInputs::to_vec).
std::vector<Fr> update_public_inputs(std::uint64_t nodes, std::size_t k, std::size_t h, const Fr& comm_r_old,
                                     const Fr& comm_d_new, const Fr& comm_r_new);

}  // namespace cuzk::circuits::filecoin
