// The daemon's single event loop, its CPU worker pool, and the bridge between
// the two.
//
// Design:
// - ONE thread runs `asio::io_context::run()`. Every socket, timer, signal and
//   Cap'n Proto object lives on it; component state touched only from that
//   thread needs no locks. CPU work never runs there: `co_await run_on(pool, f)`
//   runs f on a bounded WorkerPool and resumes the coroutine on the loop.
// - Back end. Asio is compiled with ASIO_HAS_IO_URING (target cuzk_asio). With
//   the CMake option CUZK_ASIO_URING_ONLY it is also compiled with
//   ASIO_DISABLE_EPOLL, so sockets and timers go through io_uring too; without
//   it (the default) sockets/timers use epoll and only files use io_uring.
//   The choice is compile-time (asio's reactor is a template-free type chosen
//   by macros, and every TU must agree: ODR), so the "fallback" is a probe:
//   io_uring is refused by Docker >= 25's default seccomp, by
//   kernel.io_uring_disabled=2 and partly by gVisor. In the io_uring-only
//   build a refused io_uring kills the loop at the first timer with no
//   recovery, so EventLoop's constructor probes first and throws a clear
//   RuntimeError telling the operator to use the default (epoll) build; in the
//   default build a refused io_uring only disables io_uring file reads
//   (files_on_io_uring() == false: read parameters with pread on the pool).
// - Cap'n Proto runs ON this loop (rpc/kj_asio.hpp): a kj::EventPort posts KJ
//   turns into the io_context and capnp's byte stream is an asio socket. The
//   alternatives were worse: KJ cannot wait on asio's reactor fd (asio does
//   not expose it), so driving asio from KJ would mean busy polling; and a
//   second loop thread for KJ would put a cross-thread hop on every RPC and
//   make engine state shared between threads.
#pragma once

#include <asio.hpp>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

namespace cuzk::runtime {

class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class IoBackend : std::uint8_t { kEpoll, kIoUring };
std::string_view to_string(IoBackend b);

// The back end sockets and timers use in this build.
constexpr IoBackend compiled_socket_backend() {
#if defined(ASIO_DISABLE_EPOLL)
  return IoBackend::kIoUring;
#else
  return IoBackend::kEpoll;
#endif
}

struct IoUringProbe {
  bool available = false;
  std::string detail;  // "ok" or the refusing error (e.g. "Operation not permitted")
};
// Sets up and tears down a small ring; cheap (one syscall pair).
IoUringProbe probe_io_uring();

class EventLoop {
 public:
  // Throws RuntimeError in an io_uring-only build when io_uring is refused.
  EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  asio::io_context& io() { return io_; }
  asio::any_io_executor executor() { return io_.get_executor(); }

  // Runs the loop on the calling thread until it runs out of work or stop().
  void run();
  void stop() { io_.stop(); }
  // True on the thread currently inside run().
  bool in_loop_thread() const { return loop_thread_ == std::this_thread::get_id(); }

  IoBackend socket_backend() const { return compiled_socket_backend(); }
  bool files_on_io_uring() const { return probe_.available; }
  const IoUringProbe& probe() const { return probe_; }

 private:
  IoUringProbe probe_;
  asio::io_context io_{1};  // concurrency hint 1: one thread runs it, locking elided
  std::thread::id loop_thread_;
};

// A bounded pool of threads for CPU work started from the loop. Bounded means
// at most `threads` closures run at once; further ones wait in asio's queue.
class WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads) : threads_(threads == 0 ? 1 : threads), pool_(threads_) {}
  ~WorkerPool() { join(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  std::size_t threads() const { return threads_; }
  asio::thread_pool::executor_type executor() { return pool_.get_executor(); }
  // Waits for queued and running closures, then stops the threads.
  void join() { pool_.join(); }

 private:
  std::size_t threads_;
  asio::thread_pool pool_;
};

namespace detail {
template <class F>
using RunOnResult = std::invoke_result_t<F&>;
template <class R>
using RunOnSlot = std::conditional_t<std::is_void_v<R>, std::monostate, R>;
}  // namespace detail

// Runs f() on `pool` and resumes the calling coroutine on its own executor
// (the loop) with f's result, or rethrows f's exception there.
//
// Not cancellable in flight, on purpose: f may reference the caller's frame,
// so the caller must not resume before f returns. A cancellation requested
// meanwhile takes effect at the caller's next co_await.
template <class F>
asio::awaitable<detail::RunOnResult<F>> run_on(WorkerPool& pool, F f) {
  using R = detail::RunOnResult<F>;
  std::optional<detail::RunOnSlot<R>> result;
  std::exception_ptr error;
  auto loop = co_await asio::this_coro::executor;
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [&](auto handler) {
        // The work guard keeps the loop alive while f runs elsewhere.
        auto guard = asio::make_work_guard(loop);
        asio::post(pool.executor(), [&, handler = std::move(handler), guard = std::move(guard)]() mutable {
          try {
            if constexpr (std::is_void_v<R>) {
              f();
              result.emplace();
            } else {
              result.emplace(f());
            }
          } catch (...) {
            error = std::current_exception();
          }
          auto resume_on = asio::get_associated_executor(handler, loop);
          asio::post(resume_on, std::move(handler));
          guard.reset();
        });
      },
      asio::use_awaitable);
  if (error) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<R>) co_return std::move(*result);
}

}  // namespace cuzk::runtime
