// Genuine 2 KiB SnapDeals jobs through the Engine on the CPU back end, as one
// batch (a tampered one that fails alone, two that share one partition
// pipeline), then a job that joins a running one's pipeline: their development parameters are generated on first use
// (~150 s on the 2-core VM), hence its own binary, engine_slow_test, label "slow" (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <string>

#include "circuits/filecoin/update_gen.hpp"
#include "circuits/filecoin/update_vanilla.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/filecoin_requests.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fc = circuits::filecoin;

TEST(FilecoinEngineSlow, SnapDeals2KiBBatchProvesAndVerifiesEachMember) {
  const fc::UpdateInputs update = fc::make_sealed_update(fc::UpdateProof::StackedDrg2KiBV1, 61);
  const fc::UpdateInputs second = fc::make_sealed_update(fc::UpdateProof::StackedDrg2KiBV1, 62);
  fc::UpdateInputs tampered = update;
  tampered.partitions.at(0).challenge_proofs.at(2).proof_r_new.leaf[0] ^= 1;
  struct Rig : testing::EngineRig {
    Rig() : EngineRig("cuzk-fc-engine-snap", 2) {
      EngineConfig cfg;
      cfg.admission = AdmissionPolicy{16, 1};
      cfg.drain_timeout = 60s;
      cfg.snap_batch_max_jobs = 3;  // the three jobs below: one batch
      make_engine(cfg);
    }
  } rig;
  testing::run_scenario(rig, [&](Engine& e) -> asio::awaitable<void> {
    JobRequest bad;
    bad.kind = ProofKind::kSnapDeals;
    bad.input = encode_snap_request(testing::snap_request_of(tampered));
    JobRequest good;
    good.kind = ProofKind::kSnapDeals;
    good.input = encode_snap_request(testing::snap_request_of(update));
    JobRequest good2;
    good2.kind = ProofKind::kSnapDeals;
    good2.input = encode_snap_request(testing::snap_request_of(second));
    // Queued before the worker runs: the worker collects all three.
    const JobId b = e.submit(std::move(bad)).value().id;
    const JobId g = e.submit(std::move(good)).value().id;
    const JobId g2 = e.submit(std::move(good2)).value().id;
    const Result<JobOutcome> bo = co_await e.await(b, 0ms);
    EXPECT_FALSE(bo.ok());
    if (!bo.ok()) {
      EXPECT_EQ(bo.error().kind, ErrorKind::kInvalidInput) << bo.error().message;
      EXPECT_NE(bo.error().message.find("partition 0, challenge 2"), std::string::npos) << bo.error().message;
    }
    const Result<JobOutcome> go = co_await e.await(g, 0ms);
    EXPECT_TRUE(go.ok()) << go.error().message;
    if (!go.ok()) co_return;
    const ProofOutput& out = go.value().output;
    EXPECT_EQ(out.proof.size(), 192u);
    // The public inputs the verifier derives from the commitments.
    std::vector<std::array<std::uint8_t, 32>> expected;
    for (const ff::Fr& x : fc::update_partition_public_inputs(update, 0)) {
      std::array<std::uint8_t, 32> le{};
      x.to_bytes_le(le);
      expected.push_back(le);
    }
    EXPECT_EQ(out.public_inputs, expected);
    EXPECT_TRUE(testing::output_verifies(out));
    ProofOutput other = out;
    other.public_inputs.at(3)[0] ^= 1;  // comm_r_new
    EXPECT_FALSE(testing::output_verifies(other));

    // The second member: its own proof, against its own commitments.
    const Result<JobOutcome> go2 = co_await e.await(g2, 0ms);
    EXPECT_TRUE(go2.ok()) << go2.error().message;
    if (!go2.ok()) co_return;
    const ProofOutput& out2 = go2.value().output;
    EXPECT_TRUE(testing::output_verifies(out2));
    EXPECT_NE(out2.public_inputs, out.public_inputs);
    EXPECT_NE(out2.proof, out.proof);
    const std::string metrics = e.metrics();
    EXPECT_NE(metrics.find("cuzk_batches_total 1\n"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("cuzk_batched_jobs_total 3\n"), std::string::npos) << metrics;

    // A SnapDeals job queued while another of its set proves joins that
    // pipeline (the parameters are resident now): one more batch of two.
    JobRequest first;
    first.kind = ProofKind::kSnapDeals;
    first.input = encode_snap_request(testing::snap_request_of(update));
    const JobId j1 = e.submit(std::move(first)).value().id;
    auto proving = [&e, j1] {
      for (const JobView& v : e.status().jobs)
        if (v.id == j1) return v.state == JobState::kRunning && v.stage.find("partition") != std::string::npos;
      return false;
    };
    EXPECT_TRUE(co_await testing::eventually(e, proving));
    JobRequest joiner;
    joiner.kind = ProofKind::kSnapDeals;
    joiner.input = encode_snap_request(testing::snap_request_of(second));
    const JobId j2 = e.submit(std::move(joiner)).value().id;
    const Result<JobOutcome> o1 = co_await e.await(j1, 0ms);
    const Result<JobOutcome> o2 = co_await e.await(j2, 0ms);
    EXPECT_TRUE(o1.ok()) << o1.error().message;
    EXPECT_TRUE(o2.ok()) << o2.error().message;
    if (!o1.ok() || !o2.ok()) co_return;
    EXPECT_TRUE(testing::output_verifies(o1.value().output));
    EXPECT_TRUE(testing::output_verifies(o2.value().output));
    EXPECT_EQ(o2.value().output.public_inputs, out2.public_inputs);  // its own commitments
    const std::string after = e.metrics();
    EXPECT_NE(after.find("cuzk_batches_total 2\n"), std::string::npos) << after;
    EXPECT_NE(after.find("cuzk_batched_jobs_total 5\n"), std::string::npos) << after;
  });
}

}  // namespace
}  // namespace cuzk::engine
