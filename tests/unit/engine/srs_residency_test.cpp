// Parameter-set residency in the engine (policy::SrsManager wired in): a job's
// lease blocks eviction, an idle set is evicted after srs_min_idle (its budget
// charge given back, the back end's device copy released) and the next job
// loads it again, explicit evict/preload, and the status lists the tiers.
// The engine's clock is a ManualLoopClock moved by the test: idle time passes
// and the sweep runs only when the test says so.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "daemon/config.hpp"
#include "engine/engine.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;
using testing::FakeBackend;

struct Rig : testing::EngineRig {
  Rig() : EngineRig("cuzk-srs-test", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 12;
    cfg.drain_timeout = 10s;
    cfg.batch_max_size = 1;
    cfg.srs_min_idle = 60s;
    cfg.srs_reload_bytes_per_s = 0;  // demo sets of a few MB wait min_idle too
    cfg.srs_max_host_bytes = 0;      // keep no idle set past min_idle
    cfg.srs_sweep_period = 2ms;
    cfg.clock = &clock;
    make_engine(cfg);
    fake = std::make_shared<FakeBackend>("fake:0", 0, math);
    engine->set_gpu_backends({fake});
  }
  ~Rig() { engine.reset(); }  // the engine reads `clock`
  runtime::ManualLoopClock clock;
  std::shared_ptr<FakeBackend> fake;
};

using testing::demo;

// The host-tier entry of `srs` in the status, or nullopt.
std::optional<SrsResidencyView> host_entry(const Engine& e, const std::string& srs) {
  for (const SrsResidencyView& v : e.status().srs)
    if (v.srs == srs && v.tier == "host") return v;
  return std::nullopt;
}

bool has_device_entry(const Engine& e, const std::string& srs) {
  for (const SrsResidencyView& v : e.status().srs)
    if (v.srs == srs && v.tier == "device") return true;
  return false;
}

// The sweep runs when the clock passes its next period (2 ms); it and what
// it starts (device releases on the devices' threads) announce themselves
// through Engine::on_change, which testing::eventually waits on.
using testing::eventually;

