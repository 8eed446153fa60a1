// GPU MSM against host arithmetic. Bases are P_j = s_j * G for known random
// s_j, so sum_i a_i P_i must equal (sum_i a_i s_i) * G: the expected value
// comes from Fr arithmetic and one host scalar multiplication, independent of
// any MSM code. Sizes are not powers of two; bases repeat (n > distinct) so
// buckets see equal and opposite points, and the inputs include the identity
// base and the scalars 0, 1 and r - 1. The MSM (the affine tree, its tree or
// running-sum reduction) runs through the same checks, also with a scratch
// limit small enough to force several chunks, windows whose top window holds
// only the carry (c = 15, 17), and skewed scalars (a few values repeated over
// all points: buckets far longer than the planned rounds), and on inputs built
// to hit each exceptional affine add (doubling, P + (-P), identity points).
// CpuMsmAgreesOnRandomBases compares it with the CPU back end (src/msm) on
// random bases and scalars.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "host_ref.hpp"
#include "known_bases.hpp"
#include "msm/msm.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;

template <class F>
using Setup = testing::KnownBases<F>;
using testing::make_known_bases;

std::vector<Fr> make_scalars(std::mt19937_64& rng, std::size_t n) {
  std::vector<Fr> a(n);
  for (auto& x : a) x = Fr::random(rng);
  if (n > 4) {
    a[0] = Fr::zero();
    a[2] = Fr::one();
    a[3] = -Fr::one();  // r - 1: all windows at their largest
    a[4] = -Fr::one();
  }
  return a;
}

// n scalars drawn from `values` random values (values = 0: all independent).
std::vector<Fr> make_scalars(std::mt19937_64& rng, std::size_t n, std::size_t values) {
  if (values == 0) return make_scalars(rng, n);
  std::vector<Fr> pool(values);
  for (auto& x : pool) x = Fr::random(rng);
  std::vector<Fr> a(n);
  for (auto& x : a) x = pool[rng() % values];
  return a;
}

template <class F, class Bases>
void check_msm(Device& dev, std::mt19937_64& rng, const ec::Affine<F>& generator, const F& curve_b, std::size_t n,
               std::size_t distinct, Bases (Device::*upload)(std::span<const ec::Affine<F>>),
               std::size_t scalar_values = 0) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " window=" << dev.msm_tuning().window_bits
                                    << " limit=" << dev.msm_tuning().scratch_limit_bytes);
  const Setup<F> s = make_known_bases<F>(rng, generator, n, distinct);
  const std::vector<Fr> a = make_scalars(rng, n, scalar_values);
  Fr log_sum = Fr::zero();
  for (std::size_t i = 0; i < n; ++i) log_sum += a[i] * s.logs[i];
  const ec::Jacobian<F> expect = ref::mul(ref::from_affine(generator), log_sum.to_int());

  const Bases bases = (dev.*upload)(s.points);
  const ec::Jacobian<F> got = dev.msm(bases, std::span<const Fr>(a));
  EXPECT_TRUE(ref::on_curve(got, curve_b)) << "n=" << n;
  EXPECT_TRUE(ref::eq(got, expect)) << "n=" << n;

  // A prefix of the resident bases (fewer scalars than bases).
  const std::size_t m = n / 3 + 1;
  Fr prefix_sum = Fr::zero();
  for (std::size_t i = 0; i < m; ++i) prefix_sum += a[i] * s.logs[i];
  const ec::Jacobian<F> got_prefix = dev.msm(bases, std::span<const Fr>(a).first(m));
  EXPECT_TRUE(ref::eq(got_prefix, ref::mul(ref::from_affine(generator), prefix_sum.to_int()))) << "m=" << m;
}

void set_tuning(Device& dev, int window_bits = 0, std::size_t limit_bytes = kDefaultMsmScratchBytes) {
  Device::MsmTuning t;
  t.window_bits = window_bits;
  t.scratch_limit_bytes = limit_bytes;
  dev.set_msm_tuning(t);
}

TEST(GpuMsm, G1MatchesHostOnOddSizes) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(21);
  auto dev = test::make_device();
  for (std::size_t n : {std::size_t{1000}, std::size_t{3001}, std::size_t{100003}}) {
    check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, n, std::min<std::size_t>(n, 1024),
                      &Device::upload_g1_bases);
  }
}

