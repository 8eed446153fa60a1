// SRS residency: actions returned for the caller, budget charging, in-use
// entries never evicted, LRU after the minimum idle time, explicit eviction
// errors, loading states and multi-GPU placement.
#include <gtest/gtest.h>

#include <random>

#include "policy/srs_manager.hpp"

namespace cuzk::policy {
namespace {

using namespace std::chrono_literals;
using Op = SrsAction::Op;

SrsKey params(std::string name) { return SrsKey{"/params/" + std::move(name), SrsKind::kGroth16Params}; }

// reload_bytes_per_s 0: entries of a few bytes wait min_idle like large ones.
SrsConfig config(std::vector<std::uint64_t> devices, Millis min_idle = 5min, std::uint64_t reload_bytes_per_s = 0) {
  SrsConfig c;
  c.device_capacity_bytes = std::move(devices);
  c.eviction_min_idle = min_idle;
  c.reload_bytes_per_s = reload_bytes_per_s;
  return c;
}

// Performs the load actions as a caller would (instantly).
void perform(SrsManager& m, const std::vector<SrsAction>& actions) {
  for (const SrsAction& a : actions) {
    if (a.op == Op::kLoadPinned) m.loaded(a.key, std::nullopt);
    if (a.op == Op::kLoadDevice) m.loaded(a.key, a.device);
  }
}

TEST(SrsManager, AcquireReturnsLoadActionsAndChargesTheBudget) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({50, 50}), budget, clock);
  SrsKey porep = params("porep");
  ASSERT_TRUE(m.register_srs(porep, {40, 30}));
  auto a = m.acquire(porep, 1u, Priority::kNormal);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->actions,
            (std::vector<SrsAction>{{Op::kLoadPinned, porep, std::nullopt, 40}, {Op::kLoadDevice, porep, 1u, 30}}));
  EXPECT_FALSE(a->wait_for_other_load);
  EXPECT_EQ(budget.reserved_bytes(), 40u);
  EXPECT_EQ(m.pinned_bytes(), 40u);
  EXPECT_EQ(m.device_used_bytes(1), 30u);
  EXPECT_EQ(m.residency(porep, std::nullopt), Residency::kLoading);
  // A second job while loading: no second load, but it must wait.
  auto b = m.acquire(porep, 1u, Priority::kNormal);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->actions.empty());
  EXPECT_TRUE(b->wait_for_other_load);
  perform(m, a->actions);
  EXPECT_TRUE(m.resident_on(porep, 1));
  EXPECT_FALSE(m.resident_on(porep, 0));
  auto c = m.acquire(porep, 1u, Priority::kNormal);
  ASSERT_TRUE(c);
  EXPECT_TRUE(c->actions.empty());
  EXPECT_FALSE(c->wait_for_other_load);
  EXPECT_EQ(budget.reserved_bytes(), 40u);  // charged once
  EXPECT_EQ(to_string(a->actions[0]), "load params:/params/porep into pinned (40 B)");
}

TEST(SrsManager, UnknownEntriesAndDevicesAreTypedErrors) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({50}), budget, clock);
  auto a = m.acquire(params("nope"), std::nullopt, Priority::kNormal);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().kind, SrsErrorKind::kNotFound);
  ASSERT_TRUE(m.register_srs(params("x"), {10, 10}));
  EXPECT_EQ(m.acquire(params("x"), 3u, Priority::kNormal).error().kind, SrsErrorKind::kBadDevice);
  EXPECT_EQ(m.evict(params("nope")).error().kind, SrsErrorKind::kNotFound);
  EXPECT_EQ(m.evict(params("x")).error().kind, SrsErrorKind::kNotFound);  // known, but cold
  ASSERT_TRUE(m.register_srs(params("huge"), {101, 0}));
  EXPECT_EQ(m.acquire(params("huge"), std::nullopt, Priority::kCritical).error().kind, SrsErrorKind::kTooLarge);
  ASSERT_TRUE(m.register_srs(params("wide"), {1, 51}));
  EXPECT_EQ(m.acquire(params("wide"), 0u, Priority::kCritical).error().kind, SrsErrorKind::kTooLarge);
  EXPECT_EQ(budget.reserved_bytes(), 0u);  // refusals change nothing
}