asio::awaitable<void> scenario(Rig& rig, bool& finished) {
  Engine& e = *rig.engine;

  // 1. A running job's lease blocks eviction, explicit and idle.
  rig.fake->delay_ms = 300;
  auto a = e.submit(demo(5, 1));
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(co_await eventually(e, [&] { return host_entry(e, "demo-5").has_value(); }));
  auto busy = e.evict("demo-5");
  EXPECT_FALSE(busy.ok());
  if (!busy.ok()) {
    EXPECT_EQ(busy.error().kind, ErrorKind::kOverloaded);
  }
  rig.clock.advance(10min);       // idle time does not count while in use
  co_await testing::run_ready();  // the sweep it fired
  EXPECT_TRUE(host_entry(e, "demo-5").has_value());
  auto a_out = co_await e.await(a.value().id, 0ms);
  EXPECT_TRUE(a_out.ok());
  EXPECT_TRUE(co_await testing::settled(e));  // its batch ended: the set is idle
  rig.fake->delay_ms = 0;

  // 2. Idle: resident and charged to the budget until min_idle has passed.
  auto entry = host_entry(e, "demo-5");
  EXPECT_TRUE(entry.has_value());
  const std::uint64_t bytes = entry ? entry->bytes : 0;
  EXPECT_GT(bytes, 0u);
  // Nothing else holds memory now but the witness memory kept for the next run.
  EXPECT_EQ(e.status().memory.reserved_bytes, bytes + e.status().memory.kept_witness_bytes);
  EXPECT_TRUE(has_device_entry(e, "demo-5"));  // the fake keeps it on its device
  rig.clock.advance(59s);
  co_await testing::run_ready();
  EXPECT_TRUE(host_entry(e, "demo-5").has_value());
  EXPECT_EQ(rig.params->loaded().size(), 1u);

  // ... then evicted by the sweep: host copy, budget charge, device copy.
  rig.clock.advance(2s);
  EXPECT_TRUE(co_await eventually(e, [&] { return !host_entry(e, "demo-5").has_value(); }));
  EXPECT_EQ(e.status().memory.reserved_bytes, e.status().memory.kept_witness_bytes);
  EXPECT_TRUE(rig.params->loaded().empty());
  EXPECT_TRUE(co_await eventually(e, [&] { return rig.fake->srs_releases.load() == 1; }));
  EXPECT_TRUE(co_await eventually(e, [&] { return !has_device_entry(e, "demo-5"); }));

  // 3. The next job loads it again (and is charged again).
  auto b = e.submit(demo(5, 2));
  auto b_out = co_await e.await(b.value().id, 0ms);
  EXPECT_TRUE(b_out.ok());
  EXPECT_TRUE(co_await testing::settled(e));  // its batch ended: the set is idle
  EXPECT_EQ(rig.params->loaded().size(), 1u);
  entry = host_entry(e, "demo-5");
  EXPECT_TRUE(entry.has_value());
  if (entry) {
    EXPECT_EQ(entry->bytes, bytes);
  }
  EXPECT_EQ(e.status().memory.reserved_bytes, bytes + e.status().memory.kept_witness_bytes);

  // 4. Explicit eviction of an idle set ignores min_idle; unknown ids are typed.
  auto ev = e.evict("demo-5");
  EXPECT_TRUE(ev.ok());
  EXPECT_FALSE(host_entry(e, "demo-5").has_value());
  EXPECT_EQ(e.status().memory.reserved_bytes, e.status().memory.kept_witness_bytes);
  EXPECT_TRUE(rig.params->loaded().empty());
  auto again = e.evict("demo-5");
  EXPECT_FALSE(again.ok());
  if (!again.ok()) {
    EXPECT_EQ(again.error().kind, ErrorKind::kNotFound);
  }
  auto bogus = e.evict("nonsense");
  EXPECT_FALSE(bogus.ok());
  if (!bogus.ok()) {
    EXPECT_EQ(bogus.error().kind, ErrorKind::kInvalidInput);
  }
  // PoRep sets are addressed by sector size: known id, nothing loaded.
  auto porep = e.evict("porep-2KiB");
  EXPECT_FALSE(porep.ok());
  if (!porep.ok()) {
    EXPECT_EQ(porep.error().kind, ErrorKind::kNotFound);
  }
  auto porep_bad = e.evict("porep-3KiB");
  EXPECT_FALSE(porep_bad.ok());
  if (!porep_bad.ok()) {
    EXPECT_EQ(porep_bad.error().kind, ErrorKind::kInvalidInput);
  }

  // 5. Preload: resident (listed, charged) without a job; idle from now.
  auto p1 = co_await e.preload("demo-6");
  EXPECT_TRUE(p1.ok());
  if (p1.ok()) {
    EXPECT_FALSE(p1.value().already_loaded);
  }
  entry = host_entry(e, "demo-6");
  EXPECT_TRUE(entry.has_value());
  if (entry) {
    EXPECT_EQ(e.status().memory.reserved_bytes, entry->bytes + e.status().memory.kept_witness_bytes);
  }
  auto p2 = co_await e.preload("demo-6");
  EXPECT_TRUE(p2.ok());
  if (p2.ok()) {
    EXPECT_TRUE(p2.value().already_loaded);
  }
  rig.clock.advance(61s);
  EXPECT_TRUE(co_await eventually(e, [&] { return !host_entry(e, "demo-6").has_value(); }));
  EXPECT_EQ(e.status().memory.reserved_bytes, e.status().memory.kept_witness_bytes);

  co_await e.drain();
  finished = true;
}

