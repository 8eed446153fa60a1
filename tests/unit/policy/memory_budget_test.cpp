// Memory budget: size parsing, immediate grants, priority-ordered waiting,
// head-of-line fairness, refusals, resize and accounting.
#include <gtest/gtest.h>

#include <random>
#include <variant>
#include <vector>

#include "policy/memory_budget.hpp"

namespace cuzk::policy {
namespace {

using Wait = MemoryBudget::WaitId;

TEST(ParseSize, BinaryDecimalAndFractionalUnits) {
  EXPECT_EQ(*parse_size_bytes("64GiB"), 64 * kGiB);
  EXPECT_EQ(*parse_size_bytes("512MiB"), 512 * kMiB);
  EXPECT_EQ(*parse_size_bytes("512 mib"), 512 * kMiB);
  EXPECT_EQ(*parse_size_bytes("1.5TiB"), kTiB + kTiB / 2);
  EXPECT_EQ(*parse_size_bytes("0.5GiB"), kGiB / 2);
  EXPECT_EQ(*parse_size_bytes("80GB"), 80'000'000'000ull);
  EXPECT_EQ(*parse_size_bytes("4096"), 4096u);
  EXPECT_EQ(*parse_size_bytes("7B"), 7u);
  EXPECT_EQ(*parse_size_bytes("3K"), 3 * kKiB);
  EXPECT_EQ(*parse_size_bytes(" 2 G "), 2 * kGiB);
}

TEST(ParseSize, RejectsWhatItDoesNotUnderstand) {
  for (const char* bad : {"", "GiB", "64 gigs", "-1GiB", "1..5GiB", "12XB", "99999999999TiB", "18446744073709551616",
                          "1.0000000001GiB"}) {
    auto r = parse_size_bytes(bad);
    EXPECT_FALSE(r.has_value()) << bad;
    if (!r) {
      EXPECT_NE(r.error().message.find("bad size"), std::string::npos);
    }
  }
}

TEST(ParseBudget, AutoExplicitAndResolution) {
  auto a = parse_budget_setting(" Auto ");
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->automatic);
  EXPECT_EQ(*resolve_budget_bytes(*a, 256 * kGiB, 5 * kGiB), 251 * kGiB);
  EXPECT_FALSE(resolve_budget_bytes(*a, 4 * kGiB, 5 * kGiB).has_value());
  auto e = parse_budget_setting("100GiB");
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->automatic);
  EXPECT_EQ(*resolve_budget_bytes(*e, 256 * kGiB, 5 * kGiB), 100 * kGiB);
  EXPECT_FALSE(parse_budget_setting("0").has_value());
  EXPECT_FALSE(parse_budget_setting("lots").has_value());
}

TEST(PhysicalMemory, IsPlausible) {
  auto b = physical_memory_bytes();
  ASSERT_TRUE(b.has_value());
  EXPECT_GT(*b, 64 * kMiB);
}

TEST(MemoryBudget, ReservationsAreRaiiAndMoveOnly) {
  MemoryBudget b({100, 8});
  {
    auto r = b.try_reserve(60, Priority::kNormal);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->bytes(), 60u);
    EXPECT_EQ(b.reserved_bytes(), 60u);
    Reservation moved = std::move(r.value());
    EXPECT_EQ(r->bytes(), 0u);
    EXPECT_EQ(b.reserved_bytes(), 60u);
    Reservation other;
    other = std::move(moved);
    EXPECT_EQ(b.reserved_bytes(), 60u);
    other.shrink_to(20);  // two-phase release
    EXPECT_EQ(b.reserved_bytes(), 20u);
    EXPECT_EQ(b.available_bytes(), 80u);
  }
  EXPECT_EQ(b.reserved_bytes(), 0u);
  EXPECT_EQ(b.stats().peak_reserved_bytes, 60u);
}

