// The GPU prover with an SRS partly or wholly in pinned host memory (device
// budget below the SRS: ResidentSrs with SrsOverflow::kStreamFromHost) must
// give the CPU prover's proof bytes: through the split witness MSMs (the
// PoRep-shaped circuit, mostly 0/1 witness) and the unsplit ones (the demo
// circuit, full-width witness). The placement is reported per tier.
#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <random>
#include <vector>

#include "circuits/demo.hpp"
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

class Groth16StreamedSrs : public ::testing::Test {
 protected:
  void SetUp() override {
    CUZK_REQUIRE_GPU();
    device_ = test::make_device();
    rng_ = test::seeded_rng(0x73747265616d);
  }
  groth16::Parameters setup(const Compiled& c) {
    return groth16::generate_parameters(
        c.r1cs, {Fr::random(rng_), Fr::random(rng_), Fr::random(rng_), Fr::random(rng_), Fr::random(rng_)}, pool_);
  }
  // Proves with the device budget and checks the bytes against the CPU's.
  // kDevice: the witness MSMs are split on the device, whose index lists come
  // back to the host for the streamed bases' passes.
  void prove_matches_cpu(const groth16::Parameters& params, const Compiled& c, std::size_t budget_bytes,
                         bool expect_split, AbcSource source = AbcSource::kHost) {
    SCOPED_TRACE(::testing::Message() << "device budget " << budget_bytes << " of " << ResidentSrs::bytes_for(params)
                                      << (source == AbcSource::kDevice ? ", a, b, c and split on the device" : ""));
    const groth16::Blinding b{Fr::random(rng_), Fr::random(rng_)};
    const std::vector<groth16::Witness> ws{c.w};
    const std::vector<groth16::Blinding> bs{b};
    groth16::CpuProver cpu(pool_);
    const auto cpu_bytes = groth16::encode_proof(cpu.prove(params, c.r1cs, ws, bs).at(0));
    GpuProverOptions options;
    options.srs_device_budget_bytes = budget_bytes;
    options.abc_source = source;
    GpuProver gpu(*device_, pool_, options);
    const groth16::Proof proof = gpu.prove(params, c.r1cs, ws, bs).at(0);
    EXPECT_EQ(groth16::encode_proof(proof), cpu_bytes);
    EXPECT_EQ(gpu.last_stats().l.split, expect_split);
    EXPECT_EQ(gpu.last_stats().split_on_device, source == AbcSource::kDevice);
    const ResidentSrs* srs = gpu.cached_srs();
    ASSERT_NE(srs, nullptr);
    EXPECT_EQ(srs->device_bytes() + srs->pinned_bytes(), srs->bytes());
    EXPECT_LE(srs->device_bytes(), budget_bytes);
    if (budget_bytes < srs->bytes()) {
      EXPECT_GT(srs->pinned_bytes(), 0u);
      EXPECT_FALSE(srs->placement().all_on_device());
    }
    // A second proof reuses the placed SRS (no second upload).
    EXPECT_EQ(groth16::encode_proof(gpu.prove(params, c.r1cs, ws, bs).at(0)), cpu_bytes);
    EXPECT_EQ(gpu.srs_uploads(), 1u);
  }

  ThreadPool pool_{0};
  std::unique_ptr<Device> device_;
  std::mt19937_64 rng_;
};

TEST_F(Groth16StreamedSrs, SplitWitnessProofsMatchCpuAtEveryBudget) {
  const shape::PartitionShapeCircuit circuit(shape::partition_counts(10), shape::ValueMix{}, rng_);
  const Compiled c = compile_with_witness(circuit);
  const groth16::Parameters params = setup(c);
  const std::size_t total = ResidentSrs::bytes_for(params);
  const std::size_t l_bytes = params.l.size() * 96;
  // Nothing on the device; l in part; l, a and part of b; all but part of h.
  for (std::size_t budget : {std::size_t{0}, l_bytes / 3 + 17, total / 2, total - 1000 * 96}) {
    prove_matches_cpu(params, c, budget, /*expect_split=*/true);
    prove_matches_cpu(params, c, budget, /*expect_split=*/true, AbcSource::kDevice);
  }
}

