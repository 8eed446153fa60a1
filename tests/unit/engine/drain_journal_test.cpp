// A drain with a journal does not cancel queued jobs: their accepted records
// stay and they run at the next start, so the log, the status and the events
// say "left queued for the next start" (state queued), awaiters get
// kShuttingDown, the cancelled count does not move, and the next engine on
// the same journal proves them.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/engine.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;

using testing::demo;

struct Rig : testing::EngineRig {
  explicit Rig(const std::filesystem::path& state) : EngineRig("cuzk-drain-journal", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 10;
    cfg.batch_max_size = 1;
    cfg.drain_timeout = 60s;
    cfg.journal_dir = state.empty() ? dir / "state" : state;
    make_engine(cfg);
  }
};

std::optional<JobView> find_job(const EngineStatus& s, JobId id) {
  for (const JobView& v : s.jobs)
    if (v.id == id) return v;
  return std::nullopt;
}

TEST(DrainWithJournal, QueuedJobsAreLeftForTheNextStartNotCancelled) {
  Rig first({});
  JobId queued_id = 0;
  std::vector<JobEvent> events;
  first.engine->subscribe([&events](const JobEvent& ev) { events.push_back(ev); });
  testing::run_scenario(first, [&queued_id](Engine& e) -> asio::awaitable<void> {
    Result<JobView> running = co_await e.submit_durable(demo(8, 1, "running"));
    EXPECT_TRUE(running.ok());
    if (!running) co_return;
    EXPECT_TRUE(co_await testing::eventually(e, [&e, id = running.value().id] {
      auto v = find_job(e.status(), id);
      return v && v->state == JobState::kRunning;
    }));
    Result<JobView> queued = co_await e.submit_durable(demo(5, 2, "queued"));
    EXPECT_TRUE(queued.ok());
    if (!queued) co_return;
    EXPECT_EQ(queued.value().state, JobState::kQueued);
    queued_id = queued.value().id;
    co_await e.drain();
    auto out = co_await e.await(queued_id, 0ms);
    EXPECT_FALSE(out.ok());
    if (!out) {
      EXPECT_EQ(out.error().kind, ErrorKind::kShuttingDown);
    }
    auto v = find_job(e.status(), queued_id);
    EXPECT_TRUE(v.has_value());
    if (v) {
      EXPECT_EQ(v->state, JobState::kQueued);
      EXPECT_EQ(v->stage, "left queued for the next start");
    }
    EXPECT_EQ(e.status().cancelled_total, 0u);
    EXPECT_TRUE((co_await e.await(running.value().id, 0ms)).ok());
  });
  ASSERT_NE(queued_id, 0u);
  const JobEvent* last = nullptr;
  for (const JobEvent& ev : events)
    if (ev.id == queued_id) last = &ev;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->state, JobState::kQueued);
  EXPECT_EQ(last->stage, "left queued for the next start");
  first.engine.reset();

  Rig second(first.dir / "state");
  testing::run_scenario(second, [queued_id](Engine& e) -> asio::awaitable<void> {
    auto out = co_await e.await(queued_id, 0ms);
    EXPECT_TRUE(out.ok()) << (out ? "" : out.error().message);
  });
}

}  // namespace
}  // namespace cuzk::engine
