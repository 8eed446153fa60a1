#include "circuits/gadgets/boolean.hpp"

#include <algorithm>

namespace cuzk::circuits::gadgets {

namespace {

const Variable kOne = Variable::one();

std::optional<bool> both(std::optional<bool> a, std::optional<bool> b, bool (*f)(bool, bool)) {
  if (!a || !b) return std::nullopt;
  return f(*a, *b);
}

}  // namespace

// ---------------------------------------------------------------------------
// AllocatedBit

AllocatedBit AllocatedBit::alloc(ConstraintSystem& cs, std::optional<bool> value) {
  Variable v = cs.alloc("boolean", [&] { return bit_value_fr(value); });
  // (1 - b) * b = 0
  cs.enforce(
      "boolean constraint", [&] { return LinearCombination(kOne) - v; }, [&] { return LinearCombination(v); },
      [] { return LinearCombination(); });
  return {v, value};
}

AllocatedBit AllocatedBit::alloc_conditionally(ConstraintSystem& cs, std::optional<bool> value,
                                               const AllocatedBit& must_be_false) {
  Variable v = cs.alloc("boolean", [&] { return bit_value_fr(value); });
  // (1 - must_be_false - b) * b = 0
  cs.enforce(
      "boolean constraint", [&] { return LinearCombination(kOne) - must_be_false.variable() - v; },
      [&] { return LinearCombination(v); }, [] { return LinearCombination(); });
  return {v, value};
}

AllocatedBit AllocatedBit::xor_(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b) {
  auto value = both(a.value_, b.value_, [](bool x, bool y) { return x != y; });
  Variable r = cs.alloc("xor result", [&] { return bit_value_fr(value); });
  // (a + a) * b = a + b - c, i.e. c = a + b - 2ab.
  cs.enforce(
      "xor constraint", [&] { return LinearCombination(a.var_) + a.var_; }, [&] { return LinearCombination(b.var_); },
      [&] { return LinearCombination(a.var_) + b.var_ - r; });
  return {r, value};
}

AllocatedBit AllocatedBit::and_(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b) {
  auto value = both(a.value_, b.value_, [](bool x, bool y) { return x && y; });
  Variable r = cs.alloc("and result", [&] { return bit_value_fr(value); });
  cs.enforce(
      "and constraint", [&] { return LinearCombination(a.var_); }, [&] { return LinearCombination(b.var_); },
      [&] { return LinearCombination(r); });
  return {r, value};
}

AllocatedBit AllocatedBit::and_not(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b) {
  auto value = both(a.value_, b.value_, [](bool x, bool y) { return x && !y; });
  Variable r = cs.alloc("and not result", [&] { return bit_value_fr(value); });
  // a * (1 - b) = c
  cs.enforce(
      "and not constraint", [&] { return LinearCombination(a.var_); }, [&] { return LinearCombination(kOne) - b.var_; },
      [&] { return LinearCombination(r); });
  return {r, value};
}

AllocatedBit AllocatedBit::nor(ConstraintSystem& cs, const AllocatedBit& a, const AllocatedBit& b) {
  auto value = both(a.value_, b.value_, [](bool x, bool y) { return !x && !y; });
  Variable r = cs.alloc("nor result", [&] { return bit_value_fr(value); });
  // (1 - a) * (1 - b) = c
  cs.enforce(
      "nor constraint", [&] { return LinearCombination(kOne) - a.var_; },
      [&] { return LinearCombination(kOne) - b.var_; }, [&] { return LinearCombination(r); });
  return {r, value};
}

// ---------------------------------------------------------------------------
// Boolean

std::optional<bool> Boolean::value() const {
  switch (kind_) {
    case Kind::kConstant:
      return constant_;
    case Kind::kIs:
      return bit_.value();
    case Kind::kNot: {
      auto v = bit_.value();
      if (!v) return std::nullopt;
      return !*v;
    }
  }
  return std::nullopt;
}

void Boolean::add_to(LinearCombination& lc, const Fr& coeff) const {
  switch (kind_) {
    case Kind::kConstant:
      if (constant_) lc.add(coeff, kOne);
      break;
    case Kind::kIs:
      lc.add(coeff, bit_.variable());
      break;
    case Kind::kNot:
      lc.add(coeff, kOne);
      lc.add(-coeff, bit_.variable());
      break;
  }
}

LinearCombination Boolean::lc(const Fr& coeff) const {
  LinearCombination lc;
  add_to(lc, coeff);
  return lc;
}

Boolean Boolean::not_() const {
  Boolean r = *this;
  switch (kind_) {
    case Kind::kConstant:
      r.constant_ = !constant_;
      break;
    case Kind::kIs:
      r.kind_ = Kind::kNot;
      break;
    case Kind::kNot:
      r.kind_ = Kind::kIs;
      break;
  }
  return r;
}

Boolean Boolean::xor_(ConstraintSystem& cs, const Boolean& a, const Boolean& b) {
  // Match arms in bellpepper's order: constant false, constant true, mixed
  // polarity (xor of the Is with the Not's bit, negated), same polarity.
  if (a.kind_ == Kind::kConstant && !a.constant_) return b;
  if (b.kind_ == Kind::kConstant && !b.constant_) return a;
  if (a.kind_ == Kind::kConstant) return b.not_();
  if (b.kind_ == Kind::kConstant) return a.not_();
  if (a.kind_ != b.kind_) {
    const Boolean& is = a.kind_ == Kind::kIs ? a : b;
    const Boolean& nt = a.kind_ == Kind::kIs ? b : a;
    return Boolean::xor_(cs, is, nt.not_()).not_();
  }
  return Boolean(AllocatedBit::xor_(cs, a.bit_, b.bit_));
}

Boolean Boolean::and_(ConstraintSystem& cs, const Boolean& a, const Boolean& b) {
  if ((a.kind_ == Kind::kConstant && !a.constant_) || (b.kind_ == Kind::kConstant && !b.constant_))
    return Boolean::constant(false);
  if (a.kind_ == Kind::kConstant) return b;
  if (b.kind_ == Kind::kConstant) return a;
  if (a.kind_ == Kind::kIs && b.kind_ == Kind::kNot) return AllocatedBit::and_not(cs, a.bit_, b.bit_);
  if (a.kind_ == Kind::kNot && b.kind_ == Kind::kIs) return AllocatedBit::and_not(cs, b.bit_, a.bit_);
  if (a.kind_ == Kind::kNot) return AllocatedBit::nor(cs, a.bit_, b.bit_);
  return AllocatedBit::and_(cs, a.bit_, b.bit_);
}

Boolean Boolean::or_(ConstraintSystem& cs, const Boolean& a, const Boolean& b) {
  auto ns = cs.ns("not and (not a) (not b)");
  return Boolean::and_(cs, a.not_(), b.not_()).not_();
}

Boolean Boolean::sha256_ch(ConstraintSystem& cs, const Boolean& a, const Boolean& b, const Boolean& c) {
  std::optional<bool> value;
  {
    auto va = a.value(), vb = b.value(), vc = c.value();
    if (va && vb && vc) value = (*va && *vb) != (!*va && *vc);
  }
  auto is_const = [](const Boolean& x, bool v) { return x.kind_ == Kind::kConstant && x.constant_ == v; };
  // Constant cases, in bellpepper's match order.
  if (a.is_constant() && b.is_constant() && c.is_constant()) return Boolean::constant(*value);
  if (is_const(a, false)) return c;
  if (is_const(b, false)) return Boolean::and_(cs, a.not_(), c);
  if (is_const(c, false)) return Boolean::and_(cs, a, b);
  if (is_const(c, true)) return Boolean::and_(cs, a, b.not_()).not_();
  if (is_const(b, true)) return Boolean::and_(cs, a.not_(), c.not_()).not_();
  // a constant true (or all allocated): the general form below.
  Variable ch = cs.alloc("ch", [&] { return bit_value_fr(value); });
  // ch = a(b - c) + c:  (b - c) * a = ch - c
  cs.enforce(
      "ch computation",
      [&] {
        LinearCombination l = b.lc();
        c.add_to(l, -Fr::one());
        return l;
      },
      [&] { return a.lc(); },
      [&] {
        LinearCombination l(ch);
        c.add_to(l, -Fr::one());
        return l;
      });
  return AllocatedBit(ch, value);
}

Boolean Boolean::sha256_maj(ConstraintSystem& cs, const Boolean& a, const Boolean& b, const Boolean& c) {
  std::optional<bool> value;
  {
    auto va = a.value(), vb = b.value(), vc = c.value();
    if (va && vb && vc) value = ((*va && *vb) != (*va && *vc)) != (*vb && *vc);
  }
  auto is_const = [](const Boolean& x, bool v) { return x.kind_ == Kind::kConstant && x.constant_ == v; };
  if (a.is_constant() && b.is_constant() && c.is_constant()) return Boolean::constant(*value);
  if (is_const(a, false)) return Boolean::and_(cs, b, c);
  if (is_const(b, false)) return Boolean::and_(cs, a, c);
  if (is_const(c, false)) return Boolean::and_(cs, a, b);
  if (is_const(c, true)) return Boolean::and_(cs, a.not_(), b.not_()).not_();
  if (is_const(b, true)) return Boolean::and_(cs, a.not_(), c.not_()).not_();
  if (is_const(a, true)) return Boolean::and_(cs, b.not_(), c.not_()).not_();

  Variable maj = cs.alloc("maj", [&] { return bit_value_fr(value); });
  Boolean bc;
  {
    auto ns = cs.ns("b and c");
    bc = Boolean::and_(cs, b, c);
  }
  // maj = a(b + c - 2bc) + bc:  (2bc - b - c) * a = bc - maj
  cs.enforce(
      "maj computation",
      [&] {
        LinearCombination l = bc.lc();
        bc.add_to(l, Fr::one());
        b.add_to(l, -Fr::one());
        c.add_to(l, -Fr::one());
        return l;
      },
      [&] { return a.lc(); }, [&] { return bc.lc() - maj; });
  return AllocatedBit(maj, value);
}

void Boolean::enforce_equal(ConstraintSystem& cs, const Boolean& a, const Boolean& b) {
  if (a.is_constant() && b.is_constant()) {
    if (a.constant_ != b.constant_) {
      throw SynthesisError(SynthesisErrorKind::kUnsatisfiable, "two different constant booleans");
    }
    return;
  }
  auto zero = [] { return LinearCombination(); };
  if (a.kind_ == Kind::kConstant || b.kind_ == Kind::kConstant) {
    const Boolean& k = a.is_constant() ? a : b;
    const Boolean& x = a.is_constant() ? b : a;
    if (k.constant_) {
      cs.enforce("enforce equal to one", zero, zero, [&] {
        LinearCombination l(kOne);
        x.add_to(l, -Fr::one());
        return l;
      });
    } else {
      cs.enforce("enforce equal to zero", zero, zero, [&] { return x.lc(); });
    }
    return;
  }
  cs.enforce("enforce equal", zero, zero, [&] {
    LinearCombination l = a.lc();
    b.add_to(l, -Fr::one());
    return l;
  });
}

// ---------------------------------------------------------------------------
// Bit vectors

std::vector<Boolean> u64_into_boolean_vec_le(ConstraintSystem& cs, std::optional<std::uint64_t> value) {
  std::vector<Boolean> bits;
  bits.reserve(64);
  for (unsigned i = 0; i < 64; ++i) {
    std::optional<bool> b;
    if (value) b = ((*value >> i) & 1) != 0;
    auto ns = cs.ns("bit", i);
    bits.emplace_back(AllocatedBit::alloc(cs, b));
  }
  return bits;
}

std::vector<AllocatedBit> field_into_allocated_bits_le(ConstraintSystem& cs, std::optional<Fr> value) {
  constexpr std::size_t kBits = Fr::kBits;  // 255
  std::optional<ff::BigInt<4>> x;
  if (value) x = value->to_int();
  std::vector<AllocatedBit> bits;
  bits.reserve(kBits);
  for (std::size_t i = 0; i < kBits; ++i) {
    std::optional<bool> b;
    if (x) b = x->bit(i);
    auto ns = cs.ns("bit", i);
    bits.push_back(AllocatedBit::alloc(cs, b));
  }
  return bits;
}

namespace {

std::vector<Boolean> bytes_into_bits_impl(ConstraintSystem& cs, std::optional<std::span<const std::uint8_t>> bytes,
                                          std::size_t size_bits, bool big_endian) {
  const std::size_t n = bytes ? bytes->size() * 8 : size_bits;
  std::vector<Boolean> bits;
  bits.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::optional<bool> b;
    if (bytes) {
      const unsigned shift = big_endian ? 7 - unsigned(i % 8) : unsigned(i % 8);
      b = (((*bytes)[i / 8] >> shift) & 1) != 0;
    }
    auto ns = cs.ns("bit", i);
    bits.emplace_back(AllocatedBit::alloc(cs, b));
  }
  return bits;
}

}  // namespace

std::vector<Boolean> bytes_into_boolean_vec(ConstraintSystem& cs, std::optional<std::span<const std::uint8_t>> bytes,
                                            std::size_t size_bits) {
  return bytes_into_bits_impl(cs, bytes, size_bits, false);
}

std::vector<Boolean> bytes_into_boolean_vec_be(ConstraintSystem& cs, std::optional<std::span<const std::uint8_t>> bytes,
                                               std::size_t size_bits) {
  return bytes_into_bits_impl(cs, bytes, size_bits, true);
}

std::vector<Boolean> reverse_bit_numbering(std::vector<Boolean> bits) {
  while (bits.size() % 8 != 0) bits.push_back(Boolean::constant(false));
  for (std::size_t i = 0; i < bits.size(); i += 8) std::reverse(bits.begin() + i, bits.begin() + i + 8);
  return bits;
}

}  // namespace cuzk::circuits::gadgets