TEST(GpuMsm, G2MatchesHostOnOddSizes) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(22);
  auto dev = test::make_device();
  for (std::size_t n : {std::size_t{1000}, std::size_t{30001}}) {
    check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, n, std::min<std::size_t>(n, 512),
                       &Device::upload_g2_bases);
  }
}

// A scratch limit far below what one chunk of all points needs: the MSM runs
// in several chunks (reported by the phase times) and must still be exact.
TEST(GpuMsm, ChunkedRunsMatchHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(23);
  auto dev = test::make_device();
  // One chunk of all points at c = 12 (22 windows) needs 16 * 22 B of sort
  // pairs per point: 67 MiB for 200003 G1 points (plus 8 MiB of buckets),
  // 40 MiB for 120001 G2 points (plus 17 MiB of buckets).
  constexpr std::size_t kLimit = std::size_t{48} << 20;
  set_tuning(*dev, 12, kLimit);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 200003, 1024, &Device::upload_g1_bases);
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 120001, 256, &Device::upload_g2_bases);
  // The chunk count is visible in the phase times: sum_i a_i G = (sum_i a_i) G.
  const std::vector<ec::G1Affine> bases(200003, ec::kG1Generator);
  const G1Bases db = dev->upload_g1_bases(bases);
  const std::vector<Fr> a = make_scalars(rng, bases.size());
  Fr a_sum = Fr::zero();
  for (const Fr& x : a) a_sum += x;
  Device::MsmPhaseTimes ph;
  const ec::G1Jacobian got = dev->msm(db, dev->upload(a), &ph);
  EXPECT_GE(ph.chunks, 2u);
  EXPECT_EQ(ph.window_bits, 12);
  EXPECT_TRUE(ref::eq(got, ref::mul(ref::from_affine(ec::kG1Generator), a_sum.to_int())));
}

// Windows with unusual top windows (c = 15 and 17: only the carry; c = 14: 3
// bits; c = 4: many windows) and skewed scalars whose buckets outlast the
// planned rounds (the finish kernels sum the leftovers).
TEST(GpuMsm, WindowSweepAndSkewedScalars) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(24);
  auto dev = test::make_device();
  for (int c : {4, 9, 14, 15, 17}) {
    set_tuning(*dev, c);
    check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 10007, 512, &Device::upload_g1_bases);
  }
  set_tuning(*dev);
  // 3 distinct scalars over 30011 points: in every window ~10000 points share a bucket.
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 30011, 1024, &Device::upload_g1_bases, 3);
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 6007, 256, &Device::upload_g2_bases, 2);
}

