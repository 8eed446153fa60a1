// WindowPoSt and WinningPoSt jobs through the Engine on the CPU back end,
// with 2 KiB development parameters generated into the rig's temp dir:
// proofs verify with the vk and public inputs the job returns, a tampered
// job fails alone, a CRITICAL WinningPoSt overtakes a PoRep job holding the
// only normal worker, and a missed deadline is reported and counted.
// (SnapDeals through the engine: filecoin_snap_slowtest.cpp, label slow.)
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <vector>

#include "circuits/filecoin/c1_synth.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "engine/filecoin_work.hpp"
#include "groth16/setup.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/filecoin_requests.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fc = circuits::filecoin;
using testing::make_post_fixture;
using testing::PostFixture;

EngineConfig config() {
  EngineConfig cfg;
  cfg.max_concurrent_jobs = 1;
  cfg.critical_workers = 1;
  cfg.admission = AdmissionPolicy{16, 1};
  cfg.drain_timeout = 60s;
  return cfg;
}

struct Rig : testing::EngineRig {
  explicit Rig(const char* prefix) : EngineRig(prefix, 3) { make_engine(config()); }
};

JobRequest post_job(ProofKind kind, const PostRequest& r) {
  JobRequest j;
  j.kind = kind;
  j.input = encode_post_request(r);
  return j;
}

// The public inputs the verifier derives from the fixture's public data, LE.
std::vector<std::array<std::uint8_t, 32>> expected_inputs(const PostFixture& f) {
  const fc::PostPartition p = fc::make_post_partition(f.proof, f.gen.randomness, f.gen.prover_id, 0, f.gen.sectors);
  std::vector<std::array<std::uint8_t, 32>> out;
  for (const ff::Fr& x : fc::post_public_inputs(p)) {
    std::array<std::uint8_t, 32> le{};
    x.to_bytes_le(le);
    out.push_back(le);
  }
  return out;
}

// Expects a proof that verifies with the job's own vk and public inputs, the
// latter being those the verifier derives.
void expect_verified(const Result<JobOutcome>& r, const PostFixture& f, const char* what) {
  ASSERT_TRUE(r.ok()) << what << ": " << r.error().message;
  const ProofOutput& out = r.value().output;
  EXPECT_EQ(out.proof.size(), 192u) << what;
  EXPECT_EQ(out.public_inputs, expected_inputs(f)) << what;
  EXPECT_TRUE(testing::output_verifies(out)) << what;
  // A public input changed: the same proof no longer verifies.
  ProofOutput other = out;
  other.public_inputs.at(0)[0] ^= 1;
  EXPECT_FALSE(testing::output_verifies(other)) << what;
}

TEST(FilecoinEngine, WindowAndWinningPostProveAndVerify) {
  const PostFixture window = make_post_fixture(fc::PostProof::Window2KiBV1_2, 2, 51);
  const PostFixture winning = make_post_fixture(fc::PostProof::Winning2KiBV1, 1, 52);
  Rig rig("cuzk-fc-engine-prove");
  testing::run_scenario(rig, [&](Engine& e) -> asio::awaitable<void> {
    const Result<JobView> a = e.submit(post_job(ProofKind::kWindowPost, window.request));
    const Result<JobView> b = e.submit(post_job(ProofKind::kWinningPost, winning.request));
    EXPECT_TRUE(a.ok() && b.ok());
    if (!a.ok() || !b.ok()) co_return;
    EXPECT_EQ(b.value().priority, Priority::kCritical);  // WinningPoSt's default
    const Result<JobOutcome> wa = co_await e.await(a.value().id, 0ms);
    const Result<JobOutcome> wb = co_await e.await(b.value().id, 0ms);
    expect_verified(wa, window, "WindowPoSt");
    expect_verified(wb, winning, "WinningPoSt");
    if (wa.ok()) {
      EXPECT_FALSE(wa.value().job.deadline_missed);
    }
    // The two sets' vks differ: each job used its own set.
    if (wa.ok() && wb.ok()) {
      EXPECT_NE(wa.value().output.vk_bytes, wb.value().output.vk_bytes);
    }
  });
}

TEST(FilecoinEngine, ATamperedJobFailsAloneWithInvalidInput) {
  const PostFixture window = make_post_fixture(fc::PostProof::Window2KiBV1_2, 2, 53);
  PostRequest bad = window.request;
  fc::FallbackPostSectorProof s = window.gen.sectors[1];
  s.sectors.at(0).inclusion_proofs.at(2).leaf[0] ^= 1;
  bad.vanilla_proofs[1] = fc::to_bincode(s);
  Rig rig("cuzk-fc-engine-tamper");
  testing::run_scenario(rig, [&](Engine& e) -> asio::awaitable<void> {
    const JobId tampered = e.submit(post_job(ProofKind::kWindowPost, bad)).value().id;
    const JobId genuine = e.submit(post_job(ProofKind::kWindowPost, window.request)).value().id;
    const Result<JobOutcome> t = co_await e.await(tampered, 0ms);
    const Result<JobOutcome> g = co_await e.await(genuine, 0ms);
    EXPECT_FALSE(t.ok());
    if (!t.ok()) {
      EXPECT_EQ(t.error().kind, ErrorKind::kInvalidInput) << t.error().message;
      EXPECT_NE(t.error().message.find("sector 2"), std::string::npos) << t.error().message;
    }
    expect_verified(g, window, "genuine WindowPoSt");
  });
}

