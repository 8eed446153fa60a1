#include "util/thread_pool.hpp"

#include <algorithm>
#include <atomic>

namespace cuzk {

struct ThreadPool::Batch {
  const std::function<void(std::size_t)>* body;
  std::size_t tasks;
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> active{0};  // workers inside drain(); the caller waits for 0
  std::mutex err_mu;
  std::exception_ptr error;
  std::condition_variable finished;

  // Claims and runs tasks until none remain.
  void drain() {
    for (;;) {
      std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= tasks) return;
      try {
        (*body)(i);
      } catch (...) {
        std::lock_guard lk(err_mu);
        if (!error) error = std::current_exception();
      }
      done.fetch_add(1, std::memory_order_acq_rel);
    }
  }
};

ThreadPool::ThreadPool(std::size_t threads) {
  if (threads == 0) threads = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  workers_.reserve(threads - 1);
  for (std::size_t i = 0; i + 1 < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::worker_loop() {
  std::size_t seen = 0;
  for (;;) {
    Batch* b;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return stopping_ || (batch_ != nullptr && generation_ != seen); });
      if (stopping_) return;
      seen = generation_;
      b = batch_;
      b->active.fetch_add(1, std::memory_order_acq_rel);
    }
    b->drain();
    b->active.fetch_sub(1, std::memory_order_acq_rel);
  }
}

void ThreadPool::run_tasks(std::size_t tasks, const std::function<void(std::size_t)>& body) {
  if (tasks == 0) return;
  if (tasks == 1 || workers_.empty()) {
    for (std::size_t i = 0; i < tasks; ++i) body(i);
    return;
  }
  std::lock_guard submit(submit_mu_);
  Batch b;
  b.body = &body;
  b.tasks = tasks;
  {
    std::lock_guard lk(mu_);
    batch_ = &b;
    ++generation_;
  }
  cv_.notify_all();
  b.drain();
  // Unpublish first so no further worker joins, then wait for those that did:
  // they touch `b`, which lives on this stack frame.
  {
    std::lock_guard lk(mu_);
    batch_ = nullptr;
  }
  while (b.done.load(std::memory_order_acquire) < tasks || b.active.load(std::memory_order_acquire) != 0) {
    std::this_thread::yield();
  }
  if (b.error) std::rethrow_exception(b.error);
}

void ThreadPool::parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body,
                              std::size_t chunks) {
  if (n == 0) return;
  if (chunks == 0) chunks = size();
  chunks = std::min(chunks, n);
  std::size_t per = n / chunks, extra = n % chunks;
  run_tasks(chunks, [&](std::size_t c) {
    std::size_t begin = c * per + std::min(c, extra);
    std::size_t end = begin + per + (c < extra ? 1 : 0);
    body(begin, end);
  });
}

}  // namespace cuzk
