#include "circuits/gadgets/uint32.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>

#include "circuits/gadgets/uint_bits.hpp"

namespace cuzk::circuits::gadgets {

namespace {

// Fr::CAPACITY: the largest k with 2^k - 1 < r.
constexpr std::size_t kFrCapacityBits = Fr::kBits - 1;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "uint32: %s\n", what);
  std::abort();
}

}  // namespace

MultiEq::~MultiEq() {
  if (bits_used_ > 0 && std::uncaught_exceptions() == 0) die("MultiEq destroyed with pending equalities");
}

void MultiEq::reserve(std::size_t num_bits) {
  if (kFrCapacityBits <= bits_used_ + num_bits) accumulate();
  if (kFrCapacityBits <= bits_used_ + num_bits) die("equality wider than Fr capacity");
}

void MultiEq::accumulate() {
  cs_.enforce(
      groth16::Name("multieq", ops_), [&] { return std::move(lhs_); },
      [] { return LinearCombination(Variable::one()); }, [&] { return std::move(rhs_); });
  lhs_ = LinearCombination();
  rhs_ = LinearCombination();
  bits_used_ = 0;
  ++ops_;
}

UInt32 UInt32::constant(std::uint32_t v) {
  UInt32 r;
  r.bits_ = detail::constant_bits<32>(v);
  r.value_ = v;
  return r;
}

UInt32 UInt32::alloc(ConstraintSystem& cs, std::optional<std::uint32_t> value) {
  UInt32 r;
  r.bits_ = detail::alloc_bits<32>(cs, value);
  r.value_ = value;
  return r;
}

UInt32 UInt32::from_bits_be(std::span<const Boolean> bits) {
  if (bits.size() != 32) die("from_bits_be needs 32 bits");
  std::array<Boolean, 32> le;
  for (std::size_t i = 0; i < 32; ++i) le[i] = bits[31 - i];
  return from_bits(le);
}

UInt32 UInt32::from_bits(std::span<const Boolean> bits) {
  if (bits.size() != 32) die("from_bits needs 32 bits");
  UInt32 r;
  for (std::size_t i = 0; i < 32; ++i) r.bits_[i] = bits[i];
  r.value_ = detail::value_of_bits_le<32, std::uint32_t>(bits);
  return r;
}

UInt32 UInt32::rotr(std::size_t by) const {
  by %= 32;
  UInt32 r;
  for (std::size_t i = 0; i < 32; ++i) r.bits_[i] = bits_[(i + by) % 32];
  if (value_) r.value_ = by == 0 ? *value_ : (*value_ >> by) | (*value_ << (32 - by));
  return r;
}

UInt32 UInt32::shr(std::size_t by) const {
  by %= 32;
  UInt32 r;
  for (std::size_t i = 0; i < 32; ++i) {
    r.bits_[i] = i + by < 32 ? bits_[i + by] : Boolean::constant(false);
  }
  if (value_) r.value_ = *value_ >> by;
  return r;
}

UInt32 UInt32::xor_(ConstraintSystem& cs, const UInt32& other) const {
  UInt32 r;
  for (unsigned i = 0; i < 32; ++i) {
    auto ns = cs.ns("xor of bit", i);
    r.bits_[i] = Boolean::xor_(cs, bits_[i], other.bits_[i]);
  }
  if (value_ && other.value_) r.value_ = *value_ ^ *other.value_;
  return r;
}

UInt32 UInt32::sha256_maj(ConstraintSystem& cs, const UInt32& a, const UInt32& b, const UInt32& c) {
  UInt32 r;
  for (unsigned i = 0; i < 32; ++i) {
    auto ns = cs.ns("maj", i);
    r.bits_[i] = Boolean::sha256_maj(cs, a.bits_[i], b.bits_[i], c.bits_[i]);
  }
  if (a.value_ && b.value_ && c.value_) {
    r.value_ = (*a.value_ & *b.value_) ^ (*a.value_ & *c.value_) ^ (*b.value_ & *c.value_);
  }
  return r;
}

UInt32 UInt32::sha256_ch(ConstraintSystem& cs, const UInt32& a, const UInt32& b, const UInt32& c) {
  UInt32 r;
  for (unsigned i = 0; i < 32; ++i) {
    auto ns = cs.ns("ch", i);
    r.bits_[i] = Boolean::sha256_ch(cs, a.bits_[i], b.bits_[i], c.bits_[i]);
  }
  if (a.value_ && b.value_ && c.value_) {
    r.value_ = (*a.value_ & *b.value_) ^ (~*a.value_ & *c.value_);
  }
  return r;
}

UInt32 UInt32::addmany(MultiEq& eq, std::span<const UInt32> operands) {
  if (operands.size() < 2 || operands.size() > 10) die("addmany takes 2..10 operands");
  ConstraintSystem& cs = eq.cs();
  // Largest possible sum, whose bit length sets the number of result bits.
  std::uint64_t max_value = std::uint64_t(operands.size()) * 0xffffffffull;
  // (GCC 12 misreads std::optional<u64> arithmetic here as uninitialised.)
  std::uint64_t sum_value = 0;
  bool sum_known = true;
  bool all_constants = true;
  for (const UInt32& op : operands) {
    sum_known = sum_known && op.value_.has_value();
    if (sum_known) sum_value += *op.value_;
    for (const Boolean& b : op.bits_) all_constants &= b.is_constant();
  }
  std::optional<std::uint64_t> sum;
  if (sum_known) sum = sum_value;
  std::optional<std::uint32_t> modular;
  if (sum) modular = std::uint32_t(*sum);
  if (all_constants && modular) return UInt32::constant(*modular);

  std::vector<AllocatedBit> result;
  result.reserve(35);
  for (std::size_t i = 0; max_value != 0; ++i, max_value >>= 1) {
    std::optional<bool> b;
    if (sum) b = ((*sum >> i) & 1) != 0;
    auto ns = cs.ns("result bit", i);
    result.push_back(AllocatedBit::alloc(cs, b));
  }
  eq.enforce_equal(
      result.size(),
      [&] {
        LinearCombination lc;
        lc.reserve(operands.size() * 32);
        for (const UInt32& op : operands) {
          Fr coeff = Fr::one();
          for (const Boolean& b : op.bits_) {
            b.add_to(lc, coeff);
            coeff = coeff.dbl();
          }
        }
        return lc;
      },
      [&] {
        LinearCombination lc;
        lc.reserve(result.size());
        Fr coeff = Fr::one();
        for (const AllocatedBit& b : result) {
          lc.add(coeff, b.variable());
          coeff = coeff.dbl();
        }
        return lc;
      });
  UInt32 r;
  for (unsigned i = 0; i < 32; ++i) r.bits_[i] = result[i];
  r.value_ = modular;
  return r;
}

}  // namespace cuzk::circuits::gadgets
