// MSMs and the witness split's passes over bases streamed from pinned host
// memory (gpu/msm/base_stager.hpp): all bases on the host, a device prefix
// that ends inside a chunk, and all on the device must give the same group
// element, and the one the host predicts. Bases are P_j = s_j * G for known
// s_j, so sum_i a_i P_i = (sum_i a_i s_i) * G comes from Fr arithmetic and one
// host scalar multiplication (as in msm_test.cpp). Small scratch limits and
// staging chunks force several chunks.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/point_sum.hpp"
#include "gpu/kernels.hpp"
#include "gpu/upload_points.hpp"
#include "gpu_test_util.hpp"
#include "host_ref.hpp"
#include "known_bases.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;
using u32 = std::uint32_t;

template <class F>
using Bases = testing::KnownBases<F>;
using testing::make_known_bases;

// sum_w 2^(w c) S_w by Horner's rule from the top window.
template <class F>
ec::Jacobian<F> combine(const kernels::MsmWindows& w) {
  constexpr std::size_t kXyzzLimbs = sizeof(F);  // 4 coordinates of sizeof(F) / 4 limbs
  ec::Jacobian<F> acc = ec::Jacobian<F>::identity();
  for (std::size_t k = w.sums.size() / kXyzzLimbs; k-- > 0;) {
    for (int i = 0; i < w.window_bits; ++i) acc = ref::dbl(acc);
    acc = ref::add(acc, ref::from_xyzz<F>(w.sums.data() + k * kXyzzLimbs));
  }
  return acc;
}

// The bases packed: all of them on the host (pinned) and on the device.
template <class F>
struct Packed {
  static constexpr std::size_t kLimbs = detail::kPackedPointLimbs<ec::Affine<F>>;
  detail::PinnedBuffer<u32> host;
  detail::DeviceBuffer<u32> device;
  explicit Packed(const std::vector<ec::Affine<F>>& points)
      : host(points.size() * kLimbs), device(points.size() * kLimbs, "test bases") {
    detail::pack_points<ec::Affine<F>>(points, host.get());
    CUZK_CUDA_CHECK(cudaMemcpy(device.get(), host.get(), points.size() * kLimbs * 4, cudaMemcpyHostToDevice));
  }
  // The first device_points on the device, the rest from the host copy.
  PointSource source(std::size_t device_points) const {
    return {device.get(), device_points, host.get() + device_points * kLimbs};
  }
};

template <class F>
kernels::MsmWindows run_msm(cudaStream_t s, const PointSource& src, const u32* scalars, std::size_t n,
                            const kernels::MsmConfig& config, kernels::MsmScratch& scratch) {
  if constexpr (sizeof(F) == sizeof(ff::Fp)) {
    return kernels::msm_g1(s, src, scalars, n, config, scratch, nullptr);
  } else {
    return kernels::msm_g2(s, src, scalars, n, config, scratch, nullptr);
  }
}

template <class F>
void check_streamed_msm(Device& dev, std::mt19937_64& rng, const ec::Affine<F>& g, const F& curve_b, std::size_t n,
                        std::size_t distinct, std::size_t limit_bytes) {
  const Bases<F> b = make_known_bases<F>(rng, g, n, distinct);
  std::vector<Fr> a(n);
  for (Fr& x : a) x = Fr::random(rng);
  a[0] = Fr::zero();
  a[3] = -Fr::one();
  Fr log_sum = Fr::zero();
  for (std::size_t i = 0; i < n; ++i) log_sum += a[i] * b.logs[i];
  const ec::Jacobian<F> expect = ref::mul(ref::from_affine(g), log_sum.to_int());

  const Packed<F> packed(b.points);
  detail::DeviceBuffer<u32> scalars(n * 8, "test scalars");
  CUZK_CUDA_CHECK(cudaMemcpy(scalars.get(), a.data(), n * 32, cudaMemcpyHostToDevice));
  kernels::MsmConfig config;
  config.window_bits = 12;
  config.scratch_limit_bytes = limit_bytes;
  detail::Stream stream;
  // All on the host; a device prefix ending inside a chunk; all on the device.
  for (std::size_t device_points : {std::size_t{0}, n / 3 + 7, n}) {
    SCOPED_TRACE(::testing::Message() << "n=" << n << " device_points=" << device_points);
    const kernels::MsmWindows w =
        run_msm<F>(stream.get(), packed.source(device_points), scalars.get(), n, config, dev.msm_scratch());
    EXPECT_GE(w.chunks, 2u);
    const ec::Jacobian<F> got = combine<F>(w);
    EXPECT_TRUE(ref::on_curve(got, curve_b));
    EXPECT_TRUE(ref::eq(got, expect));
  }
}

TEST(GpuMsmStreamed, G1StreamedBasesMatchResidentAndHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(41);
  auto dev = test::make_device();
  // c = 12 (22 windows): one chunk of all points would need 67 MiB of sort
  // pairs plus 8 MiB of buckets; 48 MiB with staging forces >= 4 chunks.
  check_streamed_msm<ff::Fp>(*dev, rng, ec::kG1Generator, ec::kG1B, 100003, 1024, std::size_t{48} << 20);
}

TEST(GpuMsmStreamed, G2StreamedBasesMatchResidentAndHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(42);
  auto dev = test::make_device();
  // G2 at c = 12: 17 MB of buckets, 352 B of sort pairs per point (+ 384 B of
  // staging when streamed); one resident chunk would need ~62 MB.
  check_streamed_msm<ff::Fp2>(*dev, rng, ec::kG2Generator, ec::kG2B, 70001, 256, std::size_t{48} << 20);
}

