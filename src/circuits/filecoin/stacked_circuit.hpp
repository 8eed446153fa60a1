// The StackedDRG (SDR PoRep) partition circuit with rust-fil-proofs' exact
// R1CS shape (storage-proofs-porep/src/stacked/circuit/{proof,params}.rs):
// same variables, same constraints, same order, so the Groth16 parameters of
// Filecoin's trusted setup apply to it.
//
// Global part (once per partition):
//   replica_id: aux, inputized, 255 bits (to_bits_le, non-strict) re-ordered
//               BE-per-byte for SHA-256 (reverse_bit_numbering);
//   comm_d, comm_r: aux, inputized;  comm_r_last, comm_c: aux;
//   comm_r == Poseidon2(comm_c, comm_r_last).
// Per challenge (namespace "challenge_i"):
//   1. data_leaf (aux) and its SHA-256 binary path to comm_d;
//   2. 6 DRG then 8 expander parent columns: `layers` aux rows each, the
//      column hash (Poseidon of arity `layers`) and its path to comm_c;
//   3. the challenge as 64 allocated bits, packed into one input;
//   4. per layer l = 1..L: the 255 bits of each DRG parent's row l and, when
//      l > 1, of each expander parent's row l-1 (re-ordered as above), the 14
//      (or 6) parents repeated to 37, and create_label (SHA-256 of 39 blocks);
//   5. encoded = label_L + data_leaf (1 constraint) and its path to comm_r_last;
//   6. the column hash of the L labels and its path to comm_c.
// Every path ("enforce_inclusion") adds its index bits packed into ONE public
// input and computed_root * 1 = root. Public inputs after ONE: replica_id,
// comm_d, comm_r, then per challenge 18: comm_d path, 6 DRG paths, 8
// expander paths, the challenge, the tree-R path, the c_x path (each path
// input is the leaf index). Hence inputs = 4 + 18 * challenges.
//
// Values are optional throughout: StackedCircuit::blank() synthesizes the
// shape only (for counting or compiling) without computing any hash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/graph.hpp"
#include "circuits/gadgets/boolean.hpp"
#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/por.hpp"
#include "circuits/shape_stats.hpp"
#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

using groth16::Fr;

// SDR graph degrees (rfp drgraph BASE_DEGREE, stacked EXP_DEGREE).
inline constexpr std::size_t kDrgParents = kBaseDegree;
inline constexpr std::size_t kExpParents = kExpDegree;

// What fixes the circuit's shape.
struct StackedShape {
  std::uint64_t nodes = 0;     // sector nodes (32 B each), power of two
  std::size_t layers = 0;      // 2 or 11 (column hash arity)
  gadgets::TreeShape tree;     // tree R and tree C (Poseidon)
  std::size_t challenges = 0;  // per partition
};

// One parent's column (its `layers` labels) and its tree-C path.
struct ColumnOpening {
  std::vector<std::optional<Fr>> rows;  // row l-1 = label of layer l
  std::vector<gadgets::PathLevel> path;
};

// rfp stacked::circuit::Proof: the private data of one challenge.
struct ChallengeWitness {
  std::optional<Fr> data_leaf;
  std::optional<std::uint64_t> challenge;
  std::vector<gadgets::PathLevel> comm_d_path;       // binary, SHA-256
  std::vector<gadgets::PathLevel> comm_r_last_path;  // tree R
  std::vector<gadgets::PathLevel> comm_c_path;       // c_x in tree C
  std::vector<ColumnOpening> drg_parents;            // kDrgParents
  std::vector<ColumnOpening> exp_parents;            // kExpParents

  // All values absent, path lengths from the shape (rfp Proof::empty).
  static ChallengeWitness blank(const StackedShape& shape);
};

class StackedCircuit final : public groth16::Circuit {
 public:
  StackedCircuit(StackedShape shape, std::optional<Fr> replica_id, std::optional<Fr> comm_d, std::optional<Fr> comm_r,
                 std::optional<Fr> comm_r_last, std::optional<Fr> comm_c, std::vector<ChallengeWitness> proofs);
  // rfp StackedCompound::blank_circuit.
  static StackedCircuit blank(const StackedShape& shape);

  const StackedShape& shape() const { return shape_; }
  const std::vector<ChallengeWitness>& proofs() const { return proofs_; }

