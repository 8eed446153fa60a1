// Limits a hostile client probes: parameter-set ids are parsed strictly (an
// alias such as "demo-05" would reserve budget for the same set again), a
// set that can never fit the memory budget is refused before it is generated
// (nothing stays loaded), and an await timeout of years saturates instead of
// overflowing the clock into an immediate timeout.
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>

#include "engine/engine.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

using testing::demo;

struct Rig : testing::EngineRig {
  explicit Rig(std::uint64_t budget_bytes = 0) : EngineRig("cuzk-service-limits", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 12;
    cfg.drain_timeout = 10s;
    cfg.batch_max_size = 1;
    cfg.memory_budget_bytes = budget_bytes;
    make_engine(cfg);
  }
};

TEST(ParamSetIds, OnlyTheCanonicalSpellingParses) {
  EXPECT_EQ(parse_demo_circuit_id("demo-16"), std::optional<std::uint32_t>(16));
  EXPECT_EQ(parse_demo_circuit_id("demo-5"), std::optional<std::uint32_t>(5));
  for (const char* alias : {"demo-016", "demo-0016", "demo-05", "demo-+5", "demo- 5", "demo-5 ", "Demo-5", "demo-"})
    EXPECT_FALSE(parse_demo_circuit_id(alias)) << alias;
  for (std::uint32_t n = kMinDemoLogDomain; n <= 31; ++n)
    EXPECT_EQ(parse_demo_circuit_id(demo_circuit_id(n)), std::optional<std::uint32_t>(n));
}

TEST(ParamSetIds, AliasesAreRefusedByPreloadAndEvictAndReserveNothing) {
  Rig rig;
  testing::run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    EXPECT_TRUE((co_await e.preload("demo-5")).ok());
    const std::uint64_t reserved = e.status().memory.reserved_bytes;
    EXPECT_GT(reserved, 0u);
    for (const char* alias : {"demo-05", "demo-005", "demo-0005"}) {
      auto p = co_await e.preload(alias);
      EXPECT_FALSE(p.ok()) << alias;
      if (!p) {
        EXPECT_EQ(p.error().kind, ErrorKind::kInvalidInput);
      }
      auto ev = e.evict(alias);
      EXPECT_FALSE(ev.ok()) << alias;
      if (!ev) {
        EXPECT_EQ(ev.error().kind, ErrorKind::kInvalidInput);
      }
    }
    EXPECT_EQ(e.status().memory.reserved_bytes, reserved) << "an alias was charged to the budget again";
    EXPECT_EQ(e.status().srs.size(), 1u);
    EXPECT_TRUE(e.evict("demo-5").ok());
  });
}

// A 256 KiB budget holds the 2^3 demo set and its proving, never the 2^10 one
// (~1024 x 5 G1 points of ~100 B alone).
TEST(MemoryBudget, ASetThatCanNeverFitIsRefusedBeforeItIsGenerated) {
  Rig rig(256 << 10);
  const fs::path params_dir = rig.params->dir();
  testing::run_scenario(rig, [&params_dir](Engine& e) -> asio::awaitable<void> {
    auto small = co_await e.await(e.submit(demo(3, 1)).value().id, 0ms);
    EXPECT_TRUE(small.ok()) << (small ? "" : small.error().message);

    auto big = co_await e.await(e.submit(demo(10, 1)).value().id, 0ms);
    EXPECT_FALSE(big.ok());
    if (!big) {
      EXPECT_EQ(big.error().kind, ErrorKind::kInvalidInput) << big.error().message;
      EXPECT_NE(big.error().message.find("memory budget"), std::string::npos) << big.error().message;
    }
    auto pre = co_await e.preload("demo-10");
    EXPECT_FALSE(pre.ok());
    if (!pre) {
      EXPECT_EQ(pre.error().kind, ErrorKind::kInvalidInput) << pre.error().message;
    }

    // Nothing generated, loaded or charged for it.
    EXPECT_FALSE(fs::exists(params_dir / "demo-10.params"));
    for (const ParamsEntry& p : e.status().loaded_params) EXPECT_NE(p.circuit_id, "demo-10");
    for (const SrsResidencyView& v : e.status().srs) EXPECT_NE(v.srs, "demo-10");
    EXPECT_LE(e.status().memory.reserved_bytes, e.status().memory.total_bytes);
  });
}

TEST(AwaitTimeout, YearsLongTimeoutsSaturateInsteadOfTimingOutAtOnce) {
  Rig rig;
  testing::run_scenario(rig, [](Engine& e) -> asio::awaitable<void> {
    for (std::chrono::milliseconds timeout :
         {std::chrono::milliseconds(10'000'000'000'000), std::chrono::milliseconds::max()}) {
      Result<JobView> v = e.submit(demo(4, 7));
      EXPECT_TRUE(v.ok());
      if (!v) continue;
      auto out = co_await e.await(v.value().id, timeout);
      EXPECT_TRUE(out.ok()) << timeout.count() << " ms: " << (out ? "" : out.error().message);
    }
  });
}

}  // namespace
}  // namespace cuzk::engine
