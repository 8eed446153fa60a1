// The PoRep-partition-shaped circuit (gpu/groth16/partition_shape.hpp) at a
// small domain: its densities are PoRep's proportions, its proof from the GPU
// prover verifies and equals the CPU prover's bytes, its H equals the CPU's
// across domain sizes, and the benchmark's entry point
// (ReplicatedSrs + GpuProver::device_stages) computes the MSMs the host
// predicts for a two-point replicated SRS.
#include <gtest/gtest.h>

#include <bit>
#include <random>
#include <vector>

#include "ec/curve.hpp"
#include "gpu/groth16/gpu_prover.hpp"
#include "gpu/groth16/partition_shape.hpp"
#include "gpu_test_util.hpp"
#include "compiled_circuit.hpp"
#include "groth16/proof.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;

using testing::compile_with_witness;
using testing::Compiled;

class Groth16Shape : public ::testing::Test {
 protected:
  void SetUp() override {
    CUZK_REQUIRE_GPU();
    device_ = test::make_device();
    rng_ = test::seeded_rng(0x7368617065);
  }
  ThreadPool pool_{0};
  std::unique_ptr<Device> device_;
  std::mt19937_64 rng_;
};

TEST_F(Groth16Shape, SmallPartitionShapeProofVerifiesAndMatchesCpu) {
  const shape::PartitionCounts counts = shape::partition_counts(10);
  const shape::PartitionShapeCircuit circuit(counts, shape::ValueMix{}, rng_);
  const Compiled c = compile_with_witness(circuit);
  ASSERT_EQ(groth16::domain_size(c.r1cs), 1024u);
  // PoRep's proportions: b_input is ONE alone, b_aux about a quarter of aux,
  // a_aux all aux but the C-only variables.
  EXPECT_EQ(c.w.aux.size(), counts.aux());
  EXPECT_EQ(c.r1cs.a_aux_density().popcount(), counts.a_aux());
  EXPECT_EQ(c.r1cs.b_aux_density().popcount(), counts.b_aux());
  EXPECT_EQ(c.r1cs.b_input_density().popcount(), 1u);
  EXPECT_NEAR(double(counts.b_aux()) / double(counts.aux()), 0.254, 0.01);

  const groth16::Parameters params = groth16::generate_parameters(
      c.r1cs, {Fr::random(rng_), Fr::random(rng_), Fr::random(rng_), Fr::random(rng_), Fr::random(rng_)}, pool_);
  const groth16::Blinding b{Fr::random(rng_), Fr::random(rng_)};
  const std::vector<groth16::Witness> ws{c.w};
  const std::vector<groth16::Blinding> bs{b};
  groth16::CpuProver cpu(pool_);
  const auto cpu_bytes = groth16::encode_proof(cpu.prove(params, c.r1cs, ws, bs).at(0));
  const std::vector<Fr> h_cpu = groth16::compute_h(c.r1cs, c.w, pool_);
  const groth16::PreparedVerifyingKey pvk = groth16::prepare_verifying_key(params.vk);
  const std::vector<Fr> pub(c.w.inputs.begin() + 1, c.w.inputs.end());

  GpuProver gpu(*device_, pool_);
  EXPECT_EQ(gpu.compute_h(c.r1cs, c.w), h_cpu);
  const groth16::Proof proof = gpu.prove(params, c.r1cs, ws, bs).at(0);
  EXPECT_EQ(groth16::encode_proof(proof), cpu_bytes);
  EXPECT_EQ(groth16::verify(pvk, proof, pub), groth16::VerifyResult::kValid);
}

// The H stage (six lean NTTs, the product and the subtraction fused into
// their loads and stores) over several domain sizes (pass splits 6+5, 7+7,
// 9+8) against the CPU's H, through a larger shaped circuit.
TEST_F(Groth16Shape, HMatchesCpuAcrossDomainSizes) {
  for (int log_m : {11, 14, 17}) {
    const shape::PartitionShapeCircuit circuit(shape::partition_counts(log_m), shape::ValueMix{}, rng_);
    const Compiled c = compile_with_witness(circuit);
    ASSERT_EQ(groth16::domain_size(c.r1cs), std::uint64_t{1} << log_m);
    const std::vector<Fr> h_cpu = groth16::compute_h(c.r1cs, c.w, pool_);
    GpuProver gpu(*device_, pool_);
    EXPECT_EQ(gpu.compute_h(c.r1cs, c.w), h_cpu) << "log_m=" << log_m;
  }
}

