// The pieces every partition-pipeline test needs (a loop, pools, a memory
// gate, the demo-5 parameters and a DeviceSet of fake GPUs plus the CPU), so
// the pipeline tests (dispatch, staged prove) share one construction order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "circuits/demo.hpp"
#include "engine/param_store.hpp"
#include "engine/pipeline.hpp"
#include "groth16/r1cs.hpp"
#include "runtime/task_set.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"

namespace cuzk::engine::testing {

struct PipelineRig {
  struct Sizes {
    std::size_t gpus = 1;
    std::uint64_t budget_bytes = 1ull << 40;
    std::size_t cpu_threads = 2, synthesis_threads = 4;
    runtime::LogLevel log_level = runtime::LogLevel::kWarn;
  };

  PipelineRig(const char* dir_prefix, Sizes s)
      : log(s.log_level),
        math(2),
        cpu(s.cpu_threads),
        synthesis(s.synthesis_threads),
        memory(loop.executor(), s.budget_bytes) {
    dir = make_temp_dir(dir_prefix);
    params = std::make_unique<ParamStore>(dir, math, log);
    demo = params->get_demo(5).params;
    std::vector<std::shared_ptr<DeviceBackend>> backends;
    for (std::size_t i = 0; i < s.gpus; ++i) {
      fakes.push_back(std::make_shared<FakeBackend>("fake:" + std::to_string(i), static_cast<std::uint32_t>(i), math));
      backends.push_back(fakes.back());
    }
    devices = std::make_unique<DeviceSet>(loop.executor(), std::make_shared<CpuBackend>(cpu, math), backends);
  }
  ~PipelineRig() {
    devices.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  PipelineRig(const PipelineRig&) = delete;
  PipelineRig& operator=(const PipelineRig&) = delete;

  PipelineDeps deps() { return PipelineDeps{synthesis, cpu, *devices, memory, log}; }

  // Runs the plan's pipeline on the loop to its end (`cancel` may be set
  // meanwhile); every task it started has ended when this returns.
  Result<PipelineOutcome> run_plan(const PartitionPlan& p, runtime::CancelFlag& cancel) {
    std::optional<Result<PipelineOutcome>> result;
    loop.io().restart();  // a loop that ran out of work before
    {
      runtime::TaskSet tasks(loop.executor());
      tasks.spawn([](PipelineRig& r, const PartitionPlan& plan, runtime::CancelFlag& c,
                     std::optional<Result<PipelineOutcome>>& out) -> asio::awaitable<void> {
        out.emplace(co_await run_partition_pipeline(r.deps(), plan, c));
      }(*this, p, cancel, result));
      loop.run();
      EXPECT_EQ(tasks.size(), 0u);
    }
    return std::move(*result);
  }
  Result<PipelineOutcome> run_plan(const PartitionPlan& p) {
    runtime::CancelFlag cancel;
    return run_plan(p, cancel);
  }

  // The demo-5 witness of `seed` (a partition's stand-in).
  static groth16::Witness demo_witness(std::uint64_t seed) {
    const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(5);
    return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)));
  }
  // A plan of n demo-5 partitions (job 1, 1 MiB witnesses); the caller sets
  // synthesize and whatever else its test needs.
  PartitionPlan demo_plan(std::uint32_t n, std::size_t lanes, std::size_t max_in_flight) const {
    PartitionPlan p;
    p.job = 1;
    p.srs_key = demo->circuit_id;
    p.partitions = n;
    p.witness_bytes = 1 << 20;
    p.synthesis_lanes = lanes;
    p.max_in_flight = max_in_flight;
    p.params = &demo->params;
    p.r1cs = &demo->r1cs;
    p.pvk = &demo->pvk;
    return p;
  }

  runtime::EventLoop loop;
  runtime::Logger log;
  ThreadPool math;
  runtime::WorkerPool cpu, synthesis;
  MemoryGate memory;
  std::filesystem::path dir;
  std::unique_ptr<ParamStore> params;
  std::shared_ptr<const CircuitParams> demo;
  std::vector<std::shared_ptr<FakeBackend>> fakes;
  std::unique_ptr<DeviceSet> devices;
};

}  // namespace cuzk::engine::testing
