// The witness split's sums of the ones' bases (gpu/groth16/point_sum.cu): the
// XYZZ partials and the MSM tree's pairwise affine rounds (tree::sum_list),
// whole and in arena-sized pieces, against the host. Bases are P_j = s_j G
// with known s_j (known_bases.hpp), so the expected sum is (sum s_j) G. The
// lists hold the cases the affine rounds treat apart: the identity, a point
// paired with itself (doubling) and with its negation (the identity), and
// lengths around the 2^kListGroupLog groups.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/msm/msm_tree.hpp"
#include "gpu/upload_points.hpp"
#include "gpu_test_util.hpp"
#include "host_ref.hpp"
#include "known_bases.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;
using groth16_kernels::PointSumMethod;
using u32 = std::uint32_t;

// Known bases with point 5 = -point 2 (and point 1 the identity).
template <class F>
testing::KnownBases<F> bases_with_negation(std::mt19937_64& rng, const ec::Affine<F>& g, std::size_t n) {
  testing::KnownBases<F> b = testing::make_known_bases<F>(rng, g, n, 97);
  b.points[5] = b.points[2];
  b.points[5].y = -b.points[5].y;
  b.logs[5] = -b.logs[2];
  return b;
}

// A list of count indices: random with repeats, led by the special pairs.
std::vector<u32> make_list(std::mt19937_64& rng, std::size_t count, std::size_t n) {
  const u32 lead[] = {1, 7, 3, 3, 2, 5, 9, 1};  // identity first; 3 + 3 doubles; 2 + 5 cancel
  std::vector<u32> idx;
  for (std::size_t i = 0; i < count; ++i) idx.push_back(i < std::size(lead) ? lead[i] : u32(rng() % n));
  return idx;
}

// expect: the method that must run (kAuto resolves to one of the others).
template <class F>
void check_sum(Device& dev, std::mt19937_64& rng, const ec::Affine<F>& g, std::size_t count, PointSumMethod method,
               std::size_t arena_limit_bytes, PointSumMethod expect) {
  SCOPED_TRACE(::testing::Message() << "count=" << count << " method=" << int(method)
                                    << " arena_limit=" << arena_limit_bytes);
  constexpr std::size_t kLimbs = detail::kPackedPointLimbs<ec::Affine<F>>;
  const std::size_t n = 3001;
  const testing::KnownBases<F> b = bases_with_negation<F>(rng, g, n);
  std::vector<u32> packed(n * kLimbs);
  detail::pack_points<ec::Affine<F>>(b.points, packed.data());
  detail::DeviceBuffer<u32> bases(packed.size(), "test bases");
  CUZK_CUDA_CHECK(cudaMemcpy(bases.get(), packed.data(), packed.size() * 4, cudaMemcpyHostToDevice));
  const std::vector<u32> idx = make_list(rng, count, n);
  Fr log_sum = Fr::zero();
  for (u32 i : idx) log_sum += b.logs[i];
  detail::DeviceBuffer<u32> idx_dev(std::max<std::size_t>(1, idx.size()), "test indices");
  CUZK_CUDA_CHECK(cudaMemcpy(idx_dev.get(), idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));

  groth16_kernels::PointSumOptions o;
  o.arena = &dev.msm_scratch();
  o.arena_limit_bytes = arena_limit_bytes;
  o.method = method;
  dev.release_msm_scratch();  // the sum sizes the arena itself
  detail::DeviceBuffer<unsigned char> scratch;
  detail::PinnedBuffer<u32> out(2 * kLimbs);  // one XYZZ point
  detail::Stream stream;
  PointSumMethod ran;
  if constexpr (sizeof(F) == sizeof(ff::Fp)) {
    ran = groth16_kernels::sum_points_g1(stream.get(), bases.get(), idx_dev.get(), count, scratch, o, out.get());
  } else {
    ran = groth16_kernels::sum_points_g2(stream.get(), bases.get(), idx_dev.get(), count, scratch, o, out.get());
  }
  stream.sync();
  EXPECT_EQ(int(ran), int(expect));
  EXPECT_TRUE(ref::eq(ref::from_xyzz<F>(out.get()), ref::mul(ref::from_affine(g), log_sum.to_int())));
}

