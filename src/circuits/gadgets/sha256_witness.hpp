// SHA-256 compression for the values-only back end (WitnessCs): the same
// variables, in the same order, with the same values as
// sha256_compression_function's gadget code, and the same constraint count,
// computed on compact bits instead of through Boolean/UInt32 gadgets,
// namespaces and value callbacks.
//
// Why: a 32 GiB PoRep partition's witness is ~4,000 compressions of labeling
// SHA-256 (26,352 variables each); through the gadgets one costs 1.47 ms on
// the dev VM, ~95% of the partition's user time. Every constant folding of
// bellpepper's Boolean (xor, and, ch, maj) and UInt32::addmany is mirrored,
// so partially constant inputs (padding blocks, the IV) allocate exactly what
// the gadgets do; tests compare both paths variable by variable.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "circuits/gadgets/uint32.hpp"

namespace cuzk::circuits::gadgets {

// H' = compress(H, block) into `cs`; nullopt (nothing allocated) when an
// input's value is absent, so that the gadget path reports the missing value.
std::optional<std::vector<UInt32>> sha256_compression_witness(groth16::WitnessCs& cs,
                                                              std::span<const Boolean> input,
                                                              std::span<const UInt32> current_hash_value);

}  // namespace cuzk::circuits::gadgets
