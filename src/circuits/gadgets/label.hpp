// SDR labelling circuit (rust-fil-proofs storage-proofs-porep
// stacked/circuit/create_label.rs):
//   label = fr32(sha256(replica_id (32 B) | layer u32 BE | node u64 BE |
//                       zeros to 64 B | 37 parents x 32 B))
// packed from the digest's little-endian bits (254 of them) into one number.
// With 38 x 256 allocated input bits the whole costs 532,025 constraints.
#pragma once

#include <span>
#include <vector>

#include "circuits/gadgets/num.hpp"
#include "circuits/gadgets/uint32.hpp"
#include "circuits/gadgets/uint64.hpp"

namespace cuzk::circuits::gadgets {

inline constexpr std::size_t kTotalParents = 37;  // 6 DRG + 8 expander, expanded to 37

// `replica_id`: 32..256 bits (BE per byte); `parents`: 37 bit strings of at
// most 256 bits each, padded with zeros to 32 bytes.
AllocatedNum create_label_circuit(ConstraintSystem& cs, std::span<const Boolean> replica_id,
                                  const std::vector<std::vector<Boolean>>& parents, const UInt32& layer_index,
                                  const UInt64& node);

}  // namespace cuzk::circuits::gadgets