TEST(GpuMsm, ScratchTooSmallIsAnError) {
  CUZK_REQUIRE_GPU();
  auto dev = test::make_device();
  set_tuning(*dev, 0, std::size_t{1} << 20);
  const std::vector<ec::G1Affine> bases(100000, ec::kG1Generator);
  const G1Bases db = dev->upload_g1_bases(bases);
  const std::vector<Fr> ones(100000, Fr::one());  // never accumulated: both calls must throw first
  try {
    (void)dev->msm(db, std::span<const Fr>(ones));
    FAIL() << "a 1 MiB scratch limit must not fit a 100000-point MSM";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfDeviceMemory);
    EXPECT_NE(std::string(e.what()).find("scratch"), std::string::npos) << e.what();
  }
  // Window size out of range.
  set_tuning(*dev, 30);
  try {
    (void)dev->msm(db, std::span<const Fr>(ones));
    FAIL() << "window 30 must be rejected";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

TEST(GpuMsm, EdgeCases) {
  CUZK_REQUIRE_GPU();
  auto dev = test::make_device();
  // Empty MSM is the identity.
  const G1Bases none = dev->upload_g1_bases({});
  EXPECT_TRUE(dev->msm(none, std::span<const Fr>()).is_identity());
  // P + (-P) style cancellation: scalars a and r - a on the same base.
  const std::vector<ec::G1Affine> two = {ec::kG1Generator, ec::kG1Generator};
  const G1Bases b = dev->upload_g1_bases(two);
  const Fr a = Fr::from_u64(123456789);
  const std::vector<Fr> cancel = {a, -a};
  EXPECT_TRUE(dev->msm(b, std::span<const Fr>(cancel)).is_identity());
  // More scalars than bases is an error.
  const std::vector<Fr> three(3, Fr::one());
  try {
    (void)dev->msm(b, std::span<const Fr>(three));
    FAIL() << "3 scalars over 2 bases must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
  // Window choice grows with n.
  EXPECT_LT(Device::msm_window_bits(1000), Device::msm_window_bits(std::size_t{1} << 24));
}

// The MSM on inputs built to hit every exceptional case of an add, in order:
// the bases cycle through G, G, 2G, -4G, O, -G with scalar 1 (bucket 1 of window 0),
// so a run's accumulator goes G -> 2G (x1 == x2, doubling) -> 4G (doubling)
// -> O (4G + (-4G)) -> O (identity point) -> -G (new start) -> O (-G + G) ...
// Every 7th scalar is 2^c - 1 (digit -1 in window 0: the negated point, and
// +1 in window 1), every 11th is random (other buckets), every 13th is 0.
// With c = 8, bucket 1 of window 0 holds thousands of points: every tree
// round pairs exceptional points.
template <class F, class Bases>
void check_exceptional(Device& dev, std::mt19937_64& rng, const ec::Affine<F>& generator, const F& curve_b,
                       std::size_t n, Bases (Device::*upload)(std::span<const ec::Affine<F>>)) {
  constexpr int kWindow = 8;
  set_tuning(dev, kWindow);
  const ec::Jacobian<F> g = ref::from_affine(generator);
  const Fr one = Fr::one();
  const std::vector<Fr> cycle_logs = {one, one, one + one, -Fr::from_u64(4), Fr::zero(), -one};
  std::vector<ec::Jacobian<F>> cycle_jac;
  for (const Fr& l : cycle_logs) cycle_jac.push_back(ref::mul(g, l.to_int()));
  const std::vector<ec::Affine<F>> cycle = ref::to_affine<F>(cycle_jac);
  ASSERT_TRUE(cycle[4].infinity);
  std::vector<ec::Affine<F>> bases(n);
  std::vector<Fr> logs(n), a(n);
  for (std::size_t i = 0; i < n; ++i) {
    bases[i] = cycle[i % cycle.size()];
    logs[i] = cycle_logs[i % cycle.size()];
    a[i] = one;
    if (i % 7 == 6) a[i] = Fr::from_u64((1u << kWindow) - 1);
    if (i % 11 == 10) a[i] = Fr::random(rng);
    if (i % 13 == 12) a[i] = Fr::zero();
  }
  Fr log_sum = Fr::zero();
  for (std::size_t i = 0; i < n; ++i) log_sum += a[i] * logs[i];
  const Bases db = (dev.*upload)(bases);
  const ec::Jacobian<F> got = dev.msm(db, std::span<const Fr>(a));
  EXPECT_TRUE(ref::on_curve(got, curve_b)) << "n=" << n;
  EXPECT_TRUE(ref::eq(got, ref::mul(g, log_sum.to_int()))) << "n=" << n;
  // The same points with every scalar 1: only bucket 1 of window 0, so each
  // round pairs the cycle's exceptional points back to back.
  const std::vector<Fr> ones(n, one);
  Fr ones_sum = Fr::zero();
  for (std::size_t i = 0; i < n; ++i) ones_sum += logs[i];
  EXPECT_TRUE(ref::eq(dev.msm(db, std::span<const Fr>(ones)), ref::mul(g, ones_sum.to_int()))) << "ones, n=" << n;
}

// The affine tree on the exceptional-add cycle (doubling, P + (-P), identity
// points inside a pair, at every round), the bench's shape (repeated bases:
// equal x at every round; 2^20 + 7 points fill the grid), n copies of G
// (doublings all the way up) and identity bases. Skewed scalars (buckets far
// longer than the planned rounds: the finish kernel sums the leftovers) are
// in WindowSweepAndSkewedScalars.
TEST(GpuMsm, AffineTreeExceptionalPairsAndLongBuckets) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(31);
  auto dev = test::make_device();
  check_exceptional<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 20011, &Device::upload_g1_bases);
  check_exceptional<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 6007, &Device::upload_g2_bases);
  set_tuning(*dev);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, (std::size_t{1} << 20) + 7, 2048, &Device::upload_g1_bases);
  const G1Bases gens = dev->upload_g1_bases(std::vector<ec::G1Affine>(5003, ec::kG1Generator));
  EXPECT_TRUE(ref::eq(dev->msm(gens, std::span<const Fr>(std::vector<Fr>(5003, Fr::one()))),
                      ref::mul(ref::from_affine(ec::kG1Generator), Fr::from_u64(5003).to_int())));
  const G1Bases ids = dev->upload_g1_bases(std::vector<ec::G1Affine>(5003, ec::G1Affine::identity()));
  EXPECT_TRUE(dev->msm(ids, std::span<const Fr>(make_scalars(rng, 5003))).is_identity());
}

