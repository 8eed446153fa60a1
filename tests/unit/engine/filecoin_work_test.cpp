// prepare_filecoin_work on genuine 2 KiB requests (set, partitions, public
// inputs, a witness satisfying the set's R1CS) and on tampered ones (refused
// with kInvalidInput naming the sector / partition and the field). CPU only,
// no engine.
#include "engine/filecoin_work.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>

#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "unit/engine/filecoin_requests.hpp"

namespace cuzk::engine {
namespace {

using testing::make_post_fixture;
using testing::PostFixture;
namespace fc = circuits::filecoin;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Prepares, expects kInvalidInput, returns its message.
std::string refused(ProofKind kind, const std::string& input, ThreadPool& pool) {
  const Result<FilecoinWork> w = prepare_filecoin_work(kind, input, pool);
  if (w) {
    ADD_FAILURE() << "prepared: " << w.value().description;
    return {};
  }
  EXPECT_EQ(w.error().kind, ErrorKind::kInvalidInput) << w.error().message;
  return w.error().message;
}

// The witness of partition k satisfies the set's compiled R1CS and its inputs
// after ONE are the work's public inputs.
void expect_satisfies(const FilecoinWork& w, std::uint32_t k, ThreadPool& pool) {
  const groth16::R1cs r1cs = w.set.compile();
  EXPECT_EQ(r1cs.num_inputs(), w.set.expected_inputs);
  ASSERT_EQ(w.public_inputs.at(k).size(), r1cs.num_inputs() - 1);
  const groth16::Witness wit = w.synthesize(k, &pool, {}, {});
  ASSERT_EQ(wit.inputs.size(), r1cs.num_inputs());
  EXPECT_EQ(std::vector<ff::Fr>(wit.inputs.begin() + 1, wit.inputs.end()), w.public_inputs[k]);
  EXPECT_TRUE(groth16::is_satisfied(r1cs, wit.inputs, wit.aux, pool));
  // Sequential with the R1cs's shape (allocated once): the same witness.
  const groth16::Witness seq = w.synthesize(k, nullptr, {r1cs.num_inputs(), r1cs.num_aux()}, {});
  EXPECT_EQ(seq.inputs, wit.inputs);
  EXPECT_EQ(seq.aux, wit.aux);
}

class PostWork : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    window_ = new PostFixture(make_post_fixture(fc::PostProof::Window2KiBV1_2, 2, 31));
    winning_ = new PostFixture(make_post_fixture(fc::PostProof::Winning2KiBV1, 1, 32));
  }
  static void TearDownTestSuite() {
    delete window_;
    delete winning_;
  }
  // The window request with sector i's typed proof replaced by `edit` of it.
  template <class Edit>
  static std::string window_with(std::size_t i, Edit edit) {
    fc::FallbackPostSectorProof s = window_->gen.sectors.at(i);
    edit(s);
    PostRequest r = window_->request;
    r.vanilla_proofs[i] = fc::to_bincode(s);
    return encode_post_request(r);
  }
  static PostFixture* window_;
  static PostFixture* winning_;
  ThreadPool pool_{2};
};
PostFixture* PostWork::window_ = nullptr;
PostFixture* PostWork::winning_ = nullptr;

TEST_F(PostWork, GenuineWindowPostPrepares) {
  const Result<FilecoinWork> w =
      prepare_filecoin_work(ProofKind::kWindowPost, encode_post_request(window_->request), pool_);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w.value().set.id, "window-post-2KiB");
  EXPECT_EQ(w.value().set.id, post_set_id(fc::PostProof::Window2KiBV1_2));
  EXPECT_TRUE(w.value().critical_synthesis_pool);
  const auto spec = circuit_set_spec("window-post-2KiB");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->expected_inputs, w.value().set.expected_inputs);
  EXPECT_EQ(w.value().partitions, 1u);
  ASSERT_EQ(w.value().public_inputs.size(), 1u);
  // 2 slots x (comm_r + 10 challenges).
  EXPECT_EQ(w.value().public_inputs[0].size(), 22u);
  const fc::PostPartition p =
      fc::make_post_partition(window_->proof, window_->gen.randomness, window_->gen.prover_id, 0, window_->gen.sectors);
  EXPECT_EQ(w.value().public_inputs[0], fc::post_public_inputs(p));
  expect_satisfies(w.value(), 0, pool_);
}