TEST(FilecoinEngine, MissedDeadlineIsReportedAndCounted) {
  const PostFixture window = make_post_fixture(fc::PostProof::Window2KiBV1_2, 1, 54);
  const std::string counter =
      "cuzk_deadline_missed_total{kind=\"" + std::string(to_string(ProofKind::kWindowPost)) + "\"} ";
  Rig rig("cuzk-fc-engine-deadline");
  testing::run_scenario(rig, [&](Engine& e) -> asio::awaitable<void> {
    EXPECT_NE(e.metrics().find(counter + "0\n"), std::string::npos);
    JobRequest late = post_job(ProofKind::kWindowPost, window.request);
    late.request_id = "late";
    late.deadline_unix_ms = 1;  // 1970: long past
    JobRequest open = post_job(ProofKind::kWindowPost, window.request);
    open.request_id = "no-deadline";
    const JobId l = e.submit(std::move(late)).value().id;
    const JobId o = e.submit(std::move(open)).value().id;
    const Result<JobOutcome> lo = co_await e.await(l, 0ms);
    const Result<JobOutcome> oo = co_await e.await(o, 0ms);
    EXPECT_TRUE(lo.ok() && oo.ok());
    if (!lo.ok() || !oo.ok()) co_return;
    EXPECT_TRUE(lo.value().job.deadline_missed);
    EXPECT_EQ(lo.value().job.deadline_unix_ms, 1u);
    EXPECT_TRUE(testing::output_verifies(lo.value().output));  // late, but proved
    EXPECT_FALSE(oo.value().job.deadline_missed);
    EXPECT_EQ(oo.value().job.deadline_unix_ms, 0u);
    const std::string m = e.metrics();
    EXPECT_NE(m.find(counter + "1\n"), std::string::npos) << m;
    EXPECT_NE(m.find("cuzk_deadline_missed_total{kind=\"" + std::string(to_string(ProofKind::kPoRepC2)) + "\"} 0\n"),
              std::string::npos);
  });
}

// A PoRep job held in its development-parameter generation (a hook that
// waits for the test) occupies the only normal worker; a WinningPoSt
// submitted then must be proved by the critical worker meanwhile.
struct HoldRig : testing::EngineRig {
  HoldRig() : EngineRig("cuzk-fc-engine-critical", 3), release_future(release.get_future().share()) {
    make_engine(config());
    const std::size_t winning_inputs = circuit_set_spec("winning-post-2KiB")->expected_inputs;
    engine->set_dev_params_generator([this, winning_inputs](const groth16::R1cs& r1cs, const groth16::ToxicWaste& toxic,
                                                            ThreadPool& pool, const SetupProgress& progress) {
      if (r1cs.num_inputs() != winning_inputs) {  // the PoRep set
        asio::post(loop.executor(), [this] {
          porep_held = true;
          if (waiter != nullptr) waiter->cancel();
        });
        release_future.wait();
        throw groth16::SetupError("held PoRep parameters released by the test");
      }
      return groth16::generate_parameters(r1cs, toxic, pool, progress);
    });
  }
  std::promise<void> release;
  std::shared_future<void> release_future;
  bool porep_held = false;               // loop thread
  asio::steady_timer* waiter = nullptr;  // loop thread
};

TEST(FilecoinEngine, CriticalWinningPostOvertakesAPorepHoldingTheWorker) {
  const PostFixture winning = make_post_fixture(fc::PostProof::Winning2KiBV1, 1, 55);
  HoldRig rig;
  std::vector<JobId> finished;  // terminal events in order
  rig.engine->subscribe([&finished](const JobEvent& ev) {
    if (is_finished(ev.state)) finished.push_back(ev.id);
  });
  testing::run_scenario(rig, [&](Engine& e) -> asio::awaitable<void> {
    JobRequest porep;
    porep.kind = ProofKind::kPoRepC2;
    porep.input = fc::to_json(fc::make_synthetic_c1(fc::SealProof::StackedDrg2KiBV1_1, {}));
    const JobId p = e.submit(std::move(porep)).value().id;
    // Until the PoRep job is inside the hook (the worker is taken).
    asio::steady_timer wake(co_await asio::this_coro::executor, std::chrono::steady_clock::time_point::max());
    if (!rig.porep_held) {
      rig.waiter = &wake;
      asio::error_code ec;
      co_await wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      rig.waiter = nullptr;
    }
    EXPECT_TRUE(rig.porep_held);
    const JobId w = e.submit(post_job(ProofKind::kWinningPost, winning.request)).value().id;
    // The timeout only keeps a regression from hanging the test run.
    const Result<JobOutcome> wo = co_await e.await(w, 10min);
    expect_verified(wo, winning, "WinningPoSt");
    EXPECT_EQ(finished, std::vector<JobId>{w});  // the PoRep job is still held
    rig.release.set_value();
    const Result<JobOutcome> po = co_await e.await(p, 0ms);
    EXPECT_FALSE(po.ok());
    if (!po.ok()) {
      EXPECT_NE(po.error().message.find("held PoRep"), std::string::npos) << po.error().message;
    }
    EXPECT_EQ(finished, (std::vector<JobId>{w, p}));
  });
}

}  // namespace
}  // namespace cuzk::engine
