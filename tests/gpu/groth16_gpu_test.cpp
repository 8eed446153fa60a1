// The GPU Groth16 prover against the CPU prover: with the same parameters,
// witness and blinding (r, s) the two must produce the same 192 proof bytes,
// and the proof must verify. The CPU prover is the independent reference (its
// own tests check it against snarkjs and bellperson-format vectors).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "circuits/demo.hpp"
#include "ec/curve.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/gpu_prover.hpp"
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
using groth16::Blinding;
using groth16::Parameters;
using groth16::Proof;
using groth16::R1cs;
using groth16::Witness;

using testing::compile_with_witness;
using testing::Compiled;

// x_{i+1} = x_i^2 + k (k and y public), plus a linear constraint and an aux
// variable that occurs only in C: a_aux and b_aux densities are both partial,
// and rows = rounds + 2 + 3 inputs is not a power of two.
struct SquareChain {
  Fr x0, k;
  int rounds;

  void synthesize(groth16::ConstraintSystem& cs) const {
    Fr y = x0;
    for (int i = 0; i < rounds; ++i) y = y * y + k;
    const groth16::Variable kv = cs.alloc_input("k", k);
    const groth16::Variable yv = cs.alloc_input("y", y);
    Fr xv = x0;
    groth16::Variable x = cs.alloc("x0", xv);
    const groth16::Variable first = x;
    for (int i = 0; i < rounds; ++i) {
      const Fr next = xv * xv + k;
      const groth16::Variable nx = cs.alloc(groth16::Name("x", std::uint64_t(i + 1)), next);
      cs.enforce(groth16::Name("round", std::uint64_t(i)), groth16::LinearCombination(x), groth16::LinearCombination(x),
                 groth16::LinearCombination(nx) - kv);
      x = nx;
      xv = next;
    }
    cs.enforce("out", groth16::LinearCombination(x), groth16::LinearCombination(groth16::Variable::one()),
               groth16::LinearCombination(yv));
    const groth16::Variable t = cs.alloc("t", Fr::from_u64(3) * x0);
    cs.enforce("t", groth16::LinearCombination(groth16::Term{first, Fr::from_u64(3)}),
               groth16::LinearCombination(groth16::Variable::one()), groth16::LinearCombination(t));
  }
};

class Groth16Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    CUZK_REQUIRE_GPU();
    device_ = test::make_device();
    rng_ = test::seeded_rng(0x67726f7468);
  }

  groth16::ToxicWaste toxic_waste() {
    return {Fr::random(rng_), Fr::random(rng_), Fr::random(rng_), Fr::random(rng_), Fr::random(rng_)};
  }
  Blinding blinding() { return {Fr::random(rng_), Fr::random(rng_)}; }

  Proof cpu_proof(const Parameters& params, const Compiled& c, const Blinding& b) {
    groth16::CpuProver cpu(pool_);
    const std::vector<Witness> ws{c.w};
    const std::vector<Blinding> bs{b};
    return cpu.prove(params, c.r1cs, ws, bs).at(0);
  }

  // A large demo circuit and a small one whose SRS is at most 1/kSideSrsRatio
  // of the large one's (a WinningPoSt's beside a PoRep's or SnapDeals'), with
  // parameters, a blinding, and a prover evaluating a, b, c on the device
  // (the daemon's setting).
  struct SideSrsCase {
    Compiled big, small;
    Parameters pb, ps;
    Blinding b;
    std::unique_ptr<GpuProver> gpu;
    Proof prove(const Parameters& p, const Compiled& c) {
      return gpu->prove(p, c.r1cs, std::vector<Witness>{c.w}, std::vector<Blinding>{b}).at(0);
    }
  };
  SideSrsCase side_srs_case() {
    SideSrsCase t{compile_with_witness(circuits::DemoCircuit(1600, Fr::random(rng_))),
                  compile_with_witness(circuits::DemoCircuit(100, Fr::random(rng_))),
                  {},
                  {},
                  {},
                  nullptr};
    t.pb = groth16::generate_parameters(t.big.r1cs, toxic_waste(), pool_);
    t.ps = groth16::generate_parameters(t.small.r1cs, toxic_waste(), pool_);
    EXPECT_GE(ResidentSrs::bytes_for(t.pb), GpuProver::kSideSrsRatio * ResidentSrs::bytes_for(t.ps));
    t.b = blinding();
    GpuProverOptions options;
    options.abc_source = AbcSource::kDevice;
    t.gpu = std::make_unique<GpuProver>(*device_, pool_, options);
    return t;
  }

  groth16::VerifyResult verify(const Parameters& params, const Proof& proof, const Witness& w) {
    const groth16::PreparedVerifyingKey pvk = groth16::prepare_verifying_key(params.vk);
    const std::vector<Fr> pub(w.inputs.begin() + 1, w.inputs.end());
    return groth16::verify(pvk, proof, pub);
  }

  ThreadPool pool_{0};
  std::unique_ptr<Device> device_;
  std::mt19937_64 rng_;
};