  void synthesize(groth16::ConstraintSystem& cs) const override;
  // The same synthesis, calling after_part(0) after the global part and
  // after_part(i + 1) after challenge i (to snapshot a back end's counts).
  void synthesize_parts(groth16::ConstraintSystem& cs, const std::function<void(std::size_t)>& after_part) const;

  // The witness (inputs incl. ONE, aux) equal to WitnessCs's over
  // synthesize(), with the challenges synthesized in parallel on `pool`
  // (they are independent given the global part). Throws SynthesisError
  // kAssignmentMissing when a value is absent. With `shape` (the R1cs's
  // counts) each part's vectors are allocated once (the challenges share one
  // shape: the aux beyond the global part split evenly).
  // `storage`: a previous witness whose vectors receive the joined parts.
  groth16::Witness generate_witness(ThreadPool& pool, groth16::WitnessShape shape = {},
                                    groth16::Witness storage = {}) const;

  // The public inputs after ONE, from the values this circuit holds (each
  // path's input is its leaf index, read from the level indexes). Aborts when
  // a value needed is absent.
  std::vector<Fr> public_inputs() const;

  // The same circuit restricted to challenges [first, first + count): for
  // counting the global part and one challenge separately.
  StackedCircuit with_challenges(std::size_t first, std::size_t count) const;

 private:
  // Variables of the global part that every challenge reads.
  struct Globals {
    std::vector<gadgets::Boolean> replica_id_bits;  // BE per byte, for SHA-256
    gadgets::AllocatedNum comm_d, comm_c, comm_r_last;
  };
  Globals synthesize_global(groth16::ConstraintSystem& cs) const;
  void synthesize_one(groth16::ConstraintSystem& cs, std::size_t i, const Globals& g) const;

  StackedShape shape_;
  std::optional<Fr> replica_id_, comm_d_, comm_r_, comm_r_last_, comm_c_;
  std::vector<ChallengeWitness> proofs_;
};

// The shape of one partition of a registered proof.
StackedShape stacked_shape(SealProof proof);

// The C2 witness path (rfp StackedCompound::circuit): the circuit of
// partition `partition` of a parsed C1 output, with every value present.
// Domains are read as little-endian field elements. Aborts when the
// partition does not exist (parse_c1 has checked the structure).
StackedCircuit stacked_circuit_from_c1(const C1Output& c1, std::size_t partition);

// The verifier's public inputs of partition `partition` (after ONE), as rfp
// StackedCompound::generate_public_inputs derives them from public data
// only: replica_id, comm_d, comm_r, then per interactive challenge c: c (the
// comm_d path), c's 6 DRG and 8 expander parents (their tree-C paths), c, c
// (tree R), c (c_x in tree C). Must equal the circuit's own inputs.
std::vector<Fr> stacked_public_inputs(SealProof proof, const Digest32& replica_id, const Digest32& comm_d,
                                      const Digest32& comm_r, const Digest32& seed, std::uint32_t partition);

enum class CountMode : std::uint8_t {
  kFull,         // synthesize every challenge
  kExtrapolate,  // synthesize the global part and two challenges, see below
};

// Shape statistics of StackedCircuit::blank(shape). With kExtrapolate, only
// the global part and two challenges are synthesized (2.4 s instead of 78 s
// for 32 GiB on one core of the dev VM). Blank challenges run the same code
// on the same shared variables, so each adds the same local counts; the
// increments s1 - s0 and s2 - s1 (densities included) can then differ only
// by shared variables first marked by challenge 1. Equal increments thus
// mean every challenge adds s1 - s0: total = s0 + challenges * (s1 - s0).
// Aborts if the increments differ (the premise would be false).
ShapeStats stacked_shape_stats(const StackedShape& shape, CountMode mode);

// Named shapes of `cuzkctl circuit info` and the tests:
//   stacked-base-2 / -base-8 / -8-4 / -8-4-2: rfp tests/stacked_circuit.rs
//     (2 layers, 1 challenge, 8 nodes per base tree);
//   porep-2k / porep-32g / porep-64g: one partition of the production proofs.
std::optional<StackedShape> stacked_shape_by_name(const std::string& name);

}  // namespace cuzk::circuits::filecoin
