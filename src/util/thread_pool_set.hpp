// A fixed set of ThreadPools lent one caller at a time: the PoRep synthesis
// lanes each borrow a small pool to synthesize one partition's challenges in
// parallel. One shared pool would serialize the lanes (ThreadPool runs one
// batch at a time) and a partition's 18 challenges leave most threads of a
// big pool idle; measured on the 2 x H200 host (32 threads, one shared pool,
// 2 lanes): 3.6-4.6 s per 32 GiB partition, one partition at a time.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "util/thread_pool.hpp"

namespace cuzk {

class ThreadPoolSet {
 public:
  // `pools` pools of `threads_each` threads (each counting the borrower).
  ThreadPoolSet(std::size_t pools, std::size_t threads_each);
  ThreadPoolSet(const ThreadPoolSet&) = delete;
  ThreadPoolSet& operator=(const ThreadPoolSet&) = delete;

  // A borrowed pool, returned when the lease dies.
  class Lease {
   public:
    Lease(ThreadPoolSet& set, std::size_t index) : set_(&set), index_(index) {}
    Lease(Lease&& o) noexcept : set_(o.set_), index_(o.index_) { o.set_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (set_ != nullptr) set_->give_back(index_);
    }
    ThreadPool& pool() const { return *set_->pools_[index_]; }

   private:
    ThreadPoolSet* set_;
    std::size_t index_;
  };

  // Blocks (the calling worker thread, never the loop) until a pool is free;
  // callers that never outnumber the pools never wait.
  Lease acquire();
  std::size_t size() const { return pools_.size(); }
  std::size_t threads_each() const { return threads_each_; }

 private:
  void give_back(std::size_t index);

  std::size_t threads_each_;
  std::vector<std::unique_ptr<ThreadPool>> pools_;
  std::mutex mu_;
  std::condition_variable freed_;
  std::vector<std::size_t> free_;  // indices of idle pools; guarded by mu_
};

}  // namespace cuzk
