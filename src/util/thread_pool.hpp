// A fixed-size pool of worker threads for data-parallel CPU work (MSM, NTT,
// mat-vec, deserialization). Owned by whoever creates it (main() in the
// daemon, the test fixture in tests): there is no global pool.
//
// parallel_for splits [0, n) into contiguous chunks, runs them on the workers
// and on the calling thread, and returns when all are done. Exceptions thrown
// by the body are captured and rethrown in the caller (first one wins).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace cuzk {

class ThreadPool {
 public:
  // threads == 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(std::size_t threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Number of threads that execute work, counting the caller of parallel_for.
  std::size_t size() const { return workers_.size() + 1; }

  // Runs body(begin, end) over chunks covering [0, n). `chunks` == 0 picks
  // one chunk per thread. Blocks until every chunk has run.
  void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& body, std::size_t chunks = 0);

  // Runs body(i) for i in [0, tasks): one call per task index.
  void run_tasks(std::size_t tasks, const std::function<void(std::size_t)>& body);

 private:
  struct Batch;
  void worker_loop();

  std::mutex mu_;
  std::condition_variable cv_;
  Batch* batch_ = nullptr;  // guarded by mu_
  std::size_t generation_ = 0;
  bool stopping_ = false;
  std::mutex submit_mu_;  // one batch at a time
  std::vector<std::thread> workers_;
};

}  // namespace cuzk
