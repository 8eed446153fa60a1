// PoRep C2 on the CPU: parameter names against rust-fil-proofs'
// parameters.json (external), and one genuine 2 KiB C1 proved end to end
// under development parameters generated here, then checked by the
// seal-record verifier (the code path of `cuzkctl porep verify-golden`).
//
// The 2 KiB partition is ~2.4M constraints (domain 2^22): compiling, the
// setup and one proof dominate this file's time, so they happen once, in
// ONE test, which then runs every check that needs the proof.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/seal_record.hpp"
#include "groth16/digest.hpp"
#include "groth16/proof.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const fs::path kShared = fs::path(CUZK_TEST_DATA_DIR) / "filecoin";

TEST(PorepC2Names, OfficialNamesAreInParametersJson) {
  const std::string json = read_text(kShared / "parameters.json");
  ASSERT_FALSE(json.empty());
  for (const SealProofInfo& info : seal_proofs()) {
    SCOPED_TRACE(std::string(info.name));
    const ParamFileNames names = official_param_names(info.proof);
    for (const std::string& n : {names.params, names.vk}) {
      const auto p = groth16::find_published(json, n);
      ASSERT_TRUE(p.has_value()) << n;
      EXPECT_EQ(p->sector_size, info.sector_bytes);
    }
    // Development files never carry a published name.
    const ParamFileNames dev = dev_param_names(info.proof);
    EXPECT_FALSE(groth16::find_published(json, dev.params).has_value());
    EXPECT_FALSE(groth16::find_published(json, dev.vk).has_value());
  }
  // The two sizes of the brief, spelled out (hash prefixes from FILECOIN.md §1).
  EXPECT_NE(official_param_names(SealProof::StackedDrg2KiBV1).params.find("-8-0-0-sha256_hasher-032d3138"),
            std::string::npos);
  EXPECT_NE(official_param_names(SealProof::StackedDrg32GiBV1_1).vk.find("-8-8-0-sha256_hasher-82a357d2"),
            std::string::npos);
}

TEST(PorepC2Names, PorepIdLookup) {
  for (const SealProofInfo& info : seal_proofs()) {
    EXPECT_EQ(seal_proof_from_porep_id(porep_id(info.proof)), info.proof);
  }
  PorepId unknown{};
  unknown[0] = 200;
  EXPECT_FALSE(seal_proof_from_porep_id(unknown).has_value());
}

TEST(SealRecords, GoldenRecordsParse) {
  std::ifstream in(kShared / "seal_regression_records-v16.json");
  std::string line;
  std::size_t n = 0, two_kib = 0;
  while (std::getline(in, line)) {
    const SealRecord r = parse_seal_record(line);
    EXPECT_EQ(r.proof.size(), std::size_t(r.partitions) * groth16::kProofBytes);
    // Round trip through our writer.
    EXPECT_EQ(parse_seal_record(to_json_line(r)), r);
    ++n;
    two_kib += r.sector_size == 2048;
  }
  EXPECT_EQ(n, 448u);
  EXPECT_EQ(two_kib, 124u);
  EXPECT_THROW(parse_seal_record("{\"porep_config\": 1}"), SealRecordError);
  EXPECT_THROW(parse_seal_record("not json"), SealRecordError);
}

