// Host-side checks of the SRS placement (gpu/groth16/srs_placement.hpp) and of
// the MSM plan's staging slots for streamed bases (gpu/msm/msm_plan.hpp). No
// device needed: these run everywhere, also where the GPU tests skip.
#include <gtest/gtest.h>

#include <cstddef>

#include "gpu/groth16/srs_placement.hpp"
#include "gpu/msm/msm_plan.hpp"

namespace cuzk::gpu {
namespace {

constexpr std::size_t kGiB = std::size_t{1} << 30;

// Points of the 32 GiB PoRep partition (FILECOIN.md section 4): h = 2^27 - 1,
// l = aux, a = inputs + a_aux, b = b_input + b_aux.
SrsPoints porep_points() {
  SrsPoints p{};
  p[std::size_t(SrsVector::kH)] = (std::size_t{1} << 27) - 1;
  p[std::size_t(SrsVector::kL)] = 130'169'893;
  p[std::size_t(SrsVector::kA)] = 328 + 129'753'292;
  p[std::size_t(SrsVector::kBG1)] = 1 + 33'112'281;
  p[std::size_t(SrsVector::kBG2)] = 1 + 33'112'281;
  return p;
}

SrsPoints small_points() { return {1000, 700, 650, 300, 300}; }  // h, l, a, b_g1, b_g2

TEST(SrsPlacement, PorepSrsIs44GiB) {
  // 96 B per G1 point, 192 per G2 point: the 44.1 GiB.
  EXPECT_NEAR(double(srs_bytes(porep_points())) / double(kGiB), 44.1, 0.05);
}

TEST(SrsPlacement, EnoughBudgetPutsEverythingOnTheDevice) {
  const SrsPoints n = small_points();
  const SrsPlacement p = place_srs(n, srs_bytes(n));
  EXPECT_TRUE(p.all_on_device());
  EXPECT_EQ(p.device_bytes(), srs_bytes(n));
  EXPECT_EQ(p.host_bytes(), 0u);
  for (std::size_t i = 0; i < kSrsVectors; ++i) EXPECT_EQ(p.vectors[i].device_points, n[i]);
}

TEST(SrsPlacement, ZeroBudgetStreamsEverything) {
  const SrsPoints n = small_points();
  const SrsPlacement p = place_srs(n, 0);
  EXPECT_EQ(p.device_bytes(), 0u);
  EXPECT_EQ(p.host_bytes(), 1000u * 96 + 700 * 96 + 650 * 96 + 300 * 96 + 300 * 192);
  for (const SrsVectorPlacement& v : p.vectors) EXPECT_TRUE(v.streamed() || v.points == 0);
}

TEST(SrsPlacement, WitnessVectorsFillTheBudgetBeforeH) {
  const SrsPoints n = small_points();
  // l and a whole, then 10 points of b_g1 and a part point left over.
  const std::size_t budget = 700 * 96 + 650 * 96 + 10 * 96 + 50;
  const SrsPlacement p = place_srs(n, budget);
  EXPECT_EQ(p[SrsVector::kL].device_points, 700u);
  EXPECT_EQ(p[SrsVector::kA].device_points, 650u);
  EXPECT_EQ(p[SrsVector::kBG1].device_points, 10u);
  EXPECT_EQ(p[SrsVector::kBG2].device_points, 0u);
  EXPECT_EQ(p[SrsVector::kH].device_points, 0u);
  EXPECT_EQ(p.device_bytes(), budget - 50);
  EXPECT_EQ(p.device_bytes() + p.host_bytes(), srs_bytes(n));

  // b_g2 whole but h only partly: h is the last to get device memory.
  const std::size_t budget2 = (700 + 650 + 300) * 96 + 300 * 192 + 123 * 96;
  const SrsPlacement q = place_srs(n, budget2);
  EXPECT_FALSE(q[SrsVector::kBG2].streamed());
  EXPECT_EQ(q[SrsVector::kH].device_points, 123u);
  EXPECT_EQ(q.host_bytes(), (1000 - 123) * 96u);
}

TEST(SrsPlacement, AtMostOneVectorIsSplitAcrossTiersAndTheBudgetHolds) {
  const SrsPoints n = porep_points();
  const std::size_t total = srs_bytes(n);
  for (std::size_t budget = 0; budget <= total + kGiB; budget += kGiB / 3 + 12345) {
    const SrsPlacement p = place_srs(n, budget);
    EXPECT_LE(p.device_bytes(), budget);
    EXPECT_EQ(p.device_bytes() + p.host_bytes(), total);
    int split = 0;
    for (const SrsVectorPlacement& v : p.vectors) split += (v.device_points > 0 && v.streamed()) ? 1 : 0;
    EXPECT_LE(split, 1) << "budget " << budget;
    // Less than one point of the split vector's size is left unused (or all fits).
    if (!p.all_on_device()) {
      EXPECT_LT(budget - p.device_bytes(), kSrsG2PointBytes) << "budget " << budget;
    }
  }
}

// The witness phase holds the three splits' arrays together (at most 38 B per
// point each: the index lists' and the scalars' high-water marks over proofs
// that split and proofs that do not) and the largest gathered tail (half the
// points; B's are G2):
// equal l, a, b must count all three, not the largest once. The two-vector
// H stage saves 2 m Fr where the H stage is the largest phase.
TEST(SrsPlacement, WorkingBytesBoundEveryWitnessSplitAndTheTwoVectorStage) {
  const std::size_t m = std::size_t{1} << 20, n = 1'000'000, scratch = std::size_t{256} << 20;
  const std::size_t tables = (m / 2 + 1) * 32 + m / 64 * 32;
  EXPECT_EQ(prover_working_bytes(m, {n, n, n}, scratch, 0), 3 * n * 38 + n / 2 * 192 + scratch + tables);
  EXPECT_EQ(prover_working_bytes(m, {n, n, 0}, scratch, 0), 2 * n * 38 + n / 2 * 96 + scratch + tables);
  // A large domain, few witness points: the H stage decides.
  const std::size_t big = std::size_t{1} << 27;
  const std::size_t four = prover_working_bytes(big, {1000, 1000, 1000}, scratch, 0);
  const std::size_t two = prover_working_bytes(big, {1000, 1000, 1000}, scratch, 0, /*h_vectors=*/2);
  EXPECT_EQ(four - two, 2 * big * 32);
}

TEST(SrsPlacement, AutoBudgetKeepsTheWholePorepSrsOnAnH200) {
  const SrsPoints n = porep_points();
  const std::size_t total = srs_bytes(n);
  // The prover's working set at 2^27 with an 8 GiB MSM scratch: under 30 GiB.
  const WitnessMsmPoints w{n[std::size_t(SrsVector::kL)], n[std::size_t(SrsVector::kA)],
                           n[std::size_t(SrsVector::kBG1)]};
  const std::size_t work = prover_working_bytes(std::size_t{1} << 27, w, std::size_t{8} << 30, std::size_t{384} << 20);
  EXPECT_GT(work, 3 * (std::size_t{1} << 27) * 32);  // at least a, b, c
  // The resident NTT tables (2 GiB of twiddles at 2^27) come on top of every phase.
  EXPECT_GE(work - prover_working_bytes(std::size_t{1} << 26, w, std::size_t{8} << 30, std::size_t{384} << 20),
            std::size_t{1} << 30);
  EXPECT_LT(work, 30 * kGiB);
  // H200: ~139 GiB, less the CUDA reserve: everything on the device.
  EXPECT_EQ(srs_device_budget(total, kSrsDeviceBudgetAuto, 138 * kGiB, work), total);
  // A 48 GiB card: what is left beside the working set, and less than the SRS.
  const std::size_t on_48 = srs_device_budget(total, kSrsDeviceBudgetAuto, 47 * kGiB, work);
  EXPECT_EQ(on_48, 47 * kGiB - work);
  EXPECT_LT(on_48, total);
  // No room at all beside the working set: everything streamed.
  EXPECT_EQ(srs_device_budget(total, kSrsDeviceBudgetAuto, work / 2, work), 0u);
  // A request wins over the automatic choice, capped by the free memory.
  EXPECT_EQ(srs_device_budget(total, 5 * kGiB, 138 * kGiB, work), 5 * kGiB);
  EXPECT_EQ(srs_device_budget(total, 0, 138 * kGiB, work), 0u);
  EXPECT_EQ(srs_device_budget(total, 200 * kGiB, 138 * kGiB, work), 138 * kGiB);
}

// A stand-in for CUB's scratch (as in msm_plan_test.cpp).
std::size_t fake_sort_temp(std::size_t entries, int) { return (std::size_t{64} << 20) + entries / 4; }

TEST(SrsPlacement, MsmPlanCountsTheStagingSlotsOfStreamedBases) {
  constexpr std::size_t kG1Xyzz = 192;
  const double threads = msm::resident_threads(132);
  const std::size_t n = std::size_t{1} << 24;
  const std::size_t limit = std::size_t{2} << 30;
  const msm::Plan resident = msm::plan(n, kG1Xyzz, 16, limit, threads, fake_sort_temp);
  const msm::Plan streamed = msm::plan(n, kG1Xyzz, 16, limit, threads, fake_sort_temp, kSrsG1PointBytes);
  ASSERT_GT(resident.total_bytes, 0u);
  ASSERT_GT(streamed.total_bytes, 0u);
  EXPECT_EQ(resident.staging_bytes, 0u);
  EXPECT_LE(streamed.total_bytes, limit);
  // Two slots of one chunk's points each, inside the arena and apart.
  EXPECT_EQ(streamed.staging_bytes, streamed.chunk_points * kSrsG1PointBytes);
  EXPECT_GE(streamed.staging_off[0], streamed.sort_temp_off + streamed.sort_temp_bytes);
  EXPECT_GE(streamed.staging_off[1], streamed.staging_off[0] + streamed.staging_bytes);
  EXPECT_LE(streamed.staging_off[1] + streamed.staging_bytes, streamed.total_bytes);
  // Enough chunks for the copy of one to overlap the work on another, and
  // the chunks cover the points.
  EXPECT_GE(streamed.chunks, msm::kMinStreamedChunks);
  EXPECT_GE(streamed.chunks * streamed.chunk_points, n);
  EXPECT_GE(streamed.chunks, resident.chunks);
  // A tight limit: the staging slots make the chunks smaller than without them.
  const std::size_t tight = std::size_t{600} << 20;
  const msm::Plan r2 = msm::plan(n, kG1Xyzz, 16, tight, threads, fake_sort_temp);
  const msm::Plan s2 = msm::plan(n, kG1Xyzz, 16, tight, threads, fake_sort_temp, kSrsG1PointBytes);
  ASSERT_GT(r2.total_bytes, 0u);
  ASSERT_GT(s2.total_bytes, 0u);
  EXPECT_LE(s2.total_bytes, tight);
  EXPECT_LT(s2.chunk_points, r2.chunk_points);
  // Small MSMs are not cut below the minimum chunk.
  const msm::Plan small = msm::plan(10000, kG1Xyzz, 0, limit, threads, fake_sort_temp, kSrsG1PointBytes);
  EXPECT_EQ(small.chunks, 1u);
}

}  // namespace
}  // namespace cuzk::gpu
