// Poseidon hash circuit in the shape of neptune::circuit::poseidon_hash (the
// "legacy" circuit rust-fil-proofs' trusted setups were made with).
//
// It runs neptune's optimized-static schedule (native/poseidon.hpp) on
// values that are either allocated variables or free linear combinations:
//   - an S-box costs 3 constraints: x^2, x^4, x^4 * x (+ the next round
//     constant folded into the last one); the first round also folds the
//     round constant into (x + k)^2;
//   - the tag lane's first S-box is a constant (no constraint);
//   - a lane that is a linear combination when its S-box comes is first
//     allocated with one constraint (lc * 1 = v); MDS products are free;
//   - the output lane is allocated at the end (1 constraint).
// Count: 3 (t RF + RP - 1) + (t RF + RP - arity), e.g. 311 for arity 2,
// 505 for arity 8, 598 for arity 11.
#pragma once

#include <span>

#include "circuits/gadgets/num.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::gadgets {

// Hash of exactly c.arity allocated numbers.
AllocatedNum poseidon_hash(ConstraintSystem& cs, std::span<const AllocatedNum> preimage,
                           const native::PoseidonConstants& c);

// rfp PoseidonFunction::hash2_circuit: arity-2 Filecoin constants (311 constraints).
AllocatedNum poseidon_hash2(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b);
// rfp stacked hash_single_column: Poseidon over a column of 2 or 11 layer
// labels (311 / 598 constraints); other lengths use the matching arity.
AllocatedNum hash_single_column(ConstraintSystem& cs, std::span<const AllocatedNum> column);

// rfp PoseidonFunction::hash_md_circuit (arity 36, 1,385 constraints per
// chunk of 35; a short last chunk is padded with allocated zeros).
AllocatedNum poseidon_hash_md(ConstraintSystem& cs, std::span<const AllocatedNum> elements);

// The three S-box helpers of neptune's circuit, exposed for reuse.
// (num + to_add)^2: one variable, one constraint.
AllocatedNum square_sum(ConstraintSystem& cs, const Fr& to_add, const AllocatedNum& num);
// a * (b + pre_add) + post_add: one variable, one constraint.
AllocatedNum mul_sum(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b,
                     const std::optional<Fr>& pre_add, const std::optional<Fr>& post_add);

}  // namespace cuzk::circuits::gadgets
