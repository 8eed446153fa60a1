// 64-bit unsigned integers as 64 Booleans, least significant first
// (rust-fil-proofs storage-proofs-core gadgets/uint64.rs): used for the
// PoRep challenge (allocated, then packed into one public input).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "circuits/gadgets/boolean.hpp"

namespace cuzk::circuits::gadgets {

class UInt64 {
 public:
  UInt64() = default;
  static UInt64 constant(std::uint64_t v);
  // 64 allocated bits: 64 variables, 64 constraints.
  static UInt64 alloc(ConstraintSystem& cs, std::optional<std::uint64_t> value);
  static UInt64 from_bits_be(std::span<const Boolean> bits);  // MSB first
  static UInt64 from_bits(std::span<const Boolean> bits);     // LSB first

  std::optional<std::uint64_t> value() const { return value_; }
  std::vector<Boolean> to_bits_be() const { return {bits_.rbegin(), bits_.rend()}; }
  std::vector<Boolean> to_bits_le() const { return {bits_.begin(), bits_.end()}; }
  // One public input holding the value, one packing constraint.
  void pack_into_input(ConstraintSystem& cs) const;

 private:
  std::array<Boolean, 64> bits_{};
  std::optional<std::uint64_t> value_;
};

}  // namespace cuzk::circuits::gadgets