TEST(EngineSrs, LeaseIdleEvictionReloadPreloadEvict) {
  Rig rig;
  testing::run_on_loop(rig, [&rig](bool& finished) { return scenario(rig, finished); });
}

// The tier "pinned" entry of `srs` (a device SRS's page-locked host part), or nullopt.
std::optional<SrsResidencyView> pinned_entry(const Engine& e, const std::string& srs) {
  for (const SrsResidencyView& v : e.status().srs)
    if (v.srs == srs && v.tier == "pinned") return v;
  return std::nullopt;
}

std::uint64_t host_bytes_of(const Engine& e, const std::string& srs) {
  auto v = host_entry(e, srs);
  return v ? v->bytes : 0;
}

// A back end that streams part of its resident SRS from pinned host memory:
// status lists that part as tier "pinned" on its device, metrics count it,
// the memory budget is charged for it while the SRS stays resident, and
// replacing or evicting the device copy gives the charge back.
asio::awaitable<void> pinned_scenario(Rig& rig, bool& finished) {
  Engine& e = *rig.engine;
  constexpr std::uint64_t kPinned5Bytes = 12'345'678, kPinned6Bytes = 777'000;

  rig.fake->srs_pinned_bytes = kPinned5Bytes;
  auto a = co_await e.await(e.submit(demo(5, 1)).value().id, 0ms);
  EXPECT_TRUE(a.ok());
  EXPECT_TRUE(co_await testing::settled(e));  // its batch ended: the set is idle
  auto pinned = pinned_entry(e, "demo-5");
  EXPECT_TRUE(pinned.has_value());
  if (pinned) {
    EXPECT_EQ(pinned->bytes, kPinned5Bytes);
    EXPECT_EQ(pinned->device, 0);
  }
  EXPECT_TRUE(has_device_entry(e, "demo-5"));
  const std::uint64_t host5 = host_bytes_of(e, "demo-5");
  EXPECT_GT(host5, 0u);
  EXPECT_EQ(e.status().memory.reserved_bytes, host5 + kPinned5Bytes + e.status().memory.kept_witness_bytes);
  EXPECT_NE(e.metrics().find("cuzk_srs_resident_bytes{tier=\"pinned\"} " + std::to_string(kPinned5Bytes) + "\n"),
            std::string::npos);

  // Another set replaces it on the device: the old pinned part's charge goes,
  // the new one's comes (both host copies stay: min_idle has not passed).
  rig.fake->srs_pinned_bytes = kPinned6Bytes;
  auto b = co_await e.await(e.submit(demo(6, 2)).value().id, 0ms);
  EXPECT_TRUE(b.ok());
  EXPECT_TRUE(co_await testing::settled(e));  // its batch ended: the set is idle
  EXPECT_FALSE(pinned_entry(e, "demo-5").has_value());
  pinned = pinned_entry(e, "demo-6");
  EXPECT_TRUE(pinned.has_value());
  if (pinned) {
    EXPECT_EQ(pinned->bytes, kPinned6Bytes);
  }
  const std::uint64_t host6 = host_bytes_of(e, "demo-6");
  EXPECT_GT(host6, 0u);
  EXPECT_EQ(e.status().memory.reserved_bytes, host5 + host6 + kPinned6Bytes + e.status().memory.kept_witness_bytes);

  // Evicting the set releases the device copy and its pinned part's charge.
  EXPECT_TRUE(e.evict("demo-6").ok());
  EXPECT_TRUE(co_await eventually(e, [&] { return rig.fake->srs_releases.load() == 1; }));
  EXPECT_TRUE(co_await eventually(e, [&] { return !pinned_entry(e, "demo-6").has_value(); }));
  EXPECT_FALSE(has_device_entry(e, "demo-6"));
  EXPECT_EQ(e.status().memory.reserved_bytes, host5 + e.status().memory.kept_witness_bytes);
  EXPECT_NE(e.metrics().find("cuzk_srs_resident_bytes{tier=\"pinned\"} 0\n"), std::string::npos);

  co_await e.drain();
  finished = true;
}