TEST_F(PostWork, GenuineWinningPostPrepares) {
  const Result<FilecoinWork> w =
      prepare_filecoin_work(ProofKind::kWinningPost, encode_post_request(winning_->request), pool_);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w.value().set.id, "winning-post-2KiB");
  EXPECT_TRUE(w.value().critical_synthesis_pool);
  EXPECT_EQ(w.value().partitions, 1u);
  EXPECT_EQ(w.value().public_inputs.at(0).size(), 66u * 2);  // 66 slots x (comm_r + 1 challenge)
  expect_satisfies(w.value(), 0, pool_);
}

TEST_F(PostWork, WrongCommRNamesTheSector) {
  const std::string m = refused(ProofKind::kWindowPost, window_with(1, [](auto& s) { s.comm_r[0] ^= 1; }), pool_);
  EXPECT_TRUE(contains(m, "sector 2")) << m;
  EXPECT_TRUE(contains(m, "comm_r")) << m;
}

TEST_F(PostWork, SwappedPathElementIsLeftToTheCircuitThenNamedByTheFullCheck) {
  const Result<FilecoinWork> w =
      prepare_filecoin_work(ProofKind::kWindowPost,
                            window_with(0,
                                        [](auto& s) {
                                          auto& h = s.sectors.at(0).inclusion_proofs.at(4).base.at(1).hashes;
                                          ASSERT_NE(h.at(0), h.at(1));
                                          std::swap(h[0], h[1]);
                                        }),
                            pool_);
  ASSERT_TRUE(w) << w.error().message;
  // The prover's satisfaction check is what catches it...
  const groth16::R1cs r1cs = w.value().set.compile();
  const groth16::Witness wit = w.value().synthesize(0, &pool_, {}, {});
  EXPECT_FALSE(groth16::is_satisfied(r1cs, wit.inputs, wit.aux, pool_));
  // ...and the engine's explanation of the failure names the sector.
  ASSERT_TRUE(w.value().explain_invalid);
  const std::optional<Error> named = w.value().explain_invalid();
  ASSERT_TRUE(named);
  EXPECT_EQ(named->kind, ErrorKind::kInvalidInput);
  EXPECT_TRUE(contains(named->message, "sector 1")) << named->message;
  EXPECT_TRUE(contains(named->message, "path")) << named->message;
}

TEST_F(PostWork, TheFullCheckFindsNothingInGenuineProofs) {
  const Result<FilecoinWork> w = prepare_filecoin_work(ProofKind::kWindowPost, window_with(0, [](auto&) {}), pool_);
  ASSERT_TRUE(w) << w.error().message;
  ASSERT_TRUE(w.value().explain_invalid);
  EXPECT_EQ(w.value().explain_invalid(), std::nullopt);
}

TEST_F(PostWork, WrongRandomnessIsAChallengeMismatch) {
  PostRequest r = window_->request;
  r.randomness[5] ^= 0x10;
  const std::string m = refused(ProofKind::kWindowPost, encode_post_request(r), pool_);
  EXPECT_TRUE(contains(m, "sector 1")) << m;
  EXPECT_TRUE(contains(m, "challenge")) << m;
  r.randomness.resize(31);
  EXPECT_TRUE(contains(refused(ProofKind::kWindowPost, encode_post_request(r), pool_), "randomness"));
}

