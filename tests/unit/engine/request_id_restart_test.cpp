// Request ids across a restart: a finished job restored from the journal has
// no input left, so the journal keeps a digest of it (engine/request_digest)
// and a resubmit of its request id is refused when the input differs, as it
// is before a restart; the same input is answered with the restored job.
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/engine.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;

using testing::demo;

struct Rig : testing::EngineRig {
  explicit Rig(const std::filesystem::path& state) : EngineRig("cuzk-request-id-restart", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 8;
    cfg.journal_dir = state.empty() ? dir / "state" : state;
    make_engine(cfg);
  }
};

TEST(RequestIdAcrossRestart, RequestIdReusedWithAnotherInputAfterARestartIsRefused) {
  Rig first({});
  testing::run_scenario(first, [](Engine& e) -> asio::awaitable<void> {
    Result<JobView> v = co_await e.submit_durable(demo(5, 1, "r"));
    EXPECT_TRUE(v.ok());
    if (v) {
      EXPECT_TRUE((co_await e.await(v.value().id, 0ms)).ok());
    }
    // Before a restart: another input under the same id is refused.
    Result<JobView> other = co_await e.submit_durable(demo(5, 2, "r"));
    EXPECT_FALSE(other.ok());
    if (!other) {
      EXPECT_EQ(other.error().kind, ErrorKind::kInvalidInput);
    }
  });
  first.engine.reset();  // releases the journal's lock

  Rig second(first.dir / "state");
  testing::run_scenario(second, [](Engine& e) -> asio::awaitable<void> {
    Result<JobView> other = co_await e.submit_durable(demo(5, 2, "r"));
    EXPECT_FALSE(other.ok()) << "a different input got the old job's proof";
    if (!other) {
      EXPECT_EQ(other.error().kind, ErrorKind::kInvalidInput);
    }
    Result<JobView> bigger = co_await e.submit_durable(demo(6, 1, "r"));
    EXPECT_FALSE(bigger.ok());
    Result<JobView> same = co_await e.submit_durable(demo(5, 1, "r"));
    EXPECT_TRUE(same.ok());
    if (same) {
      EXPECT_TRUE(same.value().deduplicated);
      EXPECT_EQ(same.value().state, JobState::kDone);
      EXPECT_TRUE((co_await e.await(same.value().id, 0ms)).ok());
    }
  });
}

}  // namespace
}  // namespace cuzk::engine
