// An event loop on its own thread with a LoopRing, for tests that read files
// through the loop from the test thread (as the daemon's loaders do from its
// worker pools). Skips loudly where io_uring is refused.
#pragma once

#include <asio.hpp>
#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <thread>

#include "io/file_source.hpp"
#include "io/loop_ring.hpp"

namespace cuzk::io::testing {

class LoopThread {
 public:
  // ring_entries: reads in flight in the ring; fault: LoopRing::set_fault.
  explicit LoopThread(unsigned ring_entries = 64, LoopRing::FaultFn fault = {}) {
    ring_ = std::make_unique<LoopRing>(io_.get_executor(), ring_entries);
    ring_->set_fault(std::move(fault));
    ring_->start();
    thread_ = std::thread([this] { io_.run(); });
  }
  ~LoopThread() {
    close();
    guard_.reset();
    thread_.join();
  }
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  LoopRing& ring() { return *ring_; }
  FileSourceOptions source(std::size_t queue_depth = 16, DirectIo direct = DirectIo::kAuto) {
    FileSourceOptions o;
    o.loop = ring_.get();
    o.queue_depth = queue_depth;
    o.direct = direct;
    return o;
  }
  // Runs f() on the loop thread and returns its result.
  template <class F>
  auto on_loop(F f) {
    return asio::post(io_, asio::use_future(std::move(f))).get();
  }
  void close() {
    if (closed_) return;
    closed_ = true;
    asio::co_spawn(io_, ring_->close(), asio::use_future).get();
  }

 private:
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> guard_{io_.get_executor()};
  std::unique_ptr<LoopRing> ring_;
  std::thread thread_;
  bool closed_ = false;
};

// True (after printing why) when io_uring cannot be used by this process.
inline bool io_uring_refused() {
  IoUringProbe probe = probe_io_uring();
  if (!probe.usable) std::cout << "[ SKIPPED  ] io_uring NOT usable here (" << probe.detail << ")\n";
  return !probe.usable;
}

}  // namespace cuzk::io::testing
