// The SnapDeals EmptySectorUpdate partition circuit, and its Poseidon
// variant, with rust-fil-proofs' R1CS shape (storage-proofs-update
// src/circuit.rs + gadgets.rs, src/poseidon/circuit.rs): same variables,
// constraints and order, so the v28-empty-sector-update parameters apply.
//
// Global part:
//   k_and_h_select: aux, inputized; log2(partitions) + 6 bits and their
//     packing (1); the partition bits packed into one number (1);
//   comm_r_old, comm_d_new, comm_r_new: aux, inputized;
//   phi = GR(comm_d_new, comm_r_old) (Poseidon-2, tag 2^40, 311);
//   comm_c, root_r_old, root_r_new, apex leaves, partition path siblings: aux;
//   comm_r_old == Poseidon2(comm_c, root_r_old), same for new (312 each);
//   apex_por: SHA-256 hash2 tree over the apex leaves, its root's binary
//     path (partition bits) to comm_d_new;
//   gen_challenge_bits: per digest j, digest_index = k * digests + j (1),
//     GR(comm_r_new, digest_index) (311), 255 bits + packing (256).
// Per challenge: c_high selected by h_select (per h: pack 1, product 1;
//   sum 1), rho = GR(phi, c_high), leaf_r_old, leaf_d_new, leaf_r_new =
//   leaf_r_old + leaf_d_new * rho (2), path_r_old then its PoR, path_r_new
//   then its PoR, the apex leaf selected by the challenge's apex bits, the
//   SHA-256 path from leaf_d_new up to that apex leaf.
// The Poseidon variant has h_select instead of k_and_h_select, no apex tree,
// a zero "partition" aux, every challenge of all partitions, and tree D as a
// Poseidon tree of tree R's shape proven in full.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "circuits/filecoin/update_params.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/shape_stats.hpp"
#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

// Sibling values per path level, leaf level first (rfp path() without the indexes).
using SiblingPath = std::vector<std::vector<std::optional<Fr>>>;

struct UpdateChallengeWitness {
  std::optional<Fr> leaf_r_old, leaf_d_new, leaf_r_new;
  SiblingPath path_r_old, path_d_new, path_r_new;
  // rfp ChallengeProof::empty: tree R path of the size's shape, tree D path
  // binary of log2(nodes) levels (tree R's shape in the Poseidon variant).
  static UpdateChallengeWitness blank(const UpdateLayout& l, bool poseidon);
};

enum class UpdateVariant : std::uint8_t { kSha256TreeD, kPoseidon };

class UpdateCircuit final : public groth16::Circuit {
 public:
  struct Public {
    // k_and_h_select (or h_select for the Poseidon variant), comm_r_old,
    // comm_d_new, comm_r_new; all absent in a blank circuit.
    std::optional<Fr> k_and_h_select, comm_r_old, comm_d_new, comm_r_new;
  };
  struct Private {
    std::optional<Fr> comm_c, root_r_old, root_r_new;
    std::vector<std::optional<Fr>> apex_leafs;  // empty in the Poseidon variant
    std::vector<UpdateChallengeWitness> challenges;
  };

  UpdateCircuit(std::uint64_t nodes, UpdateVariant variant, Public pub, Private priv);
  static UpdateCircuit blank(std::uint64_t nodes, UpdateVariant variant);

  const UpdateLayout& layout() const { return layout_; }
  UpdateVariant variant() const { return variant_; }
  std::size_t challenge_count() const;

  void synthesize(groth16::ConstraintSystem& cs) const override;
  // The same synthesis, calling after_part(0) after the global part and
  // after_part(i + 1) after challenge i; synthesizes only the first
  // `max_challenges` challenges (for counting), all by default.
  void synthesize_parts(groth16::ConstraintSystem& cs, const std::function<void(std::size_t)>& after_part,
                        std::size_t max_challenges = SIZE_MAX) const;

  // The witness WitnessCs collects over synthesize(), with the challenges
  // synthesized in parallel on `pool` (independent given the global part),
  // in place in `storage`'s vectors (a proved witness's memory, or empty).
  // Throws SynthesisError kAssignmentMissing when a value is absent.
  groth16::Witness generate_witness(ThreadPool& pool, groth16::WitnessShape shape = {},
                                    groth16::Witness storage = {}) const;

 private:
  // Variables of the global part that the challenges read.
  struct Globals {
    std::vector<gadgets::AllocatedBit> partition_bits, h_select_bits;
    gadgets::AllocatedNum phi, root_r_old, root_r_new, comm_d_new;
    std::vector<gadgets::AllocatedNum> apex_leafs;
    std::vector<std::vector<gadgets::AllocatedBit>> generated;  // random bits per challenge
  };
  Globals synthesize_global(groth16::ConstraintSystem& cs) const;
  void synthesize_one(groth16::ConstraintSystem& cs, std::size_t c, const Globals& g) const;

  UpdateLayout layout_;
  UpdateVariant variant_;
  Public pub_;
  Private priv_;
};

// Shape statistics of UpdateCircuit::blank. kExtrapolate synthesizes the
// global part and three challenges: the first challenge also marks shared
// variables (phi, roots, apex leaves) in the densities, so later challenges
// add s2 - s1 each; checked by s3 - s2 == s2 - s1 (aborts otherwise) and
// total = s1 + (n - 1) (s2 - s1).
enum class UpdateCountMode : std::uint8_t { kFull, kExtrapolate };
ShapeStats update_shape_stats(std::uint64_t nodes, UpdateVariant variant, UpdateCountMode mode);

// `cuzkctl circuit info` names: update-{1k,2k,4k,8k,16k,32k,8m,512m,32g,64g}
// and update-poseidon-{1k,...}. Sets nodes and variant.
bool update_circuit_by_name(const std::string& name, std::uint64_t& nodes, UpdateVariant& variant);

}  // namespace cuzk::circuits::filecoin