TEST_F(Groth16Gpu, DemoCircuitProofIsByteIdenticalToCpuAndVerifies) {
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(10);
  const Compiled c = compile_with_witness(circuits::DemoCircuit(rounds, Fr::random(rng_)));
  ASSERT_EQ(groth16::domain_size(c.r1cs), 1024u);
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);

  GpuProver gpu(*device_, pool_);
  // Stage 2 alone first: the device H equals the CPU's coefficient for coefficient.
  EXPECT_EQ(gpu.compute_h(c.r1cs, c.w), groth16::compute_h(c.r1cs, c.w, pool_));

  const Blinding b = blinding();
  const std::vector<Witness> ws{c.w};
  const std::vector<Blinding> bs{b};
  const Proof proof = gpu.prove(params, c.r1cs, ws, bs).at(0);
  EXPECT_EQ(groth16::encode_proof(proof), groth16::encode_proof(cpu_proof(params, c, b)));
  EXPECT_EQ(verify(params, proof, c.w), groth16::VerifyResult::kValid);
}

// The prover's MSMs in several chunks each (a 48 MiB scratch limit at
// 12-bit windows: GpuMsm.ChunkedRunsMatchHost's setting, where 120001 G2
// points take 4 chunks): the running-sum and tree reductions and the chunk
// loop inside the prover give the CPU's bytes. A lone MSM of the H vector's
// size under the same tuning shows that it is chunked.
TEST_F(Groth16Gpu, ChunkedMsmsInTheProverGiveTheCpuBytes) {
  const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(17);
  const Compiled c = compile_with_witness(circuits::DemoCircuit(rounds, Fr::random(rng_)));
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  const Device::MsmTuning saved = device_->msm_tuning();
  Device::MsmTuning t = saved;
  t.window_bits = 12;
  t.scratch_limit_bytes = std::size_t{48} << 20;
  device_->set_msm_tuning(t);
  {
    const std::vector<ec::G1Affine> gens(params.h.size(), ec::kG1Generator);
    const G1Bases bases = device_->upload_g1_bases(gens);
    std::vector<Fr> ones(params.h.size(), Fr::one());
    Device::MsmPhaseTimes ph;
    (void)device_->msm(bases, device_->upload(ones), &ph);
    EXPECT_GE(ph.chunks, 2u) << params.h.size() << " points";
  }
  GpuProver gpu(*device_, pool_);
  const Blinding b = blinding();
  const Proof proof = gpu.prove(params, c.r1cs, std::vector<Witness>{c.w}, std::vector<Blinding>{b}).at(0);
  EXPECT_EQ(groth16::encode_proof(proof), groth16::encode_proof(cpu_proof(params, c, b)));
  EXPECT_EQ(verify(params, proof, c.w), groth16::VerifyResult::kValid);
  device_->set_msm_tuning(saved);
}

