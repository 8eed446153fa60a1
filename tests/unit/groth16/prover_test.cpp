// End to end on the CPU: development setup -> params file round trip ->
// prove -> verify (single and batch), plus the soundness smoke tests: a wrong
// witness, a tampered proof or wrong public inputs must not verify.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "ec/curve.hpp"
#include "groth16/params.hpp"
#include "groth16/prover.hpp"
#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "groth16/verifier.hpp"

namespace cuzk::groth16 {
namespace {

using ff::Fr;

// y = chain of x_{i+1} = x_i^2 + k (k, y public), plus a linear-only
// constraint and a variable that occurs only in C, so that the densities
// a_aux and b_aux are both partial.
struct ChainCircuit {
  Fr x0, k;
  int rounds;

  static Fr native(Fr x, Fr k, int rounds) {
    for (int i = 0; i < rounds; ++i) x = x * x + k;
    return x;
  }

  void synthesize(ConstraintSystem& cs) const {
    Fr y = native(x0, k, rounds);
    Variable kv = cs.alloc_input("k", k);
    Variable yv = cs.alloc_input("y", y);
    Fr xv = x0;
    Variable x = cs.alloc("x0", xv);
    const Variable first = x;
    for (int i = 0; i < rounds; ++i) {
      Fr next = xv * xv + k;
      Variable nx = cs.alloc(Name("x", std::uint64_t(i + 1)), next);
      // x * x = nx - k
      cs.enforce(Name("round", std::uint64_t(i)), LinearCombination(x), LinearCombination(x),
                 LinearCombination(nx) - kv);
      x = nx;
      xv = next;
    }
    // Linear: (x + 0) * 1 = y.
    cs.enforce("out", LinearCombination(x), LinearCombination(Variable::one()), LinearCombination(yv));
    // t = 3 * x0 appears only in C: c-only aux variable.
    Variable t = cs.alloc("t", Fr::from_u64(3) * x0);
    // (3 x0) * 1 = t, with a zero-coefficient ONE term that must not count for density.
    cs.enforce("t", LinearCombination(Term{first, Fr::from_u64(3)}), LinearCombination(Variable::one()),
               LinearCombination(t) + LinearCombination(Term{Variable::one(), Fr::zero()}));
  }
};

struct Compiled {
  R1cs r1cs;
  Witness w;
};

Compiled compile(const ChainCircuit& c) {
  RecordingCs cs(RecordingCs::Values::kCollect);
  c.synthesize(cs);
  Witness w = cs.take_witness();
  return {cs.finish(), std::move(w)};
}

class Groth16Cpu : public ::testing::Test {
 protected:
  ThreadPool pool{2};
  std::mt19937_64 rng{42};
  ToxicWaste tw() { return {Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng)}; }
};

TEST_F(Groth16Cpu, ProveAndVerifyNonPowerOfTwoCircuit) {
  ChainCircuit circuit{Fr::random(rng), Fr::random(rng), 37};
  Compiled c = compile(circuit);
  ASSERT_TRUE(is_satisfied(c.r1cs, c.w.inputs, c.w.aux, pool));
  Parameters params = generate_parameters(c.r1cs, tw(), pool);
  EXPECT_EQ(params.h.size(), domain_size(c.r1cs) - 1);
  EXPECT_EQ(params.l.size(), c.r1cs.num_aux());
  EXPECT_LT(params.b_g1.size(), params.a.size());  // partial B density

  CpuProver prover(pool);
  std::vector<Witness> ws{c.w};
  std::vector<Blinding> bl{random_blinding()};
  Proof proof = prover.prove(params, c.r1cs, ws, bl).at(0);

  PreparedVerifyingKey pvk = prepare_verifying_key(params.vk);
  std::vector<Fr> pub(c.w.inputs.begin() + 1, c.w.inputs.end());
  EXPECT_EQ(verify(pvk, proof, pub), VerifyResult::kValid);

  // Wrong public input.
  auto bad = pub;
  bad[1] += Fr::one();
  EXPECT_EQ(verify(pvk, proof, bad), VerifyResult::kInvalid);
  // Wrong input count.
  bad.pop_back();
  EXPECT_EQ(verify(pvk, proof, bad), VerifyResult::kWrongInputCount);
  // Tampered proof: C moved by the generator.
  Proof t = proof;
  t.c = ec::to_affine(ec::add_mixed(ec::from_affine(t.c), ec::kG1Generator));
  EXPECT_EQ(verify(pvk, t, pub), VerifyResult::kInvalid);
}

TEST_F(Groth16Cpu, SameBlindingGivesSameProofAndDifferentBlindingDiffers) {
  ChainCircuit circuit{Fr::random(rng), Fr::random(rng), 10};
  Compiled c = compile(circuit);
  Parameters params = generate_parameters(c.r1cs, tw(), pool);
  CpuProver prover(pool);
  std::vector<Witness> ws{c.w, c.w};
  Blinding b1{Fr::random(rng), Fr::random(rng)};
  Blinding b2{Fr::random(rng), Fr::random(rng)};
  std::vector<Blinding> bl{b1, b1};
  auto p = prover.prove(params, c.r1cs, ws, bl);
  EXPECT_EQ(encode_proof(p[0]), encode_proof(p[1]));
  std::vector<Blinding> bl2{b1, b2};
  auto q = prover.prove(params, c.r1cs, ws, bl2);
  EXPECT_NE(encode_proof(q[0]), encode_proof(q[1]));
}

TEST_F(Groth16Cpu, WrongWitnessDoesNotVerify) {
  ChainCircuit circuit{Fr::random(rng), Fr::random(rng), 12};
  Compiled c = compile(circuit);
  Parameters params = generate_parameters(c.r1cs, tw(), pool);
  Witness w = c.w;
  w.aux[3] += Fr::one();  // breaks a round constraint
  ASSERT_FALSE(is_satisfied(c.r1cs, w.inputs, w.aux, pool));
  CpuProver prover(pool);
  std::vector<Witness> ws{w};
  std::vector<Blinding> bl{random_blinding()};
  Proof proof = prover.prove(params, c.r1cs, ws, bl).at(0);
  PreparedVerifyingKey pvk = prepare_verifying_key(params.vk);
  std::vector<Fr> pub(w.inputs.begin() + 1, w.inputs.end());
  EXPECT_EQ(verify(pvk, proof, pub), VerifyResult::kInvalid);
}

TEST_F(Groth16Cpu, BatchVerification) {
  ChainCircuit circuit{Fr::random(rng), Fr::random(rng), 20};
  Compiled c0 = compile(circuit);
  Parameters params = generate_parameters(c0.r1cs, tw(), pool);
  CpuProver prover(pool);
  std::vector<Witness> ws;
  for (int i = 0; i < 4; ++i) ws.push_back(compile({Fr::random(rng), Fr::random(rng), 20}).w);
  std::vector<Blinding> bl(4);
  for (auto& b : bl) b = random_blinding();
  auto proofs = prover.prove(params, c0.r1cs, ws, bl);
  PreparedVerifyingKey pvk = prepare_verifying_key(params.vk);
  std::vector<std::vector<Fr>> pubs;
  for (auto& w : ws) pubs.emplace_back(w.inputs.begin() + 1, w.inputs.end());
  std::vector<BatchItem> items;
  for (int i = 0; i < 4; ++i) items.push_back({&proofs[i], pubs[i]});
  EXPECT_EQ(verify_batch(pvk, items), VerifyResult::kValid);
  // Swap the public inputs of two proofs: each is valid for other inputs.
  std::swap(items[1].public_inputs, items[2].public_inputs);
  EXPECT_EQ(verify_batch(pvk, items), VerifyResult::kInvalid);
}

TEST_F(Groth16Cpu, ParamsFileRoundTripAndRejections) {
  ChainCircuit circuit{Fr::random(rng), Fr::random(rng), 9};
  Compiled c = compile(circuit);
  Parameters params = generate_parameters(c.r1cs, tw(), pool);
  auto dir = std::filesystem::temp_directory_path() / ("cuzk-params-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto pf = dir / "c.params", vf = dir / "c.vk";
  write_params(params, pf);
  write_vk(params.vk, vf);
  EXPECT_EQ(std::filesystem::file_size(pf), params_file_bytes(params.vk.ic.size(), params.h.size(), params.l.size(),
                                                              params.a.size(), params.b_g1.size()));
  EXPECT_EQ(std::filesystem::file_size(vf), vk_file_bytes(params.vk.ic.size()));
  EXPECT_EQ(read_params(pf, pool, SubgroupCheck::kAll), params);
  EXPECT_EQ(read_vk(vf), params.vk);

  // The .vk is byte-identical to the .params prefix (as Filecoin's files are).
  std::ifstream pin(pf, std::ios::binary), vin(vf, std::ios::binary);
  std::vector<char> pb((std::istreambuf_iterator<char>(pin)), {}), vb((std::istreambuf_iterator<char>(vin)), {});
  ASSERT_LE(vb.size(), pb.size());
  EXPECT_TRUE(std::equal(vb.begin(), vb.end(), pb.begin()));

  auto write = [&](const std::vector<char>& b) {
    std::ofstream o(dir / "bad.params", std::ios::binary | std::ios::trunc);
    o.write(b.data(), std::streamsize(b.size()));
  };
  auto expect_kind = [&](ParamsErrorKind kind) {
    try {
      read_params(dir / "bad.params", pool);
      ADD_FAILURE() << "accepted a bad file";
    } catch (const ParamsError& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
    }
  };
  // Truncated in the middle of b_g2.
  write(std::vector<char>(pb.begin(), pb.end() - 100));
  expect_kind(ParamsErrorKind::kTruncated);
  // Trailing garbage.
  auto tb = pb;
  tb.push_back(0);
  write(tb);
  expect_kind(ParamsErrorKind::kTrailingBytes);
  // A flipped bit inside l[2]'s x coordinate: off the curve (or non-canonical).
  std::size_t l_off = vb.size() + 4 + params.h.size() * 96 + 4 + 2 * 96 + 20;
  auto fb = pb;
  fb[l_off] ^= 0x01;
  write(fb);
  try {
    read_params(dir / "bad.params", pool);
    ADD_FAILURE() << "accepted a bit flip";
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kBadPoint);
    EXPECT_NE(std::string(e.what()).find("l[2]"), std::string::npos) << e.what();
  }
  // A huge declared length of h is a typed error, not an allocation.
  auto hb = pb;
  hb[vb.size()] = char(0x7f);
  write(hb);
  expect_kind(ParamsErrorKind::kTruncated);
  std::filesystem::remove_all(dir);
}

TEST_F(Groth16Cpu, ProofCodec) {
  ChainCircuit circuit{Fr::random(rng), Fr::random(rng), 5};
  Compiled c = compile(circuit);
  Parameters params = generate_parameters(c.r1cs, tw(), pool);
  CpuProver prover(pool);
  std::vector<Witness> ws{c.w, c.w};
  std::vector<Blinding> bl{random_blinding(), random_blinding()};
  auto proofs = prover.prove(params, c.r1cs, ws, bl);
  auto bytes = encode_proofs(proofs);
  ASSERT_EQ(bytes.size(), 2 * kProofBytes);
  auto back = decode_proofs(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, proofs);
  std::string why;
  EXPECT_FALSE(decode_proofs(std::span(bytes).subspan(0, 191), &why).has_value());
  bytes[200] ^= 0x40;  // set the infinity flag of the second proof's A
  EXPECT_FALSE(decode_proofs(bytes, &why).has_value());
  EXPECT_NE(why.find("partition 1"), std::string::npos) << why;
}

}  // namespace
}  // namespace cuzk::groth16
