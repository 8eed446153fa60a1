#include "util/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace cuzk {
namespace {

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  ThreadPool pool(4);
  for (std::size_t n : {1u, 3u, 4u, 17u, 1000u}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
    for (auto& h : hits) EXPECT_EQ(h.load(), 1);
  }
}

TEST(ThreadPool, ManyBatchesBackToBack) {
  ThreadPool pool(3);
  std::atomic<long> sum{0};
  for (int r = 0; r < 2000; ++r) pool.run_tasks(5, [&](std::size_t i) { sum += long(i); });
  EXPECT_EQ(sum.load(), 2000L * 10);
}

TEST(ThreadPool, RethrowsTaskException) {
  ThreadPool pool(2);
  EXPECT_THROW(pool.run_tasks(8,
                              [](std::size_t i) {
                                if (i == 5) throw std::runtime_error("boom");
                              }),
               std::runtime_error);
  // The pool stays usable afterwards.
  std::atomic<int> n{0};
  pool.run_tasks(8, [&](std::size_t) { ++n; });
  EXPECT_EQ(n.load(), 8);
}

}  // namespace
}  // namespace cuzk
