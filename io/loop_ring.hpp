// LoopRing: the daemon's file reads as coroutines on its event loop.
//
// One io_uring ring whose completions signal an eventfd
// (io_uring_register_eventfd); the loop watches that eventfd with an asio
// stream_descriptor, so a read is submitted by a coroutine on the loop and
// the coroutine resumes when its CQE arrives - no thread sleeps in the ring.
// The daemon's parameter and R1CS files are read through it (make_loop_source
// below): the loader thread that decodes the bytes only ever waits for
// completed chunks, never submits to or blocks in the kernel itself.
//
// Why the project's ring and not asio::random_access_file: asio 1.22 makes one
// io_uring_enter per read and sets up a 16384-entry ring; this ring is sized
// to the reads that may be in flight and has no per-read allocation beyond
// the coroutine frame.
//
// Threading: construction, read_op, close and the pump run on the loop
// thread. spawn_read may be called from any thread (it posts to the loop).
// Fault injection (set_fault) is a test seam that replaces chosen reads'
// results with an errno, exercising every consumer's error path with the
// real ring in between.
#pragma once

#include <asio.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/task_set.hpp"

struct io_uring;

namespace cuzk::io {

class LoopRing {
 public:
  // Fault hook: called on the loop for each read op with (fd, offset, length);
  // a negative errno fails that op without reading, 0 reads normally.
  using FaultFn = std::function<int(int fd, std::uint64_t offset_bytes, std::size_t length_bytes)>;

  // Sets up the ring (`entries` reads in flight at most; more wait in FIFO
  // order). Throws IoError(kUnsupported) when io_uring or the eventfd
  // registration is refused.
  explicit LoopRing(asio::any_io_executor loop, unsigned entries = 128);
  // Precondition: never started, or closed (close() has completed).
  ~LoopRing();

  // Starts the pump coroutine that reaps completions: once, on the loop
  // thread or before the loop runs. Reads complete only once it runs.
  void start();
  LoopRing(const LoopRing&) = delete;
  LoopRing& operator=(const LoopRing&) = delete;

  asio::any_io_executor executor() const { return loop_; }

  // One read op (no resumption of short reads): the byte count, or -errno.
  // Not cancellable: the kernel writes into dst until the CQE arrives. Loop
  // thread only.
  asio::awaitable<long> read_op(int fd, std::uint64_t offset_bytes, std::byte* dst, std::size_t length_bytes);

  // Starts `task` in the ring's task set on the loop; from any thread.
  // Returns false (and drops the task) if the ring is closed; the task is
  // then never run, so a caller waiting for its effect must not wait.
  bool spawn(std::function<asio::awaitable<void>()> make_task);

  // No new reads; completes when every read task has finished and the pump
  // has stopped. Loop thread only.
  asio::awaitable<void> close();

  void set_fault(FaultFn fault) { fault_ = std::move(fault); }
  // The loop thread's id once the pump ran (readers that would block on the
  // loop itself check it).
  std::thread::id loop_thread() const { return loop_thread_id_.load(); }

  // Counters for the status view and tests (loop thread).
  std::uint64_t reads_submitted() const { return reads_submitted_; }
  std::size_t in_flight() const { return in_flight_; }

 private:
  struct Op;
  void start(Op* op);
  void submit_queued();
  asio::awaitable<void> pump();
  void reap();

  asio::any_io_executor loop_;
  std::unique_ptr<io_uring> ring_;
  int event_fd_ = -1;
  asio::posix::stream_descriptor event_desc_;
  unsigned entries_;
  std::size_t in_flight_ = 0;
  std::deque<Op*> waiting_;  // ops beyond `entries`, in submission order
  std::uint64_t reads_submitted_ = 0;
  FaultFn fault_;
  std::atomic<std::thread::id> loop_thread_id_{};
  std::mutex spawn_mu_;  // guards closed_ against spawn() from other threads
  bool closed_ = false;
  runtime::TaskSet pump_task_;
  runtime::TaskSet reads_;
};

}  // namespace cuzk::io
