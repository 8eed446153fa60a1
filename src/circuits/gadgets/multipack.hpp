// Packing bits into field elements (bellpepper multipack.rs).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "circuits/gadgets/num.hpp"

namespace cuzk::circuits::gadgets {

// Bits per packed element: Fr::CAPACITY = 254.
inline constexpr std::size_t kFrCapacityBits = Fr::kBits - 1;

// Exposes the bits as public inputs, 254 per input, little-endian within an
// input: one input and one constraint (sum * 1 = input) per chunk.
void pack_into_inputs(ConstraintSystem& cs, std::span<const Boolean> bits);

// Packs up to the first 254 bits into one aux number: one variable, one constraint.
AllocatedNum pack_bits(ConstraintSystem& cs, std::span<const Boolean> bits);

// The public-input values pack_into_inputs produces for these bits.
std::vector<Fr> compute_multipacking(const std::vector<bool>& bits);

// Byte <-> bit orders used by the packers.
std::vector<bool> bytes_to_bits(std::span<const std::uint8_t> bytes);     // MSB first per byte
std::vector<bool> bytes_to_bits_le(std::span<const std::uint8_t> bytes);  // LSB first per byte

}  // namespace cuzk::circuits::gadgets
