// FallbackPoSt proving on the CPU: parameter names against rust-fil-proofs'
// parameters.json, and a genuine 2 KiB WindowPoSt partition proved under
// development parameters generated here by ensure_post_dev_params (domain
// 2^15: seconds), verified, and rejected under other public inputs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "circuits/filecoin/post_gen.hpp"
#include "circuits/filecoin/post_prove.hpp"
#include "groth16/digest.hpp"

namespace cuzk::circuits::filecoin {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PostParamNames, OfficialNamesAreInParametersJson) {
  const std::string json = read_text(fs::path(CUZK_TEST_DATA_DIR) / "filecoin" / "parameters.json");
  ASSERT_FALSE(json.empty());
  for (const PostProofInfo& info : post_proofs()) {
    SCOPED_TRACE(std::string(info.name));
    const ParamFileNames names = post_official_param_names(info.proof);
    for (const std::string& n : {names.params, names.vk}) {
      const auto p = groth16::find_published(json, n);
      ASSERT_TRUE(p.has_value()) << n;
      EXPECT_EQ(p->sector_size, info.sector_bytes);
    }
    EXPECT_FALSE(groth16::find_published(json, post_dev_param_names(info.proof).params).has_value());
  }
  // POST-SNAP.md B.4 hash prefixes; Window V1 and V1_2 share parameters.
  EXPECT_NE(post_official_param_names(PostProof::Window2KiBV1_2).vk.find("-8-0-0-0170db1f"), std::string::npos);
  EXPECT_NE(post_official_param_names(PostProof::Winning32GiBV1).vk.find("-8-8-0-559e581f"), std::string::npos);
  EXPECT_NE(post_official_param_names(PostProof::Window64GiBV1).vk.find("-8-8-2-2627e400"), std::string::npos);
  EXPECT_EQ(post_official_param_names(PostProof::Window32GiBV1).params,
            post_official_param_names(PostProof::Window32GiBV1_2).params);
  EXPECT_EQ(post_params_identifier(PostProof::Window32GiBV1_2),
            "FallbackPoSt::PublicParams{sector_size: 34359738368, challenge_count: 10, sector_count: 2349}");
}

// More than three sectors: three slots synthesized, the third copied for the
// rest; the R1cs equals the one synthesizing every slot.
TEST(PostProve, CompiledShapeWithRepeatedSlotsEqualsTheFullCompile) {
  const PostShape shapes[] = {
      {64, gadgets::TreeShape{8, 0, 0}, 5, 5},
      {64 * 4, gadgets::TreeShape{8, 4, 0}, 4, 2},
      {64 * 8, gadgets::TreeShape{8, 4, 2}, 7, 3},
  };
  for (const PostShape& shape : shapes) {
    const groth16::R1cs full = groth16::compile(FallbackPostCircuit::blank(shape));
    const groth16::R1cs fast = compile_post_shape(shape);
    EXPECT_TRUE(fast == full) << shape.sectors << " sectors";
    EXPECT_EQ(fast.fingerprint(), full.fingerprint());
  }
}

TEST(PostProve, Window2KiBGenuinePartitionProvesAndVerifies) {
  PostGenOptions o;
  o.proof = PostProof::Window2KiBV1_2;
  o.sectors = 2;
  o.seed = 21;
  const PostGenOutput g = generate_post_vanilla(o);
  const PostPartition p = make_post_partition(o.proof, g.randomness, g.prover_id, 0, g.sectors);
  ThreadPool pool(2);
  const groth16::R1cs r1cs = compile_post_shape(o.proof);
  EXPECT_EQ(r1cs.num_constraints(), 21866u + 23);  // incl. the input constraints
  // Development parameters under the PoSt "-dev" names, generated, then
  // loaded by a second call.
  const fs::path dir = fs::temp_directory_path() / ("cuzk-post-prove-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const LoadedParams loaded = ensure_post_dev_params(o.proof, dir, r1cs, pool);
  EXPECT_EQ(loaded.origin, ParamsOrigin::kDevelopmentGenerated);
  EXPECT_EQ(loaded.params_path.filename().string(), post_dev_param_names(o.proof).params);
  EXPECT_EQ(loaded.vk_path.filename().string(), post_dev_param_names(o.proof).vk);
  EXPECT_TRUE(fs::exists(loaded.params_path));
  const LoadedParams again = ensure_post_dev_params(o.proof, dir, r1cs, pool);
  EXPECT_EQ(again.origin, ParamsOrigin::kDevelopment);
  EXPECT_EQ(again.params.vk, loaded.params.vk);
  fs::remove_all(dir);
  const groth16::Parameters& params = loaded.params;
  EXPECT_EQ(groth16::vk_file_bytes(params.vk.ic.size()), 3076u);  // the official .vk size
  groth16::CpuProver prover(pool);
  const auto proof = prove_post_partition(p, params, r1cs, prover, pool);
  ASSERT_EQ(proof.size(), 192u);
  const auto pvk = groth16::prepare_verifying_key(params.vk);
  EXPECT_EQ(verify_post_proof(pvk, proof, post_public_inputs(p)), groth16::VerifyResult::kValid);
  PostPartition other = p;
  other.randomness[3] ^= 1;
  EXPECT_EQ(verify_post_proof(pvk, proof, post_public_inputs(other)), groth16::VerifyResult::kInvalid);
  // A vanilla proof answering other challenges is refused before proving.
  try {
    prove_post_partition(other, params, r1cs, prover, pool);
    ADD_FAILURE() << "proved";
  } catch (const PorepC2Error& e) {
    EXPECT_EQ(e.kind(), PorepC2ErrorKind::kInputMismatch);
  }
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
