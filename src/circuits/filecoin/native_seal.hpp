// A small sector sealed natively up to its replica, as rust-fil-proofs' seal
// pre-commit computes it: tree D (SHA-256) over the piece data, replica_id,
// the SDR label layers, tree C (Poseidon) over the hashes of each node's
// column of labels, tree R over the replica (label of the last layer + data).
// comm_r = Poseidon2(tree_c.root(), tree_r.root()).
//
// Shared by the generators that need a genuinely sealed sector: the C1
// synthesiser (c1_synth.hpp), generated PoSt vanilla proofs (post_gen.hpp)
// and sealed SnapDeals updates (update_gen.hpp). Cost grows with the sector
// (2 KiB: milliseconds); meant for sectors up to 2^18 nodes (8 MiB).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "circuits/filecoin/graph.hpp"
#include "circuits/filecoin/labels.hpp"
#include "circuits/filecoin/registry.hpp"
#include "circuits/native/merkle.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

struct NativeSeal {
  native::Sha256MerkleTree tree_d;  // binary, over the piece data
  Digest32 replica_id{};
  StackedGraph graph;                         // the SDR graph the labels were computed on
  std::vector<std::vector<Digest32>> labels;  // [layer][node]
  native::PoseidonMerkleTree tree_c;          // leaves: Poseidon(arity = layers) of each column
  native::PoseidonMerkleTree tree_r;          // leaves: label_{layers} + data, in Fr
};

// `data` holds one fr32 node per sector node (data.size() == the proof's
// nodes). Tree C and R have the proof's base/sub/top arities. Column
// hashes and tree levels are computed in parallel on `pool` when given.
NativeSeal seal_natively(SealProof proof, std::span<const Digest32> data, const Digest32& prover_id,
                         std::uint64_t sector_id, const Digest32& ticket, ThreadPool* pool = nullptr);

}  // namespace cuzk::circuits::filecoin
