#include "circuits/gadgets/uint64.hpp"

#include <cstdio>
#include <cstdlib>

#include "circuits/gadgets/multipack.hpp"
#include "circuits/gadgets/uint_bits.hpp"

namespace cuzk::circuits::gadgets {

namespace {

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "uint64: %s\n", what);
  std::abort();
}

}  // namespace

UInt64 UInt64::constant(std::uint64_t v) {
  UInt64 r;
  r.bits_ = detail::constant_bits<64>(v);
  r.value_ = v;
  return r;
}

UInt64 UInt64::alloc(ConstraintSystem& cs, std::optional<std::uint64_t> value) {
  UInt64 r;
  r.bits_ = detail::alloc_bits<64>(cs, value);
  r.value_ = value;
  return r;
}

UInt64 UInt64::from_bits_be(std::span<const Boolean> bits) {
  if (bits.size() != 64) die("from_bits_be needs 64 bits");
  std::array<Boolean, 64> le;
  for (std::size_t i = 0; i < 64; ++i) le[i] = bits[63 - i];
  return from_bits(le);
}

UInt64 UInt64::from_bits(std::span<const Boolean> bits) {
  if (bits.size() != 64) die("from_bits needs 64 bits");
  UInt64 r;
  for (std::size_t i = 0; i < 64; ++i) r.bits_[i] = bits[i];
  r.value_ = detail::value_of_bits_le<64, std::uint64_t>(bits);
  return r;
}

void UInt64::pack_into_input(ConstraintSystem& cs) const { pack_into_inputs(cs, bits_); }

}  // namespace cuzk::circuits::gadgets
