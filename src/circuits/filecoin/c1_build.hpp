// Helpers shared by the C1 producers (the native sealer in c1_synth.cpp, the
// sparse synthetic generator in c1_sparse.cpp) and the C1 parser.
#pragma once

#include <cstddef>
#include <utility>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/registry.hpp"
#include "circuits/native/merkle.hpp"

namespace cuzk::circuits::filecoin {

// The proof shape of trees C and R (rust-fil-proofs picks the MerkleProof
// variant by which of the sub/top arities the tree has).
inline MerkleProofKind tree_rc_kind(const SealProofInfo& info) {
  return info.top_arity != 0   ? MerkleProofKind::Top
         : info.sub_arity != 0 ? MerkleProofKind::Sub
                               : MerkleProofKind::Single;
}

// Splits a flat native path (leaf level first) into the base/sub/top parts
// rust-fil-proofs serialises; `conv` maps a tree node to its 32-byte form.
template <class Node, class Conv>
MerkleProof to_merkle_proof(const native::MerklePath<Node>& path, const Node& leaf, const Node& root,
                            MerkleProofKind kind, std::size_t base_levels, Conv conv) {
  MerkleProof m;
  m.kind = kind;
  m.leaf = conv(leaf);
  m.root = conv(root);
  for (std::size_t l = 0; l < path.levels.size(); ++l) {
    PathElement e;
    e.index = path.levels[l].index;
    for (const auto& s : path.levels[l].siblings) e.hashes.push_back(conv(s));
    InclusionPath& dst = l < base_levels ? m.base : l == base_levels ? m.sub : m.top;
    dst.push_back(std::move(e));
  }
  return m;
}

}  // namespace cuzk::circuits::filecoin