TEST(MemoryBudget, TryReserveRefusesWithTypedKinds) {
  MemoryBudget b({100, 8});
  auto too_big = b.try_reserve(101, Priority::kCritical);
  ASSERT_FALSE(too_big);
  EXPECT_EQ(too_big.error().kind, RefusalKind::kTooLarge);
  EXPECT_EQ(too_big.error().requested_bytes, 101u);
  EXPECT_EQ(too_big.error().total_bytes, 100u);
  auto a = b.try_reserve(70, Priority::kNormal);
  ASSERT_TRUE(a);
  auto c = b.try_reserve(31, Priority::kCritical);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().kind, RefusalKind::kWouldWait);
  EXPECT_TRUE(b.try_reserve(30, Priority::kLow));  // fits exactly, then given back
  // reserve() refuses an oversize request at once instead of queueing it forever.
  auto q = b.reserve(1000, Priority::kCritical);
  ASSERT_FALSE(q);
  EXPECT_EQ(q.error().kind, RefusalKind::kTooLarge);
  EXPECT_EQ(b.waiting(), 0u);
  EXPECT_EQ(b.stats().refused_total[static_cast<int>(RefusalKind::kTooLarge)], 2u);
}

TEST(MemoryBudget, WaiterBoundGivesOverloaded) {
  MemoryBudget b({10, 2});
  auto hold = b.try_reserve(10, Priority::kNormal);
  ASSERT_TRUE(b.reserve(5, Priority::kNormal));
  ASSERT_TRUE(b.reserve(5, Priority::kLow));
  auto third = b.reserve(5, Priority::kCritical);
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error().kind, RefusalKind::kOverloaded);
  EXPECT_EQ(b.waiting(), 2u);
  hold->release();
  EXPECT_EQ(b.waiting(), 0u);
  EXPECT_EQ(b.stats().ready_unclaimed, 2u);
  // Unclaimed grants still count; give them back by cancelling.
  EXPECT_EQ(b.reserved_bytes(), 10u);
  EXPECT_TRUE(b.cancel(1));
  EXPECT_TRUE(b.cancel(2));
  EXPECT_FALSE(b.cancel(2));
  EXPECT_EQ(b.reserved_bytes(), 0u);
}

// Waiters are granted CRITICAL > HIGH > NORMAL > LOW, FIFO within a priority,
// whatever the order they arrived in.
TEST(MemoryBudget, GrantsWaitersInPriorityThenFifoOrder) {
  MemoryBudget b({100, 64});
  std::vector<Wait> order;
  b.set_ready_callback([&](Wait id) { order.push_back(id); });
  auto hold = b.try_reserve(100, Priority::kNormal);
  struct Req {
    Priority p;
    Wait id;
  };
  std::vector<Req> reqs;
  for (Priority p : {Priority::kLow, Priority::kNormal, Priority::kCritical, Priority::kHigh, Priority::kNormal,
                     Priority::kLow, Priority::kCritical, Priority::kHigh}) {
    auto r = b.reserve(100, p);
    ASSERT_TRUE(r);
    reqs.push_back({p, std::get<Wait>(*r)});
  }
  auto stats = b.stats();
  EXPECT_EQ(stats.waiting[static_cast<int>(Priority::kCritical)], 2u);
  EXPECT_EQ(stats.waiting_bytes[static_cast<int>(Priority::kNormal)], 200u);
  hold->release();
  // Each grant takes the whole budget, so releasing one serves exactly the next.
  std::vector<Wait> expected = {reqs[2].id, reqs[6].id, reqs[3].id, reqs[7].id,
                                reqs[1].id, reqs[4].id, reqs[0].id, reqs[5].id};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(order.size(), i + 1);
    EXPECT_EQ(order[i], expected[i]);
    auto got = b.claim(order[i]);
    ASSERT_TRUE(got.has_value());
    ASSERT_TRUE(got->has_value());
    EXPECT_EQ((*got)->bytes(), 100u);
    // Still waiting: claim says so without consuming.
    if (i + 1 < expected.size()) {
      EXPECT_FALSE(b.claim(expected[i + 1]).has_value());
    }
  }  // each claimed reservation dies here, serving the next
  EXPECT_EQ(b.reserved_bytes(), 0u);
}

