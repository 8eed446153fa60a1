// BLS12-381 base field Fp (381 bits, 6 limbs) and scalar field Fr (255 bits, 4 limbs).
#pragma once

#include "ff/mont.hpp"

namespace cuzk::ff {

struct FpParams {
  static constexpr std::size_t kLimbs = 6;
  static constexpr BigInt<6> kModulus = ff::from_hex<6>(
      "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab");
  // p = 3 mod 4: square roots use one exponentiation, this value is unused.
  static constexpr u64 kTwoAdicNonResidue = 2;
};

struct FrParams {
  static constexpr std::size_t kLimbs = 4;
  static constexpr BigInt<4> kModulus =
      ff::from_hex<4>("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001");
  // 7 generates Fr^* (bellperson's MULTIPLICATIVE_GENERATOR), hence a non-residue.
  static constexpr u64 kTwoAdicNonResidue = 7;
};

using Fp = MontField<FpParams>;
using Fr = MontField<FrParams>;

static_assert(Fp::kBits == 381 && Fp::kBytes == 48);
static_assert(Fr::kBits == 255 && Fr::kBytes == 32);
static_assert(Fr::kTwoAdicity == 32, "Fr has 2^32 roots of unity");
static_assert(Fp::kTwoAdicity == 1);

// Multiplicative generator of Fr^* used for cosets (bellperson, supraseal).
inline constexpr u64 kFrGenerator = 7;

}  // namespace cuzk::ff
