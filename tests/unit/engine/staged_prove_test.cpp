// The staged prove (engine/staged_prove.hpp): the staging pool's bound, the
// device step resuming the loop from a foreign thread without blocking it,
// and in the partition pipeline with a fake GPU: the host step of one
// partition overlaps the device step of another, the prepared instances stay
// within the staging slots, and a failure in each step becomes the job's
// typed error naming the step.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "circuits/demo.hpp"
#include "engine/param_store.hpp"
#include "engine/pipeline.hpp"
#include "engine/staged_prove.hpp"
#include "groth16/verifier.hpp"
#include "runtime/task_set.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"
#include "unit/engine/pipeline_rig.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::FakeBackend;
using Clock = std::chrono::steady_clock;

// Runs `body` as a task on a fresh loop until it ends.
template <class Body>
void on_loop(runtime::EventLoop& loop, Body body) {
  loop.io().restart();  // a loop that ran out of work before
  runtime::TaskSet tasks(loop.executor());
  tasks.spawn(body());
  loop.run();
  EXPECT_EQ(tasks.size(), 0u);
}

struct Rig : testing::PipelineRig {
  explicit Rig(std::size_t gpus = 1)
      : PipelineRig("cuzk-staged-test", {gpus, 1ull << 40, 3, 4, runtime::LogLevel::kWarn}) {}

  groth16::Witness witness(std::uint64_t seed) const { return demo_witness(seed); }