TEST_F(PostWork, TruncatedBincodeNamesTheVanillaProof) {
  PostRequest r = window_->request;
  r.vanilla_proofs[1].resize(r.vanilla_proofs[1].size() - 7);
  const std::string m = refused(ProofKind::kWindowPost, encode_post_request(r), pool_);
  EXPECT_TRUE(contains(m, "vanilla proof 1")) << m;
  EXPECT_TRUE(contains(m, "sector 2")) << m;
}

TEST_F(PostWork, ProofsOfAnotherShapeAreRefused) {
  // A WinningPoSt vanilla proof (66 inclusion proofs) in a WindowPoSt request.
  PostRequest r = window_->request;
  r.vanilla_proofs[0] = winning_->request.vanilla_proofs[0];
  EXPECT_TRUE(contains(refused(ProofKind::kWindowPost, encode_post_request(r), pool_), "vanilla proof 0"));
  // One inclusion proof short of the challenge count.
  const std::string m = refused(ProofKind::kWindowPost,
                                window_with(0, [](auto& s) { s.sectors.at(0).inclusion_proofs.pop_back(); }), pool_);
  EXPECT_TRUE(contains(m, "inclusion_proofs")) << m;
  // Three sectors where a 2 KiB partition holds two; two for WinningPoSt.
  r = window_->request;
  r.vanilla_proofs.push_back(r.vanilla_proofs[0]);
  EXPECT_TRUE(contains(refused(ProofKind::kWindowPost, encode_post_request(r), pool_), "at most 2"));
  r = winning_->request;
  r.vanilla_proofs.push_back(window_->request.vanilla_proofs[0]);
  refused(ProofKind::kWinningPost, encode_post_request(r), pool_);
  r.vanilla_proofs.clear();
  EXPECT_TRUE(contains(refused(ProofKind::kWinningPost, encode_post_request(r), pool_), "no vanilla proofs"));
}

TEST_F(PostWork, UnsortedSectorsAreSortedDuplicatesRefused) {
  PostRequest r = window_->request;
  std::swap(r.vanilla_proofs[0], r.vanilla_proofs[1]);
  const Result<FilecoinWork> w = prepare_filecoin_work(ProofKind::kWindowPost, encode_post_request(r), pool_);
  ASSERT_TRUE(w) << w.error().message;
  const Result<FilecoinWork> sorted =
      prepare_filecoin_work(ProofKind::kWindowPost, encode_post_request(window_->request), pool_);
  ASSERT_TRUE(sorted);
  EXPECT_EQ(w.value().public_inputs, sorted.value().public_inputs);
  r.vanilla_proofs[0] = r.vanilla_proofs[1];
  const std::string m = refused(ProofKind::kWindowPost, encode_post_request(r), pool_);
  EXPECT_TRUE(contains(m, "sector 1")) << m;
}

TEST_F(PostWork, WrongKindForTheInputIsRefused) {
  EXPECT_TRUE(
      contains(refused(ProofKind::kWindowPost, encode_post_request(winning_->request), pool_), "not a WindowPoSt"));
  EXPECT_TRUE(
      contains(refused(ProofKind::kWinningPost, encode_post_request(window_->request), pool_), "not a WinningPoSt"));
  PostRequest r = window_->request;
  r.registered_proof = 999;
  EXPECT_TRUE(contains(refused(ProofKind::kWindowPost, encode_post_request(r), pool_), "999"));
  // PoSt bytes as a SnapDeals request: framing error, not a crash.
  refused(ProofKind::kSnapDeals, encode_post_request(window_->request), pool_);
  // PoSt bytes as a PoRep C1: not JSON.
  refused(ProofKind::kPoRepC2, encode_post_request(window_->request), pool_);
  const Result<FilecoinWork> demo =
      prepare_filecoin_work(ProofKind::kGroth16Demo, encode_post_request(window_->request), pool_);
  ASSERT_FALSE(demo);
  EXPECT_EQ(demo.error().kind, ErrorKind::kInternal);
}

