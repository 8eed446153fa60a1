#include "io/loop_ring.hpp"

#include <liburing.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

#include "io/file_source.hpp"

namespace cuzk::io {

struct LoopRing::Op {
  int fd = -1;
  std::uint64_t offset_bytes = 0;
  std::byte* dst = nullptr;
  std::size_t length_bytes = 0;
  std::function<void(long)> complete;  // resumes the awaiting coroutine (posted)
};

namespace {

std::unique_ptr<io_uring> make_ring(unsigned entries) {
  auto ring = std::make_unique<io_uring>();
  int r = io_uring_queue_init(entries, ring.get(), 0);
  if (r < 0) throw IoError(IoErrorKind::kUnsupported, -r, std::string("io_uring_queue_init: ") + std::strerror(-r));
  return ring;
}

int make_event_fd(io_uring* ring) {
  int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    io_uring_queue_exit(ring);
    throw IoError(IoErrorKind::kUnsupported, err, std::string("eventfd: ") + std::strerror(err));
  }
  int r = io_uring_register_eventfd(ring, fd);
  if (r < 0) {
    ::close(fd);
    io_uring_queue_exit(ring);
    throw IoError(IoErrorKind::kUnsupported, -r, std::string("io_uring_register_eventfd: ") + std::strerror(-r));
  }
  return fd;
}

}  // namespace

LoopRing::LoopRing(asio::any_io_executor loop, unsigned entries)
    : loop_(loop),
      ring_(make_ring(entries)),
      event_fd_(make_event_fd(ring_.get())),
      event_desc_(loop, event_fd_),
      entries_(entries),
      pump_task_(loop),
      reads_(loop) {}

void LoopRing::start() { pump_task_.spawn(pump()); }

LoopRing::~LoopRing() {
  if (in_flight_ != 0 || !waiting_.empty()) std::abort();  // destroyed with reads in flight: buffers unsafe
  event_desc_.close();                                     // also closes event_fd_
  io_uring_queue_exit(ring_.get());
}

asio::awaitable<long> LoopRing::read_op(int fd, std::uint64_t offset_bytes, std::byte* dst, std::size_t length_bytes) {
  Op op{fd, offset_bytes, dst, length_bytes, {}};
  long result = co_await asio::async_initiate<decltype(asio::use_awaitable), void(long)>(
      [this, &op](auto handler) {
        auto h = std::make_shared<decltype(handler)>(std::move(handler));
        op.complete = [h](long r) {
          auto ex = asio::get_associated_executor(*h);
          asio::post(ex, [h, r]() mutable { std::move (*h)(r); });
        };
        start(&op);
      },
      asio::use_awaitable);
  co_return result;
}

void LoopRing::start(Op* op) {
  if (fault_) {
    if (int r = fault_(op->fd, op->offset_bytes, op->length_bytes); r < 0) {
      op->complete(r);
      return;
    }
  }
  if (in_flight_ >= entries_) {
    waiting_.push_back(op);
    return;
  }
  io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
  if (!sqe) std::abort();  // in_flight_ < entries_ and every SQE is submitted at once: cannot be full
  io_uring_prep_read(sqe, op->fd, op->dst, unsigned(op->length_bytes), op->offset_bytes);
  io_uring_sqe_set_data(sqe, op);
  for (;;) {
    int r = io_uring_submit(ring_.get());
    if (r >= 0) break;
    if (r != -EINTR && r != -EAGAIN && r != -EBUSY) std::abort();  // ring broken
  }
  ++in_flight_;
  ++reads_submitted_;
}

void LoopRing::reap() {
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(ring_.get(), &cqe) == 0) {
    Op* op = static_cast<Op*>(io_uring_cqe_get_data(cqe));
    long res = cqe->res;
    io_uring_cqe_seen(ring_.get(), cqe);
    --in_flight_;
    op->complete(res);
  }
  while (!waiting_.empty() && in_flight_ < entries_) {
    Op* op = waiting_.front();
    waiting_.pop_front();
    start(op);
  }
}

asio::awaitable<void> LoopRing::pump() {
  loop_thread_id_ = std::this_thread::get_id();
  for (;;) {
    std::error_code ec;
    co_await event_desc_.async_wait(asio::posix::descriptor_base::wait_read,
                                    asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) {
      if (closed_ && in_flight_ == 0) co_return;
      continue;
    }
    if (ec) std::abort();  // an eventfd wait cannot fail otherwise
    std::uint64_t count = 0;
    while (::read(event_fd_, &count, sizeof count) < 0 && errno == EINTR) {
    }
    reap();
  }
}

bool LoopRing::spawn(std::function<asio::awaitable<void>()> make_task) {
  std::lock_guard lock(spawn_mu_);
  if (closed_) return false;
  asio::post(loop_, [this, make_task = std::move(make_task)] {
    if (!reads_.spawn(make_task())) std::abort();  // close() flushes posted spawns before closing the set
  });
  return true;
}

asio::awaitable<void> LoopRing::close() {
  {
    std::lock_guard lock(spawn_mu_);
    closed_ = true;
  }
  // Spawns posted before closed_ was set run before this continuation (one
  // loop thread, FIFO handlers).
  co_await asio::post(loop_, asio::use_awaitable);
  reads_.close();
  co_await reads_.join();
  event_desc_.cancel();
  pump_task_.close();
  co_await pump_task_.join();
}

}  // namespace cuzk::io
