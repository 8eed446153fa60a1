// The engine on a real event loop, without sockets: the pipeline produces
// proofs that verify, a running job is cancelled at its next stage boundary,
// await times out with a typed error, and drain cancels queued work, refuses
// new work and joins every coroutine. No sleeps: the test coroutine yields to
// the loop until the state it needs is reached.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include <filesystem>

#include "engine/engine.hpp"
#include "groth16/proof.hpp"
#include "groth16/verifier.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

struct Rig : testing::EngineRig {
  Rig() : EngineRig("cuzk-engine-test", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 12;
    cfg.drain_timeout = 10s;
    make_engine(cfg);
  }
};

using testing::demo;

asio::awaitable<void> yield() { co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable); }

asio::awaitable<JobState> state_of(Engine& e, JobId id) {
  for (const JobView& v : e.status().jobs)
    if (v.id == id) co_return v.state;
  co_return JobState::kFailed;
}

asio::awaitable<void> scenario(Rig& rig, bool& finished) {
  Engine& e = *rig.engine;
  // 1. A job runs through every stage and its proof verifies.
  auto a = e.submit(demo(5, 3));
  EXPECT_TRUE(a.ok());
  auto out = co_await e.await(a.value().id, 0ms);
  EXPECT_TRUE(out.ok());
  if (out.ok()) {
    auto proofs = groth16::decode_proofs(out.value().output.proof);
    EXPECT_TRUE(proofs && proofs->size() == 1);
    auto pvk = groth16::prepare_verifying_key(groth16::decode_vk(out.value().output.vk_bytes));
    std::vector<ff::Fr> inputs;
    for (const auto& le : out.value().output.public_inputs) {
      ff::Fr x;
      EXPECT_TRUE(ff::Fr::from_bytes_le(le, x));
      inputs.push_back(x);
    }
    EXPECT_EQ(inputs.at(0), ff::Fr::from_u64(3));
    EXPECT_EQ(groth16::verify(pvk, proofs->at(0), inputs), groth16::VerifyResult::kValid);
  }

  // 2. Cancel while running: ends at the next stage boundary, as cancelled.
  auto b = e.submit(demo(6, 4));
  auto c = e.submit(demo(5, 5));  // queued behind b
  // Queued -> running (never straight to done: each stage needs the loop).
  while (co_await state_of(e, b.value().id) == JobState::kQueued) co_await yield();
  auto cancel_b = e.cancel(b.value().id);
  EXPECT_TRUE(cancel_b.ok());
  EXPECT_EQ(cancel_b.value().state, JobState::kRunning);  // cooperative: still running now
  auto timed = co_await e.await(c.value().id, 1ms);
  EXPECT_FALSE(timed.ok());
  if (!timed.ok()) {
    EXPECT_EQ(timed.error().kind, ErrorKind::kTimeout);
  }
  auto b_out = co_await e.await(b.value().id, 0ms);
  EXPECT_FALSE(b_out.ok());
  if (!b_out.ok()) {
    EXPECT_EQ(b_out.error().kind, ErrorKind::kCancelled);
  }
  auto c_out = co_await e.await(c.value().id, 0ms);
  EXPECT_TRUE(c_out.ok());  // the job behind it was not affected

  // 3. Drain: queued work is cancelled, new work refused, everything joined.
  auto d = e.submit(demo(7, 6));
  auto q = e.submit(demo(5, 7));
  while (co_await state_of(e, d.value().id) == JobState::kQueued) co_await yield();
  co_await e.drain();
  EXPECT_TRUE(e.draining());
  EXPECT_EQ(co_await state_of(e, d.value().id), JobState::kDone);  // finished within drain_timeout
  auto q_out = co_await e.await(q.value().id, 0ms);
  EXPECT_FALSE(q_out.ok());
  if (!q_out.ok()) {
    EXPECT_EQ(q_out.error().kind, ErrorKind::kShuttingDown);
  }
  auto refused = e.submit(demo(5, 8));
  EXPECT_FALSE(refused.ok());
  if (!refused.ok()) {
    EXPECT_EQ(refused.error().kind, ErrorKind::kShuttingDown);
  }
  EngineStatus s = e.status();
  EXPECT_EQ(s.completed_total, 3u);
  EXPECT_EQ(s.cancelled_total, 2u);
  finished = true;
}