// A Prover whose proofs are well-formed points but not proofs: prove_c2 must
// refuse to return them.
class BogusProver final : public groth16::Prover {
 public:
  std::vector<groth16::Proof> prove(const groth16::Parameters&, const groth16::R1cs&,
                                    std::span<const groth16::Witness> w, std::span<const groth16::Blinding>) override {
    groth16::Proof p{ec::kG1Generator, ec::kG2Generator, ec::kG1Generator};
    return std::vector<groth16::Proof>(w.size(), p);
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(PorepC2, Genuine2KiBProvesAndVerifies) {
  using clock = std::chrono::steady_clock;
  ThreadPool pool;
  const fs::path dir = fs::temp_directory_path() / ("cuzk-porep-c2-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const SealProof sp = SealProof::StackedDrg2KiBV1_1;

  auto t0 = clock::now();
  PorepC2 c2(dir);
  const auto r1cs = c2.compiled_shape(sp);
  const double compile_s = seconds_since(t0);
  EXPECT_EQ(r1cs->num_inputs(), 4u + 18u * 2u);
  EXPECT_EQ(c2.compiled_shape(sp).get(), r1cs.get());  // memory cache
  ASSERT_TRUE(fs::exists(r1cs_cache_path(dir, sp)));
  EXPECT_EQ(*PorepC2(dir).compiled_shape(sp), *r1cs);  // disk cache

  t0 = clock::now();
  const LoadedParams params = ensure_dev_params(sp, dir, *r1cs, pool);
  const double setup_s = seconds_since(t0);
  EXPECT_EQ(params.origin, ParamsOrigin::kDevelopmentGenerated);
  EXPECT_EQ(params.params_path.filename().string(), dev_param_names(sp).params);
  EXPECT_TRUE(fs::exists(params.vk_path));

  SyntheticSealInputs in;
  in.sector_id = 4242;
  in.prover_id[0] = 9;
  in.ticket[1] = 7;
  in.seed[2] = 5;
  in.data_seed = 1;
  const C1Output c1 = make_synthetic_c1(sp, in);

  t0 = clock::now();
  groth16::CpuProver prover(pool);
  const std::vector<std::uint8_t> proof = prove_c2(c1, params.params, *r1cs, prover, pool);
  const double prove_s = seconds_since(t0);
  ASSERT_EQ(proof.size(), groth16::kProofBytes);
  std::printf("2 KiB PoRep C2: %zu constraints, compile %.1f s, dev setup %.1f s, prove %.1f s (%zu threads)\n",
              r1cs->num_constraints(), compile_s, setup_s, prove_s, pool.size());

  // Independent verification from public data, with the vk read back from disk.
  const auto pvk = groth16::prepare_verifying_key(groth16::read_vk(params.vk_path));
  const auto inputs = porep_public_inputs(sp, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  EXPECT_EQ(verify_porep_proof(pvk, proof, inputs), groth16::VerifyResult::kValid);
  // Another seed asks other challenges: the same proof must not verify.
  Digest32 other_seed = c1.seed;
  other_seed[0] ^= 1;
  EXPECT_EQ(verify_porep_proof(pvk, proof, porep_public_inputs(sp, c1.replica_id, c1.comm_d, c1.comm_r, other_seed)),
            groth16::VerifyResult::kInvalid);
  std::vector<std::uint8_t> flipped = proof;
  flipped[100] ^= 1;
  EXPECT_NE(verify_porep_proof(pvk, flipped, inputs), groth16::VerifyResult::kValid);

  // The verify-golden code path: our proof as a record is valid under our
  // dev vk; a genuine rust-fil-proofs record parses but is invalid under it.
  SealRecord mine;
  mine.sector_size = 2048;
  mine.partitions = 1;
  mine.porep_id = porep_id(sp);
  mine.api_version = "V1_1_0";
  mine.comm_r = c1.comm_r;
  mine.comm_d = c1.comm_d;
  mine.prover_id = in.prover_id;
  mine.sector_id = in.sector_id;
  mine.ticket = in.ticket;
  mine.seed = in.seed;
  mine.proof = proof;
  const RecordCheck ok = verify_seal_record(parse_seal_record(to_json_line(mine)), pvk);
  EXPECT_EQ(ok.status, RecordStatus::kValid) << ok.detail;
  SealRecord wrong_sector = mine;
  wrong_sector.sector_id += 1;  // another replica_id
  EXPECT_EQ(verify_seal_record(wrong_sector, pvk).status, RecordStatus::kInvalid);
  {
    std::ifstream golden(kShared / "seal_regression_records-v16.json");
    std::string line;
    std::size_t checked = 0;
    while (std::getline(golden, line) && checked < 2) {
      const SealRecord r = parse_seal_record(line);
      if (r.sector_size != 2048 || !r.api_features.empty()) continue;
      const RecordCheck c = verify_seal_record(r, pvk);
      EXPECT_EQ(c.status, RecordStatus::kInvalid) << c.detail;
      ++checked;
    }
    EXPECT_EQ(checked, 2u);
  }

  // Tampered C1 outputs fail fast with a typed error, before any MSM.
  auto expect_kind = [&](const C1Output& bad, PorepC2ErrorKind kind) {
    try {
      (void)prove_c2(bad, params.params, *r1cs, prover, pool);
      ADD_FAILURE() << "tampered C1 was proved";
    } catch (const PorepC2Error& e) {
      EXPECT_EQ(e.kind(), kind) << e.what();
    }
  };
  {
    C1Output bad = c1;  // one label of one DRG parent column
    bad.vanilla_proofs[0][1].replica_column_proofs.drg_parents[2].column.rows[1][5] ^= 0x10;
    expect_kind(bad, PorepC2ErrorKind::kUnsatisfied);
  }
  {
    C1Output bad = c1;  // comm_r no longer Poseidon2(comm_c, comm_r_last)
    bad.comm_r[3] ^= 1;
    expect_kind(bad, PorepC2ErrorKind::kUnsatisfied);
  }
  {
    C1Output bad = c1;  // answers another seed's challenges
    bad.seed = other_seed;
    expect_kind(bad, PorepC2ErrorKind::kInputMismatch);
  }
  {
    C1Output bad = c1;
    bad.vanilla_proofs.push_back(bad.vanilla_proofs[0]);
    expect_kind(bad, PorepC2ErrorKind::kPartitionCount);
  }
  // A prover returning garbage: the batch verification refuses it.
  BogusProver bogus;
  try {
    (void)prove_c2(c1, params.params, *r1cs, bogus, pool);
    ADD_FAILURE() << "an invalid proof was returned";
  } catch (const PorepC2Error& e) {
    EXPECT_EQ(e.kind(), PorepC2ErrorKind::kInvalidProof);
  }

  // Second call: the dev files are loaded, not regenerated.
  const LoadedParams again = ensure_dev_params(sp, dir, *r1cs, pool);
  EXPECT_EQ(again.origin, ParamsOrigin::kDevelopment);
  EXPECT_EQ(again.params.vk, params.params.vk);

  // A reader given (the daemon's io_uring loader) reads the file instead of
  // groth16::read_params; its ParamsError is the typed kParams failure.
  std::vector<fs::path> read;
  const ParamsReader reader = [&](const fs::path& path, ThreadPool& p) {
    read.push_back(path);
    return groth16::read_params(path, p);
  };
  const LoadedParams via_reader = ensure_dev_params(official_param_names(sp), dev_param_names(sp),
                                                    seal_proof_info(sp).name, dir, *r1cs, pool, {}, reader);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0], again.params_path);
  EXPECT_EQ(via_reader.params.vk, params.params.vk);
  const ParamsReader broken = [](const fs::path&, ThreadPool&) -> groth16::Parameters {
    throw groth16::ParamsError(groth16::ParamsErrorKind::kTruncated, "short read");
  };
  try {
    ensure_dev_params(official_param_names(sp), dev_param_names(sp), seal_proof_info(sp).name, dir, *r1cs, pool, {},
                      broken);
    ADD_FAILURE() << "a reader's ParamsError was not reported";
  } catch (const PorepC2Error& e) {
    EXPECT_EQ(e.kind(), PorepC2ErrorKind::kParams);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