// The critical overdraft: CRITICAL requests may go past the total by that
// much, others wait until the books are back under the total.
TEST(MemoryBudget, CriticalRequestsMayOverdrawTheBudget) {
  MemoryBudget b({100, 64, /*critical_overdraft_bytes=*/10});
  auto normal = b.try_reserve(95, Priority::kNormal);
  ASSERT_TRUE(normal);
  EXPECT_EQ(b.try_reserve(10, Priority::kHigh).error().kind, RefusalKind::kWouldWait);
  auto crit = b.try_reserve(10, Priority::kCritical);  // 105 of 100: within the overdraft
  ASSERT_TRUE(crit);
  EXPECT_EQ(b.reserved_bytes(), 105u);
  EXPECT_EQ(b.available_bytes(), 0u);
  EXPECT_EQ(b.try_reserve(6, Priority::kCritical).error().kind, RefusalKind::kWouldWait);  // 111 > 110
  auto crit2 = b.reserve(6, Priority::kCritical);
  ASSERT_TRUE(crit2);
  ASSERT_TRUE(std::holds_alternative<Wait>(*crit2));
  auto waiting = b.reserve(5, Priority::kNormal);
  ASSERT_TRUE(waiting);
  ASSERT_TRUE(std::holds_alternative<Wait>(*waiting));
  crit->release();  // 95: the CRITICAL waiter (6) overdraws to 101; the NORMAL one (5) still waits
  auto got = b.claim(std::get<Wait>(*crit2));
  ASSERT_TRUE(got.has_value());
  ASSERT_TRUE(got->has_value());
  EXPECT_FALSE(b.claim(std::get<Wait>(*waiting)).has_value());
  got.reset();  // 95 again: 5 fit the total
  auto n = b.claim(std::get<Wait>(*waiting));
  ASSERT_TRUE(n.has_value());
  ASSERT_TRUE(n->has_value());
  EXPECT_EQ(b.reserved_bytes(), 100u);
}

// A large CRITICAL request is not starved by a stream of small LOW requests,
// and a new request never jumps a waiter of the same or higher priority.
TEST(MemoryBudget, NoStarvationOfTheHighestPriority) {
  MemoryBudget b({100, 64});
  std::vector<Reservation> small;
  for (int i = 0; i < 10; ++i) small.push_back(std::move(b.try_reserve(10, Priority::kLow).value()));
  auto big = b.reserve(60, Priority::kCritical);
  ASSERT_TRUE(big);
  Wait big_id = std::get<Wait>(*big);
  // The small holders finish one by one, and more small LOW work keeps coming.
  for (int i = 0; i < 6; ++i) {
    small.erase(small.begin());
    auto more = b.try_reserve(10, Priority::kLow);
    ASSERT_FALSE(more);
    EXPECT_EQ(more.error().kind, RefusalKind::kWouldWait);
    auto queued = b.reserve(10, Priority::kLow);  // queues behind the critical one
    ASSERT_TRUE(queued);
    EXPECT_TRUE(std::holds_alternative<Wait>(*queued));
    // Even a CRITICAL newcomer waits behind the CRITICAL already waiting.
    EXPECT_FALSE(b.try_reserve(1, Priority::kCritical));
  }
  auto c = b.claim(big_id);
  ASSERT_TRUE(c.has_value() && c->has_value());
  EXPECT_EQ((*c)->bytes(), 60u);
  // Once the critical request is served, the queued LOW ones follow in order.
  EXPECT_EQ(b.stats().waiting[static_cast<int>(Priority::kLow)], 6u);
  small.clear();
  EXPECT_EQ(b.stats().waiting[static_cast<int>(Priority::kLow)], 2u);  // 40 B free: four of six
  EXPECT_EQ(b.stats().ready_unclaimed, 4u);
}

TEST(MemoryBudget, HigherPriorityMayTakeFreeMemoryAheadOfLowerWaiters) {
  MemoryBudget b({100, 8});
  auto hold = b.try_reserve(50, Priority::kNormal);
  auto low = b.reserve(80, Priority::kLow);  // waits: only 50 free
  ASSERT_TRUE(low);
  ASSERT_TRUE(std::holds_alternative<Wait>(*low));
  auto high = b.try_reserve(40, Priority::kHigh);  // it would be first in line anyway
  ASSERT_TRUE(high);
  EXPECT_FALSE(b.try_reserve(5, Priority::kLow));  // no barging past the LOW waiter
}