  PartitionPlan plan(std::uint32_t n) {
    PartitionPlan p = demo_plan(n, 2, 4);
    p.synthesize = [this](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> { return witness(100 + k); };
    return p;
  }

  Result<PipelineOutcome> run(const PartitionPlan& p) { return run_plan(p); }
};

bool overlaps(const FakeBackend::Call& a, const FakeBackend::Call& b) { return a.start < b.end && b.start < a.end; }

TEST(StagingPool, BoundsTheLeasesAndKeepsTheStagings) {
  runtime::EventLoop loop;
  ThreadPool math(1);
  FakeBackend gpu("fake:0", 0, math);
  runtime::WorkerPool cpu_runner(1);
  CpuBackend cpu(cpu_runner, math);
  StagingPool pool(loop.executor(), 2);
  InstanceStaging* first_staging = nullptr;
  bool third_granted = false;
  on_loop(loop, [&]() -> asio::awaitable<void> {
    StagingPool::Lease a = co_await pool.acquire();
    StagingPool::Lease b = co_await pool.acquire();
    EXPECT_EQ(pool.in_use(), 2u);
    EXPECT_FALSE(pool.try_acquire().has_value());
    std::unique_ptr<InstanceStaging> retired;
    first_staging = &a.staging_for(gpu, retired);
    EXPECT_EQ(retired, nullptr);  // nothing was there
    EXPECT_TRUE(gpu.can_use(*first_staging));
    EXPECT_FALSE(cpu.can_use(*first_staging));
    // A third waits until one is given back.
    asio::steady_timer give_back(co_await asio::this_coro::executor, 50ms);
    give_back.async_wait([&a](asio::error_code) { a.release(); });
    StagingPool::Lease c = co_await pool.acquire();
    third_granted = true;
    EXPECT_EQ(pool.in_use(), 2u);
    // The slot's staging is kept for the next lease of a back end that can use it.
    EXPECT_EQ(&c.staging_for(gpu, retired), first_staging);
    EXPECT_EQ(retired, nullptr);
    // Another kind of back end gets one of its own; the old one is handed
    // back to the caller (to free off the loop), not destroyed here.
    EXPECT_TRUE(cpu.can_use(c.staging_for(cpu, retired)));
    EXPECT_EQ(retired.get(), first_staging);
  });
  EXPECT_TRUE(third_granted);
  EXPECT_EQ(pool.in_use(), 0u);
}

// An idle engine gives the pool's stagings back (GPU stagings are GiBs of
// page-locked memory the budget no longer counts): only unleased slots give
// theirs, and a slot emptied so makes a new staging on its next lease.
TEST(StagingPool, TakeIdleMovesOutOnlyTheUnleasedSlotsStagings) {
  runtime::EventLoop loop;
  ThreadPool math(1);
  FakeBackend gpu("fake:0", 0, math);
  StagingPool pool(loop.executor(), 2);
  on_loop(loop, [&]() -> asio::awaitable<void> {
    StagingPool::Lease a = co_await pool.acquire();
    StagingPool::Lease b = co_await pool.acquire();
    std::unique_ptr<InstanceStaging> retired;
    InstanceStaging* kept = &a.staging_for(gpu, retired);
    InstanceStaging* dropped = &b.staging_for(gpu, retired);
    b.release();
    std::vector<std::unique_ptr<InstanceStaging>> idle = pool.take_idle();
    EXPECT_EQ(idle.size(), 1u);
    EXPECT_EQ(idle.empty() ? nullptr : idle[0].get(), dropped);
    EXPECT_EQ(a.get(), kept);  // the leased slot keeps its staging
    a.release();
    idle = pool.take_idle();
    EXPECT_EQ(idle.size(), 1u);
    EXPECT_EQ(idle.empty() ? nullptr : idle[0].get(), kept);
    EXPECT_TRUE(pool.take_idle().empty());
    StagingPool::Lease c = co_await pool.acquire();
    EXPECT_EQ(c.get(), nullptr);  // emptied: made anew on use
    EXPECT_TRUE(gpu.can_use(c.staging_for(gpu, retired)));
    EXPECT_EQ(retired, nullptr);
  });
  EXPECT_EQ(pool.in_use(), 0u);
}

// The device step completes on the fake's device thread (as a CUDA callback
// would) and the coroutine resumes on the loop thread; the loop keeps
// serving other work meanwhile (a timer ticks while the device works).
TEST(StagedProve, DeviceStepResumesOnTheLoopWithoutBlockingIt) {
  Rig rig;
  FakeBackend& gpu = *rig.fakes[0];
  gpu.delay_ms = 200;
  const groth16::Witness w = rig.witness(7);
  const groth16::Blinding blinding = groth16::random_blinding();
  int ticks_during_device = 0;
  std::optional<groth16::Proof> proof;
  on_loop(rig.loop, [&]() -> asio::awaitable<void> {
    const auto loop_thread = std::this_thread::get_id();
    std::unique_ptr<InstanceStaging> staging = gpu.make_staging();
    std::optional<Error> prepared =
        co_await prepare_instance(rig.cpu, gpu, *staging, rig.demo->params, rig.demo->r1cs, w, blinding);
    EXPECT_FALSE(prepared.has_value());
    bool device_done = false;
    asio::steady_timer ticker(co_await asio::this_coro::executor);
    runtime::TaskSet side(co_await asio::this_coro::executor);
    side.spawn([](asio::steady_timer& t, bool& done, int& ticks) -> asio::awaitable<void> {
      while (!done) {
        t.expires_after(20ms);
        co_await t.async_wait(asio::use_awaitable);
        if (!done) ++ticks;
      }
    }(ticker, device_done, ticks_during_device));
    std::optional<Error> e = co_await run_device_step(gpu, *staging);
    device_done = true;
    EXPECT_EQ(std::this_thread::get_id(), loop_thread);
    EXPECT_FALSE(e.has_value());
    co_await side.join();
    Result<groth16::Proof> p = co_await finish_instance(rig.cpu, gpu, *staging, nullptr);
    EXPECT_TRUE(p.ok());
    if (p.ok()) proof = p.value();
  });
  EXPECT_GE(ticks_during_device, 3);  // 200 ms of device work, 20 ms ticks
  ASSERT_TRUE(proof.has_value());
  std::vector<ff::Fr> inputs(w.inputs.begin() + 1, w.inputs.end());
  EXPECT_EQ(groth16::verify(rig.demo->pvk, *proof, inputs), groth16::VerifyResult::kValid);
}

// The partition pipeline: partition N+1's host step runs while N is on the
// device, and no more than the staging slots (2 for one GPU) are prepared
// and not yet finished at once.
TEST(StagedProve, PipelinePreparesTheNextPartitionWhileOneIsOnTheDevice) {
  Rig rig;
  FakeBackend& gpu = *rig.fakes[0];
  gpu.delay_ms = 120;
  gpu.prepare_delay_ms = 80;
  const PartitionPlan plan = rig.plan(5);
  Result<PipelineOutcome> r = rig.run(plan);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().proofs.size(), 5u);
  for (std::uint32_t k = 0; k < 5; ++k) {
    EXPECT_EQ(groth16::verify(rig.demo->pvk, r.value().proofs[k], r.value().public_inputs[k]),
              groth16::VerifyResult::kValid);
  }
  const auto prepares = gpu.prepares();
  const auto devices = gpu.calls();
  ASSERT_EQ(prepares.size(), 5u);
  ASSERT_EQ(devices.size(), 5u);
  int overlapping = 0;
  for (const auto& p : prepares)
    for (const auto& d : devices) overlapping += overlaps(p, d) ? 1 : 0;
  EXPECT_GE(overlapping, 3);  // at least most of the 4 hand-offs
  EXPECT_LE(gpu.staged_max(), 2);
  EXPECT_GE(gpu.staged_max(), 2);
  // The device ran one instance at a time.
  for (std::size_t i = 1; i < devices.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) EXPECT_FALSE(overlaps(devices[i], devices[j])) << i << " " << j;
}

