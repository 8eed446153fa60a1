// Merkle trees over Filecoin's two node hashes, built natively (the witness
// side of the inclusion gadgets).
//
// A tree is described by its per-level arities, leaves first. rust-fil-proofs'
// base/sub/top compound trees (e.g. 8-8-2 for 64 GiB: base trees of arity 8,
// one sub level of arity 8, one top level of arity 2) are exactly the
// mixed-radix tree with arities [8, ..., 8, 8, 2], because base trees cover
// consecutive leaf ranges and the sub/top levels hash consecutive roots.
//
// A path holds, per level, the node's position in its group (`index`) and the
// other arity-1 nodes of the group in order (`siblings`), as rfp's
// PathElement does; the leaf's global index is the mixed-radix number
// formed by the indexes (level 0 least significant).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "circuits/native/poseidon.hpp"
#include "circuits/native/sha256.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::native {

// Poseidon node hash of any supported arity (rfp PoseidonFunction::multi_node).
class PoseidonTreeHasher {
 public:
  using Node = Fr;
  Node hash(std::span<const Node> children) const {
    return poseidon_hash(filecoin_poseidon(children.size()), children);
  }
};

// Binary SHA-256 node hash (rfp Sha256Function::node); arity must be 2.
class Sha256TreeHasher {
 public:
  using Node = Digest32;
  Node hash(std::span<const Node> children) const {
    if (children.size() != 2) {
      std::fprintf(stderr, "Sha256TreeHasher: arity %zu unsupported\n", children.size());
      std::abort();
    }
    return sha256_hash2(children[0], children[1]);
  }
};

template <class Node>
struct MerklePath {
  struct Level {
    std::uint32_t index = 0;     // position of the path node within its group
    std::vector<Node> siblings;  // the arity - 1 other members, in order
  };
  std::vector<Level> levels;  // leaf level first
};

// The authentication path of leaf `leaf_index` in a tree with level arities
// `arities` whose node (level, index) is node_at(level, index).
template <class Node, class NodeAt>
MerklePath<Node> make_path(std::span<const std::size_t> arities, std::uint64_t leaf_index, NodeAt node_at) {
  MerklePath<Node> p;
  std::uint64_t idx = leaf_index;
  for (std::size_t l = 0; l < arities.size(); ++l) {
    const std::size_t a = arities[l];
    typename MerklePath<Node>::Level lv;
    lv.index = std::uint32_t(idx % a);
    const std::uint64_t first = idx - lv.index;
    for (std::size_t k = 0; k < a; ++k) {
      if (k != lv.index) lv.siblings.push_back(node_at(l, first + k));
    }
    p.levels.push_back(std::move(lv));
    idx /= a;
  }
  return p;
}

// Level arities for rfp's tree shapes: base levels of `base_arity` covering
// leaves / (sub * top) leaves each, then one sub and one top level when
// non-zero. Aborts when the leaf count does not fit the shape.
std::vector<std::size_t> tree_shape_arities(std::uint64_t leaves, std::size_t base_arity, std::size_t sub_arity = 0,
                                            std::size_t top_arity = 0);

// The leaf index encoded by a path's indexes (mixed radix, leaf level lowest).
template <class Node>
std::uint64_t path_leaf_index(const MerklePath<Node>& p) {
  std::uint64_t idx = 0, scale = 1;
  for (const auto& l : p.levels) {
    idx += scale * l.index;
    scale *= l.siblings.size() + 1;
  }
  return idx;
}

// Root implied by a leaf and its path.
template <class H>
typename H::Node root_from_path(const H& hasher, typename H::Node leaf, const MerklePath<typename H::Node>& path) {
  std::vector<typename H::Node> group;
  for (const auto& l : path.levels) {
    group.assign(l.siblings.begin(), l.siblings.end());
    group.insert(group.begin() + l.index, leaf);
    leaf = hasher.hash(group);
  }
  return leaf;
}

// A fully materialised tree: every level stored.
template <class H>
class MerkleTree {
 public:
  using Node = typename H::Node;

