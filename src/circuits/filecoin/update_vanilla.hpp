// SnapDeals vanilla proofs: one bincode `PartitionProof` per partition
// (storage-proofs-update src/vanilla.rs), parsed into typed structs, checked
// natively, and turned into the partition circuit.
//
// bincode 1.3 defaults: LE integers, Vec lengths u64, enum tags u32, [u8;32]
// raw, usize as u64.
//   PartitionProof = comm_c[32], apex_leafs: Vec<[32]>, challenge_proofs: Vec<
//     {proof_r_old: MerkleProof (tree R), proof_d_new: MerkleProof (SHA-256,
//      binary, Single), proof_r_new: MerkleProof (tree R)}>
//   MerkleProof = u32 tag, then
//     0 Single: root[32], leaf[32], path
//     1 Sub:    base path, sub path, root[32], leaf[32]
//     2 Top:    base path, sub path, top path, root[32], leaf[32]
//   path = Vec<{hashes: Vec<[32]> (arity - 1), index: u64}>, leaf to root.
// The parser knows the shape each field must have for the registered update
// proof, checks every length against it before allocating, and rejects
// trailing bytes: hostile input yields an UpdateError, never a crash.
//
// API for a prover (a daemon job):
//   parse_update_inputs -> update_partition_public_inputs(k) ->
//   update_circuit_from_proof(k) -> synthesize / prove.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/update_circuit.hpp"
#include "circuits/filecoin/update_params.hpp"

namespace cuzk::circuits::filecoin {

struct UpdateChallengeProof {
  MerkleProof proof_r_old;
  MerkleProof proof_d_new;
  MerkleProof proof_r_new;
  bool operator==(const UpdateChallengeProof&) const = default;
};

struct PartitionProof {
  Digest32 comm_c{};
  std::vector<Digest32> apex_leafs;
  std::vector<UpdateChallengeProof> challenge_proofs;
  bool operator==(const PartitionProof&) const = default;
};

// Everything one SnapDeals proof request carries.
struct UpdateInputs {
  UpdateProof proof = UpdateProof::StackedDrg2KiBV1;
  Digest32 comm_r_old{}, comm_d_new{}, comm_r_new{};
  std::vector<PartitionProof> partitions;
  std::size_t h = 0;  // h_default of the size unless told otherwise
  std::uint64_t nodes() const { return update_proof_info(proof).nodes; }
};

enum class UpdateErrorKind : std::uint8_t {
  Truncated,          // the bytes end inside a field
  TrailingBytes,      // bytes left after the PartitionProof
  LengthMismatch,     // a Vec length differs from the size's shape
  ProofShape,         // MerkleProof tag is not the tree's Single/Sub/Top
  PathArity,          // an index >= arity
  PartitionCount,     // number of partition proofs != partitions of the size
  UnknownProof,       // unregistered update proof
  BadH,               // h not allowed for the size
  NonCanonicalField,  // a Poseidon-domain value >= r
  RootMismatch,       // roots disagree with comm_c / comm_r_* / comm_d_new
  ChallengeMismatch,  // a path's leaf index is not the derived challenge
  PathMismatch,       // a Merkle path does not hash to its root
  EncodingMismatch,   // leaf_r_new != leaf_r_old + leaf_d_new * rho
  ApexMismatch,       // apex leaves disagree with the tree D paths
};
std::string_view to_string(UpdateErrorKind k);

class UpdateError : public std::runtime_error {
 public:
  UpdateError(UpdateErrorKind kind, std::optional<std::size_t> partition, std::optional<std::size_t> challenge,
              std::string field, const std::string& detail);
  UpdateErrorKind kind() const { return kind_; }
  std::optional<std::size_t> partition() const { return partition_; }
  std::optional<std::size_t> challenge() const { return challenge_; }
  // e.g. "proof_r_old.base[3].hashes"
  const std::string& field() const { return field_; }

 private:
  UpdateErrorKind kind_;
  std::optional<std::size_t> partition_, challenge_;
  std::string field_;
};

// Parses partition `partition`'s bincode for `proof` (throws UpdateError).
PartitionProof parse_partition_proof(std::span<const std::uint8_t> bytes, UpdateProof proof, std::size_t partition);
std::vector<std::uint8_t> serialize_partition_proof(const PartitionProof& p);

// All partitions; checks their count (throws UpdateError).
UpdateInputs parse_update_inputs(UpdateProof proof, const Digest32& comm_r_old, const Digest32& comm_d_new,
                                 const Digest32& comm_r_new, std::span<const std::vector<std::uint8_t>> partitions);

// The 4 public inputs of partition k after ONE.
std::vector<Fr> update_partition_public_inputs(const UpdateInputs& in, std::size_t k);

// rfp EmptySectorUpdate::verify and more: comm_r relations, derived
// challenges = every path's leaf index, roots, every Merkle path, the
// encodings, the apex leaves against the tree D paths and the partition path
// up to comm_d_new, canonical Poseidon values. Throws UpdateError.
void check_partition_proof(const UpdateInputs& in, std::size_t k);
void check_update(const UpdateInputs& in);

// The circuit of partition k with every value present (rfp
// EmptySectorUpdateCompound::circuit). The structure must have been parsed.
UpdateCircuit update_circuit_from_proof(const UpdateInputs& in, std::size_t k);

}  // namespace cuzk::circuits::filecoin
