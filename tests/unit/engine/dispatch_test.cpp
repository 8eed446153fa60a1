// Partition-level dispatch over several GPUs and PoRep-style batches:
//   - the pure rule (engine/dispatch.hpp) with the measured 32 GiB numbers;
//   - DeviceSet's wait queue: devices go to waiters by priority;
//   - the partition pipeline with two fake GPUs: one job's partitions prove
//     on both at once, residency and job counts per device stay right, a
//     GPU that throws hands the partition to the other, a proof that does
//     not verify is proved again on the CPU, a second prover working set is
//     taken only when the budget has it;
//   - a batch of jobs sharing one pipeline: each member answered when its
//     own partitions are proved, a failing or cancelled member alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <thread>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "engine/dispatch.hpp"
#include "engine/engine.hpp"
#include "engine/pipeline.hpp"
#include "groth16/verifier.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"
#include "unit/engine/pipeline_rig.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::FakeBackend;
using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// The rule

DispatchDevice dev(bool free, bool holds, bool other = false, std::uint32_t jobs = 0) {
  return DispatchDevice{free, holds, other, jobs};
}

// Costs of a large SRS for the rule's arithmetic (not a measurement): 3.9 s a
// partition, 15 s to upload it.
constexpr DispatchCosts k32GiB{3900, 15000};

TEST(DispatchRule, AFreeHolderFirstThenTheFewestJobs) {
  std::vector<DispatchDevice> gpus{dev(true, false), dev(true, true, false, 2), dev(true, true, false, 1)};
  EXPECT_EQ(choose_gpu(gpus, 1, k32GiB), 2u);  // holders 1 and 2: the one with fewer jobs
  gpus[2].free = false;
  EXPECT_EQ(choose_gpu(gpus, 1, k32GiB), 1u);  // a busy holder is not waited for when another is free
}

TEST(DispatchRule, WithoutAnyHolderAnyFreeGpuPreferablyOneHoldingNothing) {
  std::vector<DispatchDevice> gpus{dev(false, false), dev(true, false, true), dev(true, false, false, 3)};
  // GPU 1 holds another set (an upload there evicts it): GPU 2, though busier.
  EXPECT_EQ(choose_gpu(gpus, 1, k32GiB), 2u);
  gpus[2].free = false;
  EXPECT_EQ(choose_gpu(gpus, 1, k32GiB), 1u);
  gpus[1].free = false;
  EXPECT_EQ(choose_gpu(gpus, 1, k32GiB), std::nullopt);  // all busy: wait
}

TEST(DispatchRule, ACold32GiBGpuOnlyWhenTheHoldersBacklogOutlastsAnUpload) {
  // One busy holder, one idle GPU without the SRS. A 10-partition job's
  // backlog: 10 x 3.9 s = 39 s on the holder vs 15 + 3.9 s on the cold GPU.
  std::vector<DispatchDevice> gpus{dev(false, true), dev(true, false)};
  EXPECT_EQ(choose_gpu(gpus, 10, k32GiB), 1u);
  // 4 partitions left: 15.6 s on the holder beats 18.9 s: wait for it.
  EXPECT_EQ(choose_gpu(gpus, 4, k32GiB), std::nullopt);
  // 5 partitions: 19.5 s >= 18.9 s.
  EXPECT_EQ(choose_gpu(gpus, 5, k32GiB), 1u);
  // Three busy holders share a backlog of 10 (13 s each): no fourth upload.
  std::vector<DispatchDevice> x4{dev(false, true), dev(false, true), dev(false, true), dev(true, false)};
  EXPECT_EQ(choose_gpu(x4, 10, k32GiB), std::nullopt);
  EXPECT_EQ(choose_gpu(x4, 20, k32GiB), 3u);  // a batch of two jobs: 26 s each > 18.9 s
  // A small circuit whose upload is cheap spreads as soon as a second proof waits.
  const DispatchCosts demo{300, 100};
  EXPECT_EQ(choose_gpu(gpus, 2, demo), 1u);
  EXPECT_EQ(choose_gpu(gpus, 1, demo), std::nullopt);
}