TEST_F(Groth16Gpu, NonPowerOfTwoCircuitWithPartialDensitiesMatchesCpu) {
  const Compiled c = compile_with_witness(SquareChain{Fr::random(rng_), Fr::random(rng_), 37});
  ASSERT_EQ(c.r1cs.num_constraints(), 42u);  // 37 rounds + 2 + 3 input constraints
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  ASSERT_LT(params.b_g1.size(), params.a.size());      // partial B density
  ASSERT_LT(params.a.size(), c.r1cs.num_variables());  // partial A density (t is C-only)

  // Two instances in one call, each with its own blinding.
  const Compiled c2 = compile_with_witness(SquareChain{Fr::random(rng_), Fr::random(rng_), 37});
  const std::vector<Witness> ws{c.w, c2.w};
  const std::vector<Blinding> bs{blinding(), blinding()};
  GpuProver gpu(*device_, pool_);
  const std::vector<Proof> proofs = gpu.prove(params, c.r1cs, ws, bs);
  ASSERT_EQ(proofs.size(), 2u);
  EXPECT_EQ(groth16::encode_proof(proofs[0]), groth16::encode_proof(cpu_proof(params, c, bs[0])));
  EXPECT_EQ(groth16::encode_proof(proofs[1]), groth16::encode_proof(cpu_proof(params, c2, bs[1])));
  EXPECT_EQ(verify(params, proofs[0], c.w), groth16::VerifyResult::kValid);
  EXPECT_EQ(verify(params, proofs[1], c2.w), groth16::VerifyResult::kValid);
  // Each proof binds its own public inputs.
  EXPECT_EQ(verify(params, proofs[0], c2.w), groth16::VerifyResult::kInvalid);

  // A witness that violates a constraint gives the CPU's (invalid) proof too.
  Compiled bad = c;
  bad.w.aux[3] += Fr::one();
  const std::vector<Witness> bad_ws{bad.w};
  const std::vector<Blinding> bad_bs{bs[0]};
  const Proof bad_proof = gpu.prove(params, c.r1cs, bad_ws, bad_bs).at(0);
  EXPECT_EQ(groth16::encode_proof(bad_proof), groth16::encode_proof(cpu_proof(params, bad, bs[0])));
  EXPECT_EQ(verify(params, bad_proof, bad.w), groth16::VerifyResult::kInvalid);
}

// Mostly bits, like Filecoin's witnesses: boolean aux variables b_i
// (b_i * b_i = b_i), the public sum of 3^i b_i, and every 8th bit folded into
// a product chain p' = p (b_i + 2). L, A and B then see many zeros and ones
// and a tail of other values.
struct BitsCircuit {
  std::vector<bool> bits;

  void synthesize(groth16::ConstraintSystem& cs) const {
    Fr sum = Fr::zero(), weight = Fr::one(), prod = Fr::one();
    for (bool b : bits) {
      if (b) sum += weight;
      weight *= Fr::from_u64(3);
    }
    const groth16::Variable sum_v = cs.alloc_input("sum", sum);
    groth16::LinearCombination acc;
    groth16::Variable p = cs.alloc("p0", prod);
    cs.enforce("p0", groth16::LinearCombination(p), groth16::LinearCombination(groth16::Variable::one()),
               groth16::LinearCombination(groth16::Variable::one()));
    weight = Fr::one();
    for (std::size_t i = 0; i < bits.size(); ++i) {
      const Fr bv = bits[i] ? Fr::one() : Fr::zero();
      const groth16::Variable b = cs.alloc(groth16::Name("b", std::uint64_t(i)), bv);
      cs.enforce(groth16::Name("bool", std::uint64_t(i)), groth16::LinearCombination(b), groth16::LinearCombination(b),
                 groth16::LinearCombination(b));
      acc += groth16::Term{b, weight};
      weight *= Fr::from_u64(3);
      if (i % 8 == 0) {
        prod = prod * (bv + Fr::from_u64(2));
        const groth16::Variable np = cs.alloc(groth16::Name("p", std::uint64_t(i + 1)), prod);
        cs.enforce(groth16::Name("prod", std::uint64_t(i)), groth16::LinearCombination(p),
                   groth16::LinearCombination(b) + groth16::Term{groth16::Variable::one(), Fr::from_u64(2)},
                   groth16::LinearCombination(np));
        p = np;
      }
    }
    cs.enforce("sum", acc, groth16::LinearCombination(groth16::Variable::one()), groth16::LinearCombination(sum_v));
  }
};

