// The device fields' multiplication, squaring and reduction (every named form
// in gpu/ff/field.cuh) run on the host with the PTX carry flag emulated,
// against the host MontField (src/ff) on edge values and random inputs. Needs
// nvcc, not a GPU: this is the CI check of the device arithmetic.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "ff/fp.hpp"
#include "field_emulation.hpp"
#include "field_inputs.hpp"

namespace cuzk::gpu_ff_test {
namespace {

template <class F>
struct DeviceOf;
template <>
struct DeviceOf<ff::Fp> {
  static void op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) {
    fp_op(v, a, b, out);
  }
};
template <>
struct DeviceOf<ff::Fr> {
  static void op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) {
    fr_op(v, a, b, out);
  }
};

template <class F>
constexpr int kLimbs32 = int(F::kLimbs) * 2;

template <class F>
std::string hex(const typename F::Int& x) {
  std::ostringstream s;
  s << "0x" << std::hex;
  for (int i = int(F::kLimbs) - 1; i >= 0; --i) {
    s.width(16);
    s.fill('0');
    s << x.limb[std::size_t(i)];
  }
  return s.str();
}

// The device result of v on raw Montgomery integers a, b (host layout = device layout).
template <class F>
typename F::Int device(Variant v, const typename F::Int& a, const typename F::Int& b) {
  std::uint32_t a32[kLimbs32<F>], b32[kLimbs32<F>], r32[kLimbs32<F>];
  std::memcpy(a32, a.limb.data(), sizeof a32);
  std::memcpy(b32, b.limb.data(), sizeof b32);
  DeviceOf<F>::op(v, a32, b32, r32);
  typename F::Int r;
  std::memcpy(r.limb.data(), r32, sizeof r32);
  return r;
}

// The host's answer for v, in raw Montgomery limbs.
template <class F>
typename F::Int host(Variant v, const typename F::Int& a, const typename F::Int& b) {
  const F x = F::from_raw_mont(a), y = F::from_raw_mont(b);
  switch (v) {
    case Variant::kMulCios:
    case Variant::kMulEvenOdd:
    case Variant::kMulDefault: return (x * y).mont();
    case Variant::kSqrCios:
    case Variant::kSqrEvenOdd:
    case Variant::kSqrDefault: return x.square().mont();
    case Variant::kRedcCios:
    case Variant::kRedcEvenOdd: return x.to_int();
  }
  return {};
}

template <class F>
void expect_variant(Variant v, const typename F::Int& a, const typename F::Int& b) {
  ASSERT_EQ(hex<F>(device<F>(v, a, b)), hex<F>(host<F>(v, a, b)))
      << name(v) << " a=" << hex<F>(a) << " b=" << hex<F>(b);
}

template <class F>
void check_all_variants(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto edges = edge_values<F>();
  for (Variant v : kAllVariants) {
    SCOPED_TRACE(name(v));
    // Every pair of edge values (a = b included), then random pairs and squares.
    for (const auto& a : edges) {
      for (const auto& b : edges) ASSERT_NO_FATAL_FAILURE(expect_variant<F>(v, a, b));
    }
    for (int i = 0; i < 10000; ++i) {
      const auto a = i % 2 == 0 ? F::random(rng).mont() : carry_heavy<F>(rng);
      const auto b = i % 3 == 0 ? a : i % 3 == 1 ? F::random(rng).mont() : carry_heavy<F>(rng);
      ASSERT_NO_FATAL_FAILURE(expect_variant<F>(v, a, b));
    }
  }
}

TEST(GpuFieldEmulation, FpEveryFormMatchesHost) { check_all_variants<ff::Fp>(1); }

TEST(GpuFieldEmulation, FrEveryFormMatchesHost) { check_all_variants<ff::Fr>(2); }

}  // namespace
}  // namespace cuzk::gpu_ff_test