// A run makes its first staging ready for the plan's shape beside the first
// synthesis, and a partition prepares in that staging.
TEST(StagedProve, ARunReservesItsFirstStagingBesideTheFirstSynthesis) {
  Rig rig;
  FakeBackend& gpu = *rig.fakes[0];
  gpu.reserve_delay_ms = 60;
  const PartitionPlan plan = rig.plan(3);
  Result<PipelineOutcome> r = rig.run(plan);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r.value().proofs.size(), 3u);
  for (std::uint32_t k = 0; k < 3; ++k) {
    EXPECT_EQ(groth16::verify(rig.demo->pvk, r.value().proofs[k], r.value().public_inputs[k]),
              groth16::VerifyResult::kValid);
  }
  EXPECT_EQ(gpu.reserves.load(), 1);
  const auto prepares = gpu.prepares();
  ASSERT_EQ(prepares.size(), 3u);
  // The first partition to lease a slot takes the reserved one (its slot
  // keeps the staging for later leases); which prepare starts first on the
  // host pool is not ordered.
  EXPECT_GE(std::count_if(prepares.begin(), prepares.end(), [](const FakeBackend::Call& c) { return c.reserved; }), 1)
      << "no prepare used the staging reserve_staging made ready";
}

// A failure of each step fails the job with a typed error naming the step
// and the back end's reason; the next run on the same back end succeeds.
TEST(StagedProve, EachStepsFailureIsTheJobsTypedError) {
  struct Case {
    std::atomic<int> FakeBackend::*knob;
    const char* step;
    const char* reason;
  };
  const Case cases[] = {
      {&FakeBackend::prepare_throw_next, "prepare: ", "fake prepare failure"},
      {&FakeBackend::throw_next, "device: ", "fake device failure"},
      {&FakeBackend::device_fail_next, "device: ", "fake device step failure"},
      {&FakeBackend::finish_throw_next, "finish: ", "fake finish failure"},
  };
  for (const Case& c : cases) {
    Rig rig;
    FakeBackend& gpu = *rig.fakes[0];
    (gpu.*c.knob) = 1;
    PartitionPlan plan = rig.plan(2);
    plan.synthesis_lanes = 1;
    plan.max_in_flight = 1;  // partition 0 fails first, alone
    Result<PipelineOutcome> r = rig.run(plan);
    ASSERT_FALSE(r.ok()) << c.step;
    EXPECT_EQ(r.error().kind, ErrorKind::kInternal);
    EXPECT_NE(r.error().message.find(std::string(c.step) + c.reason), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("partition 0"), std::string::npos) << r.error().message;
    EXPECT_EQ(rig.memory.stats().reserved_bytes, 0u) << c.step;
    Result<PipelineOutcome> again = rig.run(rig.plan(1));
    EXPECT_TRUE(again.ok()) << c.step << ": " << (again.ok() ? "" : again.error().message);
  }
}

}  // namespace
}  // namespace cuzk::engine