TEST(Engine, PipelineCancelTimeoutAndDrain) {
  Rig rig;
  // The loop returns once drain has joined the engine's coroutines.
  std::size_t tasks_left = testing::run_on_loop(rig, [&rig](bool& finished) { return scenario(rig, finished); });
  EXPECT_EQ(tasks_left, 0u);
  // Parameters were generated once per size and kept on disk.
  EXPECT_TRUE(fs::exists(rig.dir / "params" / "demo-5.params"));
  EXPECT_TRUE(fs::exists(rig.dir / "params" / "demo-5.vk"));
}

TEST(Engine, ParamStoreReusesGeneratedParameters) {
  runtime::Logger log(runtime::LogLevel::kWarn);
  ThreadPool math(2);
  char tmpl[] = "/tmp/cuzk-params-test-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  {
    ParamStore first(dir, math, log);
    auto g = first.get_demo(5);
    EXPECT_TRUE(g.generated);
    EXPECT_FALSE(g.already_loaded);
    auto again = first.get_demo(5);
    EXPECT_TRUE(again.already_loaded);
    EXPECT_EQ(again.params.get(), g.params.get());
    EXPECT_TRUE(first.evict("demo-5"));
    EXPECT_FALSE(first.evict("demo-5"));
    EXPECT_TRUE(first.loaded().empty());
  }
  ParamStore second(dir, math, log);  // a restarted daemon
  auto r = second.get_demo(5);
  EXPECT_FALSE(r.generated);  // read back, not regenerated
  EXPECT_EQ(second.loaded().size(), 1u);
  EXPECT_EQ(second.loaded_bytes(), fs::file_size(dir / "params" / "demo-5.params"));
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// The Filecoin sets' parameter files are read through the store's io_uring
// loader: the same parameters as groth16::read_params (re-encoded byte for
// byte), with a progress line and the read's rate in the log.
TEST(Engine, ParamStoreReadsParameterFilesThroughItsLoader) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  runtime::Logger log(runtime::LogLevel::kInfo, runtime::LogFormat::kText, out);
  ThreadPool math(2);
  char tmpl[] = "/tmp/cuzk-params-read-XXXXXX";
  fs::path dir = ::mkdtemp(tmpl);
  ParamStore store(dir, math, log);
  ASSERT_TRUE(store.get_demo(7).generated);
  const fs::path file = dir / "params" / "demo-7.params";
  // While the file is read, loading() lists it with its progress (the
  // status's "parameter files being read"); afterwards nothing.
  std::size_t seen = 0;
  const groth16::Parameters got = store.read_params_file(file, math, [&](const io::LoadProgress& p) {
    const std::vector<ParamsLoadView> now = store.loading();
    ASSERT_EQ(now.size(), 1u);
    EXPECT_EQ(now[0].file, "demo-7.params");
    EXPECT_EQ(now[0].file_bytes, fs::file_size(file));
    EXPECT_EQ(now[0].read_bytes, p.read_bytes);
    EXPECT_GT(now[0].read_bytes, 0u);
    ++seen;
  });
  EXPECT_GT(seen, 0u);
  EXPECT_TRUE(store.loading().empty());
  groth16::write_params(got, (dir / "copy.params").string());
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(bytes(dir / "copy.params"), bytes(file));
  EXPECT_EQ(got.vk, groth16::read_params(file, math).vk);

  std::fflush(out);
  std::rewind(out);
  std::string text;
  for (int c; (c = std::fgetc(out)) != EOF;) text.push_back(static_cast<char>(c));
  std::fclose(out);
  EXPECT_NE(text.find("reading parameters"), std::string::npos) << text;
  EXPECT_NE(text.find("percent=100"), std::string::npos) << text;
  EXPECT_NE(text.find("parameter file read"), std::string::npos) << text;
  EXPECT_THROW(store.read_params_file(dir / "params" / "missing.params", math), groth16::ParamsError);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace cuzk::engine
