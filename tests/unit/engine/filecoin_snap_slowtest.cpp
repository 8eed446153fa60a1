// A genuine 2 KiB SnapDeals job through the Engine on the CPU back end: its
// development parameters are generated on first use (~150 s on the 2-core
// VM), hence its own binary, engine_slow_test, label "slow"
// (tests/CMakeLists.txt).
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

TEST(FilecoinEngineSlow, SnapDeals2KiBProvesAndVerifies) {
  const fc::UpdateInputs update = fc::make_sealed_update(fc::UpdateProof::StackedDrg2KiBV1, 61);
  fc::UpdateInputs tampered = update;
  tampered.partitions.at(0).challenge_proofs.at(2).proof_r_new.leaf[0] ^= 1;
  struct Rig : testing::EngineRig {
    Rig() : EngineRig("cuzk-fc-engine-snap", 2) {
      EngineConfig cfg;
      cfg.admission = AdmissionPolicy{16, 1};
      cfg.drain_timeout = 60s;
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
    const JobId b = e.submit(std::move(bad)).value().id;
    const JobId g = e.submit(std::move(good)).value().id;
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
  });
}

}  // namespace
}  // namespace cuzk::engine
