#include "circuits/gadgets/multipack.hpp"

#include <algorithm>

namespace cuzk::circuits::gadgets {

void pack_into_inputs(ConstraintSystem& cs, std::span<const Boolean> bits) {
  for (std::size_t i = 0, start = 0; start < bits.size(); ++i, start += kFrCapacityBits) {
    const std::size_t n = std::min(kFrCapacityBits, bits.size() - start);
    Num num;
    Fr coeff = Fr::one();
    for (std::size_t k = 0; k < n; ++k) {
      num = std::move(num).add_bool_with_coeff(bits[start + k], coeff);
      coeff = coeff.dbl();
    }
    Variable input = cs.alloc_input(groth16::Name("input", i), [&] { return num.value(); });
    cs.enforce(
        groth16::Name("packing constraint", i), [&] { return num.lc(); },
        [] { return LinearCombination(Variable::one()); }, [&] { return LinearCombination(input); });
  }
}

AllocatedNum pack_bits(ConstraintSystem& cs, std::span<const Boolean> bits) {
  Num num;
  Fr coeff = Fr::one();
  const std::size_t n = std::min(kFrCapacityBits, bits.size());
  for (std::size_t k = 0; k < n; ++k) {
    num = std::move(num).add_bool_with_coeff(bits[k], coeff);
    coeff = coeff.dbl();
  }
  AllocatedNum packed;
  {
    auto ns = cs.ns("input");
    packed = AllocatedNum::alloc(cs, num.value());
  }
  cs.enforce(
      "packing constraint", [&] { return num.lc(); }, [] { return LinearCombination(Variable::one()); },
      [&] { return LinearCombination(packed.variable()); });
  return packed;
}

std::vector<Fr> compute_multipacking(const std::vector<bool>& bits) {
  std::vector<Fr> out;
  for (std::size_t start = 0; start < bits.size(); start += kFrCapacityBits) {
    const std::size_t n = std::min(kFrCapacityBits, bits.size() - start);
    Fr cur = Fr::zero(), coeff = Fr::one();
    for (std::size_t k = 0; k < n; ++k) {
      if (bits[start + k]) cur += coeff;
      coeff = coeff.dbl();
    }
    out.push_back(cur);
  }
  return out;
}

std::vector<bool> bytes_to_bits(std::span<const std::uint8_t> bytes) {
  std::vector<bool> out;
  out.reserve(bytes.size() * 8);
  for (auto b : bytes)
    for (int i = 7; i >= 0; --i) out.push_back(((b >> i) & 1) != 0);
  return out;
}

std::vector<bool> bytes_to_bits_le(std::span<const std::uint8_t> bytes) {
  std::vector<bool> out;
  out.reserve(bytes.size() * 8);
  for (auto b : bytes)
    for (int i = 0; i < 8; ++i) out.push_back(((b >> i) & 1) != 0);
  return out;
}

}  // namespace cuzk::circuits::gadgets
