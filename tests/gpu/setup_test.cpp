// The GPU setup against the CPU: fixed-base products against the host's
// wNAF scalar multiplication (an independent code path), and whole
// Parameters against groth16::generate_parameters (operator==, bit for bit).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "circuits/demo.hpp"
#include "ec/curve.hpp"
#include "gpu/setup/gpu_setup.hpp"
#include "gpu_test_util.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "unit/groth16/random_r1cs.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;

// 0, 1, 2, r - 1, r - 2, single bytes in every window (d * 2^(8w), the
// table's own entries, d = 1 and 255), all-ones bytes, then random scalars.
std::vector<Fr> edge_and_random_scalars(std::mt19937_64& rng, std::size_t random_count) {
  std::vector<Fr> s{Fr::zero(), Fr::one(), Fr::from_u64(2), -Fr::one(), -Fr::from_u64(2)};
  const Fr two_to_8 = Fr::from_u64(256);
  Fr window = Fr::one();
  for (int w = 0; w < 32; ++w) {
    s.push_back(window);
    s.push_back(window * Fr::from_u64(255));
    window *= two_to_8;
  }
  s.push_back(Fr::from_u64(~std::uint64_t{0}));
  for (std::size_t i = 0; i < random_count; ++i) s.push_back(Fr::random(rng));
  return s;
}

template <class F>
void expect_matches_host(const std::vector<ec::Affine<F>>& got, const ec::Affine<F>& base,
                         const std::vector<Fr>& scalars, const char* what) {
  ASSERT_EQ(got.size(), scalars.size()) << what;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < scalars.size(); ++i) {
    const ec::Affine<F> want = ec::to_affine(ec::mul(base, scalars[i]));
    if (!(got[i] == want) || got[i].infinity != want.infinity) {
      if (++bad <= 5) ADD_FAILURE() << what << ": point " << i << " differs";
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

TEST(GpuSetup, FixedBaseG1MatchesHost) {
  CUZK_REQUIRE_GPU();
  auto device = test::make_device();
  ThreadPool pool(4);
  auto rng = test::seeded_rng(11);
  const std::vector<Fr> scalars = edge_and_random_scalars(rng, 3000);
  expect_matches_host(fixed_base_g1(*device, ec::kG1Generator, scalars, pool), ec::kG1Generator, scalars,
                      "G1, one chunk");
  // Chunk boundaries: 7 does not divide the count, and several chunks cycle both pinned slots.
  expect_matches_host(fixed_base_g1(*device, ec::kG1Generator, scalars, pool, SetupOptions{7}), ec::kG1Generator,
                      scalars, "G1, chunks of 7");
  // Another base (the table is built per base).
  const ec::G1Affine base = ec::to_affine(ec::mul(ec::kG1Generator, Fr::random(rng)));
  expect_matches_host(fixed_base_g1(*device, base, scalars, pool, SetupOptions{1000}), base, scalars,
                      "G1, random base");
  EXPECT_TRUE(fixed_base_g1(*device, ec::kG1Generator, {}, pool).empty());
}

TEST(GpuSetup, FixedBaseG2MatchesHost) {
  CUZK_REQUIRE_GPU();
  auto device = test::make_device();
  ThreadPool pool(4);
  auto rng = test::seeded_rng(12);
  const std::vector<Fr> scalars = edge_and_random_scalars(rng, 1000);
  expect_matches_host(fixed_base_g2(*device, ec::kG2Generator, scalars, pool), ec::kG2Generator, scalars,
                      "G2, one chunk");
  expect_matches_host(fixed_base_g2(*device, ec::kG2Generator, scalars, pool, SetupOptions{13}), ec::kG2Generator,
                      scalars, "G2, chunks of 13");
}

TEST(GpuSetup, ZeroChunkIsInvalid) {
  CUZK_REQUIRE_GPU();
  auto device = test::make_device();
  ThreadPool pool(2);
  const std::vector<Fr> scalars{Fr::one()};
  try {
    (void)fixed_base_g1(*device, ec::kG1Generator, scalars, pool, SetupOptions{0});
    FAIL() << "expected gpu::Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
  }
}

groth16::ToxicWaste toxic(std::mt19937_64& rng) {
  return {Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng)};
}

void expect_same_parameters(Device& device, const groth16::R1cs& r1cs, const groth16::ToxicWaste& tw, ThreadPool& pool,
                            const SetupOptions& options) {
  const groth16::Parameters cpu = groth16::generate_parameters(r1cs, tw, pool);
  std::uint64_t last_done = 0, last_total = 0, calls = 0;
  const groth16::Parameters gpu = generate_parameters(
      device, r1cs, tw, pool,
      [&](std::uint64_t done, std::uint64_t total) {
        EXPECT_GT(done, last_done);
        last_done = done;
        last_total = total;
        ++calls;
      },
      options);
  EXPECT_TRUE(gpu.vk == cpu.vk) << "vk";
  EXPECT_TRUE(gpu.h == cpu.h) << "h";
  EXPECT_TRUE(gpu.l == cpu.l) << "l";
  EXPECT_TRUE(gpu.a == cpu.a) << "a";
  EXPECT_TRUE(gpu.b_g1 == cpu.b_g1) << "b_g1";
  EXPECT_TRUE(gpu.b_g2 == cpu.b_g2) << "b_g2";
  EXPECT_TRUE(gpu == cpu);
  const std::uint64_t total = cpu.h.size() + cpu.vk.ic.size() + cpu.l.size() + cpu.a.size() + 2 * cpu.b_g1.size();
  EXPECT_EQ(last_total, total);
  EXPECT_EQ(last_done, total);
  EXPECT_GE(calls, 6u);
}

TEST(GpuSetup, DemoCircuitParametersMatchCpu) {
  CUZK_REQUIRE_GPU();
  auto device = test::make_device();
  ThreadPool pool(4);
  auto rng = test::seeded_rng(13);
  groth16::RecordingCs cs;
  circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(10), std::nullopt).synthesize(cs);
  const groth16::R1cs r1cs = cs.finish();
  ASSERT_EQ(groth16::domain_size(r1cs), 1024u);
  expect_same_parameters(*device, r1cs, toxic(rng), pool, SetupOptions{});
  expect_same_parameters(*device, r1cs, toxic(rng), pool, SetupOptions{100});  // every vector crosses chunks
}

TEST(GpuSetup, RandomCircuitParametersMatchCpu) {
  CUZK_REQUIRE_GPU();
  auto device = test::make_device();
  ThreadPool pool(4);
  auto rng = test::seeded_rng(14);
  // 4 inputs + 700 circuit rows: 704 rows, domain 1024; partial A and B densities.
  const groth16::R1cs r1cs = groth16::test::random_r1cs(rng, 4, 650, 700, 5);
  ASSERT_LT(r1cs.b_aux_density().popcount(), r1cs.num_aux());
  expect_same_parameters(*device, r1cs, toxic(rng), pool, SetupOptions{37});
}

TEST(GpuSetup, UnconstrainedAuxIsSetupError) {
  CUZK_REQUIRE_GPU();
  auto device = test::make_device();
  ThreadPool pool(2);
  auto rng = test::seeded_rng(15);
  const groth16::R1cs r1cs = groth16::test::random_r1cs(rng, 2, 10, 6, 0);
  EXPECT_THROW(generate_parameters(*device, r1cs, toxic(rng), pool), groth16::SetupError);
}

}  // namespace
}  // namespace cuzk::gpu
