#include "circuits/gadgets/por.hpp"

#include <bit>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "circuits/gadgets/insertion.hpp"
#include "circuits/gadgets/multipack.hpp"
#include "circuits/gadgets/poseidon.hpp"
#include "circuits/gadgets/sha256.hpp"

namespace cuzk::circuits::gadgets {

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "por: %s\n", what);
  std::abort();
}

std::size_t log2_exact(std::size_t arity) {
  if (!std::has_single_bit(arity) || arity < 2) die("arity must be a power of two >= 2");
  return std::size_t(std::countr_zero(arity));
}

// Levels [0, base) are the base tree, then one sub level, then one top level.
std::size_t base_levels(const TreeShape& shape, std::size_t total) {
  const std::size_t extra = (shape.sub_arity ? 1 : 0) + (shape.top_arity ? 1 : 0);
  if (total < extra) die("path shorter than the shape's sub/top levels");
  return total - extra;
}

}  // namespace

AllocatedNum hash_multi_leaf(ConstraintSystem& cs, std::span<const AllocatedNum> leaves, TreeHasher hasher) {
  if (hasher == TreeHasher::kPoseidon) {
    return poseidon_hash(cs, leaves, native::filecoin_poseidon(leaves.size()));
  }
  return sha256_hash_multi_leaf_circuit(cs, leaves);
}

std::vector<PathLevel> blank_path(const TreeShape& shape, std::uint64_t leaves) {
  std::vector<PathLevel> path;
  for (std::size_t a : native::tree_shape_arities(leaves, shape.base_arity, shape.sub_arity, shape.top_arity)) {
    path.push_back({a, std::vector<std::optional<Fr>>(a - 1), std::nullopt});
  }
  return path;
}

std::vector<PathLevel> path_levels(const native::MerklePath<Fr>& path) {
  std::vector<PathLevel> out;
  for (const auto& l : path.levels) {
    PathLevel p;
    p.arity = l.siblings.size() + 1;
    p.siblings.assign(l.siblings.begin(), l.siblings.end());
    p.index = l.index;
    out.push_back(std::move(p));
  }
  return out;
}

PathResult merkle_path_circuit(ConstraintSystem& cs, const AllocatedNum& leaf, const std::vector<PathLevel>& path,
                               const TreeShape& shape, TreeHasher hasher) {
  PathResult r{leaf, {}};
  const std::size_t nbase = base_levels(shape, path.size());
  // rfp synthesises base, sub and top as three SubPaths, each numbering its
  // levels from 0 under its own namespace.
  for (std::size_t l = 0; l < path.size(); ++l) {
    const char* part = l < nbase ? "base" : (l == nbase && shape.sub_arity ? "sub" : "top");
    const std::size_t i = l < nbase ? l : 0;
    const PathLevel& level = path[l];
    const std::size_t nbits = log2_exact(level.arity);
    if (level.siblings.size() + 1 != level.arity) die("sibling count != arity - 1");
    auto ns_part = cs.ns(part);
    auto ns = cs.ns("merkle tree hash", i);
    std::vector<Boolean> bits;
    for (std::size_t b = 0; b < nbits; ++b) {
      std::optional<bool> v;
      if (level.index) v = ((*level.index >> b) & 1) != 0;
      auto nsb = cs.ns("index bit", b);
      bits.emplace_back(AllocatedBit::alloc(cs, v));
    }
    r.index_bits.insert(r.index_bits.end(), bits.begin(), bits.end());
    std::vector<AllocatedNum> siblings;
    for (std::size_t k = 0; k < level.siblings.size(); ++k) {
      auto nss = cs.ns("path element", k);
      siblings.push_back(AllocatedNum::alloc(cs, level.siblings[k]));
    }
    std::vector<AllocatedNum> inserted = insert(cs, r.root, bits, siblings);
    auto nsh = cs.ns("computation of commitment hash");
    r.root = hash_multi_leaf(cs, inserted, hasher);
  }
  return r;
}

void enforce_inclusion(ConstraintSystem& cs, const AllocatedNum& leaf, const std::vector<PathLevel>& path,
                       const TreeShape& shape, TreeHasher hasher, const AllocatedNum& root) {
  PathResult r = merkle_path_circuit(cs, leaf, path, shape, hasher);
  {
    auto ns = cs.ns("path");
    pack_into_inputs(cs, r.index_bits);
  }
  cs.enforce(
      "enforce root is correct", [&] { return LinearCombination(r.root.variable()); },
      [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(root.variable()); });
}

PorCircuit PorCircuit::blank(TreeShape shape, TreeHasher hasher, std::uint64_t leaves, bool private_root) {
  return PorCircuit(shape, hasher, std::nullopt, blank_path(shape, leaves), std::nullopt, private_root);
}

void PorCircuit::synthesize(ConstraintSystem& cs) const {
  AllocatedNum value;
  {
    auto ns = cs.ns("value");
    value = AllocatedNum::alloc(cs, leaf_);
  }
  PathResult r = merkle_path_circuit(cs, value, path_, shape_, hasher_);
  {
    auto ns = cs.ns("path");
    pack_into_inputs(cs, r.index_bits);
  }
  AllocatedNum rt;
  {
    auto ns = cs.ns("root_value");
    rt = AllocatedNum::alloc(cs, root_);
  }
  // computed_root * 1 = root
  cs.enforce(
      "enforce root is correct", [&] { return LinearCombination(r.root.variable()); },
      [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(rt.variable()); });
  if (!private_root_) {
    auto ns = cs.ns("root");
    rt.inputize(cs);
  }
}

std::vector<Fr> PorCircuit::public_inputs(std::uint64_t challenge, std::optional<Fr> root) {
  std::vector<Fr> in{Fr::from_u64(challenge)};
  if (root) in.push_back(*root);
  return in;
}

void por_no_challenge_input(ConstraintSystem& cs, const TreeShape& shape, TreeHasher hasher,
                            const std::vector<AllocatedBit>& challenge_bits, const AllocatedNum& leaf,
                            const std::vector<std::vector<AllocatedNum>>& path_values, const AllocatedNum& root) {
  const std::size_t nbase = base_levels(shape, path_values.size());
  AllocatedNum cur = leaf;
  std::size_t next_bit = 0;
  for (std::size_t height = 0; height < path_values.size(); ++height) {
    const std::size_t arity = height < nbase                         ? shape.base_arity
                              : (height == nbase && shape.sub_arity) ? shape.sub_arity
                                                                     : shape.top_arity;
    const auto& siblings = path_values[height];
    if (siblings.size() + 1 != arity) die("path element has incorrect number of siblings");
    std::vector<Boolean> index;
    for (std::size_t b = 0; b < log2_exact(arity); ++b) {
      if (next_bit >= challenge_bits.size()) die("no challenge bits remaining");
      index.emplace_back(challenge_bits[next_bit++]);
    }
    std::vector<AllocatedNum> preimage;
    {
      auto ns = cs.ns("merkle proof insert (height=" + std::to_string(height) + ")");
      preimage = insert(cs, cur, index, siblings);
    }
    auto ns = cs.ns("merkle proof hash (height=" + std::to_string(height) + ")");
    cur = hash_multi_leaf(cs, preimage, hasher);
  }
  if (next_bit != challenge_bits.size()) die("challenge bit-length and tree arity do not agree");
  cs.enforce(
      "calculated root == provided root", [&] { return LinearCombination(cur.variable()); },
      [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(root.variable()); });
}

}  // namespace cuzk::circuits::gadgets
