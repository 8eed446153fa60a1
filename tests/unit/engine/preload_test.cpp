// Engine::preload with fake GPUs that keep a "device" copy of the SRS
// (engine_srs.cpp, "Preload"): each GPU receives the set once and the jobs
// after upload nothing; a second preload uploads nothing; without GPUs a
// preload uploads nothing; a failed upload leaves the preload successful
// (counted in gpus_holding) and the set provable; and once every GPU holds a
// Filecoin set read from a file, its host copy of the bases is released (the
// budget's books told) and a job of the set still proves. Critical lanes
// receive small sets, from a preload and after a WinningPoSt job.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/filecoin_request.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"
#include "unit/engine/filecoin_requests.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
using testing::demo;
using testing::FakeBackend;
namespace fc = circuits::filecoin;

EngineConfig config() {
  EngineConfig cfg;
  cfg.admission = AdmissionPolicy{16, 1};
  cfg.max_demo_log_domain = 8;
  cfg.max_concurrent_jobs = 2;
  cfg.batch_max_size = 1;
  cfg.drain_timeout = 30s;
  // Every set read from a file gets a host copy to release (2 KiB sets too).
  cfg.srs_host_copy_min_bytes = 0;
  return cfg;
}

struct Rig : testing::EngineRig {
  // lanes: a critical lane per GPU after them (fakes[gpus + i]).
  explicit Rig(std::size_t gpus, std::size_t lanes = 0) : EngineRig("cuzk-preload-test", 3) {
    make_engine(config());
    std::vector<std::shared_ptr<DeviceBackend>> backends;
    for (std::uint32_t i = 0; i < gpus + lanes; ++i) {
      const bool lane = i >= gpus;
      const std::uint32_t ordinal = lane ? i - std::uint32_t(gpus) : i;
      fakes.push_back(
          std::make_shared<FakeBackend>("fake:" + std::to_string(ordinal) + (lane ? " lane" : ""), ordinal, math));
      fakes.back()->models_device_srs = true;
      fakes.back()->lane = lane;
      backends.push_back(fakes.back());
    }
    if (gpus != 0) engine->set_gpu_backends(std::move(backends));
  }
  std::vector<std::shared_ptr<FakeBackend>> fakes;
};

// Submits a job and expects a proof that verifies.
asio::awaitable<void> expect_proved(Engine& e, JobRequest r) {
  auto job = e.submit(std::move(r));
  EXPECT_TRUE(job.ok());
  if (!job.ok()) co_return;
  auto out = co_await e.await(job.value().id, 0ms);
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  if (out.ok()) {
    EXPECT_TRUE(testing::output_verifies(out.value().output));
  }
}

// The budget's charge for what is held now: with no job running, the
// loaded sets (a released host copy's bytes given back, Engine::host_copy_books),
// not counting the witness memory kept for the next run.
std::uint64_t charged_bytes(const Engine& e) {
  const EngineStatus s = e.status();
  return s.memory.reserved_bytes - s.memory.kept_witness_bytes;
}

TEST(EnginePreload, EveryGpuReceivesTheSetOnceAndJobsAfterUploadNothing) {
  Rig rig(2);
  testing::run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    auto first = co_await e.preload("demo-5");
    EXPECT_TRUE(first.ok());
    if (first.ok()) {
      EXPECT_FALSE(first.value().already_loaded);
      EXPECT_EQ(first.value().gpus, 2u);
      EXPECT_EQ(first.value().gpus_holding, 2u);
    }
    EngineStatus s = e.status();
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(rig.fakes[i]->srs_preloads.load(), 1) << i;
      EXPECT_EQ(rig.fakes[i]->srs_uploads.load(), 1) << i;
      EXPECT_TRUE(rig.fakes[i]->calls().empty()) << i;  // nothing proved
      EXPECT_EQ(s.devices.at(i).resident_srs, "demo-5") << i;
      EXPECT_EQ(s.devices.at(i).stage, "idle") << i;
    }

    // A second preload finds every GPU holding the set.
    auto second = co_await e.preload("demo-5");
    EXPECT_TRUE(second.ok());
    if (second.ok()) {
      EXPECT_TRUE(second.value().already_loaded);
      EXPECT_EQ(second.value().gpus_holding, 2u);
    }

    // Jobs of the set prove from the devices' copies.
    co_await expect_proved(e, demo(5, 1));
    co_await expect_proved(e, demo(5, 2));
    EXPECT_TRUE(co_await testing::settled(e));
  });
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rig.fakes[i]->srs_preloads.load(), 1) << i;
    EXPECT_EQ(rig.fakes[i]->srs_uploads.load(), 1) << i;
  }
  EXPECT_EQ(rig.fakes[0]->calls().size() + rig.fakes[1]->calls().size(), 2u);
}