TEST(EngineSrs, PinnedHostPartListedChargedReleased) {
  Rig rig;
  testing::run_on_loop(rig, [&rig](bool& finished) { return pinned_scenario(rig, finished); });
}

// The staging slots' pinned buffers outlive a job by staging_keep_idle
// (2 minutes by default): the next job reuses them, and the first sweep past
// that time gives them back.
TEST(EngineSrs, IdleStagingsAreKeptForTheNextJobThenGivenBack) {
  Rig rig;
  run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    // A proof, then its worker done with it (the engine idle from then on).
    auto prove = [&e]() -> asio::awaitable<bool> {
      auto a = e.submit(demo(5, 3));
      if (!a.ok()) co_return false;
      auto out = co_await e.await(a.value().id, 0ms);
      const bool idle = co_await testing::eventually(e, [&e] {
        const auto workers = e.status().workers;
        return std::none_of(workers.begin(), workers.end(), [](const WorkerView& w) { return w.job.has_value(); });
      });
      co_return out.ok() && idle;
    };
    EXPECT_TRUE(co_await prove());
    const int kept = rig.fake->live_stagings->load();
    EXPECT_GE(kept, 1);
    // The run's witness memory is kept too (KeptWitnesses), with its reservation.
    const std::uint64_t held = e.status().memory.reserved_bytes;
    rig.clock.advance(119s);
    co_await testing::run_ready();  // the sweep it fired
    EXPECT_EQ(rig.fake->live_stagings->load(), kept);
    // The next job takes them: nothing new is made, and its idle time starts over.
    const std::size_t made = rig.fake->stagings_made->load();
    EXPECT_TRUE(co_await prove());
    EXPECT_EQ(rig.fake->stagings_made->load(), made);
    rig.clock.advance(119s);
    co_await testing::run_ready();
    EXPECT_EQ(rig.fake->live_stagings->load(), kept);
    rig.clock.advance(2s);
    EXPECT_TRUE(co_await testing::eventually(e, [&rig] { return rig.fake->live_stagings->load() == 0; }));
    EXPECT_TRUE(co_await testing::eventually(e, [&e, held] { return e.status().memory.reserved_bytes < held; }));
  });
}

TEST(EngineSrs, ConfigKeys) {
  daemon::Config d;
  daemon::Config example = daemon::load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  EXPECT_EQ(example.engine.srs_min_idle, d.engine.srs_min_idle);
  EXPECT_EQ(example.engine.srs_max_host_bytes, d.engine.srs_max_host_bytes);
  EXPECT_EQ(example.engine.srs_reload_bytes_per_s, d.engine.srs_reload_bytes_per_s);
  EXPECT_EQ(example.engine.srs_release_host_copy, d.engine.srs_release_host_copy);
  EXPECT_TRUE(d.engine.srs_release_host_copy);
  daemon::Config c = daemon::parse_config(
      "[srs]\nmin_idle_s = 30\nmax_host_bytes = \"8GiB\"\nreload_mib_per_s = 500\nrelease_host_copy = false\n", "test");
  EXPECT_FALSE(c.engine.srs_release_host_copy);
  EXPECT_ANY_THROW(daemon::parse_config("[srs]\nrelease_host_copy = 3\n", "test"));
  EXPECT_EQ(c.engine.srs_min_idle, 30s);
  EXPECT_EQ(c.engine.srs_reload_bytes_per_s, 500ull << 20);
  EXPECT_ANY_THROW(daemon::parse_config("[srs]\nreload_mib_per_s = 2000000\n", "test"));
  EXPECT_EQ(c.engine.srs_max_host_bytes, 8ull << 30);
  EXPECT_ANY_THROW(daemon::parse_config("[srs]\nmax_host_bytes = \"lots\"\n", "test"));
}

}  // namespace
}  // namespace cuzk::engine