TEST_F(Groth16Gpu, WitnessScalarSplitMatchesCpuOnABitHeavyWitness) {
  BitsCircuit circuit;
  for (int i = 0; i < 300; ++i) circuit.bits.push_back((rng_() & 1) != 0);
  const Compiled c = compile_with_witness(circuit);
  ASSERT_TRUE(groth16::is_satisfied(c.r1cs, c.w.inputs, c.w.aux, pool_));
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  const std::vector<Witness> ws{c.w};
  const std::vector<Blinding> bs{blinding()};
  const std::string cpu = ::testing::PrintToString(groth16::encode_proof(cpu_proof(params, c, bs[0])));
  for (const bool split : {true, false}) {
    SCOPED_TRACE(split ? "split" : "no split");
    GpuProver gpu(*device_, pool_,
                  GpuProverOptions{.witness_split = split ? WitnessScalarSplit::kAuto : WitnessScalarSplit::kOff});
    const Proof proof = gpu.prove(params, c.r1cs, ws, bs).at(0);
    EXPECT_EQ(::testing::PrintToString(groth16::encode_proof(proof)), cpu);
    EXPECT_EQ(verify(params, proof, c.w), groth16::VerifyResult::kValid);
    const GpuProveStats& st = gpu.last_stats();
    if (split) {
      // The split really ran: zeros skipped, ones summed, a non-empty tail.
      EXPECT_GT(st.l.zeros, 100u);
      EXPECT_GT(st.l.ones, 100u);
      EXPECT_GT(st.l.tail, 10u);
      EXPECT_TRUE(st.l.split);
      EXPECT_TRUE(st.b.split);
      EXPECT_EQ(st.l.zeros + st.l.ones + st.l.tail, c.w.aux.size());
      EXPECT_GT(st.b.ones, 0u);
      EXPECT_EQ(st.b.zeros + st.b.ones + st.b.tail, params.b_g1.size());
      EXPECT_EQ(st.a.zeros + st.a.ones + st.a.tail, params.a.size());
    } else {
      EXPECT_EQ(st.l.tail, c.w.aux.size());
      EXPECT_FALSE(st.l.split);
    }
  }
}

// Skewed splits: every bit set (ones dominate) or none (zeros dominate).
TEST_F(Groth16Gpu, WitnessScalarSplitEdgeCases) {
  for (const bool all_set : {true, false}) {
    SCOPED_TRACE(all_set ? "all ones" : "all zeros");
    BitsCircuit circuit;
    circuit.bits.assign(40, all_set);
    const Compiled c = compile_with_witness(circuit);
    const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
    const std::vector<Witness> ws{c.w};
    const std::vector<Blinding> bs{blinding()};
    GpuProver gpu(*device_, pool_);
    const Proof proof = gpu.prove(params, c.r1cs, ws, bs).at(0);
    EXPECT_EQ(groth16::encode_proof(proof), groth16::encode_proof(cpu_proof(params, c, bs[0])));
    EXPECT_EQ(verify(params, proof, c.w), groth16::VerifyResult::kValid);
  }
}