// The submit-time screen refuses what the header alone shows to be wrong and
// passes a genuine request (whose vanilla proofs it does not read).
TEST_F(PostWork, ScreenRefusesWhatTheHeaderShowsWrong) {
  EXPECT_FALSE(screen_filecoin_request(ProofKind::kWindowPost, encode_post_request(window_->request)));
  EXPECT_FALSE(screen_filecoin_request(ProofKind::kWinningPost, encode_post_request(winning_->request)));
  auto screened = [](ProofKind kind, const PostRequest& r) {
    std::optional<Error> e = screen_filecoin_request(kind, encode_post_request(r));
    EXPECT_TRUE(e);
    if (!e) return std::string();
    EXPECT_EQ(e->kind, ErrorKind::kInvalidInput);
    return e->message;
  };
  EXPECT_TRUE(contains(screened(ProofKind::kWindowPost, winning_->request), "not a WindowPoSt"));
  PostRequest r = window_->request;
  r.vanilla_proofs.clear();
  EXPECT_TRUE(contains(screened(ProofKind::kWindowPost, r), "no vanilla proofs"));
  r = window_->request;
  r.randomness.pop_back();
  EXPECT_TRUE(contains(screened(ProofKind::kWindowPost, r), "31 bytes"));
  r = window_->request;
  r.registered_proof = 999;
  EXPECT_TRUE(contains(screened(ProofKind::kWindowPost, r), "999"));
  r = window_->request;
  r.vanilla_proofs.push_back(r.vanilla_proofs.front());  // a 2 KiB WindowPoSt partition holds 2 sectors
  EXPECT_TRUE(contains(screened(ProofKind::kWindowPost, r), "at most 2"));
  EXPECT_TRUE(screen_filecoin_request(ProofKind::kWindowPost, ""));
  EXPECT_TRUE(screen_filecoin_request(ProofKind::kSnapDeals, encode_post_request(window_->request)));
}

class SnapWork : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    update_ = new fc::UpdateInputs(fc::make_sealed_update(fc::UpdateProof::StackedDrg2KiBV1, 41));
  }
  static void TearDownTestSuite() { delete update_; }
  static SnapRequest genuine() { return testing::snap_request_of(*update_); }
  static fc::UpdateInputs* update_;
  ThreadPool pool_{2};
};
fc::UpdateInputs* SnapWork::update_ = nullptr;

TEST_F(SnapWork, GenuineUpdatePrepares) {
  const Result<FilecoinWork> w = prepare_filecoin_work(ProofKind::kSnapDeals, encode_snap_request(genuine()), pool_);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w.value().set.id, "snap-deals-2KiB");
  EXPECT_EQ(w.value().set.id, circuit_set_spec("snap-deals-2KiB")->id);
  EXPECT_TRUE(w.value().critical_synthesis_pool);
  EXPECT_EQ(w.value().partitions, 1u);
  ASSERT_EQ(w.value().public_inputs.size(), 1u);
  EXPECT_EQ(w.value().public_inputs[0], fc::update_partition_public_inputs(*update_, 0));
  expect_satisfies(w.value(), 0, pool_);
}

TEST_F(SnapWork, MismatchedCommitmentsNameTheField) {
  SnapRequest r = genuine();
  r.comm_r_new[0] ^= 1;
  std::string m = refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_);
  EXPECT_TRUE(contains(m, "partition 0")) << m;
  EXPECT_TRUE(contains(m, "comm_r_new")) << m;
  r = genuine();
  r.comm_d_new[0] ^= 1;
  m = refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_);
  EXPECT_TRUE(contains(m, "partition 0")) << m;
  EXPECT_TRUE(contains(m, "comm_d_new")) << m;
  r = genuine();
  r.comm_r_old[0] ^= 1;
  m = refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_);
  EXPECT_TRUE(contains(m, "comm_r_old")) << m;
}