TEST(SrsManager, InUseEntriesAreNeverEvicted) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({100}, 1min), budget, clock);
  ASSERT_TRUE(m.register_srs(params("a"), {60, 60}));
  ASSERT_TRUE(m.register_srs(params("b"), {60, 60}));
  auto a = m.acquire(params("a"), 0u, Priority::kNormal);
  ASSERT_TRUE(a);
  perform(m, a->actions);
  clock.advance(1h);
  // b needs the memory a holds, but a is in use: no room, nothing evicted.
  auto b = m.acquire(params("b"), 0u, Priority::kCritical);
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().kind, SrsErrorKind::kNoRoom);
  auto e = m.evict(params("a"));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().kind, SrsErrorKind::kBusy);
  EXPECT_EQ(m.evict(params("a"), 0u).error().kind, SrsErrorKind::kBusy);
  EXPECT_TRUE(m.resident_on(params("a"), 0));
  // Released, but idle for less than the minimum: still kept.
  a->lease.release();
  clock.advance(59s);
  EXPECT_EQ(m.acquire(params("b"), 0u, Priority::kNormal).error().kind, SrsErrorKind::kNoRoom);
  clock.advance(1s);
  auto b2 = m.acquire(params("b"), 0u, Priority::kNormal);
  ASSERT_TRUE(b2);
  EXPECT_EQ(b2->actions, (std::vector<SrsAction>{{Op::kEvictDevice, params("a"), 0u, 60},
                                                 {Op::kEvictPinned, params("a"), std::nullopt, 60},
                                                 {Op::kLoadPinned, params("b"), std::nullopt, 60},
                                                 {Op::kLoadDevice, params("b"), 0u, 60}}));
  EXPECT_EQ(budget.reserved_bytes(), 60u);
  EXPECT_EQ(m.residency(params("a"), std::nullopt), Residency::kAbsent);
}

