// The fallback back end: pread(2) on a few threads. Used where io_uring is
// refused; also a reference for the io_uring back end in tests.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "io/backends.hpp"
#include "io/read_op.hpp"

namespace cuzk::io::detail {
namespace {

class ThreadSource final : public FileSource {
 public:
  ThreadSource(UniqueFd fd, bool direct, std::uint64_t size_bytes, const FileSourceOptions& opts)
      : FileSource(direct, size_bytes, opts.queue_depth),
        fd_(std::move(fd)),
        max_op_bytes_(effective_max_op(opts.max_op_bytes, direct)) {
    std::size_t n = opts.pool_threads == 0 ? 1 : opts.pool_threads;
    workers_.reserve(n);
    for (std::size_t i = 0; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
  }

  ~ThreadSource() override {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      queued_.clear();  // never started: their buffers were not touched
    }
    work_cv_.notify_all();
    for (auto& t : workers_) t.join();  // reads already running finish first
  }

  Backend backend() const override { return Backend::kThreadPool; }
  std::size_t in_flight() const override { return in_flight_; }

  void submit(const ReadRequest& req) override {
    check_submittable(req, in_flight_, queue_depth(), direct());
    ++in_flight_;
    {
      std::lock_guard lock(mu_);
      queued_.push_back(req);
    }
    work_cv_.notify_one();
  }

  std::size_t wait(std::size_t min_completions, const CompletionFn& on_done) override {
    std::size_t target = std::min(min_completions, in_flight_);
    std::size_t delivered = 0;
    std::vector<ReadCompletion> batch;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        if (delivered < target) done_cv_.wait(lock, [&] { return !done_.empty(); });
        batch.assign(done_.begin(), done_.end());
        done_.clear();
      }
      // Callbacks run unlocked: they may submit.
      for (const ReadCompletion& c : batch) {
        --in_flight_;
        ++delivered;
        on_done(c);
      }
      if (delivered >= target) return delivered;
    }
  }

 private:
  void worker_loop() {
    for (;;) {
      ReadRequest req;
      {
        std::unique_lock lock(mu_);
        work_cv_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
        if (stopping_) return;
        req = queued_.front();
        queued_.pop_front();
      }
      PendingRead p{req, 0};
      int err = 0;
      while (p.req.length_bytes > 0) {
        ssize_t r = ::pread(fd_.get(), p.op_dst(), p.op_length(max_op_bytes_), off_t(p.op_offset()));
        long res = r < 0 ? -long(errno) : long(r);
        if (p.advance(res, direct(), &err)) break;
      }
      {
        std::lock_guard lock(mu_);
        done_.push_back(ReadCompletion{req.tag, p.done_bytes, err});
      }
      done_cv_.notify_one();
    }
  }

  UniqueFd fd_;
  std::size_t max_op_bytes_;
  std::size_t in_flight_ = 0;  // owner thread only
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<ReadRequest> queued_;    // guarded by mu_, at most queue_depth
  std::vector<ReadCompletion> done_;  // guarded by mu_
  bool stopping_ = false;             // guarded by mu_
  std::vector<std::thread> workers_;  // last: joined before the rest is destroyed
};

}  // namespace

std::unique_ptr<FileSource> make_thread_source(UniqueFd fd, bool direct, std::uint64_t size_bytes,
                                               const FileSourceOptions& opts) {
  return std::make_unique<ThreadSource>(std::move(fd), direct, size_bytes, opts);
}

}  // namespace cuzk::io::detail