  // Levels are hashed in parallel on `pool` when given (the hasher must be
  // callable concurrently: both hashers here are stateless).
  MerkleTree(H hasher, std::vector<std::size_t> arities, std::vector<Node> leaves, ThreadPool* pool = nullptr)
      : hasher_(std::move(hasher)), arities_(std::move(arities)) {
    std::uint64_t n = 1;
    for (std::size_t a : arities_) n *= a;
    if (leaves.size() != n) die("leaf count does not match the arities");
    levels_.push_back(std::move(leaves));
    for (std::size_t a : arities_) {
      const auto& below = levels_.back();
      std::vector<Node> up(below.size() / a);
      auto hash_range = [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          up[i] = hasher_.hash(std::span<const Node>(below).subspan(i * a, a));
        }
      };
      if (pool != nullptr && up.size() > 1) {
        pool->parallel_for(up.size(), hash_range);
      } else {
        hash_range(0, up.size());
      }
      levels_.push_back(std::move(up));
    }
  }

  const Node& root() const { return levels_.back()[0]; }
  std::size_t leaf_count() const { return levels_[0].size(); }
  const Node& leaf(std::size_t i) const { return levels_[0][i]; }
  // Level 0 is the leaves, level arities().size() holds the root.
  const std::vector<Node>& level(std::size_t l) const { return levels_[l]; }
  const std::vector<std::size_t>& arities() const { return arities_; }

  MerklePath<Node> path(std::uint64_t leaf_index) const {
    return make_path<Node>(arities_, leaf_index, [this](std::size_t l, std::uint64_t i) { return levels_[l][i]; });
  }

 private:
  [[noreturn]] static void die(const char* what) {
    std::fprintf(stderr, "MerkleTree: %s\n", what);
    std::abort();
  }

  H hasher_;
  std::vector<std::size_t> arities_;
  std::vector<std::vector<Node>> levels_;
};

// A tree whose leaves all hold `default_leaf` except the few set explicitly.
// Untouched subtrees are represented by their level's default node
// d_{l+1} = H(d_l, ..., d_l), so a 2^30-leaf sector with a handful of
// challenged leaves costs O(touched * depth) hashes and memory.
template <class H>
class SparseMerkleTree {
 public:
  using Node = typename H::Node;

  SparseMerkleTree(H hasher, std::vector<std::size_t> arities, Node default_leaf)
      : hasher_(std::move(hasher)), arities_(std::move(arities)), nodes_(arities_.size() + 1) {
    defaults_.push_back(default_leaf);
    std::vector<Node> group;
    for (std::size_t a : arities_) {
      group.assign(a, defaults_.back());
      defaults_.push_back(hasher_.hash(group));
    }
    leaf_count_ = 1;
    for (std::size_t a : arities_) leaf_count_ *= a;
  }

  std::uint64_t leaf_count() const { return leaf_count_; }
  const std::vector<std::size_t>& arities() const { return arities_; }
  // Default node at level l (0 = leaf).
  const Node& default_node(std::size_t l) const { return defaults_[l]; }

  // Sets a leaf and rehashes its ancestors.
  void set_leaf(std::uint64_t index, const Node& value) {
    if (index >= leaf_count_) die("leaf index out of range");
    nodes_[0][index] = value;
    std::uint64_t idx = index;
    std::vector<Node> group;
    for (std::size_t l = 0; l < arities_.size(); ++l) {
      const std::size_t a = arities_[l];
      const std::uint64_t first = idx - idx % a;
      group.clear();
      for (std::size_t k = 0; k < a; ++k) group.push_back(node(l, first + k));
      idx /= a;
      nodes_[l + 1][idx] = hasher_.hash(group);
    }
  }

  // Node at (level, index): the stored value or the level default.
  const Node& node(std::size_t level, std::uint64_t index) const {
    const auto& m = nodes_[level];
    auto it = m.find(index);
    return it == m.end() ? defaults_[level] : it->second;
  }
  const Node& leaf(std::uint64_t index) const { return node(0, index); }
  const Node& root() const { return node(arities_.size(), 0); }

  MerklePath<Node> path(std::uint64_t leaf_index) const {
    return make_path<Node>(arities_, leaf_index, [this](std::size_t l, std::uint64_t i) { return node(l, i); });
  }

 private:
  [[noreturn]] static void die(const char* what) {
    std::fprintf(stderr, "SparseMerkleTree: %s\n", what);
    std::abort();
  }

  H hasher_;
  std::vector<std::size_t> arities_;
  std::vector<Node> defaults_;
  std::vector<std::unordered_map<std::uint64_t, Node>> nodes_;  // per level, touched only
  std::uint64_t leaf_count_ = 0;
};

using PoseidonMerkleTree = MerkleTree<PoseidonTreeHasher>;
using Sha256MerkleTree = MerkleTree<Sha256TreeHasher>;
using PoseidonSparseTree = SparseMerkleTree<PoseidonTreeHasher>;
using Sha256SparseTree = SparseMerkleTree<Sha256TreeHasher>;

}  // namespace cuzk::circuits::native
