// The FileSource back end whose reads are coroutines on the daemon's event
// loop (io/loop_ring.hpp). submit() hands a read to the loop; its coroutine
// issues the ring ops (resuming short and split reads) and queues the
// completion; wait() on the consuming thread takes completions from that
// queue. The consuming thread never enters the kernel for a read.
#include <cstdlib>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include "io/backends.hpp"
#include "io/loop_ring.hpp"
#include "io/read_op.hpp"

namespace cuzk::io::detail {
namespace {

// Completions handed from the loop to the consuming thread.
struct CompletionQueue {
  std::mutex mu;
  std::condition_variable ready;
  std::vector<ReadCompletion> done;

  void push(const ReadCompletion& c) {
    {
      std::lock_guard lock(mu);
      done.push_back(c);
    }
    ready.notify_all();
  }
};

// One whole request: ring ops until it is complete, at end of file or failed.
asio::awaitable<void> read_request(LoopRing* ring, std::shared_ptr<CompletionQueue> out, int fd, PendingRead p,
                                   bool direct, std::size_t max_op_bytes) {
  int err = 0;
  for (;;) {
    long r = co_await ring->read_op(fd, p.op_offset(), p.op_dst(), p.op_length(max_op_bytes));
    if (p.advance(r, direct, &err)) break;
  }
  out->push(ReadCompletion{p.req.tag, p.done_bytes, err});
}

class LoopSource final : public FileSource {
 public:
  LoopSource(LoopRing& ring, UniqueFd fd, bool direct, std::uint64_t size_bytes, const FileSourceOptions& opts)
      : FileSource(direct, size_bytes, opts.queue_depth),
        ring_(ring),
        fd_(std::move(fd)),
        max_op_bytes_(effective_max_op(opts.max_op_bytes, direct)),
        queue_(std::make_shared<CompletionQueue>()) {}

  ~LoopSource() override {
    // The loop's coroutines write into caller buffers until they complete.
    wait(in_flight_, [](const ReadCompletion&) {});
  }

  Backend backend() const override { return Backend::kLoopRing; }
  std::size_t in_flight() const override { return in_flight_; }

  void submit(const ReadRequest& req) override {
    check_submittable(req, in_flight_, queue_depth(), direct());
    ++in_flight_;
    if (req.length_bytes == 0) {
      queue_->push(ReadCompletion{req.tag, 0, 0});
      return;
    }
    LoopRing* ring = &ring_;
    auto queue = queue_;
    const int fd = fd_.get();
    const bool direct_io = direct();
    const std::size_t max_op = max_op_bytes_;
    const PendingRead pending{req, 0};
    bool started = ring_.spawn([=] { return read_request(ring, queue, fd, pending, direct_io, max_op); });
    if (!started) queue_->push(ReadCompletion{req.tag, 0, ECANCELED});  // the daemon is shutting down
  }

  std::size_t wait(std::size_t min_completions, const CompletionFn& on_done) override {
    // Waiting on the loop's own thread would stop the loop that completes the reads.
    if (std::this_thread::get_id() == ring_.loop_thread()) std::abort();
    const std::size_t target = std::min(min_completions, in_flight_);
    std::size_t delivered = 0;
    for (;;) {
      std::vector<ReadCompletion> got;
      {
        std::unique_lock lock(queue_->mu);
        if (delivered < target) queue_->ready.wait(lock, [&] { return !queue_->done.empty(); });
        got.swap(queue_->done);
      }
      for (const ReadCompletion& c : got) {
        --in_flight_;
        ++delivered;
        on_done(c);  // may submit again
      }
      if (got.empty() || delivered >= target) return delivered;
    }
  }

 private:
  LoopRing& ring_;
  UniqueFd fd_;
  std::size_t max_op_bytes_;
  std::shared_ptr<CompletionQueue> queue_;
  std::size_t in_flight_ = 0;  // consuming thread only
};

}  // namespace

std::unique_ptr<FileSource> make_loop_source(LoopRing& ring, UniqueFd fd, bool direct, std::uint64_t size_bytes,
                                             const FileSourceOptions& opts) {
  return std::make_unique<LoopSource>(ring, std::move(fd), direct, size_bytes, opts);
}

}  // namespace cuzk::io::detail
