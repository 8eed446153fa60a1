// Merkle inclusion (proof of retrievability) circuits as rust-fil-proofs
// builds them (storage-proofs-core gadgets/por.rs).
//
// A path level carries the arity - 1 sibling values and the node's position
// in its group. Per level the circuit allocates log2(arity) index bits, the
// siblings, inserts the running node among them (insertion.hpp) and hashes
// the group (Poseidon of that arity, or binary SHA-256 via Fr bits). The
// index bits of all levels, concatenated, are the leaf index little-endian.
//
// PorCircuit (rfp PoRCircuit): public inputs [ONE, packed index bits, root],
// the root omitted when private. Counts for 64-leaf Poseidon trees (x sub x
// top copies) match rfp tests/por_circuit.rs: base 2: 1,887; 4: 1,164;
// 8: 1,063; 8-2: 1,377; 8-4-2: 1,764; 8-8: 1,593; 8-8-2: 1,907.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "circuits/gadgets/num.hpp"
#include "circuits/native/merkle.hpp"

namespace cuzk::circuits::gadgets {

enum class TreeHasher : std::uint8_t { kPoseidon, kSha256 };

// rfp tree shape: base arity, optional sub and top arities (0 = absent).
struct TreeShape {
  std::size_t base_arity = 8;
  std::size_t sub_arity = 0;
  std::size_t top_arity = 0;
};

// One level of an inclusion path; values absent in a blank circuit.
struct PathLevel {
  std::size_t arity = 0;
  std::vector<std::optional<Fr>> siblings;  // arity - 1
  std::optional<std::uint32_t> index;       // position in the group
};

// Levels for a tree shape and leaf count, all values absent.
std::vector<PathLevel> blank_path(const TreeShape& shape, std::uint64_t leaves);
// Levels from a native path (values present).
std::vector<PathLevel> path_levels(const native::MerklePath<Fr>& path);

struct PathResult {
  AllocatedNum root;
  std::vector<Boolean> index_bits;  // leaf index, least significant first
};

// Ascends `path` from `leaf`: per level (namespace "<ns>/merkle tree hash i"
// as rfp's SubPath) index bits, siblings, insert, hash. The levels are split
// into rfp's base/sub/top namespaces by `shape`.
PathResult merkle_path_circuit(ConstraintSystem& cs, const AllocatedNum& leaf, const std::vector<PathLevel>& path,
                               const TreeShape& shape, TreeHasher hasher);

// rfp PoRCircuit::synthesize on an already allocated leaf with a private,
// already allocated root (rfp's enforce_inclusion / Root::from_allocated):
// the path, its index bits packed into one public input (namespace "path"),
// then computed_root * 1 = root ("enforce root is correct").
void enforce_inclusion(ConstraintSystem& cs, const AllocatedNum& leaf, const std::vector<PathLevel>& path,
                       const TreeShape& shape, TreeHasher hasher, const AllocatedNum& root);

// rfp PoRCircuit::synthesize.
class PorCircuit final : public groth16::Circuit {
 public:
  PorCircuit(TreeShape shape, TreeHasher hasher, std::optional<Fr> leaf, std::vector<PathLevel> path,
             std::optional<Fr> root, bool private_root)
      : shape_(shape), hasher_(hasher), leaf_(leaf), path_(std::move(path)), root_(root), private_root_(private_root) {}
  static PorCircuit blank(TreeShape shape, TreeHasher hasher, std::uint64_t leaves, bool private_root);

  void synthesize(ConstraintSystem& cs) const override;

  // Public inputs after ONE: [challenge (leaf index)] and, unless private, [root].
  static std::vector<Fr> public_inputs(std::uint64_t challenge, std::optional<Fr> root);

 private:
  TreeShape shape_;
  TreeHasher hasher_;
  std::optional<Fr> leaf_;
  std::vector<PathLevel> path_;
  std::optional<Fr> root_;
  bool private_root_;
};

// rfp por_no_challenge_input: the caller supplies the leaf index bits
// (little-endian), leaf, sibling numbers per level and root; the computed
// root is constrained equal to `root` (1 constraint). No public input.
void por_no_challenge_input(ConstraintSystem& cs, const TreeShape& shape, TreeHasher hasher,
                            const std::vector<AllocatedBit>& challenge_bits, const AllocatedNum& leaf,
                            const std::vector<std::vector<AllocatedNum>>& path_values, const AllocatedNum& root);

// The group hash used at a level (rfp hash_multi_leaf_circuit).
AllocatedNum hash_multi_leaf(ConstraintSystem& cs, std::span<const AllocatedNum> leaves, TreeHasher hasher);

}  // namespace cuzk::circuits::gadgets
