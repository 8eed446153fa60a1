// A point in a CUDA stream's work that the host can wait for or be told
// about, without CUDA types (host code compiled by g++ includes this).
//
// A Fence is armed on a stream (detail::enqueue_fence in gpu/cuda_rt.hpp) with
// cudaLaunchHostFunc: when the stream gets there, CUDA's callback thread marks
// it passed, wakes wait()ers and runs the on_done() functions. So a service can
// resume a coroutine on its event loop when the device is done (on_done posts
// to the loop) and no thread blocks on the device; wait() is for tests and the
// blocking GpuProver::prove().
//
// Copies share one state (the last copy and the armed callback own it).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>

namespace cuzk::gpu {

// Fences armed on one prover's streams that the device has not passed yet
// (status: "CUDA events in flight"). Thread-safe.
class FenceCounter {
 public:
  std::uint32_t in_flight() const { return in_flight_.load(std::memory_order_relaxed); }
  void armed() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  void passed() { in_flight_.fetch_sub(1, std::memory_order_relaxed); }

 private:
  std::atomic<std::uint32_t> in_flight_{0};
};

class Fence {
 public:
  // A fence with nothing to wait for: ready() at once.
  Fence() = default;

  // Whether the stream has passed the fence. Thread-safe, never blocks.
  bool ready() const;
  // Blocks until ready(). Never call it from a thread that the stream's work
  // waits for (the event loop, the CUDA callback thread).
  void wait() const;
  // fn() runs exactly once: on CUDA's callback thread when the stream passes
  // the fence, or at once on the calling thread when it already has. It runs
  // while the stream waits for it, so it must be short, must not call CUDA
  // (CUDA forbids it there) and must not throw (the process would terminate);
  // posting to an event loop is the intended use.
  void on_done(std::function<void()> fn) const;

  struct State;  // defined in gpu/fence.cpp
  explicit Fence(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cuzk::gpu
