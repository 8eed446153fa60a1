// FallbackPoSt public data: conventions, challenges, the partition a circuit
// proves, its public inputs and the native check of its vanilla proofs.
//
// Conventions (as Curio / lotus hand data to the prover):
//   - randomness is a field element: the 32 bytes with rand[31] &= 0x3f
//     (curio tasks/window/compute_do.go, lotus chain/proofs/ffi);
//   - prover id = the miner actor id as unsigned LEB128 in bytes 0.., zero
//     padded to 32 bytes (f03751 -> a7 1d 00 ..);
//   - the sectors of a WindowPoSt partition are ordered by sector number;
//     make_post_partition sorts them and REJECTS duplicates (a duplicate
//     would add a circuit slot the verifier's BTreeMap does not have);
//   - a WindowPoSt partition is its own circuit over at most sector_count
//     sectors (rfp generate_single_window_post_with_vanilla); the partition
//     index only enters the challenge derivation (ApiVersion 1.0.0).
//
// Leaf challenge (rfp fallback/vanilla.rs generate_leaf_challenge_inner):
//   LE_u64(SHA256(randomness || sector_id u64 LE || challenge_index u64 LE)[0..8]) mod nodes
// challenge_index (fallback/utils.rs get_challenge_index), for the sector at
// position i of partition k and challenge n:
//   V1_0: (k * sector_count + i) * challenge_count + n;   V1_2: n.
// WinningPoSt: the one sector's 66 inclusion proofs open challenge indexes
// 0..65; the circuit has 66 slots of one challenge each, slot i being the
// same sector with challenge index i (V1_0, sector_index i, count 1).
//
// Public inputs of a partition (after ONE; rfp FallbackPoStCompound::
// generate_public_inputs): per slot comm_r, then each challenged leaf index
// as Fr. Slots past the partition's sectors repeat the last sector's block.
#pragma once

#include <cstdint>
#include <vector>

#include "circuits/filecoin/post_proof.hpp"
#include "ff/fp.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

// rand[31] &= 0x3f: makes any 32 bytes a canonical Fr (what lotus and curio do).
Digest32 post_randomness(const Digest32& raw);
// LEB128 of the actor id, zero padded to 32 bytes.
Digest32 prover_id_from_actor(std::uint64_t actor_id);

std::uint64_t post_challenge_index(PostApiVersion v, std::uint64_t sector_index, std::uint64_t challenge_count,
                                   std::uint64_t n);
std::uint64_t post_leaf_challenge(const Digest32& randomness, std::uint64_t sector_id, std::uint64_t challenge_index,
                                  std::uint64_t nodes);
// WinningPoSt sector selection (rfp generate_sector_challenge):
// LE_u64(SHA256(prover_id || randomness || n u64 LE)[0..8]) mod sector_set_len.
std::uint64_t winning_sector_challenge(const Digest32& randomness, const Digest32& prover_id, std::uint64_t n,
                                       std::uint64_t sector_set_len);

// The leaves the vanilla proof of the sector at position `position` of
// partition `partition` must open (10 for Window, 66 for Winning), in the
// order of its inclusion proofs (what the prover's generate_fallback_sector_
// challenges gives).
std::vector<std::uint64_t> vanilla_challenges(PostProof proof, const Digest32& randomness, std::uint32_t partition,
                                              std::size_t position, std::uint64_t sector_id);

// What one partition circuit proves.
struct PostPartition {
  PostProof proof = PostProof::Window2KiBV1_2;
  Digest32 randomness{};  // canonical (post_randomness applied)
  Digest32 prover_id{};
  std::uint32_t partition_index = 0;             // Window only; 0 for Winning
  std::vector<FallbackPostSectorProof> sectors;  // sorted by id, distinct

  const PostProofInfo& info() const { return post_proof_info(proof); }
};

// Builds a partition from parsed vanilla proofs (parse_sector_proof has
// checked their shape and that every value is a canonical Fr; proofs built
// otherwise must hold the same): applies post_randomness, sorts by sector id. Throws PostError kSectorCount (none, or
// more than the partition holds; Winning needs exactly one), kDuplicateSector.
PostPartition make_post_partition(PostProof proof, const Digest32& randomness, const Digest32& prover_id,
                                  std::uint32_t partition_index, std::vector<FallbackPostSectorProof> sectors);

// One slot of the partition circuit.
struct PostSlot {
  std::size_t sector = 0;                 // index into PostPartition::sectors
  std::size_t first_inclusion = 0;        // first inclusion proof of that sector used
  std::vector<std::uint64_t> challenges;  // circuit_challenge_count leaf indexes
};
// circuit_sector_count slots, padded by repeating the last sector.
std::vector<PostSlot> post_slots(const PostPartition& p);

// The verifier's public inputs (after ONE), from public data only.
std::vector<ff::Fr> post_public_inputs(const PostPartition& p);

// The native check of every vanilla proof against the public data (rfp
// FallbackPoSt::verify plus what the circuit enforces): comm_r =
// Poseidon2(comm_c, comm_r_last); every inclusion proof's root is
// comm_r_last, its path opens the derived challenge and hashes to the root.
// Throws PostError (is_invalid_proof kinds) for the first failing sector
// slot. With a pool the slots are checked in parallel (a 32 GiB partition
// of 2349 sectors is ~235,000 Poseidon hashes). PostPaths::kLeaveToCircuit
// skips hashing the paths (all but ~2,400 of those hashes), for a caller
// whose prover checks the circuit's satisfaction: the circuit enforces each
// path, and the full check can still name a bad one afterwards.
enum class PostPaths { kHash, kLeaveToCircuit };
void check_post_partition(const PostPartition& p, ThreadPool* pool = nullptr, PostPaths paths = PostPaths::kHash);

}  // namespace cuzk::circuits::filecoin