// An idle entry may go once it has been idle as long as reloading it would
// take (bytes at reload_bytes_per_s), and at the latest after min_idle: a
// small set does not hold a large job back for min_idle.
TEST(SrsManager, SmallEntriesBecomeEvictableAfterTheirReloadTime) {
  FakeClock clock;
  MemoryBudget budget({10'000, 8});
  SrsManager m(config({}, 5min, /*reload_bytes_per_s=*/100), budget, clock);
  ASSERT_TRUE(m.register_srs(params("small"), {200, 0}));    // reload 2 s
  ASSERT_TRUE(m.register_srs(params("large"), {9'000, 0}));  // reload 90 s
  ASSERT_TRUE(m.register_srs(params("huge"), {9'500, 0}));   // reload 95 s
  for (const char* n : {"small", "large"}) {
    auto l = m.acquire(params(n), std::nullopt, Priority::kNormal);
    ASSERT_TRUE(l);
    perform(m, l->actions);
  }
  auto evictable = [&m](const char* n) {
    for (const SrsEntryView& v : m.entries()) {
      if (v.key == params(n)) return v.evictable;
    }
    ADD_FAILURE() << n << " not listed";
    return false;
  };
  clock.advance(1999ms);
  EXPECT_FALSE(evictable("small"));
  clock.advance(2ms);
  EXPECT_TRUE(evictable("small"));
  EXPECT_FALSE(evictable("large"));
  // huge needs large gone: refused until large has been idle 90 s.
  EXPECT_EQ(m.acquire(params("huge"), std::nullopt, Priority::kNormal).error().kind, SrsErrorKind::kNoRoom);
  clock.advance(88s);
  EXPECT_TRUE(evictable("large"));
  auto h = m.acquire(params("huge"), std::nullopt, Priority::kNormal);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->actions, (std::vector<SrsAction>{{Op::kEvictPinned, params("large"), std::nullopt, 9'000},
                                                {Op::kLoadPinned, params("huge"), std::nullopt, 9'500}}));
  perform(m, h->actions);
}

// min_idle caps the rule: an entry whose reload would take longer than
// min_idle is evictable after min_idle.
TEST(SrsManager, MinIdleCapsTheReloadTime) {
  FakeClock clock;
  MemoryBudget budget({100'000, 8});
  SrsManager m(config({}, 1min, /*reload_bytes_per_s=*/1), budget, clock);
  ASSERT_TRUE(m.register_srs(params("a"), {90'000, 0}));  // reload 25 h
  auto l = m.acquire(params("a"), std::nullopt, Priority::kNormal);
  ASSERT_TRUE(l);
  perform(m, l->actions);
  l->lease.release();
  clock.advance(59s);
  EXPECT_FALSE(m.entries().front().evictable);
  clock.advance(1s);
  EXPECT_TRUE(m.entries().front().evictable);
}

TEST(SrsManager, LoadingEntriesAreBusy) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({100}, 0ms), budget, clock);
  ASSERT_TRUE(m.register_srs(params("a"), {10, 10}));
  auto pre = m.preload(params("a"), 0u, Priority::kNormal);
  ASSERT_TRUE(pre);
  ASSERT_EQ(pre->size(), 2u);
  EXPECT_EQ(m.evict(params("a")).error().kind, SrsErrorKind::kBusy);  // load in flight
  perform(m, *pre);
  auto ev = m.evict(params("a"));
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->size(), 2u);
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  EXPECT_EQ(m.device_used_bytes(0), 0u);
}

TEST(SrsManager, EvictsLeastRecentlyUsedFirst) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({}, 1min), budget, clock);
  for (const char* n : {"a", "b", "c", "d"}) ASSERT_TRUE(m.register_srs(params(n), {30, 0}));
  // Use order: b, a, c (each 30 B: 90 of 100).
  for (const char* n : {"b", "a", "c"}) {
    auto l = m.acquire(params(n), std::nullopt, Priority::kNormal);
    ASSERT_TRUE(l);
    perform(m, l->actions);
    clock.advance(10min);
  }
  // Touch b again: a is now the least recently used.
  {
    auto l = m.acquire(params("b"), std::nullopt, Priority::kNormal);
    ASSERT_TRUE(l);
    EXPECT_TRUE(l->actions.empty());
    clock.advance(10min);
  }
  auto d = m.acquire(params("d"), std::nullopt, Priority::kNormal);
  ASSERT_TRUE(d);
  ASSERT_EQ(d->actions.size(), 2u);
  EXPECT_EQ(d->actions[0], (SrsAction{Op::kEvictPinned, params("a"), std::nullopt, 30}));
  EXPECT_EQ(d->actions[1].op, Op::kLoadPinned);
  EXPECT_EQ(budget.reserved_bytes(), 90u);
  perform(m, d->actions);
  d->lease.release();
  // Next victim is c (its last use was before b's second one and d's).
  ASSERT_TRUE(m.register_srs(params("e"), {40, 0}));
  clock.advance(10min);
  auto e = m.acquire(params("e"), std::nullopt, Priority::kNormal);
  ASSERT_TRUE(e);
  // 10 free + c's 30 suffice: only c goes (b and d were used later).
  ASSERT_EQ(e->actions.size(), 2u);
  EXPECT_EQ(e->actions[0], (SrsAction{Op::kEvictPinned, params("c"), std::nullopt, 30}));
  EXPECT_EQ(e->actions[1], (SrsAction{Op::kLoadPinned, params("e"), std::nullopt, 40}));
  EXPECT_EQ(budget.reserved_bytes(), 100u);  // b 30 + d 30 + e 40
  EXPECT_EQ(m.residency(params("b"), std::nullopt), Residency::kResident);
}

// Memory freed by evicting an idle entry goes to the entry that needed it,
// not to a lower-priority waiter queued in the budget.
TEST(SrsManager, EvictedBytesPassStraightToTheNewEntry) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({}, 0ms), budget, clock);
  ASSERT_TRUE(m.register_srs(params("old"), {80, 0}));
  ASSERT_TRUE(m.register_srs(params("new"), {90, 0}));
  auto o = m.acquire(params("old"), std::nullopt, Priority::kNormal);
  ASSERT_TRUE(o);
  perform(m, o->actions);
  o->lease.release();
  auto low = budget.reserve(20, Priority::kLow);
  ASSERT_TRUE(low);
  ASSERT_TRUE(std::holds_alternative<Reservation>(*low));  // 20 free: granted now
  auto low2 = budget.reserve(50, Priority::kLow);
  ASSERT_TRUE(low2);
  auto wait_id = std::get<MemoryBudget::WaitId>(*low2);
  std::get<Reservation>(*low).release();  // 20 free again, LOW waiter (50) still blocked
  auto n = m.acquire(params("new"), std::nullopt, Priority::kNormal);
  ASSERT_TRUE(n);
  EXPECT_EQ(budget.reserved_bytes(), 90u);
  EXPECT_FALSE(budget.claim(wait_id).has_value());  // the LOW waiter did not get old's bytes
  budget.cancel(wait_id);
}

TEST(SrsManager, HigherPriorityBudgetWaitersAreNotOvertaken) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({}), budget, clock);
  ASSERT_TRUE(m.register_srs(params("a"), {10, 0}));
  auto hold = budget.try_reserve(95, Priority::kNormal);
  auto w = budget.reserve(50, Priority::kCritical);
  ASSERT_TRUE(w);
  EXPECT_EQ(m.acquire(params("a"), std::nullopt, Priority::kHigh).error().kind, SrsErrorKind::kNoRoom);
  budget.cancel(std::get<MemoryBudget::WaitId>(*w));
}

TEST(SrsManager, PrepaidReservationIsAdopted) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({}), budget, clock);
  ASSERT_TRUE(m.register_srs(params("a"), {40, 0}));
  auto r = budget.try_reserve(35, Priority::kNormal);  // an estimate, waited for earlier
  ASSERT_TRUE(r);
  auto a = m.acquire(params("a"), std::nullopt, Priority::kNormal, std::move(r.value()));
  ASSERT_TRUE(a);
  EXPECT_EQ(budget.reserved_bytes(), 40u);  // settled to the entry's size
  perform(m, a->actions);
  a->lease.release();
  auto ev = m.evict(params("a"));
  ASSERT_TRUE(ev);
  EXPECT_EQ(budget.reserved_bytes(), 0u);
}

TEST(SrsManager, FailedLoadReturnsMemoryAndAllowsRetry) {
  FakeClock clock;
  MemoryBudget budget({100, 8});
  SrsManager m(config({50}), budget, clock);
  ASSERT_TRUE(m.register_srs(params("a"), {40, 20}));
  auto a = m.acquire(params("a"), 0u, Priority::kNormal);
  ASSERT_TRUE(a);
  m.load_failed(params("a"), std::nullopt);
  m.load_failed(params("a"), 0u);
  EXPECT_EQ(budget.reserved_bytes(), 0u);
  EXPECT_EQ(m.device_used_bytes(0), 0u);
  EXPECT_EQ(m.residency(params("a"), 0u), Residency::kAbsent);
  auto b = m.acquire(params("a"), 0u, Priority::kNormal);  // retry loads again
  ASSERT_TRUE(b);
  EXPECT_EQ(b->actions.size(), 2u);
  perform(m, b->actions);
  a->lease.release();
  b->lease.release();
  EXPECT_FALSE(m.register_srs(params("a"), {1, 1}));  // resident: sizes frozen
}

TEST(SrsManager, PlacementPrefersResidentThenLeastLoadedWithRoom) {
  FakeClock clock;
  MemoryBudget budget({1000, 8});
  SrsManager m(config({100, 100, 100, 40}, 1h), budget, clock);
  SrsKey a = params("a"), b = params("b");
  ASSERT_TRUE(m.register_srs(a, {10, 50}));
  ASSERT_TRUE(m.register_srs(b, {10, 50}));
  EXPECT_EQ(m.choose_device(a), 0u);  // nothing anywhere: least loaded, most free, lowest index
  auto on2 = m.acquire(a, 2u, Priority::kNormal);
  ASSERT_TRUE(on2);
  perform(m, on2->actions);
  EXPECT_EQ(m.choose_device(a), 2u);  // resident (and busy) beats idle devices
  // b: device 2 has a lease; 0 and 1 are idle with room; 3 is too small.
  EXPECT_EQ(m.choose_device(b), 0u);
  auto b0 = m.acquire(b, 0u, Priority::kNormal);
  ASSERT_TRUE(b0);
  perform(m, b0->actions);
  auto b0_again = m.acquire(b, 0u, Priority::kNormal);
  ASSERT_TRUE(b0_again);
  // a is resident on 2 only; ask among devices 0,1: 1 is idle.
  std::vector<std::uint32_t> some = {0, 1};
  EXPECT_EQ(m.choose_device(a, some), 1u);
  // Load a onto 1 too: two resident copies, the less loaded wins.
  auto a1 = m.acquire(a, 1u, Priority::kNormal);
  ASSERT_TRUE(a1);
  perform(m, a1->actions);
  a1->lease.release();
  EXPECT_EQ(m.choose_device(a), 1u);
  std::vector<std::uint32_t> only3 = {3};
  EXPECT_FALSE(m.choose_device(a, only3).has_value());  // 50 B never fits in 40
}

// Random acquire/release/evict/preload with the clock moving: the books match
// the entries, nothing in use is ever absent, and the budget never overflows.
TEST(SrsManager, RandomOperationsKeepInvariants) {
  std::mt19937_64 rng(2024);
  FakeClock clock;
  MemoryBudget budget({200, 8});
  SrsManager m(config({120, 120}, 30s), budget, clock);
  std::vector<SrsKey> keys;
  for (int i = 0; i < 6; ++i) {
    keys.push_back(params("k" + std::to_string(i)));
    ASSERT_TRUE(
        m.register_srs(keys.back(), {20 + 10 * static_cast<std::uint64_t>(i), 25 + 5 * static_cast<std::uint64_t>(i)}));
  }
  std::vector<SrsLease> leases;
  for (int step = 0; step < 5000; ++step) {
    const SrsKey& k = keys[rng() % keys.size()];
    int op = static_cast<int>(rng() % 4);
    std::optional<std::uint32_t> dev;
    if (rng() % 3 != 0) dev = static_cast<std::uint32_t>(rng() % 2);
    if (op == 0) {
      auto a = m.acquire(k, dev, static_cast<Priority>(rng() % kNumPriorities));
      if (a) {
        perform(m, a->actions);
        leases.push_back(std::move(a->lease));
      } else {
        ASSERT_EQ(a.error().kind, SrsErrorKind::kNoRoom);
      }
    } else if (op == 1 && !leases.empty()) {
      leases.erase(leases.begin() + static_cast<long>(rng() % leases.size()));
    } else if (op == 2) {
      auto e = m.evict(k, dev);
      if (!e) {
        ASSERT_TRUE(e.error().kind == SrsErrorKind::kBusy || e.error().kind == SrsErrorKind::kNotFound);
      }
    } else {
      auto p = m.preload(k, dev, Priority::kLow);
      if (p) perform(m, *p);
    }
    clock.advance(Millis{static_cast<long>(rng() % 5000)});
    // Invariants.
    ASSERT_EQ(budget.reserved_bytes(), m.pinned_bytes());
    ASSERT_LE(m.pinned_bytes(), 200u);
    for (std::uint32_t d = 0; d < 2; ++d) ASSERT_LE(m.device_used_bytes(d), 120u);
    for (const SrsLease& l : leases) {
      ASSERT_EQ(m.residency(l.key(), std::nullopt), Residency::kResident);
      if (l.device()) {
        ASSERT_EQ(m.residency(l.key(), l.device()), Residency::kResident);
      }
    }
    std::uint64_t dev_sum[2] = {0, 0};
    for (const SrsEntryView& v : m.entries()) {
      for (const auto& [d, r] : v.devices) dev_sum[d] += v.sizes.device_bytes;
    }
    ASSERT_EQ(dev_sum[0], m.device_used_bytes(0));
    ASSERT_EQ(dev_sum[1], m.device_used_bytes(1));
  }
  leases.clear();
}

}  // namespace
}  // namespace cuzk::policy
