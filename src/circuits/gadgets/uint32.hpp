// 32-bit words as 32 Booleans (least significant first) and MultiEq, the
// batching of many small equalities into few constraints, as in bellpepper's
// uint32.rs / multieq.rs. SHA-256's shape depends on both exactly.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "circuits/gadgets/boolean.hpp"

namespace cuzk::circuits::gadgets {

// Accumulates equalities lhs_i = rhs_i of known bit widths w_i into one
// constraint sum 2^{s_i} lhs_i * 1 = sum 2^{s_i} rhs_i while the total width
// stays below Fr's capacity (254 bits), so no term can wrap modulo r. Pending
// equalities are emitted by flush(), which the owner must call at the end
// (bellpepper does it on drop).
class MultiEq {
 public:
  explicit MultiEq(ConstraintSystem& cs) : cs_(cs) {}
  // Forgetting flush() would silently drop constraints: abort (unless the
  // synthesis is being unwound by an exception anyway).
  ~MultiEq();
  MultiEq(const MultiEq&) = delete;
  MultiEq& operator=(const MultiEq&) = delete;

  ConstraintSystem& cs() { return cs_; }
  // `lhs` and `rhs` are built only when the constraint system keeps constraints.
  template <class BuildLhs, class BuildRhs>
  void enforce_equal(std::size_t num_bits, BuildLhs&& lhs, BuildRhs&& rhs) {
    reserve(num_bits);
    if (cs_.keeps_constraints()) {
      const Fr coeff = Fr::from_u64(2).pow(std::uint64_t(bits_used_));
      lhs_ += lhs() * coeff;
      rhs_ += rhs() * coeff;
    }
    bits_used_ += num_bits;
  }
  void flush() {
    if (bits_used_ > 0) accumulate();
  }

 private:
  void reserve(std::size_t num_bits);
  void accumulate();

  ConstraintSystem& cs_;
  std::size_t ops_ = 0;
  std::size_t bits_used_ = 0;
  LinearCombination lhs_, rhs_;
};

class UInt32 {
 public:
  UInt32() = default;
  static UInt32 constant(std::uint32_t v);
  // 32 allocated bits: 32 variables, 32 constraints.
  static UInt32 alloc(ConstraintSystem& cs, std::optional<std::uint32_t> value);
  // From 32 bits, most significant first / least significant first.
  static UInt32 from_bits_be(std::span<const Boolean> bits);
  static UInt32 from_bits(std::span<const Boolean> bits);

  std::optional<std::uint32_t> value() const { return value_; }
  const std::array<Boolean, 32>& bits() const { return bits_; }  // LSB first
  std::vector<Boolean> into_bits_be() const { return {bits_.rbegin(), bits_.rend()}; }
  std::vector<Boolean> into_bits() const { return {bits_.begin(), bits_.end()}; }

  // Free: rewiring of bits.
  UInt32 rotr(std::size_t by) const;
  UInt32 shr(std::size_t by) const;

  // Bitwise, one Boolean gadget per bit (constants fold).
  UInt32 xor_(ConstraintSystem& cs, const UInt32& other) const;
  static UInt32 sha256_maj(ConstraintSystem& cs, const UInt32& a, const UInt32& b, const UInt32& c);
  static UInt32 sha256_ch(ConstraintSystem& cs, const UInt32& a, const UInt32& b, const UInt32& c);

  // Sum of 2..10 words mod 2^32: allocates the bits of the full sum
  // (32 + ceil(log2 n) bits) and queues sum(operands) = sum(result bits) on
  // `eq`. All-constant operands fold to a constant.
  static UInt32 addmany(MultiEq& eq, std::span<const UInt32> operands);

 private:
  std::array<Boolean, 32> bits_{};
  std::optional<std::uint32_t> value_;
};

}  // namespace cuzk::circuits::gadgets
