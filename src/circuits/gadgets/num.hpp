// Field elements in R1CS: AllocatedNum (one variable) and Num (a linear
// combination with its value, free to add and scale). Shapes follow
// bellpepper-core's num.rs constraint by constraint.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "circuits/gadgets/boolean.hpp"

namespace cuzk::circuits::gadgets {

class AllocatedNum {
 public:
  AllocatedNum() = default;
  AllocatedNum(Variable var, std::optional<Fr> value) : var_(var), value_(value) {}

  Variable variable() const { return var_; }
  std::optional<Fr> value() const { return value_; }

  // One aux variable, no constraint.
  static AllocatedNum alloc(ConstraintSystem& cs, std::optional<Fr> value);
  // One public input, no constraint.
  static AllocatedNum alloc_input(ConstraintSystem& cs, std::optional<Fr> value);
  // Exposes this value as a new public input: input * 1 = this.
  void inputize(ConstraintSystem& cs) const;

  // 255 booleanity-checked bits + 1 packing constraint; accepts the two
  // encodings x and x + r when both fit 255 bits (non-strict).
  std::vector<Boolean> to_bits_le(ConstraintSystem& cs) const;
  // Canonical bits only (< r), with bellpepper's run-of-ones comparison
  // against r - 1: 255 bits, the AND chains, and 1 packing constraint.
  std::vector<Boolean> to_bits_le_strict(ConstraintSystem& cs) const;

  // One variable + one constraint each.
  AllocatedNum add(ConstraintSystem& cs, const AllocatedNum& other) const;
  AllocatedNum mul(ConstraintSystem& cs, const AllocatedNum& other) const;
  AllocatedNum square(ConstraintSystem& cs) const;
  // Allocates the inverse and enforces x * inv = 1 (kDivisionByZero on 0).
  void assert_nonzero(ConstraintSystem& cs) const;
  // Returns the inverse as a variable: x * inv = 1.
  AllocatedNum inverse(ConstraintSystem& cs) const;

  // (a, b) when condition is false, (b, a) when true: 2 variables, 2 constraints.
  static std::pair<AllocatedNum, AllocatedNum> conditionally_reverse(ConstraintSystem& cs, const AllocatedNum& a,
                                                                     const AllocatedNum& b, const Boolean& condition);
  // a when condition is true, b otherwise (rfp insertion::pick):
  // (b - a) * condition = b - c. One variable, one constraint.
  static AllocatedNum pick(ConstraintSystem& cs, const Boolean& condition, const AllocatedNum& a,
                           const AllocatedNum& b);

 private:
  Variable var_;
  std::optional<Fr> value_;
};

class Num {
 public:
  // Zero, with value 0.
  Num() : value_(Fr::zero()) {}
  Num(const AllocatedNum& n) : value_(n.value()), lc_(n.variable()) {}  // NOLINT
  static Num constant(const Fr& c) {
    Num n;
    n.value_ = c;
    n.lc_ = LinearCombination::constant(c);
    return n;
  }

  std::optional<Fr> value() const { return value_; }
  const LinearCombination& lc() const { return lc_; }
  LinearCombination lc(const Fr& coeff) const { return lc_ * coeff; }

  // this + coeff * bit
  Num add_bool_with_coeff(const Boolean& bit, const Fr& coeff) &&;
  Num add_bool_with_coeff(const Boolean& bit, const Fr& coeff) const&;
  Num add(const Num& other) const;
  Num scale(const Fr& s) const;

 private:
  std::optional<Fr> value_;
  LinearCombination lc_;
};

}  // namespace cuzk::circuits::gadgets