// A set small enough for the critical lanes (DeviceSet::kLaneSrsMaxBytes)
// goes up to the lane too, after the card's worker; the reply counts the
// GPUs of the dispatch rule only, and a job proves on the worker.
TEST(EnginePreload, ASmallSetGoesToTheCriticalLaneToo) {
  Rig rig(1, 1);
  testing::run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    auto p = co_await e.preload("demo-5");
    EXPECT_TRUE(p.ok());
    if (p.ok()) {
      EXPECT_EQ(p.value().gpus, 1u);
      EXPECT_EQ(p.value().gpus_holding, 1u);
    }
    EXPECT_EQ(rig.fakes[1]->srs_preloads.load(), 1);
    EngineStatus s = e.status();
    EXPECT_EQ(s.devices.size(), 3u);  // worker, CPU, lane
    if (s.devices.size() == 3) {
      EXPECT_EQ(s.devices.at(2).name, "fake:0 lane");
      EXPECT_EQ(s.devices.at(2).resident_srs, "demo-5");
    }
    co_await expect_proved(e, demo(5, 1));
    EXPECT_TRUE(co_await testing::settled(e));
  });
  EXPECT_EQ(rig.fakes[0]->srs_preloads.load(), 1);
  EXPECT_EQ(rig.fakes[0]->calls().size(), 1u);
  EXPECT_TRUE(rig.fakes[1]->calls().empty());
}

// A WinningPoSt proved on the card's worker leaves its set uploaded to the
// card's critical lane too (Engine::warm_critical_lanes), so that a later
// race there uploads nothing; the lane proved nothing.
TEST(EnginePreload, AWinningPostJobWarmsTheCriticalLane) {
  const testing::PostFixture winning = testing::make_post_fixture(fc::PostProof::Winning2KiBV1, 1, 71);
  Rig rig(1, 1);
  testing::run_scenario(rig, [&rig, &winning](Engine& e) -> asio::awaitable<void> {
    JobRequest job;
    job.kind = ProofKind::kWinningPost;
    job.input = encode_post_request(winning.request);
    auto id = e.submit(job);
    EXPECT_TRUE(id.ok());
    if (!id.ok()) co_return;
    auto out = co_await e.await(id.value().id, 0ms);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
    EXPECT_TRUE(co_await testing::eventually(e, [&rig] { return rig.fakes[1]->srs_preloads.load() == 1; }));
    EXPECT_TRUE(co_await testing::settled(e));
    const EngineStatus s = e.status();
    EXPECT_EQ(s.devices.size(), 3u);  // worker, CPU, lane
    if (s.devices.size() == 3) {
      EXPECT_FALSE(s.devices.at(0).resident_srs.empty());
      EXPECT_EQ(s.devices.at(2).resident_srs, s.devices.at(0).resident_srs);
    }
  });
  EXPECT_EQ(rig.fakes[0]->calls().size(), 1u);
  EXPECT_TRUE(rig.fakes[1]->calls().empty());
  EXPECT_EQ(rig.fakes[1]->srs_preloads.load(), 1);
}

TEST(EnginePreload, WithoutGpusUploadsNothing) {
  Rig rig(0);
  testing::run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    auto p = co_await e.preload("demo-5");
    EXPECT_TRUE(p.ok());
    if (p.ok()) {
      EXPECT_EQ(p.value().gpus, 0u);
      EXPECT_EQ(p.value().gpus_holding, 0u);
    }
    EXPECT_TRUE(e.status().devices.at(0).resident_srs.empty());  // the CPU keeps nothing
    co_await expect_proved(e, demo(5, 1));
  });
}

