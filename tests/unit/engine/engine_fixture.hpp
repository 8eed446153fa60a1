// Shared fixture of the engine tests: the engine's collaborators (event loop,
// logger, math and CPU pools, a parameter store in a fresh temp dir) owned in
// construction order, the engine built from a test's own EngineConfig, and the
// helpers that run a test coroutine on the loop until it is out of work.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "engine/engine.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "unit/engine/demo_request.hpp"

namespace cuzk::engine::testing {

// A fresh directory /tmp/<prefix>-XXXXXX.
inline std::filesystem::path make_temp_dir(const char* prefix) {
  std::string tmpl = std::string("/tmp/") + prefix + "-XXXXXX";
  return ::mkdtemp(tmpl.data());
}

// Derived rigs call make_engine() once their own members (back ends, clocks,
// hooks) exist. A derived rig whose members the engine points at (a clock, a
// write hook) resets `engine` in its own destructor, before those members go.
struct EngineRig {
  EngineRig(const char* dir_prefix, std::size_t cpu_threads)
      : log(runtime::LogLevel::kWarn), math(2), cpu(cpu_threads) {
    dir = make_temp_dir(dir_prefix);
    params = std::make_unique<ParamStore>(dir, math, log);
  }
  ~EngineRig() {
    engine.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  EngineRig(const EngineRig&) = delete;
  EngineRig& operator=(const EngineRig&) = delete;

  void make_engine(const EngineConfig& cfg) {
    engine = std::make_unique<Engine>(loop.executor(), cpu, math, *params, log, cfg);
  }

  runtime::EventLoop loop;
  runtime::Logger log;
  ThreadPool math;
  runtime::WorkerPool cpu;
  std::filesystem::path dir;
  std::unique_ptr<ParamStore> params;
  std::unique_ptr<Engine> engine;
};

// An engine journaling to `state` (empty: <dir>/state). A test that restarts
// on the same journal resets the first rig's engine (it holds the journal's
// lock) and opens the next rig on first.dir / "state".
struct JournalRig : EngineRig {
  JournalRig(const char* dir_prefix, EngineConfig cfg, const std::filesystem::path& state = {})
      : EngineRig(dir_prefix, 2) {
    cfg.journal_dir = state.empty() ? dir / "state" : state;
    make_engine(cfg);
  }
};

// Starts the engine, runs the coroutine `make_scenario(finished)` on the loop
// until the loop has no work left, and expects it to have set `finished`.
// Returns how many tasks of its task set are still alive (0 when all joined).
template <class MakeScenario>
std::size_t run_on_loop(EngineRig& rig, MakeScenario make_scenario) {
  rig.engine->start();
  runtime::TaskSet tasks(rig.loop.executor());
  bool finished = false;
  tasks.spawn(make_scenario(finished));
  rig.loop.run();
  EXPECT_TRUE(finished);
  return tasks.size();
}

// Runs `body(engine)` on the loop, then drains the engine.
template <class Body>
void run_scenario(EngineRig& rig, Body body) {
  std::size_t left = run_on_loop(rig, [&rig, &body](bool& finished) {
    return [](EngineRig& r, Body b, bool& done) -> asio::awaitable<void> {
      co_await b(*r.engine);
      co_await r.engine->drain();
      done = true;
    }(rig, body, finished);
  });
  (void)left;
}

// Until `pred()` holds (true), re-checked at every Engine::on_change, never
// on a timer. `limit` (real time) only turns a hang into a failed
// expectation; nothing waits for it to pass.
// `subscribe(fn)` returns the runtime::Signal::Subscription of an on_change.
template <class Subscribe, class Pred>
asio::awaitable<bool> until(Subscribe subscribe, Pred pred,
                            std::chrono::milliseconds limit = std::chrono::seconds(60)) {
  runtime::Notifier changed(co_await asio::this_coro::executor);
  runtime::Signal::Subscription sub = subscribe([&changed] { changed.notify_all(); });
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (!co_await changed.wait_until(deadline)) co_return pred();
  }
  co_return true;
}

template <class Pred>
asio::awaitable<bool> eventually(Engine& e, Pred pred) {
  co_return co_await until([&e](std::function<void()> fn) { return e.on_change(std::move(fn)); }, std::move(pred));
}

// The same over a DeviceSet (pipeline tests without an engine): re-checked
// whenever a device is granted or given back.
template <class Pred>
asio::awaitable<bool> eventually(DeviceSet& d, Pred pred) {
  co_return co_await until([&d](std::function<void()> fn) { return d.on_change(std::move(fn)); }, std::move(pred));
}

// Lets every handler that is ready on the loop run (posted completions, a
// timer a ManualLoopClock fired), `rounds` times over.
inline asio::awaitable<void> run_ready(int rounds = 4) {
  for (int i = 0; i < rounds; ++i) co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
}

// A worker holds job `id` (it may still be collecting its batch).
inline bool held_by_worker(const Engine& e, JobId id) {
  for (const WorkerView& w : e.status().workers)
    if (w.job == id) return true;
  return false;
}

inline bool nothing_queued(const Engine& e) {
  for (std::uint32_t n : e.status().queued)
    if (n != 0) return false;
  return true;
}

// Until no worker holds a job (true): a batch's pipeline, with its SRS lease
// and device placements, ends a few stages after it answered its last member.
inline asio::awaitable<bool> settled(Engine& e) {
  co_return co_await eventually(e, [&e] {
    for (const WorkerView& w : e.status().workers)
      if (w.job) return false;
    return true;
  });
}

// Decodes and verifies a demo job's output independently of the engine.
inline bool output_verifies(const ProofOutput& out) {
  auto proofs = groth16::decode_proofs(out.proof);
  if (!proofs || proofs->size() != 1) return false;
  auto pvk = groth16::prepare_verifying_key(groth16::decode_vk(out.vk_bytes));
  std::vector<ff::Fr> inputs;
  for (const auto& le : out.public_inputs) {
    ff::Fr x;
    if (!ff::Fr::from_bytes_le(le, x)) return false;
    inputs.push_back(x);
  }
  return groth16::verify(pvk, proofs->at(0), inputs) == groth16::VerifyResult::kValid;
}

}  // namespace cuzk::engine::testing