// The tree's two buffer sets on two streams: at c = 4 (64 windows) a
// 2^20-point chunk has 2^26 entries, more than one slab holds in the 8 GiB
// test arena, so the windows run as several slabs alternating between the
// MSM's stream and the side stream (GpuMsmPlan.AffineTreeTwoSetsInTheH200Arena
// replays this plan on the host: 2 sets, more than two slabs).
TEST(GpuMsm, AffineTreeSlabsOnTwoStreams) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(32);
  auto dev = test::make_device();
  set_tuning(*dev, 4);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, (std::size_t{1} << 20) + 7, 2048, &Device::upload_g1_bases);
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, (std::size_t{1} << 20) + 7, 256, &Device::upload_g2_bases);
}

// The tree reduction (msm::TreeReduceShape) over one and two chunks of affine
// buckets, and the running-sum reduction the tree keeps for three or more
// chunks, with uniform and with skewed scalars: c = 12 under scratch limits from 32 to 192 MiB (host model of these
// plans: 200003 G1 points take 5, 3, 2 and 1 chunks; 120001 G2 points 4, 2
// and 1 from 48 MiB up).
TEST(GpuMsm, AffineTreeReductionByChunks) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(33);
  auto dev = test::make_device();
  std::set<std::pair<std::size_t, bool>> g1_seen, g2_seen;
  const G1Bases g1_gens = dev->upload_g1_bases(std::vector<ec::G1Affine>(200003, ec::kG1Generator));
  const G2Bases g2_gens = dev->upload_g2_bases(std::vector<ec::G2Affine>(120001, ec::kG2Generator));
  for (std::size_t mib : {32, 48, 64, 96, 192}) {
    set_tuning(*dev, 12, mib << 20);
    check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 200003, 1024, &Device::upload_g1_bases);
    // Skewed scalars: buckets far longer than the planned rounds, summed by
    // finish_long_kernel into affine (1-2 chunks) or XYZZ buckets (3+).
    check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 200003, 1024, &Device::upload_g1_bases, 3);
    // sum_i a_i G = (sum_i a_i) G, with the plan's chunks and reduction.
    const std::vector<Fr> a = make_scalars(rng, 200003);
    Fr a_sum = Fr::zero();
    for (const Fr& x : a) a_sum += x;
    Device::MsmPhaseTimes ph;
    EXPECT_TRUE(
        ref::eq(dev->msm(g1_gens, dev->upload(a), &ph), ref::mul(ref::from_affine(ec::kG1Generator), a_sum.to_int())))
        << mib << " MiB";
    EXPECT_EQ(ph.reduced_by_trees, ph.chunks <= 2) << mib << " MiB, chunks " << ph.chunks;
    g1_seen.insert({std::min<std::size_t>(ph.chunks, 3), ph.reduced_by_trees});
    if (mib < 48) continue;  // 120001 G2 points need more
    check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 120001, 256, &Device::upload_g2_bases);
    check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 120001, 256, &Device::upload_g2_bases, 2);
    const std::vector<Fr> b(a.begin(), a.begin() + 120001);
    Fr b_sum = Fr::zero();
    for (const Fr& x : b) b_sum += x;
    EXPECT_TRUE(
        ref::eq(dev->msm(g2_gens, dev->upload(b), &ph), ref::mul(ref::from_affine(ec::kG2Generator), b_sum.to_int())))
        << mib << " MiB";
    EXPECT_EQ(ph.reduced_by_trees, ph.chunks <= 2) << mib << " MiB, chunks " << ph.chunks;
    g2_seen.insert({std::min<std::size_t>(ph.chunks, 3), ph.reduced_by_trees});
  }
  for (const auto& seen : {g1_seen, g2_seen}) {
    EXPECT_TRUE(seen.count({1, true})) << "no one-chunk tree reduction";
    EXPECT_TRUE(seen.count({2, true})) << "no two-chunk tree reduction";
    EXPECT_TRUE(seen.count({3, false})) << "no running-sum reduction for 3+ chunks";
  }
}

