// The daemon's ring of recent job events (rpc/recent_events.hpp).
#include "rpc/recent_events.hpp"

#include <gtest/gtest.h>

namespace cuzk::rpc {
namespace {

engine::JobEvent event(std::uint64_t id) {
  engine::JobEvent e;
  e.id = id;
  e.stage = "done";
  return e;
}

TEST(RecentEvents, KeepsTheNewestOldestFirstAndCountsAll) {
  RecentEvents ring(3);
  EXPECT_TRUE(ring.events().empty());
  for (std::uint64_t id = 1; id <= 5; ++id) ring.push(event(id), 1000 + id);
  ASSERT_EQ(ring.events().size(), 3u);
  EXPECT_EQ(ring.events().front().event.id, 3u);
  EXPECT_EQ(ring.events().back().event.id, 5u);
  EXPECT_EQ(ring.events().back().unix_ms, 1005u);
  EXPECT_EQ(ring.total(), 5u);
}

TEST(RecentEvents, ZeroCapacityKeepsNothingButCounts) {
  RecentEvents ring(0);
  ring.push(event(1), 1);
  EXPECT_TRUE(ring.events().empty());
  EXPECT_EQ(ring.total(), 1u);
}

}  // namespace
}  // namespace cuzk::rpc
