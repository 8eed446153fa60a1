// Device Fp / Fr / Fp2 arithmetic against the host MontField on random inputs
// (plus edge values 0, 1, p-1), and the limb layout contract (memcpy-compatible).
// Every named multiplication form (CIOS, even/odd) on carry-heavy inputs.
#include <gtest/gtest.h>

#include <vector>

#include "gpu/testing.hpp"
#include "gpu_test_util.hpp"
#include "unit/gpu_ff/field_inputs.hpp"

namespace cuzk::gpu {
namespace {

using testing::FieldOp;

template <class F, class Rng>
std::vector<F> random_with_edges(Rng& rng, std::size_t n) {
  std::vector<F> v;
  v.push_back(F::zero());
  v.push_back(F::one());
  v.push_back(-F::one());                                      // p - 1
  v.push_back(F::from_raw_mont(typename F::Int{}));            // raw zero limbs
  v.push_back(-F::from_raw_mont(ff::from_u64<F::kLimbs>(1)));  // raw limbs p - 1
  while (v.size() < n) v.push_back(F::random(rng));
  return v;
}

template <class F>
void check_field(std::uint64_t salt) {
  auto rng = test::seeded_rng(salt);
  auto dev = test::make_device();
  const std::size_t n = 4099;  // not a multiple of the block size
  std::vector<F> a = random_with_edges<F>(rng, n), b = random_with_edges<F>(rng, n);
  std::shuffle(b.begin(), b.end(), rng);
  const auto mul = testing::field_op(*dev, FieldOp::kMul, std::span<const F>(a), std::span<const F>(b));
  const auto sqr = testing::field_op(*dev, FieldOp::kSqr, std::span<const F>(a), std::span<const F>(b));
  const auto add = testing::field_op(*dev, FieldOp::kAdd, std::span<const F>(a), std::span<const F>(b));
  const auto sub = testing::field_op(*dev, FieldOp::kSub, std::span<const F>(a), std::span<const F>(b));
  const auto std_form = testing::field_op(*dev, FieldOp::kFromMont, std::span<const F>(a), std::span<const F>(b));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(mul[i], a[i] * b[i]) << "mul at " << i;
    ASSERT_EQ(sqr[i], a[i].square()) << "sqr at " << i;
    ASSERT_EQ(add[i], a[i] + b[i]) << "add at " << i;
    ASSERT_EQ(sub[i], a[i] - b[i]) << "sub at " << i;
    ASSERT_EQ(std_form[i].mont(), a[i].to_int()) << "from_mont at " << i;
  }
}

TEST(GpuField, FpMatchesHost) {
  CUZK_REQUIRE_GPU();
  check_field<ff::Fp>(1);
}

TEST(GpuField, FrMatchesHost) {
  CUZK_REQUIRE_GPU();
  check_field<ff::Fr>(2);
}

TEST(GpuField, Fp2MatchesHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(3);
  auto dev = test::make_device();
  const std::size_t n = 1031;
  std::vector<ff::Fp2> a, b;
  a.push_back(ff::Fp2::zero());
  b.push_back(ff::Fp2::one());
  a.push_back({-ff::Fp::one(), -ff::Fp::one()});
  b.push_back({-ff::Fp::one(), ff::Fp::one()});
  while (a.size() < n) {
    a.push_back(ff::Fp2::random(rng));
    b.push_back(ff::Fp2::random(rng));
  }
  const auto mul = testing::field_op(*dev, FieldOp::kMul, std::span<const ff::Fp2>(a), std::span<const ff::Fp2>(b));
  const auto sqr = testing::field_op(*dev, FieldOp::kSqr, std::span<const ff::Fp2>(a), std::span<const ff::Fp2>(b));
  const auto sub = testing::field_op(*dev, FieldOp::kSub, std::span<const ff::Fp2>(a), std::span<const ff::Fp2>(b));
  // The named multiplication forms are Fp / Fr functions; Fp2 has none.
  EXPECT_THROW(
      (void)testing::field_op(*dev, FieldOp::kMulEvenOdd, std::span<const ff::Fp2>(a), std::span<const ff::Fp2>(b)),
      Error);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(mul[i], a[i] * b[i]) << "mul at " << i;
    ASSERT_EQ(sqr[i], a[i].square()) << "sqr at " << i;
    ASSERT_EQ(sub[i], a[i] - b[i]) << "sub at " << i;
  }
}

// Each form of gpu/ff/field.cuh by name (whatever CUZK_FIELD_MUL selects) on
// every pair of edge values (limb boundaries, p-1, ...), a = b squares, and
// random and carry-heavy inputs.
template <class F>
void check_named_forms(std::uint64_t salt) {
  auto rng = test::seeded_rng(salt);
  auto dev = test::make_device();
  const auto edges = gpu_ff_test::edge_values<F>();
  std::vector<F> a, b;
  for (const auto& x : edges) {
    for (const auto& y : edges) {
      a.push_back(F::from_raw_mont(x));
      b.push_back(F::from_raw_mont(y));
    }
  }
  for (int i = 0; i < 20011; ++i) {
    auto carry_heavy = [&] { return F::from_raw_mont(gpu_ff_test::carry_heavy<F>(rng)); };
    a.push_back(i % 2 == 0 ? F::random(rng) : carry_heavy());
    b.push_back(i % 3 == 0 ? a.back() : i % 3 == 1 ? F::random(rng) : carry_heavy());
  }
  const std::span<const F> sa(a), sb(b);
  for (FieldOp op : {FieldOp::kMulCios, FieldOp::kMulEvenOdd}) {
    const auto got = testing::field_op(*dev, op, sa, sb);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(got[i], a[i] * b[i]) << (op == FieldOp::kMulCios ? "mul_cios" : "mul_evenodd") << " at " << i;
    }
  }
  for (FieldOp op : {FieldOp::kSqrCios, FieldOp::kSqrEvenOdd}) {
    const auto got = testing::field_op(*dev, op, sa, sb);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(got[i], a[i].square()) << (op == FieldOp::kSqrCios ? "sqr_cios" : "sqr_evenodd") << " at " << i;
    }
  }
}

TEST(GpuField, FpNamedFormsMatchHost) {
  CUZK_REQUIRE_GPU();
  check_named_forms<ff::Fp>(4);
}

TEST(GpuField, FrNamedFormsMatchHost) {
  CUZK_REQUIRE_GPU();
  check_named_forms<ff::Fr>(5);
}

TEST(GpuDevice, ReportsInfoAndTypedErrors) {
  CUZK_REQUIRE_GPU();
  auto dev = test::make_device();
  EXPECT_GT(dev->info().sm_count, 0);
  EXPECT_GT(dev->free_memory_bytes(), std::size_t{0});
  try {
    Device bad(device_count());
    FAIL() << "constructing a device past the last ordinal must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNoDevice);
  }
  // Asking for more than the card holds is a typed error, not an abort.
  std::vector<ff::Fr> one(1);
  DeviceFrVector v = dev->upload(one);
  EXPECT_EQ(v.size(), 1u);
  std::vector<ff::Fr> wrong(2);
  try {
    dev->download(v, wrong);
    FAIL() << "size mismatch must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

}  // namespace
}  // namespace cuzk::gpu