TEST(DispatchRule, EstimatesStartFromTheSrsSizeThenFollowMeasurements) {
  DispatchEstimates e;
  const std::uint64_t bytes = 30'000'000'000ull;
  DispatchCosts c = e.costs(bytes);
  EXPECT_DOUBLE_EQ(c.upload_ms, 10'000.0);  // 30 GB at 3 GB/s
  EXPECT_DOUBLE_EQ(c.prove_ms, c.upload_ms);
  e.record(16'000, /*uploaded=*/true);  // no steady time yet: the upload cannot be told apart
  EXPECT_DOUBLE_EQ(e.costs(bytes).upload_ms, 10'000.0);
  e.record(4'000, false);
  e.record(16'000, true);
  c = e.costs(bytes);
  EXPECT_DOUBLE_EQ(c.prove_ms, 4'000.0);
  EXPECT_DOUBLE_EQ(c.upload_ms, 12'000.0);
  e.record(8'000, false);
  EXPECT_DOUBLE_EQ(e.costs(bytes).prove_ms, 5'000.0);  // 0.75 x 4 s + 0.25 x 8 s
}

// ---------------------------------------------------------------------------
// DeviceSet's wait queue

struct SetRig {
  explicit SetRig(std::size_t gpus) : math(1), cpu(1) {
    std::vector<std::shared_ptr<DeviceBackend>> b;
    for (std::uint32_t i = 0; i < gpus; ++i) b.push_back(std::make_shared<FakeBackend>("f", i, math));
    set = std::make_unique<DeviceSet>(loop.executor(), std::make_shared<CpuBackend>(cpu, math), b);
  }
  runtime::EventLoop loop;
  ThreadPool math;
  runtime::WorkerPool cpu;
  std::unique_ptr<DeviceSet> set;
};

TEST(DeviceSetQueue, ABusyGpuGoesToTheMostUrgentWaiterFirst) {
  SetRig rig(1);
  std::vector<JobId> order;
  runtime::TaskSet tasks(rig.loop.executor());
  auto waiter = [](DeviceSet& set, JobId job, Priority p, std::vector<JobId>& out) -> asio::awaitable<void> {
    DeviceSet::Request r;
    r.job = job;
    r.priority = p;
    r.srs_key = "x";
    DeviceSet::Lock lock = co_await set.acquire(r);
    out.push_back(job);
    co_await testing::run_ready(1);  // holds the GPU over a turn of the loop
  };
  auto scenario = [](SetRig& rig, runtime::TaskSet& tasks, std::vector<JobId>& out,
                     decltype(waiter) w) -> asio::awaitable<void> {
    DeviceSet::Request r;
    r.srs_key = "x";
    DeviceSet::Lock held = co_await rig.set->acquire(r);
    EXPECT_EQ(held.slot().index, 0u);
    // Arrival order: normal, low, critical, high; a lock() of the GPU at normal too.
    tasks.spawn(w(*rig.set, 1, Priority::kNormal, out));
    tasks.spawn(w(*rig.set, 2, Priority::kLow, out));
    tasks.spawn(w(*rig.set, 3, Priority::kCritical, out));
    tasks.spawn(w(*rig.set, 4, Priority::kHigh, out));
    co_await testing::run_ready();  // each waiter starts and queues
    EXPECT_EQ(rig.set->waiters(), 4u);
    EXPECT_TRUE(out.empty());
    held.unlock();
  };
  tasks.spawn(scenario(rig, tasks, order, waiter));
  rig.loop.run();
  EXPECT_EQ(order, (std::vector<JobId>{3, 4, 1, 2}));
  EXPECT_EQ(rig.set->waiters(), 0u);
  EXPECT_FALSE(rig.set->gpu(0).busy);
}

TEST(DeviceSetQueue, PartitionsGoWhereTheirSrsIsAndSpreadWhenWorthIt) {
  SetRig rig(2);
  rig.set->gpu(1).resident_srs = "x";
  rig.set->gpu(0).resident_srs = "y";
  runtime::TaskSet tasks(rig.loop.executor());
  auto scenario = [](SetRig& rig) -> asio::awaitable<void> {
    DeviceSet::Request r;
    r.srs_key = "x";
    std::uint32_t undispatched = 1;
    r.undispatched = &undispatched;
    DeviceSet::Lock a = co_await rig.set->acquire(r);
    EXPECT_EQ(a.slot().index, 1u);  // where "x" is resident, though not the first
    EXPECT_EQ(a.slot().proving_srs, "x");
    // A second partition of "x" (no measurement yet: prove ~ upload): with
    // one more queued behind the one proving, the holder's backlog is 2
    // proofs: GPU 0 (holding "y") takes it rather than wait.
    undispatched = 2;
    DeviceSet::Lock b = co_await rig.set->acquire(r);
    EXPECT_EQ(b.slot().index, 0u);
    EXPECT_EQ(b.slot().proving_srs, "x");
    b.unlock();
    a.unlock();
    EXPECT_TRUE(rig.set->gpu(0).proving_srs.empty());
    // The CPU on its own lock, as a retry takes it.
    DeviceSet::Lock c = co_await rig.set->lock(rig.set->cpu(), Priority::kHigh);
    EXPECT_TRUE(rig.set->is_cpu(c.slot()));
  };
  tasks.spawn(scenario(rig));
  rig.loop.run();
  EXPECT_EQ(tasks.size(), 0u);
}

// ---------------------------------------------------------------------------
// The pipeline on two fake GPUs, with demo witnesses as partitions

struct MultiRig : testing::PipelineRig {
  explicit MultiRig(std::uint64_t budget_bytes, std::size_t gpus = 2)
      : PipelineRig("cuzk-dispatch-test", {gpus, budget_bytes, 2, 4, runtime::LogLevel::kError}) {}

  // `n` demo partitions (seed 100 + k), each synthesized in `synth_delay`.
  PartitionPlan plan(std::uint32_t n, std::chrono::milliseconds synth_delay, std::uint64_t witness_bytes = 1 << 20) {
    PartitionPlan p;
    p.job = 1;
    p.srs_key = demo->circuit_id;
    p.partitions = n;
    p.witness_bytes = witness_bytes;
    p.synthesis_lanes = 4;
    p.max_in_flight = 6;
    p.params = &demo->params;
    p.r1cs = &demo->r1cs;
    p.pvk = &demo->pvk;
    p.synthesize = [this, synth_delay](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> {
      if (fail_synthesis_of == static_cast<int>(k)) return Error{ErrorKind::kInvalidInput, "bad partition"};
      testing::simulate_work(synth_delay);
      std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(5);
      return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(100 + k)));
    };
    // Jobs counted per device, seen at every stage change.
    p.on_stage = [this](std::uint32_t, std::string_view) {
      for (std::size_t i = 0; i < devices->gpu_count(); ++i)
        max_jobs_seen[i] = std::max(max_jobs_seen[i], devices->gpu(i).jobs);
    };
    return p;
  }

  PartitionPlan demo_plan(std::uint32_t n) { return plan(n, 20ms); }

  Result<PipelineOutcome> run(const PartitionPlan& p) { return run_plan(p); }

  std::array<std::uint32_t, 4> max_jobs_seen{};
  int fail_synthesis_of = -1;
};

void expect_valid(const MultiRig& rig, const PipelineOutcome& out, std::uint32_t n, std::uint64_t seed0 = 100) {
  ASSERT_EQ(out.proofs.size(), n);
  for (std::uint32_t k = 0; k < n; ++k) {
    EXPECT_EQ(out.public_inputs[k].at(0), ff::Fr::from_u64(seed0 + k));
    EXPECT_EQ(groth16::verify(rig.demo->pvk, out.proofs[k], out.public_inputs[k]), groth16::VerifyResult::kValid);
  }
}

bool overlap(const FakeBackend::Call& a, const FakeBackend::Call& b) { return a.start < b.end && b.start < a.end; }

TEST(MultiGpuPipeline, OneJobsPartitionsProveOnBothGpusAtOnce) {
  MultiRig rig(1ull << 40);
  for (auto& f : rig.fakes) f->delay_ms = 150;
  auto out = rig.run(rig.demo_plan(6));
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 6);
  auto c0 = rig.fakes[0]->calls(), c1 = rig.fakes[1]->calls();
  EXPECT_GE(c0.size(), 2u);
  EXPECT_GE(c1.size(), 2u);
  EXPECT_EQ(c0.size() + c1.size(), 6u);
  bool concurrent = false;
  for (const auto& a : c0)
    for (const auto& b : c1) concurrent = concurrent || overlap(a, b);
  EXPECT_TRUE(concurrent) << "the two GPUs never proved at the same time";
  // Both devices now hold the SRS, the job was counted once on each while it
  // ran and is counted nowhere after; every reservation is back.
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(rig.devices->gpu(i).resident_srs, rig.demo->circuit_id);
    EXPECT_TRUE(rig.devices->gpu(i).proving_srs.empty());
    EXPECT_EQ(rig.max_jobs_seen[i], 1u) << "gpu " << i;
    EXPECT_EQ(rig.devices->gpu(i).jobs, 0u);
  }
  EXPECT_EQ(rig.devices->gpu(0).proofs_done + rig.devices->gpu(1).proofs_done, 6u);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

TEST(MultiGpuPipeline, ASecondWorkingSetOnlyWhenTheBudgetHasItNow) {
  // Working set 8 MiB, witness 1 MiB: a 12 MiB budget holds one working set
  // and the witnesses, never two working sets: the GPUs take turns.
  constexpr std::uint64_t kMiB = 1 << 20;
  MultiRig rig(12 * kMiB);
  for (auto& f : rig.fakes) {
    f->delay_ms = 80;
    f->host_bytes = 8 * kMiB;
  }
  auto out = rig.run(rig.demo_plan(5));
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 5);
  std::vector<FakeBackend::Call> all = rig.fakes[0]->calls();
  for (const auto& c : rig.fakes[1]->calls()) all.push_back(c);
  ASSERT_EQ(all.size(), 5u);
  for (std::size_t i = 0; i < all.size(); ++i)
    for (std::size_t j = i + 1; j < all.size(); ++j) EXPECT_FALSE(overlap(all[i], all[j]));
  EXPECT_LE(rig.memory.stats().peak_reserved_bytes, 12 * kMiB);
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

TEST(MultiGpuPipeline, AThrowingGpuHandsThePartitionToTheOtherOne) {
  MultiRig rig(1ull << 40);
  rig.fakes[0]->throw_next = 1;
  rig.fakes[1]->throw_next = 0;
  for (auto& f : rig.fakes) f->delay_ms = 50;
  auto out = rig.run(rig.demo_plan(4));
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 4);
  EXPECT_EQ(rig.devices->gpu(0).prove_errors, 1u);
  EXPECT_EQ(rig.devices->gpu(0).proofs_done + rig.devices->gpu(1).proofs_done, 4u);
  EXPECT_GE(rig.devices->gpu(1).proofs_done, 1u);
  EXPECT_EQ(rig.devices->cpu().proofs_done, 0u);
}

TEST(MultiGpuPipeline, AProofThatFailsVerificationIsProvedAgainOnTheCpu) {
  MultiRig rig(1ull << 40);
  rig.fakes[1]->corrupt_next = 1;
  for (auto& f : rig.fakes) f->delay_ms = 50;
  auto out = rig.run(rig.demo_plan(4));
  ASSERT_TRUE(out.ok()) << out.error().message;
  expect_valid(rig, out.value(), 4);
  EXPECT_EQ(out.value().cpu_retries, 1u);
  EXPECT_EQ(rig.devices->cpu_retries(), 1u);
  EXPECT_EQ(rig.devices->gpu(1).verify_failures, 1u);
  EXPECT_EQ(rig.devices->cpu().proofs_done, 1u);
  EXPECT_EQ(rig.devices->gpu(0).proofs_done + rig.devices->gpu(1).proofs_done, 3u);
  int retried = 0;
  for (const PartitionTiming& t : out.value().timings) retried += t.retried_on_cpu ? 1 : 0;
  EXPECT_EQ(retried, 1);
}

TEST(MultiGpuPipeline, PartitionsOfAMoreUrgentJobTakeTheGpuFirst) {
  // One GPU, two jobs' pipelines: a LOW job whose 6 partitions all wait at
  // the device, then a CRITICAL job of 2. Once the CRITICAL partitions wait,
  // the next two turns of the GPU are theirs.
  MultiRig rig(1ull << 40, 1);
  rig.fakes[0]->delay_ms = 60;
  std::vector<std::pair<JobId, std::string>> events;  // (job, stage), in order
  auto plan_for = [&](JobId job, Priority p, std::uint32_t n) {
    PartitionPlan plan = rig.plan(n, 0ms);
    plan.job = job;
    plan.priority = p;
    plan.on_stage = [&events, job](std::uint32_t, std::string_view s) { events.emplace_back(job, std::string(s)); };
    return plan;
  };
  const PartitionPlan low = plan_for(1, Priority::kLow, 6);
  const PartitionPlan critical = plan_for(2, Priority::kCritical, 2);
  runtime::CancelFlag cancel;
  std::optional<Result<PipelineOutcome>> a, b;
  runtime::TaskSet tasks(rig.loop.executor());
  auto run = [](MultiRig& r, const PartitionPlan& plan, runtime::CancelFlag& c,
                std::optional<Result<PipelineOutcome>>& out,
                std::function<bool()> start_when) -> asio::awaitable<void> {
    if (start_when) {
      EXPECT_TRUE(co_await testing::eventually(*r.devices, start_when));
    }
    out.emplace(co_await run_partition_pipeline(r.deps(), plan, c));
  };
  tasks.spawn(run(rig, low, cancel, a, {}));
  // The CRITICAL job comes while the LOW job proves its second partition.
  tasks.spawn(run(rig, critical, cancel, b, [&events] {
    int proving = 0;
    for (const auto& [job, stage] : events) proving += job == 1 && stage.rfind("prove", 0) == 0;
    return proving >= 2;
  }));
  rig.loop.run();
  ASSERT_TRUE(a && a->ok());
  ASSERT_TRUE(b && b->ok());
  expect_valid(rig, a->value(), 6);
  expect_valid(rig, b->value(), 2);
  // The proves, in device order, from the moment both CRITICAL partitions wait.
  std::size_t both_wait = 0, waiting = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (events[i].first == 2 && events[i].second == "device wait" && ++waiting == 2) both_wait = i;
  }
  ASSERT_EQ(waiting, 2u);
  std::vector<JobId> proves_after;
  for (std::size_t i = both_wait; i < events.size(); ++i)
    if (events[i].second == "prove (gpu)") proves_after.push_back(events[i].first);
  ASSERT_GE(proves_after.size(), 2u);
  EXPECT_EQ(proves_after[0], 2u);
  EXPECT_EQ(proves_after[1], 2u);
  // And the LOW job still had partitions waiting then (it did not just run out).
  EXPECT_GE(proves_after.size(), 4u);
}

// The engine with two fake GPUs: concurrent jobs of one circuit spread over
// both, each device's residency is recorded, jobs per device are counted
// while they run, and evicting the set releases the copy on every device.
TEST(MultiGpuEngine, ResidencyOnEveryDeviceAJobUsedAndEvictionReleasesAll) {
  struct Rig : testing::EngineRig {
    Rig() : EngineRig("cuzk-multi-gpu-test", 3) {
      EngineConfig cfg;
      cfg.admission = AdmissionPolicy{16, 1};
      cfg.max_demo_log_domain = 8;
      cfg.max_concurrent_jobs = 2;
      cfg.batch_max_size = 1;
      cfg.drain_timeout = 10s;
      make_engine(cfg);
      for (std::uint32_t i = 0; i < 2; ++i) {
        fakes.push_back(std::make_shared<FakeBackend>("fake:" + std::to_string(i), i, math));
        fakes.back()->delay_ms = 300;
      }
      engine->set_gpu_backends({fakes[0], fakes[1]});
    }
    std::vector<std::shared_ptr<FakeBackend>> fakes;
  } rig;
  testing::run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    EXPECT_TRUE((co_await e.preload("demo-5")).ok());
    auto demo = [](std::uint64_t seed) {
      JobRequest r;
      r.demo_log_domain = 5;
      r.demo_seed = seed;
      return r;
    };
    auto a = e.submit(demo(1)), b = e.submit(demo(2));
    EXPECT_TRUE(co_await testing::eventually(e, [&e] {  // both proving (300 ms each)
      EngineStatus st = e.status();
      return st.devices.at(0).job.has_value() && st.devices.at(1).job.has_value();
    }));
    EngineStatus mid = e.status();
    EXPECT_EQ(mid.devices.at(0).jobs_placed, 1u);
    EXPECT_EQ(mid.devices.at(1).jobs_placed, 1u);
    EXPECT_TRUE((co_await e.await(a.value().id, 0ms)).ok());
    EXPECT_TRUE((co_await e.await(b.value().id, 0ms)).ok());
    EXPECT_TRUE(co_await testing::settled(e));
    EngineStatus s = e.status();
    int device_entries = 0;
    for (const SrsResidencyView& v : s.srs) device_entries += v.tier == "device" && v.srs == "demo-5";
    EXPECT_EQ(device_entries, 2);
    for (std::size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(s.devices.at(i).resident_srs, "demo-5");
      EXPECT_EQ(s.devices.at(i).jobs_placed, 0u);
      EXPECT_EQ(s.devices.at(i).proofs_done, 1u);
    }
    EXPECT_TRUE(e.evict("demo-5").ok());
    EXPECT_TRUE(co_await testing::eventually(e, [&e] {  // the releases run on each device's thread
      for (const SrsResidencyView& v : e.status().srs)
        if (v.tier == "device") return false;
      return true;
    }));
  });
  // Released on both devices (the drain joined the release tasks).
  EXPECT_EQ(rig.fakes[0]->srs_releases.load(), 1);
  EXPECT_EQ(rig.fakes[1]->srs_releases.load(), 1);
}

// ---------------------------------------------------------------------------
// A batch sharing one pipeline

struct BatchRun {
  std::vector<std::optional<Result<PipelineOutcome>>> reported;  // by on_done
  std::vector<Clock::time_point> reported_at;
  std::vector<Result<PipelineOutcome>> returned;
};

BatchRun run_batch(MultiRig& rig, const PartitionPlan& plan, std::vector<std::uint32_t> sizes,
                   std::vector<std::unique_ptr<runtime::CancelFlag>>& cancels, std::function<void()> mid = {}) {
  BatchRun out;
  out.reported.resize(sizes.size());
  out.reported_at.resize(sizes.size());
  std::vector<PlanMember> members;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    cancels.push_back(std::make_unique<runtime::CancelFlag>());
    PlanMember m;
    m.job = 10 + i;
    m.partitions = sizes[i];
    m.cancel = cancels.back().get();
    m.on_done = [&out, i](const Result<PipelineOutcome>& r) {
      EXPECT_FALSE(out.reported[i].has_value()) << "member " << i << " reported twice";
      out.reported[i] = r;
      out.reported_at[i] = Clock::now();
    };
    members.push_back(std::move(m));
  }
  runtime::TaskSet tasks(rig.loop.executor());
  tasks.spawn([](MultiRig& r, const PartitionPlan& p, std::vector<PlanMember> ms,
                 std::vector<Result<PipelineOutcome>>& ret) -> asio::awaitable<void> {
    ret = co_await run_batch_pipeline(r.deps(), p, std::move(ms));
  }(rig, plan, std::move(members), out.returned));
  std::thread watcher;
  if (mid) watcher = std::thread(mid);
  rig.loop.run();
  if (watcher.joinable()) watcher.join();
  EXPECT_EQ(tasks.size(), 0u);
  return out;
}

TEST(BatchPipeline, MembersShareOnePipelineAndTheFirstIsAnsweredFirst) {
  constexpr std::uint64_t kMiB = 1 << 20;
  constexpr std::uint64_t kWorkSet = 32 * kMiB;
  MultiRig rig(1ull << 40);
  for (auto& f : rig.fakes) {
    f->delay_ms = 40;
    f->host_bytes = kWorkSet;
  }
  // Six members (more than the pipeline's staging slots), 9 partitions.
  const std::vector<std::uint32_t> sizes{2, 1, 2, 1, 2, 1};
  PartitionPlan plan = rig.demo_plan(9);
  std::vector<std::unique_ptr<runtime::CancelFlag>> cancels;
  BatchRun r = run_batch(rig, plan, sizes, cancels);
  ASSERT_EQ(r.returned.size(), sizes.size());
  std::uint64_t seed = 100;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    ASSERT_TRUE(r.returned[i].ok()) << r.returned[i].error().message;
    ASSERT_TRUE(r.reported[i] && r.reported[i]->ok());
    expect_valid(rig, r.returned[i].value(), sizes[i], seed);
    // Timings by the member's own partition index.
    for (std::uint32_t k = 0; k < sizes[i]; ++k) EXPECT_EQ(r.returned[i].value().timings.at(k).partition, k);
    seed += sizes[i];
  }
  // Partitions are taken member by member: the first member is answered
  // before the last one.
  EXPECT_LT(r.reported_at[0], r.reported_at[5]);
  auto c0 = rig.fakes[0]->calls(), c1 = rig.fakes[1]->calls();
  EXPECT_EQ(c0.size() + c1.size(), 9u);
  EXPECT_FALSE(c0.empty());
  EXPECT_FALSE(c1.empty());
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
  // Prover working sets are the pipeline's (at most one per staging slot),
  // not one per member; beside them at most max_in_flight (6) partitions of
  // a 1 MiB witness.
  const std::uint64_t bound = staging_slots(*rig.devices) * kWorkSet + 6 * kMiB;
  EXPECT_LT(bound, sizes.size() * kWorkSet);
  EXPECT_LE(rig.memory.stats().peak_reserved_bytes, bound);
}

TEST(BatchPipeline, AFailingMemberFailsAloneAndACancelledOneStops) {
  MultiRig rig(1ull << 40);
  for (auto& f : rig.fakes) f->delay_ms = 40;
  PartitionPlan plan = rig.plan(8, 10ms);  // members of 2, 3 and 3 partitions
  rig.fail_synthesis_of = 3;               // the second member's second partition
  std::vector<std::unique_ptr<runtime::CancelFlag>> cancels;
  cancels.reserve(3);
  // The third member is cancelled before it starts.
  BatchRun r = run_batch(rig, plan, {2, 3, 3}, cancels, [&cancels] { cancels.at(2)->request(); });
  ASSERT_EQ(r.returned.size(), 3u);
  ASSERT_TRUE(r.returned[0].ok()) << r.returned[0].error().message;
  expect_valid(rig, r.returned[0].value(), 2);
  ASSERT_FALSE(r.returned[1].ok());
  EXPECT_EQ(r.returned[1].error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(r.returned[1].error().message.find("partition 1"), std::string::npos) << r.returned[1].error().message;
  ASSERT_FALSE(r.returned[2].ok());
  EXPECT_EQ(r.returned[2].error().kind, ErrorKind::kCancelled);
  for (std::size_t i = 0; i < 3; ++i) ASSERT_TRUE(r.reported[i].has_value()) << i;
  EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u);
}

// ---------------------------------------------------------------------------
// The PoRep collector's key

TEST(PorepBatchKey, TheSectorSizeIsReadFromTheC1WithoutParsingIt) {
  namespace fc = circuits::filecoin;
  fc::SyntheticSealInputs in;
  in.sector_id = 3;
  const std::string json = fc::to_json(fc::make_synthetic_c1(fc::SealProof::StackedDrg2KiBV1_1, in));
  EXPECT_EQ(porep_srs_of_c1_json(json), "porep-2KiB");
  // The field last (a serde struct's order), with spacing.
  EXPECT_EQ(porep_srs_of_c1_json(R"({"vanilla_proofs": {}, "registered_proof" :  "StackedDrg32GiBV1"})"),
            "porep-32GiB");
  EXPECT_EQ(porep_srs_of_c1_json(R"({"registered_proof": "StackedDrg3GiBV1"})"), std::nullopt);
  EXPECT_EQ(porep_srs_of_c1_json(R"({"registered_proof": 7})"), std::nullopt);
  EXPECT_EQ(porep_srs_of_c1_json("{not json"), std::nullopt);
}

// The engine's collector: queued PoRep jobs of one sector size and priority
// form one batch (one pipeline); another size, or a C1 naming none, does not
// join. Each member still gets its own outcome (here: C1s that name a size
// but do not parse, so no parameters are needed).
TEST(PorepBatchKey, TheCollectorBatchesQueuedPorepJobsOfOneSize) {
  struct Rig : testing::EngineRig {
    Rig() : EngineRig("cuzk-porep-batch-test", 2) {
      EngineConfig cfg;
      cfg.admission = AdmissionPolicy{16, 1};
      cfg.drain_timeout = 10s;
      cfg.porep_batch_max_jobs = 3;
      make_engine(cfg);
    }
  } rig;
  testing::run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    auto porep = [](std::string json) {
      JobRequest r;
      r.kind = ProofKind::kPoRepC2;
      r.input = std::move(json);
      return r;
    };
    const std::string k2 = R"({"registered_proof": "StackedDrg2KiBV1_1", "vanilla_proofs": 7})";
    const std::string k8 = R"({"registered_proof": "StackedDrg8MiBV1_1", "vanilla_proofs": 7})";
    // Submitted in one turn of the loop: all queued when the worker looks.
    std::vector<JobId> ids;
    for (const std::string& j : {k2, k8, k2, std::string("{not json"), k2, k2})
      ids.push_back(e.submit(porep(j)).value().id);
    for (JobId id : ids) {
      auto out = co_await e.await(id, 0ms);
      EXPECT_FALSE(out.ok());
      if (!out.ok()) {
        EXPECT_EQ(out.error().kind, ErrorKind::kInvalidInput) << out.error().message;
      }
    }
    // Batches of the 2 KiB jobs: {1, 3, 5} (max 3), then job 6 with nothing
    // left to join; the 8 MiB job and the unreadable one alone.
    EXPECT_NE(e.metrics().find("cuzk_batched_jobs_total 3"), std::string::npos) << e.metrics();
    EXPECT_NE(e.metrics().find("cuzk_batches_total 1"), std::string::npos);
  });
}

}  // namespace
}  // namespace cuzk::engine