TEST_F(Groth16Gpu, ResidentSrsIsUploadedOnceAndReusedAcrossProofs) {
  const Compiled c = compile_with_witness(circuits::DemoCircuit(100, Fr::random(rng_)));
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  GpuProver gpu(*device_, pool_);
  const std::vector<Witness> ws{c.w};
  const Blinding b1 = blinding(), b2 = blinding();
  const Proof p1 = gpu.prove(params, c.r1cs, ws, std::vector<Blinding>{b1}).at(0);
  const Proof p2 = gpu.prove(params, c.r1cs, ws, std::vector<Blinding>{b2}).at(0);
  EXPECT_EQ(gpu.srs_uploads(), 1u);
  ASSERT_NE(gpu.cached_srs(), nullptr);
  EXPECT_EQ(gpu.cached_srs()->bytes(),
            96 * (params.h.size() + params.l.size() + params.a.size() + params.b_g1.size()) + 192 * params.b_g2.size());
  EXPECT_EQ(groth16::encode_proof(p1), groth16::encode_proof(cpu_proof(params, c, b1)));
  EXPECT_EQ(groth16::encode_proof(p2), groth16::encode_proof(cpu_proof(params, c, b2)));
  EXPECT_NE(groth16::encode_proof(p1), groth16::encode_proof(p2));

  // Another Parameters object (another setup of the same circuit) replaces it.
  const Parameters params2 = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  const Proof p3 = gpu.prove(params2, c.r1cs, ws, std::vector<Blinding>{b1}).at(0);
  EXPECT_EQ(gpu.srs_uploads(), 2u);
  EXPECT_EQ(verify(params2, p3, c.w), groth16::VerifyResult::kValid);
  EXPECT_EQ(verify(params, p3, c.w), groth16::VerifyResult::kInvalid);

  // A caller-owned resident SRS serves several proofs without the cache.
  const ResidentSrs srs(*device_, params);
  EXPECT_EQ(srs.bytes(), ResidentSrs::bytes_for(params));
  EXPECT_TRUE(srs.matches(params));
  EXPECT_FALSE(srs.matches(params2));
  const Proof q1 = gpu.prove(srs, c.r1cs, ws, std::vector<Blinding>{b1}).at(0);
  const Proof q2 = gpu.prove(srs, c.r1cs, ws, std::vector<Blinding>{b1}).at(0);
  EXPECT_EQ(q1, p1);
  EXPECT_EQ(q2, p1);
  EXPECT_EQ(gpu.srs_uploads(), 2u);
}

// A small SRS (a WinningPoSt's beside a SnapDeals job's) is kept beside the
// large cached one: proving either again uploads nothing, the small circuit's
// a, b, c are evaluated on the host while the large one's matrices stay on the
// device, and every proof equals the CPU prover's. Another large set replaces
// both.
TEST_F(Groth16Gpu, ASmallSrsIsKeptBesideALargeOne) {
  SideSrsCase t = side_srs_case();
  const Compiled &big = t.big, &small = t.small;
  const Parameters &pb = t.pb, &ps = t.ps;
  GpuProver& gpu = *t.gpu;
  auto prove = [&t](const Parameters& p, const Compiled& c) { return t.prove(p, c); };
  const Proof p1 = prove(pb, big);
  const Proof p2 = prove(ps, small);
  ASSERT_NE(gpu.side_srs(), nullptr);
  EXPECT_TRUE(gpu.side_srs()->matches(ps));
  ASSERT_NE(gpu.cached_srs(), nullptr);
  EXPECT_TRUE(gpu.cached_srs()->matches(pb));
  EXPECT_EQ(gpu.abc_source_for(big.r1cs), AbcSource::kDevice);
  EXPECT_EQ(gpu.abc_source_for(small.r1cs), AbcSource::kHost);  // the large matrices stay on the device
  const Proof p3 = prove(pb, big);
  const Proof p4 = prove(ps, small);
  EXPECT_EQ(gpu.srs_uploads(), 2u);
  EXPECT_EQ(groth16::encode_proof(p1), groth16::encode_proof(cpu_proof(pb, big, t.b)));
  EXPECT_EQ(groth16::encode_proof(p2), groth16::encode_proof(cpu_proof(ps, small, t.b)));
  EXPECT_EQ(p3, p1);
  EXPECT_EQ(p4, p2);

  const Parameters pb2 = groth16::generate_parameters(big.r1cs, toxic_waste(), pool_);
  const Proof p5 = prove(pb2, big);
  EXPECT_EQ(gpu.srs_uploads(), 3u);
  EXPECT_EQ(gpu.side_srs(), nullptr);
  EXPECT_EQ(verify(pb2, p5, big.w), groth16::VerifyResult::kValid);
}