TEST(MemoryBudget, CancellingTheBlockingHeadServesThoseBehind) {
  MemoryBudget b({100, 8});
  std::vector<Wait> ready;
  b.set_ready_callback([&](Wait id) { ready.push_back(id); });
  auto hold = b.try_reserve(50, Priority::kNormal);
  Wait big = std::get<Wait>(*b.reserve(90, Priority::kHigh));
  Wait small = std::get<Wait>(*b.reserve(30, Priority::kNormal));
  EXPECT_TRUE(ready.empty());
  EXPECT_TRUE(b.cancel(big));
  EXPECT_EQ(ready, std::vector<Wait>{small});
  EXPECT_EQ(b.reserved_bytes(), 80u);
  EXPECT_TRUE(b.cancel(small));  // granted but unclaimed: bytes come back
  EXPECT_EQ(b.reserved_bytes(), 50u);
}

TEST(MemoryBudget, ShrinkRefusesWaitersThatCanNeverFitAndHoldsTheRest) {
  MemoryBudget b({100, 8});
  std::vector<Wait> ready;
  b.set_ready_callback([&](Wait id) { ready.push_back(id); });
  auto hold = b.try_reserve(90, Priority::kNormal);
  Wait w80 = std::get<Wait>(*b.reserve(80, Priority::kHigh));
  Wait w30 = std::get<Wait>(*b.reserve(30, Priority::kNormal));
  b.resize(60);  // SIGHUP with a smaller budget
  ASSERT_EQ(ready, std::vector<Wait>{w80});
  auto refused = b.claim(w80);
  ASSERT_TRUE(refused.has_value());
  ASSERT_FALSE(refused->has_value());
  EXPECT_EQ(refused->error().kind, RefusalKind::kTooLarge);
  EXPECT_EQ(refused->error().total_bytes, 60u);
  EXPECT_EQ(b.available_bytes(), 0u);  // 90 reserved of 60: nothing revoked
  hold->shrink_to(40);                 // 40 of 60 reserved: 20 free, w30 still waits
  EXPECT_FALSE(b.claim(w30).has_value());
  b.resize(200);  // growing serves it
  auto got = b.claim(w30);
  ASSERT_TRUE(got.has_value() && got->has_value());
  EXPECT_EQ(b.reserved_bytes(), 70u);
}

TEST(MemoryBudget, ZeroByteReservationCanSettleLater) {
  MemoryBudget b({100, 8});
  auto hold = b.try_reserve(100, Priority::kNormal);
  auto w = b.reserve(10, Priority::kCritical);  // a waiter does not block a zero-byte request
  auto r = b.try_reserve(0, Priority::kLow);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->holds_budget());
  hold->release();  // the critical waiter takes 10 of 100
  r->settle(25);    // the allocation happened: 25 B
  EXPECT_EQ(b.reserved_bytes(), 35u);
  b.cancel(std::get<MemoryBudget::WaitId>(*w));
  r->release();
  EXPECT_EQ(b.reserved_bytes(), 0u);
}

TEST(MemoryBudget, SettleChargesTheRealSize) {
  MemoryBudget b({100, 8});
  auto r = b.try_reserve(40, Priority::kNormal);
  r->settle(30);  // smaller than estimated
  EXPECT_EQ(b.reserved_bytes(), 30u);
  Wait w = std::get<Wait>(*b.reserve(90, Priority::kNormal));
  r->settle(110);  // the allocation came out larger than the whole budget
  EXPECT_EQ(b.reserved_bytes(), 110u);
  EXPECT_EQ(b.available_bytes(), 0u);
  EXPECT_FALSE(b.claim(w).has_value());
  r->release();
  EXPECT_TRUE(b.claim(w).has_value());
}

// The callback may claim (and so destroy) reservations from inside the release
// that granted them; each re-entrant release serves the next waiter.
TEST(MemoryBudget, ReadyCallbackMayReenter) {
  MemoryBudget b({10, 16});
  std::vector<Wait> served;
  b.set_ready_callback([&](Wait id) {
    served.push_back(id);
    auto got = b.claim(id);
    ASSERT_TRUE(got.has_value() && got->has_value());
  });  // the claimed reservation dies at the end of the callback
  auto hold = b.try_reserve(10, Priority::kNormal);
  std::vector<Wait> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(std::get<Wait>(*b.reserve(10, Priority::kNormal)));
  hold->release();
  EXPECT_EQ(served, ids);
  EXPECT_EQ(b.reserved_bytes(), 0u);
}