// device_stages on a ReplicatedSrs of two points P0, P1 (index i gets P_{i mod 2}):
// each MSM is (sum of its even-index scalars) P0 + (sum of odd-index ones) P1.
TEST_F(Groth16Shape, DeviceStagesOnReplicatedSrsMatchHostSums) {
  const shape::PartitionCounts counts = shape::partition_counts(12);
  const shape::PartitionShapeCircuit circuit(counts, shape::ValueMix{}, rng_);
  const Compiled c = compile_with_witness(circuit);
  const std::size_t m = groth16::domain_size(c.r1cs);
  const groth16::R1cs& r = c.r1cs;

  const ec::G1Affine g1[2] = {ec::kG1Generator, ec::to_affine(ec::mul(ec::kG1Generator, Fr::random(rng_).to_int()))};
  const ec::G2Affine g2[2] = {ec::kG2Generator, ec::to_affine(ec::mul(ec::kG2Generator, Fr::random(rng_).to_int()))};
  const std::size_t a_count = c.w.inputs.size() + r.a_aux_density().popcount();
  const std::size_t b_count = r.b_input_density().popcount() + r.b_aux_density().popcount();
  const ReplicatedSrs srs(*device_, g1, g2, m - 1, c.w.aux.size(), a_count, b_count);

  std::vector<Fr> abc(3 * m);
  groth16::evaluate_into(r, c.w.inputs, c.w.aux, {abc.data(), m}, {abc.data() + m, m}, {abc.data() + 2 * m, m}, pool_);
  // Host expectations: the scalar vectors as the prover forms them.
  std::vector<Fr> a_scalars(c.w.inputs.begin(), c.w.inputs.end()), b_scalars;
  for (std::size_t i = 0; i < c.w.inputs.size(); ++i) {
    if (r.b_input_density().get(i)) b_scalars.push_back(c.w.inputs[i]);
  }
  for (std::size_t i = 0; i < c.w.aux.size(); ++i) {
    if (r.a_aux_density().get(i)) a_scalars.push_back(c.w.aux[i]);
  }
  for (std::size_t i = 0; i < c.w.aux.size(); ++i) {
    if (r.b_aux_density().get(i)) b_scalars.push_back(c.w.aux[i]);
  }
  auto expect = [&](std::span<const Fr> s, const auto& pts) {
    Fr even = Fr::zero(), odd = Fr::zero();
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (i % 2 == 0) {
        even = even + s[i];
      } else {
        odd = odd + s[i];
      }
    }
    return ec::to_affine(ec::add(ec::mul(pts[0], even.to_int()), ec::mul(pts[1], odd.to_int())));
  };
  const std::vector<Fr> h = groth16::compute_h(r, c.w, pool_);

  GpuProver gpu(*device_, pool_);
  const groth16::MsmResults got =
      gpu.device_stages(srs.bases(), {static_cast<int>(std::bit_width(m)) - 1, abc, c.w.inputs, c.w.aux,
                                      &r.a_aux_density(), &r.b_input_density(), &r.b_aux_density()});
  EXPECT_EQ(ec::to_affine(got.h), expect(h, g1));
  EXPECT_EQ(ec::to_affine(got.l), expect(c.w.aux, g1));
  EXPECT_EQ(ec::to_affine(got.a), expect(a_scalars, g1));
  EXPECT_EQ(ec::to_affine(got.b_g1), expect(b_scalars, g1));
  EXPECT_EQ(ec::to_affine(got.b_g2), expect(b_scalars, g2));
  EXPECT_GT(gpu.last_stats().h_gpu_ms, 0.0);
  // Inconsistent sizes are refused, not run.
  EXPECT_THROW(gpu.device_stages(srs.bases(), {12, std::span<const Fr>(abc).first(m), c.w.inputs, c.w.aux,
                                               &r.a_aux_density(), &r.b_input_density(), &r.b_aux_density()}),
               Error);
}

}  // namespace
}  // namespace cuzk::gpu