// A small SRS cached first and then replaced by a large one (a WinningPoSt
// proved before a SnapDeals job) stays as the side SRS: proving the small
// circuit again uploads nothing, and both circuits' proofs equal the CPU's.
TEST_F(Groth16Gpu, ASmallCachedSrsStaysBesideTheLargeOneReplacingIt) {
  SideSrsCase t = side_srs_case();
  const Compiled &big = t.big, &small = t.small;
  const Parameters &pb = t.pb, &ps = t.ps;
  GpuProver& gpu = *t.gpu;
  auto prove = [&t](const Parameters& p, const Compiled& c) { return t.prove(p, c); };
  const Proof s1 = prove(ps, small);
  ASSERT_NE(gpu.cached_srs(), nullptr);
  EXPECT_TRUE(gpu.cached_srs()->matches(ps));
  EXPECT_EQ(gpu.side_srs(), nullptr);
  const Proof b1 = prove(pb, big);
  EXPECT_TRUE(gpu.cached_srs()->matches(pb));
  EXPECT_EQ(gpu.cached_srs()->pinned_bytes(), 0u);  // the large set whole on the device
  ASSERT_NE(gpu.side_srs(), nullptr);
  EXPECT_TRUE(gpu.side_srs()->matches(ps));
  EXPECT_EQ(gpu.abc_source_for(big.r1cs), AbcSource::kDevice);
  const Proof s2 = prove(ps, small);
  const Proof b2 = prove(pb, big);
  EXPECT_EQ(gpu.srs_uploads(), 2u);
  EXPECT_EQ(groth16::encode_proof(s1), groth16::encode_proof(cpu_proof(ps, small, t.b)));
  EXPECT_EQ(groth16::encode_proof(b1), groth16::encode_proof(cpu_proof(pb, big, t.b)));
  EXPECT_EQ(s2, s1);
  EXPECT_EQ(b2, b1);
  // Released with the cached set (the engine evicts it).
  gpu.release_cached_srs();
  EXPECT_EQ(gpu.side_srs(), nullptr);
}

// On a device too full for the small SRS with its margin (a WinningPoSt's
// beside a 32 GiB PoRep's SRS, matrices and MSM arena on an 80 GB card), the
// small SRS is streamed from pinned host memory instead of evicting the large
// one: the large set's bases and matrices stay, nothing is uploaded again, and
// both circuits' proofs equal the CPU prover's.
TEST_F(Groth16Gpu, ASmallSrsIsStreamedBesideALargeOneOnAFullDevice) {
  SideSrsCase t = side_srs_case();
  const Compiled &big = t.big, &small = t.small;
  const Parameters &pb = t.pb, &ps = t.ps;
  GpuProver& gpu = *t.gpu;
  auto prove = [&t](const Parameters& p, const Compiled& c) { return t.prove(p, c); };
  const std::size_t small_bytes = ResidentSrs::bytes_for(ps);
  const Proof p1 = prove(pb, big);
  const std::size_t matrices_bytes = gpu.device_r1cs_bytes();
  ASSERT_GT(matrices_bytes, 0u);
  // Leave just under the small SRS's bytes plus the margin free: too little
  // to place it whole, enough for its proofs' tables and MSMs (the MSM
  // planner keeps ~0.8 GiB free for the CUDA context on an H100).
  const std::size_t keep_free = small_bytes + GpuProver::kSideSrsMarginBytes - (std::size_t{64} << 20);
  const std::size_t free_now = device_->free_memory_bytes();
  ASSERT_GT(free_now, keep_free);
  detail::DeviceBuffer<unsigned char> filler(free_now - keep_free, "test filler");
  ASSERT_LT(device_->free_memory_bytes(), small_bytes + GpuProver::kSideSrsMarginBytes);

  const Proof p2 = prove(ps, small);
  ASSERT_NE(gpu.side_srs(), nullptr);
  EXPECT_TRUE(gpu.side_srs()->matches(ps));
  EXPECT_EQ(gpu.side_srs()->device_bytes(), 0u);
  EXPECT_EQ(gpu.side_srs()->pinned_bytes(), small_bytes);
  ASSERT_NE(gpu.cached_srs(), nullptr);
  EXPECT_TRUE(gpu.cached_srs()->matches(pb));
  EXPECT_EQ(gpu.device_r1cs_bytes(), matrices_bytes);
  const Proof p3 = prove(pb, big);
  const Proof p4 = prove(ps, small);
  EXPECT_EQ(gpu.srs_uploads(), 2u);
  filler.reset();
  EXPECT_EQ(groth16::encode_proof(p2), groth16::encode_proof(cpu_proof(ps, small, t.b)));
  EXPECT_EQ(p3, p1);
  EXPECT_EQ(p4, p2);
  EXPECT_EQ(verify(ps, p2, small.w), groth16::VerifyResult::kValid);
}