TEST(EnginePreload, AFailedUploadLeavesThePreloadSuccessfulAndTheSetProvable) {
  Rig rig(2);
  rig.fakes[0]->preload_throw_next = 1;
  testing::run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    auto p = co_await e.preload("demo-5");
    EXPECT_TRUE(p.ok());
    if (p.ok()) {
      EXPECT_EQ(p.value().gpus, 2u);
      EXPECT_EQ(p.value().gpus_holding, 1u);
    }
    EXPECT_EQ(e.status().devices.at(0).stage, "idle");
    co_await expect_proved(e, demo(5, 1));
    EXPECT_TRUE(co_await testing::settled(e));

    // The next preload uploads where the set is still missing (unless the
    // job's device step uploaded it there), and nowhere else.
    auto again = co_await e.preload("demo-5");
    EXPECT_TRUE(again.ok());
    if (again.ok()) {
      EXPECT_EQ(again.value().gpus_holding, 2u);
    }
    co_await expect_proved(e, demo(5, 2));
  });
  EXPECT_EQ(rig.fakes[1]->srs_preloads.load(), 1);
  EXPECT_GE(rig.fakes[0]->srs_preloads.load(), 1);
  EXPECT_LE(rig.fakes[0]->srs_preloads.load(), 2);
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(rig.fakes[i]->srs_uploads.load(), 1) << i;
}

// A 2 KiB WindowPoSt set (development parameters generated into the rig's
// dir, read back from there as a file) with a host copy: kept while a GPU
// lacks the set, released by the preload that completes the GPUs; the job
// after proves from the devices' copies (a fake reading the released host
// copy would fault or prove wrong).
TEST(EnginePreload, ReleasesTheHostCopyOnceEveryGpuHoldsTheSet) {
  const testing::PostFixture window = testing::make_post_fixture(fc::PostProof::Window2KiBV1_2, 2, 61);
  Rig rig(2);
  rig.fakes[1]->preload_throw_next = 1;
  testing::run_scenario(rig, [&rig, &window](Engine& e) -> asio::awaitable<void> {
    const std::string set = "window-post-2KiB";
    auto p = co_await e.preload(set);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    if (p.ok()) {
      EXPECT_EQ(p.value().gpus_holding, 1u);
    }
    const std::uint64_t whole_bytes = charged_bytes(e);
    EXPECT_GT(whole_bytes, 0u);  // kept: fake:1 would read it

    auto again = co_await e.preload(set);
    EXPECT_TRUE(again.ok());
    if (again.ok()) {
      EXPECT_EQ(again.value().gpus_holding, 2u);
    }
    const std::uint64_t after_bytes = charged_bytes(e);
    EXPECT_GT(after_bytes, 0u);  // the R1cs and the verifying key stay
    EXPECT_LT(after_bytes, whole_bytes);
    EXPECT_EQ(rig.fakes[0]->srs_preloads.load(), 1);
    EXPECT_EQ(rig.fakes[1]->srs_preloads.load(), 2);

    JobRequest job;
    job.kind = ProofKind::kWindowPost;
    job.input = encode_post_request(window.request);
    auto id = e.submit(job);
    EXPECT_TRUE(id.ok());
    if (id.ok()) {
      auto out = co_await e.await(id.value().id, 0ms);
      EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
      if (out.ok()) {
        EXPECT_TRUE(testing::output_verifies(out.value().output));
      }
    }
    EXPECT_TRUE(co_await testing::settled(e));
    EXPECT_EQ(charged_bytes(e), after_bytes);  // not read back
    EXPECT_EQ(e.status().cpu_retries_total, 0u);
  });
  for (std::size_t i = 0; i < 2; ++i) EXPECT_EQ(rig.fakes[i]->srs_uploads.load(), 1) << i;
}

}  // namespace
}  // namespace cuzk::engine
