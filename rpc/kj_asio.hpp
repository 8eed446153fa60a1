// Cap'n Proto (KJ 0.9.2) on the asio loop: the daemon has ONE event loop,
// asio's io_context; KJ becomes a cooperative task queue inside it.
//
// - AsioEventPort: a kj::EventPort whose "run KJ turns" requests are posted
//   into the io_context. KJ calls setRunnable(true) when its queue becomes
//   non-empty; we post one slice that runs up to 256 turns and re-posts itself
//   while KJ stays runnable. wake() (other threads, kj::Executor) posts too.
//   wait()/poll() are only reached by a top-level promise.wait(ws), which the
//   daemon never calls (it would nest io.run_one() inside io.run()).
// - AsioStream: kj::AsyncIoStream over an asio stream socket, READINESS based
//   (async_wait + non-blocking read_some/write_some) like KJ's own Unix
//   streams. A completion-based read on io_uring could still write into a
//   buffer KJ freed when it cancelled the read; readiness waits never touch
//   KJ's buffers, and their handlers hold only KJ's weak fulfiller, so a
//   cancelled promise or a destroyed stream makes them no-ops.
// - to_kj(): runs an asio coroutine in a TaskSet and returns a kj::Promise
//   for its result (capnp methods call engine coroutines this way).
//
// Why not the alternatives: KJ cannot wait on asio's reactor fd (asio does not
// expose it), so making KJ the loop means busy polling; a second loop thread
// means a thread hop on every call and engine state shared across threads.
//
// Thread rule: KJ objects belong to the loop thread (the WaitScope makes the
// EventLoop current there). Pool threads must hop back (run_on) first.
#pragma once

#include <asio.hpp>
#include <kj/async-io.h>
#include <kj/async.h>
#include <kj/debug.h>

#include <atomic>
#include <exception>
#include <vector>

#include "runtime/task_set.hpp"

namespace cuzk::rpc {

class AsioEventPort final : public kj::EventPort {
 public:
  explicit AsioEventPort(asio::io_context& io) : io_(io) {}
  // Call once, right after constructing the kj::EventLoop and WaitScope.
  void attach(kj::EventLoop& loop, kj::WaitScope& ws) {
    loop_ = &loop;
    ws_ = &ws;
  }

  bool wait() override;
  bool poll() override { return woken_.exchange(false); }  // never io.poll(): would nest handlers
  void setRunnable(bool runnable) override {
    if (runnable) schedule();
  }
  void wake() const override;

 private:
  void schedule();
  void run_slice();

  asio::io_context& io_;
  kj::EventLoop* loop_ = nullptr;
  kj::WaitScope* ws_ = nullptr;
  bool scheduled_ = false;
  bool in_wait_ = false;
  mutable std::atomic<bool> woken_{false};
};

// The three objects KJ needs on the loop thread, in the required order.
struct KjOnAsio {
  explicit KjOnAsio(asio::io_context& io) : port(io), loop(port), ws(loop) { port.attach(loop, ws); }
  AsioEventPort port;
  kj::EventLoop loop;
  kj::WaitScope ws;
};

// The socket is protocol-generic (Unix or TCP): the server accepts on both
// and the readiness logic does not depend on the family.
class AsioStream final : public kj::AsyncIoStream {
 public:
  using Socket = asio::generic::stream_protocol::socket;
  explicit AsioStream(Socket socket);
  explicit AsioStream(asio::local::stream_protocol::socket socket);
  explicit AsioStream(asio::ip::tcp::socket socket);  // sets TCP_NODELAY (RPC: many small messages)
  ~AsioStream() noexcept(false);

  kj::Promise<size_t> tryRead(void* buffer, size_t min_bytes, size_t max_bytes) override;
  kj::Promise<void> write(const void* buffer, size_t size) override;
  kj::Promise<void> write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
  kj::Promise<void> whenWriteDisconnected() override { return kj::NEVER_DONE; }  // unused by capnp 0.9.2 RPC
  void shutdownWrite() override;
  void abortRead() override;

 private:
  kj::Promise<void> ready(Socket::wait_type what);
  kj::Promise<size_t> read_loop(kj::byte* buffer, size_t min_bytes, size_t max_bytes, size_t already);
  kj::Promise<void> write_loop(std::vector<asio::const_buffer> pieces);

  Socket socket_;
};

namespace detail {
template <class T>
asio::awaitable<void> fulfil_from(asio::awaitable<T> work, kj::Own<kj::PromiseFulfiller<kj::Own<T>>> fulfiller) {
  try {
    T value = co_await std::move(work);
    fulfiller->fulfill(kj::heap<T>(std::move(value)));
  } catch (const std::system_error& e) {
    fulfiller->reject(KJ_EXCEPTION(DISCONNECTED, "server shutting down", e.what()));
    if (e.code() == asio::error::operation_aborted) throw;  // the task set is cancelling us
  } catch (const std::exception& e) {
    fulfiller->reject(KJ_EXCEPTION(FAILED, e.what()));
  }
}
}  // namespace detail

// Starts `work` in `tasks` and returns a promise for its result. If the set is
// closed the promise is rejected (DISCONNECTED) at once. The result travels
// boxed (kj::Own<T>): KJ's ExceptionOr<T> around a std::variant trips gcc 12's
// -Wmaybe-uninitialized (a false positive), a pointer does not.
template <class T>
kj::Promise<kj::Own<T>> to_kj(runtime::TaskSet& tasks, asio::awaitable<T> work) {
  auto paf = kj::newPromiseAndFulfiller<kj::Own<T>>();
  if (!tasks.spawn(detail::fulfil_from<T>(std::move(work), kj::mv(paf.fulfiller)))) {
    return KJ_EXCEPTION(DISCONNECTED, "server shutting down");
  }
  return kj::mv(paf.promise);
}

}  // namespace cuzk::rpc
