// Small equality/arithmetic helpers of rust-fil-proofs (storage-proofs-core
// gadgets/constraint.rs and encode.rs), one constraint each.
#pragma once

#include "circuits/gadgets/num.hpp"

namespace cuzk::circuits::gadgets {

// a * 1 = b
void enforce_equal(ConstraintSystem& cs, const Name& name, const AllocatedNum& a, const AllocatedNum& b);
// (a + b) * 1 = sum
void enforce_sum(ConstraintSystem& cs, const Name& name, const AllocatedNum& a, const AllocatedNum& b,
                 const AllocatedNum& sum);
// (difference + b) * 1 = a
void enforce_difference(ConstraintSystem& cs, const Name& name, const AllocatedNum& a, const AllocatedNum& b,
                        const AllocatedNum& difference);
// New variable a + b (namespace "add_num" + "sum constraint").
AllocatedNum add(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b);
// New variable a - b.
AllocatedNum sub(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b);
// SDR encoding: replica node = key (label) + value (data); decode inverts it.
AllocatedNum encode(ConstraintSystem& cs, const AllocatedNum& key, const AllocatedNum& value);
AllocatedNum decode(ConstraintSystem& cs, const AllocatedNum& key, const AllocatedNum& value);

}  // namespace cuzk::circuits::gadgets