template <class F>
void check_all(const ec::Affine<F>& g, std::uint64_t salt) {
  auto rng = test::seeded_rng(salt);
  auto dev = test::make_device();
  constexpr bool kG2 = sizeof(F) != sizeof(ff::Fp);
  constexpr std::size_t kGroup = std::size_t{1} << kernels::tree::kListGroupLog;
  const std::size_t unlimited = std::size_t{1} << 34;
  for (std::size_t count :
       {std::size_t{1}, std::size_t{2}, std::size_t{8}, kGroup - 1, kGroup, kGroup + 1, 3 * kGroup + 17}) {
    check_sum<F>(*dev, rng, g, count, PointSumMethod::kTree, unlimited, PointSumMethod::kTree);
    check_sum<F>(*dev, rng, g, count, PointSumMethod::kXyzz, unlimited, PointSumMethod::kXyzz);
  }
  // Short lists stay XYZZ under kAuto.
  check_sum<F>(*dev, rng, g, kGroup + 1, PointSumMethod::kAuto, unlimited, PointSumMethod::kXyzz);
  // Long lists: kAuto takes the tree; pieces of 3 groups when the limit allows only those.
  const std::size_t long_count = groth16_kernels::kTreeSumMinPoints + 4 * kGroup + 5;
  check_sum<F>(*dev, rng, g, long_count, PointSumMethod::kAuto, unlimited, PointSumMethod::kTree);
  const std::size_t three_groups = kernels::tree::list_sum_bytes(kG2, long_count, 3 * kGroup);
  ASSERT_EQ(kernels::tree::list_piece_entries(kG2, long_count, three_groups), 3 * kGroup);
  check_sum<F>(*dev, rng, g, 200 * kGroup + 3, PointSumMethod::kTree,
               kernels::tree::list_sum_bytes(kG2, 200 * kGroup + 3, 3 * kGroup), PointSumMethod::kTree);
  // Not even one group's room: the XYZZ partials.
  check_sum<F>(*dev, rng, g, 2 * kGroup, PointSumMethod::kTree, 4096, PointSumMethod::kXyzz);
}

TEST(GpuPointSum, G1TreeAndXyzzMatchHost) {
  CUZK_REQUIRE_GPU();
  check_all<ff::Fp>(ec::kG1Generator, 71);
}

TEST(GpuPointSum, G2TreeAndXyzzMatchHost) {
  CUZK_REQUIRE_GPU();
  check_all<ff::Fp2>(ec::kG2Generator, 72);
}

// Piece sizes: whole groups that fit the bytes given, the whole list when it
// fits, none when not even one group does.
TEST(GpuPointSum, ListPiecesFitTheArena) {
  CUZK_REQUIRE_GPU();  // the layout asks CUB for its scan scratch
  constexpr std::uint64_t kGroup = std::uint64_t{1} << kernels::tree::kListGroupLog;
  for (bool g2 : {false, true}) {
    const std::uint64_t count = 58'400'000;
    const std::size_t whole = kernels::tree::list_sum_bytes(g2, count, count);
    EXPECT_EQ(kernels::tree::list_piece_entries(g2, count, whole), count);
    // About 100 (G1) / 200 (G2) bytes per entry.
    EXPECT_LT(whole, count * (g2 ? 230 : 115));
    for (std::size_t bytes : {whole - 1, whole / 3, std::size_t{64} << 20}) {
      const std::uint64_t piece = kernels::tree::list_piece_entries(g2, count, bytes);
      ASSERT_GT(piece, 0u);
      EXPECT_EQ(piece % kGroup, 0u);
      EXPECT_LE(kernels::tree::list_sum_bytes(g2, count, piece), bytes);
      EXPECT_GT(kernels::tree::list_sum_bytes(g2, count, piece + kGroup), bytes);
    }
    EXPECT_EQ(kernels::tree::list_piece_entries(g2, count, 4096), 0u);
  }
}

}  // namespace
}  // namespace cuzk::gpu