// Random operations against the invariants: reserved = sum of live holdings,
// and a waiter is never left waiting while it is the head and fits.
TEST(MemoryBudget, RandomOperationsKeepTheBooksStraight) {
  std::mt19937_64 rng(7);
  MemoryBudget b({1000, 32});
  std::vector<Reservation> held;
  std::vector<Wait> pending;
  for (int step = 0; step < 20000; ++step) {
    int op = static_cast<int>(rng() % 5);
    auto p = static_cast<Priority>(rng() % kNumPriorities);
    if (op == 0) {
      auto r = b.reserve(1 + rng() % 400, p);
      if (r) {
        if (auto* res = std::get_if<Reservation>(&*r))
          held.push_back(std::move(*res));
        else
          pending.push_back(std::get<Wait>(*r));
      }
    } else if (op == 1 && !held.empty()) {
      held.erase(held.begin() + static_cast<long>(rng() % held.size()));
    } else if (op == 2 && !pending.empty()) {
      std::size_t i = rng() % pending.size();
      if (auto c = b.claim(pending[i])) {
        if (c->has_value()) held.push_back(std::move(c->value()));
        pending.erase(pending.begin() + static_cast<long>(i));
      }
    } else if (op == 3 && !pending.empty() && rng() % 4 == 0) {
      std::size_t i = rng() % pending.size();
      EXPECT_TRUE(b.cancel(pending[i]));
      pending.erase(pending.begin() + static_cast<long>(i));
    } else if (op == 4) {
      auto r = b.try_reserve(1 + rng() % 200, p);
      if (r) held.push_back(std::move(r.value()));
    }
    std::uint64_t sum = 0;
    for (const auto& r : held) sum += r.bytes();
    auto s = b.stats();
    ASSERT_LE(sum, s.reserved_bytes);  // the rest is granted, not yet claimed
    ASSERT_LE(s.reserved_bytes, s.total_bytes);
    // Nobody waits needlessly: the first waiter of the highest non-empty
    // priority does not fit in what is free (else it would have been served).
    for (int q = kNumPriorities - 1; q >= 0; --q) {
      if (s.waiting[q] == 0) continue;
      ASSERT_GT(s.head_bytes[q], s.available_bytes);
      ASSERT_FALSE(b.try_reserve(1, static_cast<Priority>(q)));  // and nobody barges past it
      break;
    }
  }
  held.clear();
  for (Wait w : pending) b.cancel(w);
  EXPECT_EQ(b.reserved_bytes(), 0u);
  EXPECT_EQ(b.waiting(), 0u);
}

TEST(MemoryBudget, FreedCallbackFollowsEveryGiveBackAfterTheWaitersAreServed) {
  MemoryBudget b(BudgetConfig{100});
  int freed = 0;
  std::uint64_t available_when_freed = 0;
  b.set_freed_callback([&] {
    ++freed;
    available_when_freed = b.available_bytes();
  });
  auto r = b.try_reserve(60, Priority::kNormal);
  ASSERT_TRUE(r);
  auto queued = b.reserve(50, Priority::kNormal);
  ASSERT_TRUE(queued && std::holds_alternative<Wait>(queued.value()));
  EXPECT_EQ(freed, 0);
  r.value().shrink_to(55);  // 5 back: the waiter (50) still does not fit in 45
  EXPECT_EQ(freed, 1);
  EXPECT_EQ(available_when_freed, 45u);
  r.value().release();  // 55 back: the waiter is served first, then the callback
  EXPECT_EQ(freed, 2);
  EXPECT_EQ(available_when_freed, 50u);
  b.resize(200);  // growing frees too
  EXPECT_EQ(freed, 3);
  auto granted = b.claim(std::get<Wait>(queued.value()));
  ASSERT_TRUE(granted && *granted);
}

}  // namespace
}  // namespace cuzk::policy