TEST_F(Groth16StreamedSrs, UnsplitWitnessProofsMatchCpuWithStreamedSrs) {
  const Compiled c =
      compile_with_witness(circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(10), Fr::random(rng_)));
  const groth16::Parameters params = setup(c);
  for (std::size_t budget : {std::size_t{0}, ResidentSrs::bytes_for(params) / 3}) {
    prove_matches_cpu(params, c, budget, /*expect_split=*/false);
    prove_matches_cpu(params, c, budget, /*expect_split=*/false, AbcSource::kDevice);
  }
}

TEST_F(Groth16StreamedSrs, PlacementFollowsTheFillOrderAndKFailStillRefuses) {
  const shape::PartitionShapeCircuit circuit(shape::partition_counts(10), shape::ValueMix{}, rng_);
  const Compiled c = compile_with_witness(circuit);
  const groth16::Parameters params = setup(c);
  const std::size_t l_a = (params.l.size() + params.a.size()) * 96;
  const ResidentSrs srs(*device_, params, l_a, SrsOverflow::kStreamFromHost);
  EXPECT_EQ(srs.device_bytes(), l_a);
  EXPECT_FALSE(srs.placement()[SrsVector::kL].streamed());
  EXPECT_FALSE(srs.placement()[SrsVector::kA].streamed());
  EXPECT_EQ(srs.placement()[SrsVector::kH].device_points, 0u);
  EXPECT_EQ(srs.pinned_bytes(), srs.bytes() - l_a);
  // The same budget with kFail: the whole SRS or an error.
  try {
    const ResidentSrs refused(*device_, params, l_a, SrsOverflow::kFail);
    ADD_FAILURE() << "kFail placed an SRS over its budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfDeviceMemory);
  }
  // A caller-owned placed SRS proves like the cached one.
  const groth16::Blinding b{Fr::random(rng_), Fr::random(rng_)};
  const std::vector<groth16::Witness> ws{c.w};
  const std::vector<groth16::Blinding> bs{b};
  groth16::CpuProver cpu(pool_);
  GpuProver gpu(*device_, pool_);
  EXPECT_EQ(groth16::encode_proof(gpu.prove(srs, c.r1cs, ws, bs).at(0)),
            groth16::encode_proof(cpu.prove(params, c.r1cs, ws, bs).at(0)));
}

TEST_F(Groth16StreamedSrs, AutoBudgetAndExplicitBudgets) {
  const Compiled c =
      compile_with_witness(circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(8), Fr::random(rng_)));
  const groth16::Parameters params = setup(c);
  // A small SRS fits any GPU: auto keeps all of it on the device.
  EXPECT_EQ(srs_device_budget_for(*device_, params, kSrsDeviceBudgetAuto), ResidentSrs::bytes_for(params));
  // Device a, b, c's bytes join the working set: room for them beside the
  // SRS comes first. Plenty of memory: the whole SRS either way; extra bytes
  // taking all of it: the SRS streamed (budget 0), unless one is requested;
  // in between the budget gives up at most what the extra bytes take.
  const std::size_t plenty = std::size_t{64} << 30, limit = std::size_t{1} << 30;
  const std::size_t total = ResidentSrs::bytes_for(params);
  EXPECT_EQ(srs_device_budget_for(params, kSrsDeviceBudgetAuto, plenty, limit, 0), total);
  EXPECT_EQ(srs_device_budget_for(params, kSrsDeviceBudgetAuto, plenty, limit, std::size_t{1} << 30), total);
  EXPECT_EQ(srs_device_budget_for(params, kSrsDeviceBudgetAuto, plenty, limit, plenty), 0u);
  EXPECT_EQ(srs_device_budget_for(params, 12345, plenty, limit, plenty), 12345u);
  auto budget = [&](std::size_t e) { return srs_device_budget_for(params, kSrsDeviceBudgetAuto, plenty, limit, e); };
  // The first extra size that cuts the budget (it is monotone), then steps of
  // a seventh of the SRS through the cut: each gives up at most its step.
  std::size_t lo = 0, hi = plenty;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (budget(mid) < total ? hi : lo) = mid;
  }
  std::size_t last = total, cut_seen = 0;
  for (std::size_t e = lo; e < plenty && last > 0; e += total / 7 + 1) {
    const std::size_t b = budget(e);
    ASSERT_LE(b, last);
    ASSERT_LE(last - b, total / 7 + 1);
    cut_seen += b > 0 && b < total;
    last = b;
  }
  EXPECT_EQ(last, 0u);
  EXPECT_GT(cut_seen, 0u);
  // An explicit budget (the daemon's gpu.srs_device_budget) is taken as is,
  // 0 included (the whole SRS streamed).
  EXPECT_EQ(srs_device_budget_for(*device_, params, 12345), 12345u);
  EXPECT_EQ(srs_device_budget_for(*device_, params, 0), 0u);
  EXPECT_EQ(srs_device_budget_for(*device_, params, std::size_t{3} << 20), std::size_t{3} << 20);
}