// All-identity bases, all-zero scalars and a single point: the identity or
// the point itself.
TEST(GpuMsm, IdentityBasesZeroScalarsAndASinglePoint) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(26);
  auto dev = test::make_device();
  constexpr std::size_t kN = 5003;
  const G1Bases ids = dev->upload_g1_bases(std::vector<ec::G1Affine>(kN, ec::G1Affine::identity()));
  const std::vector<Fr> a = make_scalars(rng, kN);
  EXPECT_TRUE(dev->msm(ids, std::span<const Fr>(a)).is_identity());
  const G1Bases gens = dev->upload_g1_bases(std::vector<ec::G1Affine>(kN, ec::kG1Generator));
  EXPECT_TRUE(dev->msm(gens, std::span<const Fr>(std::vector<Fr>(kN, Fr::zero()))).is_identity());
  const Fr x = Fr::random(rng);
  const std::vector<Fr> single = {x};
  EXPECT_TRUE(
      ref::eq(dev->msm(gens, std::span<const Fr>(single)), ref::mul(ref::from_affine(ec::kG1Generator), x.to_int())));
  // n copies of G with scalar 1: the doubling chain G, 2G, 4G, ... in the
  // tree's rounds; expected n G.
  EXPECT_TRUE(ref::eq(dev->msm(gens, std::span<const Fr>(std::vector<Fr>(kN, Fr::one()))),
                      ref::mul(ref::from_affine(ec::kG1Generator), Fr::from_u64(kN).to_int())));
}

// G2: a non-power-of-two size with few distinct bases (long repeats of equal
// and opposite points in every bucket) and every third scalar 0, then 2^18 + 3
// points (c = 16: 4.2M entries), and degenerate inputs: all scalars 0, all
// bases the identity, n copies of G with scalar 1 (one bucket: doublings up
// the tree).
TEST(GpuMsm, G2RepeatedBasesAndZeros) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(28);
  auto dev = test::make_device();
  {
    constexpr std::size_t kN = 50021;
    const auto s = make_known_bases<ff::Fp2>(rng, ec::kG2Generator, kN, 37);
    std::vector<Fr> a = make_scalars(rng, kN);
    for (std::size_t i = 0; i < kN; i += 3) a[i] = Fr::zero();
    Fr log_sum = Fr::zero();
    for (std::size_t i = 0; i < kN; ++i) log_sum += a[i] * s.logs[i];
    const G2Bases db = dev->upload_g2_bases(s.points);
    const ec::G2Jacobian got = dev->msm(db, std::span<const Fr>(a));
    EXPECT_TRUE(ref::on_curve(got, ec::kG2B));
    EXPECT_TRUE(ref::eq(got, ref::mul(ref::from_affine(ec::kG2Generator), log_sum.to_int())));
  }
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, (std::size_t{1} << 18) + 3, 512, &Device::upload_g2_bases);
  constexpr std::size_t kN = 3001;
  const G2Bases ids = dev->upload_g2_bases(std::vector<ec::G2Affine>(kN, ec::G2Affine::identity()));
  EXPECT_TRUE(dev->msm(ids, std::span<const Fr>(make_scalars(rng, kN))).is_identity());
  const G2Bases gens = dev->upload_g2_bases(std::vector<ec::G2Affine>(kN, ec::kG2Generator));
  EXPECT_TRUE(dev->msm(gens, std::span<const Fr>(std::vector<Fr>(kN, Fr::zero()))).is_identity());
  EXPECT_TRUE(ref::eq(dev->msm(gens, std::span<const Fr>(std::vector<Fr>(kN, Fr::one()))),
                      ref::mul(ref::from_affine(ec::kG2Generator), Fr::from_u64(kN).to_int())));
}

