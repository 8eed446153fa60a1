// Host entry points into the device field code (gpu/ff/field.cuh) as compiled
// by nvcc's host pass: the same instruction sequence as on the GPU, with the
// PTX carry flag emulated. No CUDA types, so the gtest side is plain C++.
#pragma once

#include <cstdint>

namespace cuzk::gpu_ff_test {

// Every named form of the Montgomery multiplication, squaring and reduction.
// kRedc*: out = w / R mod p for w = (a, 0) (a's limbs padded with N zero limbs):
// the standard integer of a, as from_mont returns it.
enum class Variant {
  kMulCios,
  kMulEvenOdd,
  kMulDefault,  // operator* (CUZK_FIELD_MUL)
  kSqrCios,
  kSqrEvenOdd,
  kSqrDefault,  // sqr()
  kRedcCios,
  kRedcEvenOdd,
};
inline constexpr Variant kAllVariants[] = {Variant::kMulCios,  Variant::kMulEvenOdd, Variant::kMulDefault,
                                           Variant::kSqrCios,  Variant::kSqrEvenOdd, Variant::kSqrDefault,
                                           Variant::kRedcCios, Variant::kRedcEvenOdd};
const char* name(Variant v);

// The forms of the device Fp2 product (Fp2 = Fp[u]/(u^2 + 1)).
enum class Fp2Variant {
  kMulKaratsuba3,  // three full Montgomery products
  kMulLazy,        // three double-width products, one reduction per coefficient
  kMulDefault,     // operator* (CUZK_FP2_MUL)
};
inline constexpr Fp2Variant kAllFp2Variants[] = {Fp2Variant::kMulKaratsuba3, Fp2Variant::kMulLazy,
                                                 Fp2Variant::kMulDefault};
const char* name(Fp2Variant v);

// Limbs are little-endian 32-bit words: 12 for Fp, 8 for Fr. b is ignored by
// the squarings and reductions.
void fp_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out);
void fr_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out);
// Fp2 elements as 24 limbs: c0's 12 then c1's 12 (the device and host layout).
void fp2_op(Fp2Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out);
// Fp2::norm (12 limbs out) and Fp2::inverse_from_norm(n_inv) (n_inv: 12 limbs).
void fp2_norm(const std::uint32_t* a, std::uint32_t* out);
void fp2_inverse_from_norm(const std::uint32_t* a, const std::uint32_t* n_inv, std::uint32_t* out);

}  // namespace cuzk::gpu_ff_test