// The partition bench's path: ReplicatedSrs with a device budget (the rest
// replicated in pinned memory) gives device_stages the same MSMs as the
// all-device one.
TEST_F(Groth16StreamedSrs, ReplicatedSrsStreamedMatchesResident) {
  const shape::PartitionCounts counts = shape::partition_counts(12);
  const shape::PartitionShapeCircuit circuit(counts, shape::ValueMix{}, rng_);
  const Compiled c = compile_with_witness(circuit);
  const std::size_t m = groth16::domain_size(c.r1cs);
  const groth16::R1cs& r = c.r1cs;
  // Three points: the replication period does not divide the vectors' lengths.
  const ec::G1Affine g1[3] = {ec::kG1Generator, ec::to_affine(ec::mul(ec::kG1Generator, Fr::random(rng_).to_int())),
                              ec::to_affine(ec::mul(ec::kG1Generator, Fr::random(rng_).to_int()))};
  const ec::G2Affine g2[3] = {ec::kG2Generator, ec::to_affine(ec::mul(ec::kG2Generator, Fr::random(rng_).to_int())),
                              ec::to_affine(ec::mul(ec::kG2Generator, Fr::random(rng_).to_int()))};
  const std::size_t a_count = c.w.inputs.size() + r.a_aux_density().popcount();
  const std::size_t b_count = r.b_input_density().popcount() + r.b_aux_density().popcount();
  std::vector<Fr> abc(3 * m);
  groth16::evaluate_into(r, c.w.inputs, c.w.aux, {abc.data(), m}, {abc.data() + m, m}, {abc.data() + 2 * m, m}, pool_);
  const DeviceStageInputs in{static_cast<int>(std::bit_width(m)) - 1,
                             abc,
                             c.w.inputs,
                             c.w.aux,
                             &r.a_aux_density(),
                             &r.b_input_density(),
                             &r.b_aux_density()};
  GpuProver gpu(*device_, pool_);
  const ReplicatedSrs resident(*device_, g1, g2, m - 1, c.w.aux.size(), a_count, b_count);
  EXPECT_TRUE(resident.placement().all_on_device());
  const groth16::MsmResults want = gpu.device_stages(resident.bases(), in);
  for (std::size_t budget : {std::size_t{0}, resident.bytes() / 2 + 11}) {
    const ReplicatedSrs streamed(*device_, g1, g2, m - 1, c.w.aux.size(), a_count, b_count, budget);
    EXPECT_LE(streamed.placement().device_bytes(), budget);
    EXPECT_GT(streamed.placement().host_bytes(), 0u);
    const groth16::MsmResults got = gpu.device_stages(streamed.bases(), in);
    EXPECT_EQ(ec::to_affine(got.h), ec::to_affine(want.h)) << budget;
    EXPECT_EQ(ec::to_affine(got.l), ec::to_affine(want.l)) << budget;
    EXPECT_EQ(ec::to_affine(got.a), ec::to_affine(want.a)) << budget;
    EXPECT_EQ(ec::to_affine(got.b_g1), ec::to_affine(want.b_g1)) << budget;
    EXPECT_EQ(ec::to_affine(got.b_g2), ec::to_affine(want.b_g2)) << budget;
  }
}

}  // namespace
}  // namespace cuzk::gpu