// The shared-memory bucket reduction (gpu/msm/msm_reduce.cu) for G2, after
// the tree reduction (one chunk): c = 20 (the window of large G2 MSMs; the
// tree leaves 2^10 XYZZ points per window, cut into segments; at 30011
// points almost every bucket is empty, so pass 2 adds equal suffix sums:
// doublings), c = 20 with scalars from 3 values (a few heavy buckets per
// window), and c = 4 (8 buckets per window: one bucket per segment, the
// double-and-add does all the weighting).
TEST(GpuMsm, G2ReductionSegments) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(29);
  auto dev = test::make_device();
  set_tuning(*dev, 20);
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 30011, 512, &Device::upload_g2_bases);
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 30011, 64, &Device::upload_g2_bases, 3);
  set_tuning(*dev, 4);
  check_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 6007, 256, &Device::upload_g2_bases);
}

// The shared-memory bucket reduction for G1 (gpu/msm/msm_reduce.cu's
// segment_smem_kernel<Fp>) after the tree reduction, at the windows of the G2
// test above: c = 20, c = 20 with scalars from 3 values, c = 16 and c = 4
// (one bucket per segment). Then, at c = 20, adds that are exceptional in the
// reductions: buckets 1 = G, 2 = -G (their sum is the identity) and bucket
// 2 = G alone (its weight 2: a doubling).
TEST(GpuMsm, G1ReductionSegments) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(32);
  auto dev = test::make_device();
  const ec::G1Jacobian g = ref::from_affine(ec::kG1Generator);
  const std::vector<ec::G1Jacobian> pm_jac = {g, ref::mul(g, (-Fr::one()).to_int())};
  const std::vector<ec::G1Affine> pm = ref::to_affine<ff::Fp>(pm_jac);
  set_tuning(*dev, 20);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 30011, 512, &Device::upload_g1_bases);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 30011, 64, &Device::upload_g1_bases, 3);
  const G1Bases db = dev->upload_g1_bases(pm);
  const Fr two = Fr::from_u64(2);
  EXPECT_TRUE(ref::eq(dev->msm(db, std::span<const Fr>(std::vector<Fr>{Fr::one(), two})), pm_jac[1]));
  EXPECT_TRUE(ref::eq(dev->msm(db, std::span<const Fr>(std::vector<Fr>{two})), ref::mul(g, two.to_int())));
  set_tuning(*dev, 16);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 70001, 1024, &Device::upload_g1_bases);
  set_tuning(*dev, 4);
  check_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 6007, 256, &Device::upload_g1_bases);
}

// The GPU MSM against the CPU back end's (src/msm) on random bases (all
// distinct) and uniform scalars at random non-power-of-two sizes, with the
// default plan and with the 48 MiB, 12-bit-window plan that chunks.
template <class F, class Bases>
void check_against_cpu(Device& dev, std::mt19937_64& rng, const ec::Affine<F>& generator, std::size_t n,
                       Bases (Device::*upload)(std::span<const ec::Affine<F>>), ThreadPool& pool) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " window=" << dev.msm_tuning().window_bits
                                    << " limit=" << dev.msm_tuning().scratch_limit_bytes);
  const Setup<F> s = make_known_bases<F>(rng, generator, n, n);
  std::vector<Fr> a(n);
  for (auto& x : a) x = Fr::random(rng);
  const Bases bases = (dev.*upload)(s.points);
  const ec::Jacobian<F> got = dev.msm(bases, std::span<const Fr>(a));
  const ec::Jacobian<F> cpu = ::cuzk::msm::msm(std::span<const ec::Affine<F>>(s.points), std::span<const Fr>(a), pool);
  EXPECT_TRUE(ref::eq(got, cpu));
}

TEST(GpuMsm, CpuMsmAgreesOnRandomBases) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(34);
  auto dev = test::make_device();
  ThreadPool pool(0);
  for (int round = 0; round < 2; ++round) {
    if (round == 0) {
      set_tuning(*dev);
    } else {
      set_tuning(*dev, 12, std::size_t{48} << 20);
    }
    const std::size_t g1_n = round == 0 ? 1 + rng() % 70000 : 140001 + 2 * (rng() % 30000);
    const std::size_t g2_n = round == 0 ? 1 + rng() % 20000 : 90001 + 2 * (rng() % 20000);
    check_against_cpu<ff::Fp>(*dev, rng, ec::kG1Generator, g1_n, &Device::upload_g1_bases, pool);
    check_against_cpu<ff::Fp2>(*dev, rng, ec::kG2Generator, g2_n, &Device::upload_g2_bases, pool);
  }
}

}  // namespace
}  // namespace cuzk::gpu
