#include "io/uring.hpp"

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "io/backends.hpp"
#include "io/read_op.hpp"

namespace cuzk::io {

Ring::Ring(unsigned entries) {
  int r = io_uring_queue_init(entries, &ring_, 0);
  if (r < 0) {
    throw IoError(IoErrorKind::kUnsupported, -r, std::string("io_uring_queue_init: ") + std::strerror(-r));
  }
}

Ring::~Ring() { io_uring_queue_exit(&ring_); }

bool Ring::supports_read() {
  io_uring_probe* p = io_uring_get_probe_ring(&ring_);
  if (!p) return false;
  bool ok = io_uring_opcode_supported(p, IORING_OP_READ) != 0;
  io_uring_free_probe(p);
  return ok;
}

IoUringProbe probe_io_uring() {
  IoUringProbe out;
  try {
    Ring ring(4);
    if (!ring.supports_read()) {
      out.error = EOPNOTSUPP;
      out.detail = "io_uring works but IORING_OP_READ is not supported (kernel < 5.6)";
      return out;
    }
    out.usable = true;
    out.detail = "io_uring usable";
  } catch (const IoError& e) {
    out.error = e.errno_value();
    out.detail = e.what();
  }
  return out;
}

namespace detail {
namespace {

// One ring; a fixed table of queue_depth slots, each holding one user request
// (and its single op in flight). user_data of an SQE is the slot index.
class UringSource final : public FileSource {
 public:
  UringSource(UniqueFd fd, bool direct, std::uint64_t size_bytes, const FileSourceOptions& opts)
      : FileSource(direct, size_bytes, opts.queue_depth),
        fd_(std::move(fd)),
        ring_(unsigned(opts.queue_depth)),
        max_op_bytes_(effective_max_op(opts.max_op_bytes, direct)),
        slots_(opts.queue_depth) {
    if (!ring_.supports_read()) {
      throw IoError(IoErrorKind::kUnsupported, EOPNOTSUPP, "io_uring lacks IORING_OP_READ");
    }
    free_.reserve(slots_.size());
    for (std::size_t i = slots_.size(); i-- > 0;) free_.push_back(i);
  }

  ~UringSource() override {
    // The kernel writes into caller buffers until each op completes: wait for
    // all of them before the buffers can be released.
    unsubmitted_ = submit_pending();
    while (ops_in_flight_ > 0) {
      io_uring_cqe* cqe = nullptr;
      int r = io_uring_wait_cqe(ring_.get(), &cqe);
      if (r == -EINTR) continue;
      if (r < 0) std::abort();  // cannot happen with ops in flight; buffers would be unsafe
      io_uring_cqe_seen(ring_.get(), cqe);
      --ops_in_flight_;
    }
  }

  Backend backend() const override { return Backend::kIoUring; }
  std::size_t in_flight() const override { return slots_.size() - free_.size() + ready_.size(); }

  void submit(const ReadRequest& req) override {
    if (in_flight() >= queue_depth() || free_.empty()) std::abort();  // caller exceeded queue_depth
    if (direct() && (req.offset_bytes % kDirectAlignmentBytes != 0 || req.length_bytes % kDirectAlignmentBytes != 0 ||
                     reinterpret_cast<std::uintptr_t>(req.dst) % kDirectAlignmentBytes != 0)) {
      std::abort();  // O_DIRECT needs aligned offset, length and buffer
    }
    std::size_t slot = free_.back();
    free_.pop_back();
    slots_[slot] = PendingRead{req, 0};
    if (req.length_bytes == 0) {
      ready_.push_back(ReadCompletion{req.tag, 0, 0});
      free_.push_back(slot);
      return;
    }
    queue_op(slot);
  }

  std::size_t wait(std::size_t min_completions, const CompletionFn& on_done) override {
    std::size_t delivered = 0;
    std::size_t target = std::min(min_completions, in_flight());
    auto deliver_ready = [&] {
      while (!ready_.empty()) {
        ReadCompletion c = ready_.back();
        ready_.pop_back();
        ++delivered;
        on_done(c);
      }
    };
    deliver_ready();
    for (;;) {
      // Reap everything already completed, then block only if still short.
      io_uring_cqe* cqe = nullptr;
      while (io_uring_peek_cqe(ring_.get(), &cqe) == 0) {
        handle(cqe, on_done, delivered);
        deliver_ready();
      }
      if (delivered >= target) break;
      int r;
      if (unsubmitted_ > 0) {
        r = io_uring_submit_and_wait(ring_.get(), 1);
        if (r >= 0) unsubmitted_ = 0;
      } else {
        r = io_uring_wait_cqe(ring_.get(), &cqe);
      }
      if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) std::abort();  // ring broken
    }
    if (unsubmitted_ > 0) unsubmitted_ = submit_pending();
    return delivered;
  }

 private:
  void queue_op(std::size_t slot) {
    io_uring_sqe* sqe = io_uring_get_sqe(ring_.get());
    if (!sqe) {  // SQ full of unsubmitted entries: flush and retry once
      submit_pending();
      sqe = io_uring_get_sqe(ring_.get());
      if (!sqe) std::abort();  // more ops than slots: a bookkeeping bug
    }
    const PendingRead& p = slots_[slot];
    io_uring_prep_read(sqe, fd_.get(), p.op_dst(), unsigned(p.op_length(max_op_bytes_)), p.op_offset());
    io_uring_sqe_set_data64(sqe, slot);
    ++unsubmitted_;
    ++ops_in_flight_;
  }

  std::size_t submit_pending() {
    while (unsubmitted_ > 0) {
      int r = io_uring_submit(ring_.get());
      if (r == -EINTR || r == -EAGAIN || r == -EBUSY) continue;
      if (r < 0) std::abort();
      unsubmitted_ = 0;
    }
    return 0;
  }

  void handle(io_uring_cqe* cqe, const CompletionFn& on_done, std::size_t& delivered) {
    std::size_t slot = std::size_t(io_uring_cqe_get_data64(cqe));
    long res = cqe->res;
    io_uring_cqe_seen(ring_.get(), cqe);
    --ops_in_flight_;
    PendingRead& p = slots_[slot];
    int err = 0;
    if (!p.advance(res, direct(), &err)) {
      queue_op(slot);  // resume the rest (short read or split)
      return;
    }
    ReadCompletion c{p.req.tag, p.done_bytes, err};
    free_.push_back(slot);  // before the callback: it may submit again
    ++delivered;
    on_done(c);
  }

  UniqueFd fd_;
  Ring ring_;
  std::size_t max_op_bytes_;
  std::vector<PendingRead> slots_;
  std::vector<std::size_t> free_;
  std::vector<ReadCompletion> ready_;  // zero-length reads, delivered at the next wait
  std::size_t unsubmitted_ = 0;        // SQEs prepared but not yet handed to the kernel
  std::size_t ops_in_flight_ = 0;      // SQEs the kernel may still be working on
};

}  // namespace

std::unique_ptr<FileSource> make_uring_source(UniqueFd fd, bool direct, std::uint64_t size_bytes,
                                              const FileSourceOptions& opts) {
  return std::make_unique<UringSource>(std::move(fd), direct, size_bytes, opts);
}

}  // namespace detail
}  // namespace cuzk::io
