#include "circuits/gadgets/num.hpp"

namespace cuzk::circuits::gadgets {

namespace {

const Variable kOne = Variable::one();

std::optional<Fr> opt_add(std::optional<Fr> a, std::optional<Fr> b) {
  if (!a || !b) return std::nullopt;
  return *a + *b;
}

std::optional<Fr> opt_mul(std::optional<Fr> a, std::optional<Fr> b) {
  if (!a || !b) return std::nullopt;
  return *a * *b;
}

// sum_k 2^k bits[k] - x, the LC that the packing constraint 0 * 0 = lc pins to zero.
LinearCombination packing_lc(const std::vector<AllocatedBit>& bits_le, Variable x) {
  LinearCombination lc;
  lc.reserve(bits_le.size() + 1);
  Fr coeff = Fr::one();
  for (const AllocatedBit& b : bits_le) {
    lc.add(coeff, b.variable());
    coeff = coeff.dbl();
  }
  return lc - x;
}

// AND of all bits, left to right; a single bit is returned as is.
AllocatedBit kary_and(ConstraintSystem& cs, const std::vector<AllocatedBit>& v) {
  AllocatedBit cur = v[0];
  for (std::size_t i = 1; i < v.size(); ++i) {
    auto ns = cs.ns("and", i);
    cur = AllocatedBit::and_(cs, cur, v[i]);
  }
  return cur;
}

}  // namespace

AllocatedNum AllocatedNum::alloc(ConstraintSystem& cs, std::optional<Fr> value) {
  Variable v = cs.alloc("num", [&] { return value; });
  return {v, value};
}

AllocatedNum AllocatedNum::alloc_input(ConstraintSystem& cs, std::optional<Fr> value) {
  Variable v = cs.alloc_input("input num", [&] { return value; });
  return {v, value};
}

void AllocatedNum::inputize(ConstraintSystem& cs) const {
  Variable input = cs.alloc_input("input variable", [&] { return value_; });
  cs.enforce(
      "enforce input is correct", [&] { return LinearCombination(input); }, [] { return LinearCombination(kOne); },
      [&] { return LinearCombination(var_); });
}

std::vector<Boolean> AllocatedNum::to_bits_le(ConstraintSystem& cs) const {
  std::vector<AllocatedBit> bits = field_into_allocated_bits_le(cs, value_);
  const auto zero = [] { return LinearCombination(); };
  cs.enforce("unpacking constraint", zero, zero, [&] { return packing_lc(bits, var_); });
  return {bits.begin(), bits.end()};
}

std::vector<Boolean> AllocatedNum::to_bits_le_strict(ConstraintSystem& cs) const {
  // Walk r - 1 from its top set bit down. A run of ones in r - 1 lets the
  // bits go free; at each zero of r - 1 the value bit may be 1 only if some
  // earlier one-bit of r - 1 was 0 in the value (i.e. the AND of all bits on
  // ones so far, `last_run`, is 0) - a lexicographic x <= r - 1.
  const ff::BigInt<4> r_minus_1 = (-Fr::one()).to_int();
  std::optional<ff::BigInt<4>> x;
  if (value_) x = value_->to_int();
  std::vector<AllocatedBit> result;  // most significant first
  std::optional<AllocatedBit> last_run;
  std::vector<AllocatedBit> current_run;
  bool found_one = false;
  std::size_t i = 0;
  for (std::size_t k = 256; k-- > 0;) {
    const bool b = r_minus_1.bit(k);
    std::optional<bool> a_bit;
    if (x) a_bit = x->bit(k);
    found_one |= b;
    if (!found_one) continue;  // above the top bit of r - 1 (x < r so its bit is 0 too)
    if (b) {
      auto ns = cs.ns("bit", i);
      AllocatedBit ab = AllocatedBit::alloc(cs, a_bit);
      current_run.push_back(ab);
      result.push_back(ab);
    } else {
      if (!current_run.empty()) {
        if (last_run) current_run.push_back(*last_run);
        auto ns = cs.ns("run ending at", i);
        last_run = kary_and(cs, current_run);
        current_run.clear();
      }
      auto ns = cs.ns("bit", i);
      result.push_back(AllocatedBit::alloc_conditionally(cs, a_bit, *last_run));
    }
    ++i;
  }
  std::vector<AllocatedBit> le(result.rbegin(), result.rend());
  const auto zero = [] { return LinearCombination(); };
  cs.enforce("unpacking constraint", zero, zero, [&] { return packing_lc(le, var_); });
  return {le.begin(), le.end()};
}

AllocatedNum AllocatedNum::add(ConstraintSystem& cs, const AllocatedNum& other) const {
  auto value = opt_add(value_, other.value_);
  Variable v = cs.alloc("sum num", [&] { return value; });
  cs.enforce(
      "addition constraint", [&] { return LinearCombination(var_) + other.var_; },
      [] { return LinearCombination(kOne); }, [&] { return LinearCombination(v); });
  return {v, value};
}

AllocatedNum AllocatedNum::mul(ConstraintSystem& cs, const AllocatedNum& other) const {
  auto value = opt_mul(value_, other.value_);
  Variable v = cs.alloc("product num", [&] { return value; });
  cs.enforce(
      "multiplication constraint", [&] { return LinearCombination(var_); },
      [&] { return LinearCombination(other.var_); }, [&] { return LinearCombination(v); });
  return {v, value};
}

AllocatedNum AllocatedNum::square(ConstraintSystem& cs) const {
  auto value = opt_mul(value_, value_);
  Variable v = cs.alloc("squared num", [&] { return value; });
  cs.enforce(
      "squaring constraint", [&] { return LinearCombination(var_); }, [&] { return LinearCombination(var_); },
      [&] { return LinearCombination(v); });
  return {v, value};
}

AllocatedNum AllocatedNum::inverse(ConstraintSystem& cs) const {
  std::optional<Fr> inv;
  if (value_) {
    if (value_->is_zero()) {
      throw SynthesisError(SynthesisErrorKind::kDivisionByZero, "inverse of zero");
    }
    inv = value_->inverse();
  }
  Variable v = cs.alloc("ephemeral inverse", [&] { return inv; });
  cs.enforce(
      "nonzero assertion constraint", [&] { return LinearCombination(var_); }, [&] { return LinearCombination(v); },
      [] { return LinearCombination(kOne); });
  return {v, inv};
}

void AllocatedNum::assert_nonzero(ConstraintSystem& cs) const { (void)inverse(cs); }

std::pair<AllocatedNum, AllocatedNum> AllocatedNum::conditionally_reverse(ConstraintSystem& cs, const AllocatedNum& a,
                                                                          const AllocatedNum& b,
                                                                          const Boolean& condition) {
  auto cond = condition.value();
  std::optional<Fr> cv, dv;
  if (cond && a.value_ && b.value_) {
    cv = *cond ? *b.value_ : *a.value_;
    dv = *cond ? *a.value_ : *b.value_;
  }
  AllocatedNum c;
  {
    auto ns = cs.ns("conditional reversal result 1");
    c = AllocatedNum::alloc(cs, cv);
  }
  // (a - b) * condition = a - c
  cs.enforce(
      "first conditional reversal", [&] { return LinearCombination(a.var_) - b.var_; }, [&] { return condition.lc(); },
      [&] { return LinearCombination(a.var_) - c.var_; });
  AllocatedNum d;
  {
    auto ns = cs.ns("conditional reversal result 2");
    d = AllocatedNum::alloc(cs, dv);
  }
  // (b - a) * condition = b - d
  cs.enforce(
      "second conditional reversal", [&] { return LinearCombination(b.var_) - a.var_; }, [&] { return condition.lc(); },
      [&] { return LinearCombination(b.var_) - d.var_; });
  return {c, d};
}

AllocatedNum AllocatedNum::pick(ConstraintSystem& cs, const Boolean& condition, const AllocatedNum& a,
                                const AllocatedNum& b) {
  auto cond = condition.value();
  std::optional<Fr> cv;
  if (cond) cv = *cond ? a.value_ : b.value_;
  AllocatedNum c;
  {
    auto ns = cs.ns("pick result");
    c = AllocatedNum::alloc(cs, cv);
  }
  // (b - a) * condition = b - c: c = a when condition, else b.
  cs.enforce(
      "pick", [&] { return LinearCombination(b.var_) - a.var_; }, [&] { return condition.lc(); },
      [&] { return LinearCombination(b.var_) - c.var_; });
  return c;
}

// ---------------------------------------------------------------------------
// Num

Num Num::add_bool_with_coeff(const Boolean& bit, const Fr& coeff) && {
  auto bv = bit.value();
  if (value_ && bv) {
    if (*bv) *value_ += coeff;
  } else {
    value_.reset();
  }
  bit.add_to(lc_, coeff);
  return std::move(*this);
}

Num Num::add_bool_with_coeff(const Boolean& bit, const Fr& coeff) const& {
  Num n = *this;
  return std::move(n).add_bool_with_coeff(bit, coeff);
}

Num Num::add(const Num& other) const {
  Num n = *this;
  n.value_ = opt_add(value_, other.value_);
  n.lc_ += other.lc_;
  return n;
}

Num Num::scale(const Fr& s) const {
  Num n = *this;
  n.lc_ *= s;
  if (n.value_) *n.value_ *= s;
  return n;
}

}  // namespace cuzk::circuits::gadgets
