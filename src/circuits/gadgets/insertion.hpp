// Insertion of a node among its Merkle siblings at a position given by bits
// (rust-fil-proofs storage-proofs-core gadgets/insertion.rs), with rfp's
// hand-optimised tables for arity 2, 4 and 8:
//   arity 2: 2 constraints, 4: 8, 8: 22 (+ the caller's bit allocations);
// other power-of-two arities use the general select, size * (size - 1).
#pragma once

#include <span>
#include <vector>

#include "circuits/gadgets/num.hpp"

namespace cuzk::circuits::gadgets {

// `elements` with `element` inserted at position n, where `bits` (least
// significant first, allocated and not negated for arity 8) encode n.
// elements.size() + 1 must equal 2^bits.size().
std::vector<AllocatedNum> insert(ConstraintSystem& cs, const AllocatedNum& element, std::span<const Boolean> bits,
                                 std::span<const AllocatedNum> elements);

// from[n] where path_bits (least significant first) encode n.
AllocatedNum select(ConstraintSystem& cs, std::span<const AllocatedNum> from, std::span<const Boolean> path_bits);

}  // namespace cuzk::circuits::gadgets
