#include "cuzkctl/commands/client_progress.hpp"

#include <unistd.h>

#include <cstdio>

#include "cuzkctl/watch_view.hpp"
#include "engine/types.hpp"
#include "rpc/convert.hpp"

namespace cuzkctl {
namespace {

namespace eng = cuzk::engine;

// Prints the followed jobs' events (JobProgress).
class ProgressSink final : public cuzk::rpc::schema::EventSink::Server {
 public:
  explicit ProgressSink(std::shared_ptr<JobProgress::State> state) : state_(std::move(state)) {}
  kj::Promise<void> event(EventContext call) override {
    const eng::JobEvent e = cuzk::rpc::read(call.getParams().getEvent());
    // The end of a job (done, failed, cancelled) is reported by the command
    // itself: its result line, or its one error line.
    const bool unfinished = e.state == eng::JobState::kRunning || e.state == eng::JobState::kQueued;
    if (state_->jobs.count(e.id) == 0 || !unfinished) return kj::READY_NOW;
    char line[256];
    std::snprintf(line, sizeof line, "job %llu%s%s: %s/%s +%.1f s", static_cast<unsigned long long>(e.id),
                  e.request_id.empty() ? "" : " ", e.request_id.c_str(), std::string(eng::to_string(e.state)).c_str(),
                  e.stage.c_str(), static_cast<double>(e.elapsed_ms) / 1000.0);
    if (state_->tty) {
      std::fprintf(stderr, "\r%s\x1b[K", line);
      state_->line_open = true;
    } else if (state_->plain_lines) {
      std::fprintf(stderr, "%s\n", line);
    }
    std::fflush(stderr);
    return kj::READY_NOW;
  }

 private:
  std::shared_ptr<JobProgress::State> state_;
};

}  // namespace

ElapsedTicker::ElapsedTicker(std::string what, std::function<std::string()> detail)
    : tty_(::isatty(STDERR_FILENO) != 0) {
  thread_ = std::jthread([what = std::move(what), detail = std::move(detail), tty = tty_](std::stop_token stop) {
    const auto t0 = std::chrono::steady_clock::now();
    const int every_s = tty ? 1 : 15;
    for (int s = 1;; ++s) {
      // Sleep one second in short steps, so that the destructor never waits long.
      for (int i = 0; i < 10; ++i) {
        if (stop.stop_requested()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      if (s % every_s != 0) continue;
      const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      const std::string more = detail ? detail() : std::string();
      const std::string tail = more.empty() ? "" : "; " + more;
      if (tty)
        std::fprintf(stderr, "\r%s: %.0f s%s\x1b[K", what.c_str(), elapsed_s, tail.c_str());
      else
        std::fprintf(stderr, "%s: %.0f s%s\n", what.c_str(), elapsed_s, tail.c_str());
      std::fflush(stderr);
    }
  });
}

std::function<std::string()> daemon_loading_detail(std::string addr) {
  auto client = std::make_shared<std::unique_ptr<cuzk::rpc::Client>>();
  return [addr = std::move(addr), client]() -> std::string {
    try {
      if (!*client) *client = std::make_unique<cuzk::rpc::Client>(addr);
      std::string out;
      for (const auto& l : (*client)->status().engine.loading_params)
        out += (out.empty() ? "" : "; ") + loading_line(l);
      return out;
    } catch (const std::exception&) {
      client->reset();  // progress is a convenience: the preload call reports real failures
      return {};
    } catch (const kj::Exception&) {
      client->reset();
      return {};
    }
  };
}

ElapsedTicker::~ElapsedTicker() {
  thread_.request_stop();
  thread_.join();
  if (tty_) std::fputs("\r\x1b[K", stderr);
}

JobProgress::JobProgress(const std::string& addr, bool plain_lines)
    : state_(std::make_shared<State>()), handle_(nullptr) {
  state_->tty = ::isatty(STDERR_FILENO) != 0;
  state_->plain_lines = plain_lines;
  if (!state_->tty && !plain_lines) return;  // nothing would be shown: no stream
  try {
    client_ = std::make_unique<cuzk::rpc::Client>(addr);
    auto& impl = client_->impl();
    auto req = impl.cap.watchRequest();
    req.setSink(kj::heap<ProgressSink>(state_));
    handle_ = req.send().wait(impl.ws()).getHandle();
  } catch (const cuzk::rpc::ClientError&) {
    handle_ = nullptr;  // progress is a convenience: the proving connection reports real failures
    client_.reset();
  } catch (const kj::Exception&) {
    handle_ = nullptr;
    client_.reset();
  }
}

JobProgress::~JobProgress() { clear_line(); }

void JobProgress::clear_line() {
  if (!state_->line_open) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  state_->line_open = false;
}

void JobProgress::follow(std::uint64_t job_id) { state_->jobs.insert(job_id); }

}  // namespace cuzkctl
