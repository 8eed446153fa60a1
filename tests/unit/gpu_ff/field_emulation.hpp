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
inline constexpr Variant kAllVariants[] = {Variant::kMulCios,    Variant::kMulEvenOdd, Variant::kMulDefault,
                                           Variant::kSqrCios,    Variant::kSqrEvenOdd, Variant::kSqrDefault,
                                           Variant::kRedcCios,   Variant::kRedcEvenOdd};
const char* name(Variant v);

// Limbs are little-endian 32-bit words: 12 for Fp, 8 for Fr. b is ignored by
// the squarings and reductions.
void fp_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out);
void fr_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out);

}  // namespace cuzk::gpu_ff_test
