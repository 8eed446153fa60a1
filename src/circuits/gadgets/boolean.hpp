// Bits in R1CS: AllocatedBit (a variable constrained to {0, 1}) and Boolean
// (a constant, a bit, or the negation of a bit, which costs nothing).
//
// Every gadget here allocates variables and emits constraints in exactly the
// order, and with exactly the linear combinations, of bellpepper-core's
// boolean.rs, so circuits built from them have the R1CS of rust-fil-proofs'
// circuits (same counts, same matrices after merging duplicate terms).
// Values are std::optional: absent in shape-only synthesis.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "groth16/constraint_system.hpp"

namespace cuzk::circuits::gadgets {

using groth16::ConstraintSystem;
using groth16::Fr;
using groth16::LinearCombination;
using groth16::Name;
using groth16::SynthesisError;
using groth16::SynthesisErrorKind;
using groth16::Variable;

// 0 or 1 as a field element, absent when the bit is.
inline std::optional<Fr> bit_value_fr(std::optional<bool> b) {
  if (!b) return std::nullopt;
  return *b ? Fr::one() : Fr::zero();
}

class AllocatedBit {
 public:
  AllocatedBit() = default;
  AllocatedBit(Variable var, std::optional<bool> value) : var_(var), value_(value) {}

  Variable variable() const { return var_; }
  std::optional<bool> value() const { return value_; }

  // One variable, one constraint (1 - b) * b = 0.
  static AllocatedBit alloc(ConstraintSystem& cs, std::optional<bool> value);
  // Like alloc, but the constraint is (1 - must_be_false - b) * b = 0: b may
  // be 1 only when `must_be_false` is 0 (used by to_bits_le_strict).
  static AllocatedBit alloc_conditionally(ConstraintSystem& cs, std::optional<bool> value,
                                          const AllocatedBit& must_be_false);

  // One variable and one constraint each.
  static AllocatedBit xor_(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b);
  static AllocatedBit and_(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b);
  static AllocatedBit and_not(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b);
  static AllocatedBit nor(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b);

 private:
  Variable var_;
  std::optional<bool> value_;
};

class Boolean {
 public:
  enum class Kind : std::uint8_t { kConstant, kIs, kNot };

  // Constant false.
  Boolean() = default;
  Boolean(const AllocatedBit& b) : kind_(Kind::kIs), bit_(b) {}  // NOLINT: bellpepper's From
  static Boolean constant(bool v) {
    Boolean b;
    b.constant_ = v;
    return b;
  }

  Kind kind() const { return kind_; }
  bool is_constant() const { return kind_ == Kind::kConstant; }
  // The underlying bit (meaningless for constants).
  const AllocatedBit& bit() const { return bit_; }
  std::optional<bool> value() const;

  // coeff * (this as 0/1): constant -> coeff*ONE or nothing; Is(b) -> coeff*b;
  // Not(b) -> coeff*ONE - coeff*b.
  LinearCombination lc(const Fr& coeff = Fr::one()) const;
  // Appends the same terms to an existing LC (hot path of packing).
  void add_to(LinearCombination& lc, const Fr& coeff) const;

  Boolean not_() const;

  // Constant folding as bellpepper; otherwise one variable + one constraint.
  static Boolean xor_(ConstraintSystem& cs, const Boolean& a, const Boolean& b);
  static Boolean and_(ConstraintSystem& cs, const Boolean& a, const Boolean& b);
  static Boolean or_(ConstraintSystem& cs, const Boolean& a, const Boolean& b);
  // ch(a, b, c) = (a & b) ^ (!a & c); maj(a, b, c) = (a & b) ^ (a & c) ^ (b & c).
  static Boolean sha256_ch(ConstraintSystem& cs, const Boolean& a, const Boolean& b, const Boolean& c);
  static Boolean sha256_maj(ConstraintSystem& cs, const Boolean& a, const Boolean& b, const Boolean& c);
  // 0 * 0 = a - b style equality; throws kUnsatisfiable for two different constants.
  static void enforce_equal(ConstraintSystem& cs, const Boolean& a, const Boolean& b);

 private:
  Kind kind_ = Kind::kConstant;
  bool constant_ = false;
  AllocatedBit bit_;
};

// 64 allocated bits of `value`, least significant first (bellpepper
// u64_into_boolean_vec_le): 64 variables, 64 constraints.
std::vector<Boolean> u64_into_boolean_vec_le(ConstraintSystem& cs, std::optional<std::uint64_t> value);

// The 255 bits of a field element, least significant first, each allocated
// and booleanity-constrained (bellpepper field_into_allocated_bits_le). Does
// not constrain their sum (see AllocatedNum::to_bits_le).
std::vector<AllocatedBit> field_into_allocated_bits_le(ConstraintSystem& cs, std::optional<Fr> value);

// Allocates 8 * bytes.size() (or `size_bits` when bytes are absent) bits,
// little-endian within each byte (rfp bytes_into_boolean_vec).
std::vector<Boolean> bytes_into_boolean_vec(ConstraintSystem& cs, std::optional<std::span<const std::uint8_t>> bytes,
                                            std::size_t size_bits);
// Same, big-endian within each byte (rfp bytes_into_boolean_vec_be).
std::vector<Boolean> bytes_into_boolean_vec_be(ConstraintSystem& cs, std::optional<std::span<const std::uint8_t>> bytes,
                                               std::size_t size_bits);

// Pads to whole bytes with constant false, then reverses the bit order inside
// each byte (rfp reverse_bit_numbering): LE-bit bytes <-> SHA-256's BE bits.
std::vector<Boolean> reverse_bit_numbering(std::vector<Boolean> bits);

}  // namespace cuzk::circuits::gadgets