TEST_F(SnapWork, TamperedPartitionProofNamesTheChallenge) {
  fc::UpdateInputs bad = *update_;
  bad.partitions[0].challenge_proofs.at(3).proof_d_new.leaf[0] ^= 1;
  const std::string m = refused(ProofKind::kSnapDeals, encode_snap_request(testing::snap_request_of(bad)), pool_);
  EXPECT_TRUE(contains(m, "partition 0, challenge 3")) << m;
  EXPECT_TRUE(contains(m, "proof_d_new")) << m;
}

TEST_F(SnapWork, MalformedPartitionProofsAreRefused) {
  SnapRequest r = genuine();
  r.vanilla_proofs[0].resize(r.vanilla_proofs[0].size() - 5);
  std::string m = refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_);
  EXPECT_TRUE(contains(m, "partition 0")) << m;
  r = genuine();
  r.vanilla_proofs[0].push_back(0);
  refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_);
  // A 2 KiB update has one partition.
  r = genuine();
  r.vanilla_proofs.push_back(r.vanilla_proofs[0]);
  refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_);
  r = genuine();
  r.registered_proof = 77;
  EXPECT_TRUE(contains(refused(ProofKind::kSnapDeals, encode_snap_request(r), pool_), "77"));
  // SnapDeals bytes as a PoSt request.
  refused(ProofKind::kWindowPost, encode_snap_request(genuine()), pool_);
}

TEST_F(SnapWork, ScreenChecksTheProofAndPartitionCount) {
  EXPECT_FALSE(screen_filecoin_request(ProofKind::kSnapDeals, encode_snap_request(genuine())));
  SnapRequest r = genuine();
  r.vanilla_proofs.push_back(r.vanilla_proofs.front());  // 2 KiB: one partition
  std::optional<Error> e = screen_filecoin_request(ProofKind::kSnapDeals, encode_snap_request(r));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, ErrorKind::kInvalidInput);
  EXPECT_TRUE(contains(e->message, "2 partition proofs")) << e->message;
  r = genuine();
  r.registered_proof = 77;
  e = screen_filecoin_request(ProofKind::kSnapDeals, encode_snap_request(r));
  ASSERT_TRUE(e);
  EXPECT_TRUE(contains(e->message, "77")) << e->message;
}

TEST(CircuitSetSpec, IdsMustBeSpelledExactly) {
  for (const char* id : {"window-post-2KiB", "winning-post-2KiB", "snap-deals-2KiB", "window-post-32GiB",
                         "winning-post-64GiB", "snap-deals-512MiB", "porep-2KiB", "porep-32GiB", "porep-64GiB"}) {
    const auto s = circuit_set_spec(id);
    ASSERT_TRUE(s) << id;
    EXPECT_EQ(s->id, id);
  }
  for (const char* id : {"window-post-2kib", "window-post-3GiB", "snap-deals-", "window-post-2KiB ", "winning-post-",
                         "", "porep-32gib", "porep-", "porep-3GiB", "demo-16"})
    EXPECT_FALSE(circuit_set_spec(id)) << id;
  EXPECT_EQ(circuit_set_spec("snap-deals-2KiB")->expected_inputs, 5u);
  EXPECT_FALSE(circuit_set_spec("window-post-2KiB")->porep);
  // V1 and V1_1 of a size share one set: the id names the size only.
  const auto porep = circuit_set_spec("porep-32GiB");
  ASSERT_TRUE(porep && porep->porep);
  EXPECT_EQ(porep_srs_id(*porep->porep), "porep-32GiB");
  EXPECT_EQ(porep_srs_id(fc::SealProof::StackedDrg32GiBV1), porep_srs_id(fc::SealProof::StackedDrg32GiBV1_1));
  EXPECT_EQ(snap_set_id(fc::UpdateProof::StackedDrg32GiBV1), "snap-deals-32GiB");
}

}  // namespace
}  // namespace cuzk::engine