// Streamed bases without a host copy are refused, not read.
TEST(GpuMsmStreamed, MissingHostCopyIsAnError) {
  CUZK_REQUIRE_GPU();
  auto dev = test::make_device();
  const std::vector<ec::G1Affine> points(1000, ec::kG1Generator);
  const Packed<ff::Fp> packed(points);
  detail::DeviceBuffer<u32> scalars(1000 * 8, "test scalars");
  detail::Stream stream;
  const PointSource half_missing(packed.device.get(), 500, nullptr);
  try {
    (void)kernels::msm_g1(stream.get(), half_missing, scalars.get(), 1000, kernels::MsmConfig{}, dev->msm_scratch(),
                          nullptr);
    FAIL() << "an MSM over bases missing their host part ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

// The split's passes over streamed bases: the sum of the ones' bases and the
// tail's gathered bases, against the host (sum of logs; the packed points).
template <class F>
void check_split_passes(Device& dev, std::mt19937_64& rng, const ec::Affine<F>& g, std::size_t n,
                        std::size_t device_points, std::size_t chunk_points) {
  SCOPED_TRACE(::testing::Message() << "n=" << n << " device_points=" << device_points << " chunk=" << chunk_points);
  const Bases<F> b = make_known_bases<F>(rng, g, n, 97);
  const Packed<F> packed(b.points);
  // Ones and tail at random, none in [n/2, n/2 + 3 chunks): pieces with
  // nothing to do are skipped.
  std::vector<u32> ones, tail;
  Fr ones_log = Fr::zero();
  for (std::size_t i = 0; i < n; ++i) {
    if (i >= n / 2 && i < n / 2 + 3 * chunk_points) continue;
    const unsigned r = unsigned(rng() % 3);
    if (r == 0) {
      ones.push_back(u32(i));
      ones_log += b.logs[i];
    } else if (r == 1) {
      tail.push_back(u32(i));
    }
  }
  detail::DeviceBuffer<u32> ones_dev(ones.size(), "ones"), tail_dev(tail.size(), "tail");
  CUZK_CUDA_CHECK(cudaMemcpy(ones_dev.get(), ones.data(), ones.size() * 4, cudaMemcpyHostToDevice));
  CUZK_CUDA_CHECK(cudaMemcpy(tail_dev.get(), tail.data(), tail.size() * 4, cudaMemcpyHostToDevice));
  constexpr std::size_t kLimbs = Packed<F>::kLimbs;
  detail::DeviceBuffer<u32> gathered(tail.size() * kLimbs, "gathered");
  detail::DeviceBuffer<unsigned char> sum_scratch;
  detail::PinnedBuffer<u32> sum_out(2 * kLimbs);  // one XYZZ point: twice the affine limbs
  detail::Stream stream;

  groth16_kernels::StreamedSplitPasses p;
  p.stream = stream.get();
  p.bases = packed.source(device_points);
  p.n_points = n;
  p.ones = ones_dev.get();
  p.ones_host = ones.data();
  p.n_ones = ones.size();
  p.tail_idx = tail_dev.get();
  p.tail_idx_host = tail.data();
  p.n_tail = tail.size();
  p.gathered = gathered.get();
  p.arena = &dev.msm_scratch();
  p.chunk_points = chunk_points;
  if constexpr (sizeof(F) == sizeof(ff::Fp)) {
    groth16_kernels::sum_and_gather_streamed_g1(p, sum_scratch, sum_out.get());
  } else {
    groth16_kernels::sum_and_gather_streamed_g2(p, sum_scratch, sum_out.get());
  }
  stream.sync();
  const ec::Jacobian<F> sum = ref::from_xyzz<F>(sum_out.get());
  EXPECT_TRUE(ref::eq(sum, ref::mul(ref::from_affine(g), ones_log.to_int())));
  std::vector<u32> got(tail.size() * kLimbs);
  CUZK_CUDA_CHECK(cudaMemcpy(got.data(), gathered.get(), got.size() * 4, cudaMemcpyDeviceToHost));
  std::size_t mismatches = 0;
  for (std::size_t j = 0; j < tail.size(); ++j) {
    mismatches +=
        std::memcmp(got.data() + j * kLimbs, packed.host.get() + std::size_t(tail[j]) * kLimbs, kLimbs * 4) != 0;
  }
  EXPECT_EQ(mismatches, 0u) << "of " << tail.size() << " gathered bases";
}

TEST(GpuMsmStreamed, SplitPassesOverStreamedBasesMatchHost) {
  CUZK_REQUIRE_GPU();
  auto rng = test::seeded_rng(43);
  auto dev = test::make_device();
  check_split_passes<ff::Fp>(*dev, rng, ec::kG1Generator, 20011, 0, 1500);
  check_split_passes<ff::Fp>(*dev, rng, ec::kG1Generator, 20011, 5003, 1500);
  check_split_passes<ff::Fp>(*dev, rng, ec::kG1Generator, 20011, 20011, 1500);  // all on the device
  check_split_passes<ff::Fp2>(*dev, rng, ec::kG2Generator, 7001, 0, 700);
  check_split_passes<ff::Fp2>(*dev, rng, ec::kG2Generator, 7001, 2501, 700);
}

}  // namespace
}  // namespace cuzk::gpu
