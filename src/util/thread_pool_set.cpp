#include "util/thread_pool_set.hpp"

#include <cstdlib>

namespace cuzk {

ThreadPoolSet::ThreadPoolSet(std::size_t pools, std::size_t threads_each) : threads_each_(threads_each) {
  if (pools == 0 || threads_each == 0) std::abort();  // a set that can never lend is a wiring bug
  for (std::size_t i = 0; i < pools; ++i) {
    pools_.push_back(std::make_unique<ThreadPool>(threads_each));
    free_.push_back(pools - 1 - i);  // lend pool 0 first
  }
}

ThreadPoolSet::Lease ThreadPoolSet::acquire() {
  std::unique_lock lock(mu_);
  freed_.wait(lock, [this] { return !free_.empty(); });
  const std::size_t i = free_.back();
  free_.pop_back();
  return Lease(*this, i);
}

void ThreadPoolSet::give_back(std::size_t index) {
  {
    std::lock_guard lock(mu_);
    free_.push_back(index);
  }
  freed_.notify_one();
}

}  // namespace cuzk
