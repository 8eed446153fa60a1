#include "runtime/event_loop.hpp"

#include <liburing.h>

#include <cstring>

namespace cuzk::runtime {

std::string_view to_string(IoBackend b) {
  switch (b) {
    case IoBackend::kEpoll:
      return "epoll";
    case IoBackend::kIoUring:
      return "io_uring";
  }
  return "?";
}

IoUringProbe probe_io_uring() {
  io_uring ring;
  // 8 entries: the smallest useful ring; asio's own ring is 16384 entries, but
  // the refusal modes (seccomp, sysctl, gVisor) do not depend on the size.
  int rc = io_uring_queue_init(8, &ring, 0);
  if (rc < 0) return {false, std::strerror(-rc)};
  io_uring_queue_exit(&ring);
  return {true, "ok"};
}

EventLoop::EventLoop() : probe_(probe_io_uring()) {
  if (compiled_socket_backend() == IoBackend::kIoUring && !probe_.available) {
    throw RuntimeError("io_uring is refused (" + probe_.detail +
                       ") and this build uses io_uring for sockets (CUZK_ASIO_URING_ONLY); "
                       "use the default build, which falls back to epoll");
  }
}

void EventLoop::run() {
  loop_thread_ = std::this_thread::get_id();
  io_.run();
  loop_thread_ = {};
}

}  // namespace cuzk::runtime
