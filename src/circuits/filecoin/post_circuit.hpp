// The FallbackPoSt circuit (WindowPoSt and WinningPoSt) with rust-fil-proofs'
// R1CS shape (storage-proofs-post fallback/circuit.rs): same variables, same
// constraints, same order.
//
// For each sector slot i (namespace "outer namespace/sector_i"):
//   comm_r_last, comm_c, comm_r: aux, in that order; comm_r inputized;
//   comm_r == Poseidon2(comm_c, comm_r_last)        (311 + 1 constraints);
//   per challenge j ("challenge_inclusion_j"): PoRCircuit with a private,
//   already allocated root (comm_r_last): the leaf (aux), the path (per level
//   log2(arity) index bits, the siblings, insert, Poseidon), the index bits
//   packed into ONE public input, computed_root * 1 = comm_r_last.
// rfp's synthesize_extendable (the prover's path) synthesizes groups of
// sectors into separate CSs and appends them: the same order.
// Counts: 313 per slot + per challenge 530 per oct level + 2 (+ 2 + 312 for a
// binary top level): 32 GiB window 2349 x (313 + 10 x 5302) = 125,279,217.
//
// The daemon's path: parse_sector_proof -> make_post_partition ->
// post_public_inputs / post_partition_circuit -> generate_witness -> prove.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/stacked_circuit.hpp"
#include "circuits/gadgets/por.hpp"
#include "circuits/shape_stats.hpp"
#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

struct PostShape {
  std::uint64_t nodes = 0;     // leaves of tree R
  gadgets::TreeShape tree;     // Poseidon tree R shape
  std::size_t sectors = 0;     // slots per partition circuit
  std::size_t challenges = 0;  // per slot
};

// rfp fallback::circuit::Sector: one slot's private values.
struct PostSectorWitness {
  std::optional<Fr> comm_r, comm_c, comm_r_last;
  std::vector<std::optional<Fr>> leafs;                // one per challenge
  std::vector<std::vector<gadgets::PathLevel>> paths;  // one per challenge

  static PostSectorWitness blank(const PostShape& shape);
};

class FallbackPostCircuit final : public groth16::Circuit {
 public:
  FallbackPostCircuit(PostShape shape, std::vector<PostSectorWitness> sectors);
  static FallbackPostCircuit blank(const PostShape& shape);

  const PostShape& shape() const { return shape_; }
  const std::vector<PostSectorWitness>& sectors() const { return sectors_; }

  void synthesize(groth16::ConstraintSystem& cs) const override;
  // The same, calling after_sector(i) after slot i.
  void synthesize_parts(groth16::ConstraintSystem& cs, const std::function<void(std::size_t)>& after_sector) const;
  // Slots [first, first + count) as a circuit of their own (slot numbering
  // restarts at 0). Slots share no variable but ONE, so the whole circuit is
  // satisfied iff each slot is.
  FallbackPostCircuit with_sectors(std::size_t first, std::size_t count) const;

  // The witness WitnessCs would give, the slots synthesized in parallel on
  // `pool` straight into `storage`'s vectors (a proved witness's memory, or
  // empty). Throws SynthesisError kAssignmentMissing when a value is absent.
  groth16::Witness generate_witness(ThreadPool& pool, groth16::Witness storage = {}) const;

 private:
  void synthesize_sector(groth16::ConstraintSystem& cs, std::size_t i) const;

  PostShape shape_;
  std::vector<PostSectorWitness> sectors_;
};

// The partition circuit shape of a registered proof.
PostShape post_shape(PostProof proof);

// rfp FallbackPoStCompound::circuit: the slots of post_slots(p) with every
// value present (Winning: slot i holds inclusion proof i).
FallbackPostCircuit post_partition_circuit(const PostPartition& p);

// Shape statistics of FallbackPostCircuit::blank(shape). kExtrapolate
// synthesizes three slots: slots share only ONE, so from the second slot on
// every slot adds the same increment (checked: slots 2 and 3 must agree),
// and total = s1 + (sectors - 1) * (s2 - s1). Window 32 GiB: 0.4 CPU-s;
// kFull takes 251 CPU-s (117 MB RSS, shared 2-core VM) and gives the same
// counts, nnz and densities (checked 2026-12-04).
ShapeStats post_shape_stats(const PostShape& shape, CountMode mode);

// Named shapes of `cuzkctl circuit info`:
//   post-base-8, post-sub-8-4, post-top-8-4-2: rfp tests/fallback_circuit.rs,
//     64 leaves per base tree, 5 challenges, 3 sectors;
//   post-base-8-2: the same with 2 sectors (the two-partition test);
//   post-blank-32g: 32 GiB 8-0-0, 5 sectors x 10 challenges (the BenchCS test);
//   window-post-{2k,8m,512m,32g,64g}, winning-post-{2k,8m,512m,32g,64g}.
std::optional<PostShape> post_shape_by_name(const std::string& name);
// True for names whose fingerprint takes minutes (window-post-32g/64g).
bool post_shape_is_large(const std::string& name);

}  // namespace cuzk::circuits::filecoin
