#include "util/thread_pool_set.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace cuzk {
namespace {

TEST(ThreadPoolSet, LendsDistinctPoolsAndTheirThreadsRun) {
  ThreadPoolSet set(2, 3);
  EXPECT_EQ(set.size(), 2u);
  ThreadPoolSet::Lease a = set.acquire();
  ThreadPoolSet::Lease b = set.acquire();
  EXPECT_NE(&a.pool(), &b.pool());
  EXPECT_EQ(a.pool().size(), 3u);
  std::atomic<int> sum{0};
  a.pool().run_tasks(10, [&](std::size_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum.load(), 45);
}

TEST(ThreadPoolSet, AThirdBorrowerWaitsUntilAPoolIsReturned) {
  ThreadPoolSet set(2, 1);
  std::optional<ThreadPoolSet::Lease> a(set.acquire());
  ThreadPoolSet::Lease b = set.acquire();
  const ThreadPool* lent_a = &a->pool();
  std::atomic<bool> got{false};
  const ThreadPool* third = nullptr;
  std::thread t([&] {
    ThreadPoolSet::Lease c = set.acquire();
    third = &c.pool();
    got = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(got.load());  // both pools are lent
  a.reset();
  t.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(third, lent_a);  // it got the pool just returned
}

TEST(ThreadPoolSet, ConcurrentBorrowersNeverShareAPool) {
  ThreadPoolSet set(3, 2);
  std::mutex mu;
  std::set<const ThreadPool*> in_use;
  std::atomic<bool> shared{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        ThreadPoolSet::Lease l = set.acquire();
        {
          std::lock_guard lock(mu);
          if (!in_use.insert(&l.pool()).second) shared = true;
        }
        std::this_thread::yield();
        std::lock_guard lock(mu);
        in_use.erase(&l.pool());
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(shared.load());
}

}  // namespace
}  // namespace cuzk