// The service's critical lane (gpu_service::GpuBackend): a second Device
// object on the same card with a high-priority prover proves a small circuit
// while the main prover's instance of a larger one is queued on the card.
// Both proofs equal the CPU's. How long the small proof took beside the
// large one is printed, not asserted (the daemon's benchmark measures it).
TEST_F(Groth16Gpu, AHighPriorityProverOnTheSameCardProvesBesideAnInstanceInFlight) {
  const Compiled big =
      compile_with_witness(circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(18), Fr::random(rng_)));
  const Compiled small = compile_with_witness(circuits::DemoCircuit(100, Fr::random(rng_)));
  const Parameters pb = groth16::generate_parameters(big.r1cs, toxic_waste(), pool_);
  const Parameters ps = groth16::generate_parameters(small.r1cs, toxic_waste(), pool_);
  const Blinding b = blinding();
  const std::vector<Witness> small_ws{small.w};
  const std::vector<Blinding> bs{b};

  GpuProver main(*device_, pool_);
  Device lane_device(device_->info().ordinal);
  ThreadPool lane_pool{2};
  GpuProverOptions lane_options;
  lane_options.high_priority_streams = true;
  GpuProver lane(lane_device, lane_pool, lane_options);
  const Proof first = lane.prove(ps, small.r1cs, small_ws, bs).at(0);  // the lane's SRS and tables

  const ResidentSrs& srs = main.cache_srs(pb);
  ProveStaging staging;
  main.prepare(big.r1cs, big.w, staging);
  const auto t0 = std::chrono::steady_clock::now();
  const Fence fence = main.enqueue(srs, staging);
  const Proof beside = lane.prove(ps, small.r1cs, small_ws, bs).at(0);
  const double lane_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const bool main_done_first = fence.ready();
  const Proof big_proof = main.finish(srs, staging, b);
  const double both_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[ lane: small proof %.1f ms from the large instance's enqueue, large done %.1f ms; large done first: %s ]\n",
      lane_ms, both_ms, main_done_first ? "yes" : "no");

  EXPECT_EQ(lane.srs_uploads(), 1u);
  EXPECT_EQ(beside, first);
  EXPECT_EQ(groth16::encode_proof(beside), groth16::encode_proof(cpu_proof(ps, small, b)));
  EXPECT_EQ(groth16::encode_proof(big_proof), groth16::encode_proof(cpu_proof(pb, big, b)));
  EXPECT_EQ(verify(pb, big_proof, big.w), groth16::VerifyResult::kValid);
}

TEST_F(Groth16Gpu, RequestsThatDoNotFitFailWithTypedErrors) {
  const Compiled c = compile_with_witness(SquareChain{Fr::random(rng_), Fr::random(rng_), 20});
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  const std::size_t need = ResidentSrs::bytes_for(params);
  try {
    ResidentSrs srs(*device_, params, need - 1);
    ADD_FAILURE() << "an SRS over its device budget was uploaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfDeviceMemory) << e.what();
  }
  EXPECT_NO_THROW({ const ResidentSrs fits(*device_, params, need); });

  // A witness of the wrong shape is refused before any upload.
  GpuProver gpu(*device_, pool_);
  Witness short_w = c.w;
  short_w.aux.pop_back();
  const std::vector<Witness> ws{short_w};
  const std::vector<Blinding> bs{blinding()};
  try {
    gpu.prove(params, c.r1cs, ws, bs);
    ADD_FAILURE() << "a short witness was accepted";
  } catch (const groth16::ParamsError& e) {
    EXPECT_EQ(e.kind(), groth16::ParamsErrorKind::kShapeMismatch) << e.what();
  }
  EXPECT_EQ(gpu.srs_uploads(), 0u);
  // A blinding count that does not match is refused too.
  const std::vector<Witness> two{c.w, c.w};
  EXPECT_THROW(gpu.prove(params, c.r1cs, two, bs), groth16::ParamsError);
}

// Timing on a larger demo circuit, only when CUZK_GPU_PROVER_LOG_DOMAIN is set
// (e.g. 18): setup and the CPU reference cost seconds there.
TEST_F(Groth16Gpu, TimingOnLargerDemoCircuit) {
  const char* env = std::getenv("CUZK_GPU_PROVER_LOG_DOMAIN");
  if (env == nullptr) GTEST_SKIP() << "set CUZK_GPU_PROVER_LOG_DOMAIN to time the GPU prover";
  const unsigned log_m = static_cast<unsigned>(std::atoi(env));
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  auto t0 = Clock::now();
  const Compiled c = compile_with_witness(
      circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(log_m), Fr::random(rng_)));
  const Parameters params = groth16::generate_parameters(c.r1cs, toxic_waste(), pool_);
  std::printf("[ timing ] 2^%u: compile + setup %.0f ms (%zu threads)\n", log_m, ms(t0), pool_.size());
  const Blinding b = blinding();
  const std::vector<Witness> ws{c.w};
  const std::vector<Blinding> bs{b};
  GpuProver gpu(*device_, pool_);
  t0 = Clock::now();
  const Proof first = gpu.prove(params, c.r1cs, ws, bs).at(0);
  std::printf("[ timing ] GPU prove incl. SRS upload (%zu MiB): %.1f ms\n", gpu.cached_srs()->bytes() >> 20, ms(t0));
  for (int i = 0; i < 2; ++i) {
    t0 = Clock::now();
    const Proof again = gpu.prove(params, c.r1cs, ws, bs).at(0);
    const GpuProveStats& st = gpu.last_stats();
    std::printf(
        "[ timing ] GPU prove, SRS resident: %.1f ms (evaluate %.1f, H %.1f, MSM H %.1f, L %.1f, A %.1f, "
        "B_G1+B_G2 %.1f, assemble %.1f)\n",
        ms(t0), st.evaluate_ms, st.h_ms, st.h_msm_ms, st.l_msm_ms, st.a_msm_ms, st.b_msm_ms, st.assemble_ms);
    EXPECT_EQ(again, first);
  }
  {
    GpuProver plain(*device_, pool_, GpuProverOptions{.witness_split = WitnessScalarSplit::kOff});
    const Proof unsplit = plain.prove(params, c.r1cs, ws, bs).at(0);
    t0 = Clock::now();
    EXPECT_EQ(plain.prove(params, c.r1cs, ws, bs).at(0), unsplit);
    const GpuProveStats& st = plain.last_stats();
    std::printf("[ timing ] GPU prove without the split: %.1f ms (MSM H %.1f, L %.1f, A %.1f, B_G1+B_G2 %.1f)\n",
                ms(t0), st.h_msm_ms, st.l_msm_ms, st.a_msm_ms, st.b_msm_ms);
    EXPECT_EQ(unsplit, first);
  }
  t0 = Clock::now();
  const Proof cpu = cpu_proof(params, c, b);
  std::printf("[ timing ] CPU prove: %.1f ms\n", ms(t0));
  EXPECT_EQ(groth16::encode_proof(first), groth16::encode_proof(cpu));
  EXPECT_EQ(verify(params, first, c.w), groth16::VerifyResult::kValid);
}

}  // namespace
}  // namespace cuzk::gpu
