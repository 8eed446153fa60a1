// `cuzkctl watch`: the operator's live view of a running cuzkd, like `top`.
//
//   cuzkctl [--addr ADDR] watch [--interval-ms 1000] [--events 12] [--once]
//       a frame (uptime, queues, jobs by stage, workers, parameters, recent
//       events) redrawn every interval; q or Ctrl-C quits and restores the
//       terminal. --once prints one frame and exits. When stdout is not a
//       terminal, frames are printed one after another without escape codes.
//   cuzkctl [--addr ADDR] [--json] watch --stream [--max-events N]
//       the raw event stream: one line (or, with --json, one JSON object) per
//       job event; --json implies --stream
//
// The frame itself is render_watch() (cuzkctl/watch_view.hpp), a pure
// function; this file only owns the terminal, the clock and the connection.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cuzkctl/commands.hpp"
#include "cuzkctl/watch_view.hpp"
#include "engine/types.hpp"
#include "rpc/client.hpp"
#include "rpc/client_impl.hpp"
#include "rpc/convert.hpp"

namespace cuzkctl {
namespace {

namespace eng = cuzk::engine;
using nlohmann::json;

struct WatchArgs {
  std::string addr;
  std::uint64_t interval_ms = 1000;
  std::size_t event_rows = 12;
  bool once = false;
  bool stream = false;
  std::uint64_t max_events = 0;
};

struct UsageError {
  std::string message;
};

std::uint64_t unix_now_ms() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

eng::JobEvent read_event(cuzk::rpc::schema::JobEvent::Reader e) { return cuzk::rpc::read(e); }

// Keeps the events the daemon streams in a bounded ring.
class RingSink final : public cuzk::rpc::schema::EventSink::Server {
 public:
  explicit RingSink(EventRing& ring) : ring_(ring) {}
  kj::Promise<void> event(EventContext call) override {
    ring_.push({read_event(call.getParams().getEvent()), unix_now_ms()});
    return kj::READY_NOW;
  }

 private:
  EventRing& ring_;
};

// Prints each event as it arrives (--stream).
class PrintingSink final : public cuzk::rpc::schema::EventSink::Server {
 public:
  // limit: print at most this many (0: no limit); events the loop delivers
  // in one turn past it are dropped.
  PrintingSink(bool as_json, std::uint64_t limit, std::uint64_t& seen)
      : as_json_(as_json), limit_(limit), seen_(seen) {}
  kj::Promise<void> event(EventContext call) override {
    if (limit_ != 0 && seen_ >= limit_) return kj::READY_NOW;
    eng::JobEvent e = read_event(call.getParams().getEvent());
    std::string state(eng::to_string(e.state));
    if (as_json_) {
      json j = {{"job_id", e.id},
                {"request_id", e.request_id},
                {"state", state},
                {"stage", e.stage},
                {"elapsed_ms", e.elapsed_ms}};
      if (e.error) j["error"] = e.error->message;
      std::cout << j.dump() << std::endl;
    } else {
      std::printf("job %llu %s %s/%s +%llu ms%s%s\n", static_cast<unsigned long long>(e.id), e.request_id.c_str(),
                  state.c_str(), e.stage.c_str(), static_cast<unsigned long long>(e.elapsed_ms), e.error ? ": " : "",
                  e.error ? e.error->message.c_str() : "");
      std::fflush(stdout);
    }
    ++seen_;
    return kj::READY_NOW;
  }

 private:
  bool as_json_;
  std::uint64_t limit_;
  std::uint64_t& seen_;
};

// SIGINT, SIGTERM and SIGHUP blocked for the life of the view and picked up
// by polling, so that Ctrl-C (when stdin is not our terminal) or a kill ends
// the loop normally and the terminal guard below still runs.
class QuitSignals {
 public:
  QuitSignals() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
  }
  ~QuitSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  QuitSignals(const QuitSignals&) = delete;
  QuitSignals& operator=(const QuitSignals&) = delete;
  bool pending() {
    const timespec zero{};
    return sigtimedwait(&set_, nullptr, &zero) > 0;
  }

 private:
  sigset_t set_{}, old_{};
};

// The interactive terminal: alternate screen, hidden cursor, stdin in
// non-canonical mode without echo or signals (Ctrl-C arrives as byte 0x03).
// The destructor puts everything back, also when an exception unwinds.
class TerminalGuard {
 public:
  TerminalGuard() {
    if (::isatty(STDIN_FILENO) && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | ISIG);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      raw_stdin_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    write_all("\x1b[?1049h\x1b[?25l");  // alternate screen; hide the cursor
  }
  ~TerminalGuard() {
    write_all("\x1b[?25h\x1b[?1049l");
    if (raw_stdin_) ::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  TerminalGuard(const TerminalGuard&) = delete;
  TerminalGuard& operator=(const TerminalGuard&) = delete;

  bool reads_keys() const { return raw_stdin_; }

  // True when q, Q or Ctrl-C was typed.
  bool quit_key() {
    if (!raw_stdin_) return false;
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return false;
    char buf[64];
    ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
    for (ssize_t i = 0; i < n; ++i)
      if (buf[i] == 'q' || buf[i] == 'Q' || buf[i] == 0x03) return true;
    return false;
  }

  struct Size {
    std::size_t rows = 24, cols = 80;
    bool operator==(const Size&) const = default;
  };
  static Size size() {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0) return {ws.ws_row, ws.ws_col};
    return {};
  }

  // Redraws in place: home, each line cleared to its end, the rest of the
  // screen cleared. No newline after the last row, so the screen never scrolls.
  static void draw(std::vector<std::string> lines, Size sz) {
    if (lines.size() > sz.rows) {
      std::size_t hidden = lines.size() - sz.rows + 1;
      lines.resize(sz.rows - 1);
      lines.push_back("... " + std::to_string(hidden) + " more lines: enlarge the terminal");
    }
    std::string out = "\x1b[H";
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].size() > sz.cols) lines[i].resize(sz.cols);
      out += lines[i] + "\x1b[K";
      if (i + 1 < lines.size()) out += "\r\n";
    }
    out += "\x1b[J";
    write_all(out);
  }

 private:
  static void write_all(const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  }
  termios saved_{};
  bool raw_stdin_ = false;
};

void print_plain(const std::vector<std::string>& lines) {
  for (const auto& l : lines) std::fputs((l + "\n").c_str(), stdout);
  std::fflush(stdout);
}

// Sleeps `ms`, then turns the KJ loop without blocking: the events that
// arrived meanwhile are delivered (to the sink) now, at most `ms` late.
void pump(cuzk::rpc::Client::Impl& impl, std::uint64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  impl.ws().poll();
}

void watch_frames(const WatchArgs& a) {
  // Declared before the client: the sink the client's RPC system owns
  // refers to it, so it must outlive the client.
  EventRing ring(a.event_rows);
  cuzk::rpc::Client client(a.addr);
  auto& impl = client.impl();
  // What happened before this view started: the daemon's own recent events
  // (asked before subscribing, so none is shown twice).
  for (const cuzk::rpc::DaemonEvent& e : client.recent_events(static_cast<std::uint32_t>(a.event_rows)).events)
    ring.push({e.event, e.unix_ms});
  auto req = impl.cap.watchRequest();
  req.setSink(kj::heap<RingSink>(ring));
  auto watch_handle = req.send().wait(impl.ws()).getHandle();

  WatchInput in;
  in.addr = a.addr;
  in.events = &ring;
  const bool tty = !a.once && ::isatty(STDOUT_FILENO);
  if (!tty) {
    QuitSignals quit;
    for (bool first = true;; first = false) {
      in.status = client.status();
      in.now_unix_ms = unix_now_ms();
      if (!first) std::fputs("\n", stdout);
      print_plain(render_watch(in, WatchLayout{}));
      if (a.once) return;
      for (std::uint64_t waited_ms = 0; waited_ms < a.interval_ms; waited_ms += 50) {
        pump(impl, 50);
        if (quit.pending()) return;
      }
    }
  }

  QuitSignals quit;
  TerminalGuard term;
  // A tick of 50 ms: keys and resizes answer within it; status is asked
  // once per interval.
  constexpr std::uint64_t kTickMs = 50;
  for (;;) {
    in.status = client.status();
    in.now_unix_ms = unix_now_ms();
    TerminalGuard::Size sz = TerminalGuard::size();
    WatchLayout layout;
    layout.width = sz.cols;
    auto frame_lines = [&] {
      auto lines = render_watch(in, layout);
      lines.push_back(term.reads_keys() ? "q or Ctrl-C: quit" : "Ctrl-C: quit");
      return lines;
    };
    TerminalGuard::draw(frame_lines(), sz);
    for (std::uint64_t waited_ms = 0; waited_ms < a.interval_ms; waited_ms += kTickMs) {
      pump(impl, kTickMs);
      if (quit.pending() || term.quit_key()) return;
      if (TerminalGuard::Size now = TerminalGuard::size(); !(now == sz)) {
        sz = now;
        layout.width = sz.cols;
        TerminalGuard::draw(frame_lines(), sz);
      }
    }
  }
}

void watch_stream(const WatchArgs& a, bool as_json) {
  std::uint64_t seen = 0;  // before the client: the sink refers to it
  cuzk::rpc::Client client(a.addr);
  auto& impl = client.impl();
  auto req = impl.cap.watchRequest();
  req.setSink(kj::heap<PrintingSink>(as_json, a.max_events, seen));
  auto handle = req.send().wait(impl.ws()).getHandle();
  // A status call every 500 ms both turns the loop and notices a daemon that
  // went away.
  QuitSignals quit;
  auto enough = [&] { return a.max_events != 0 && seen >= a.max_events; };
  while (!enough()) {
    for (int i = 0; i < 10 && !enough(); ++i) {
      pump(impl, 50);
      if (quit.pending()) return;
    }
    client.status();
  }
}

void run_watch(Context& ctx, const WatchArgs& a) {
  namespace kind = cuzk::cli::kind;
  ctx.exit_code = kExitOk;
  try {
    if (a.once && (a.stream || ctx.json))
      throw UsageError{"--once prints a frame; for one machine-readable status use `cuzkctl status --json`"};
    if (a.interval_ms < 100) throw UsageError{"--interval-ms must be at least 100"};
    if (a.stream || ctx.json)
      watch_stream(a, ctx.json);
    else
      watch_frames(a);
  } catch (const UsageError& e) {
    report_error(ctx, kind::kInvalidArgument, e.message, kExitMalformed);
  } catch (const cuzk::rpc::ClientError& e) {
    if (e.kind() == cuzk::rpc::ClientErrorKind::kUnauthenticated)
      report_error(ctx, "unauthenticated", e.what(), kExitInvalid);
    else if (e.kind() == cuzk::rpc::ClientErrorKind::kConfig)
      report_error(ctx, kind::kInvalidArgument, e.what(), kExitMalformed);
    else
      report_error(ctx, kind::kUnavailable, cuzk::cli::unreachable_message(a.addr, e.what()), kExitUnavailable);
  } catch (const kj::Exception& e) {
    report_error(ctx, kind::kUnavailable,
                 cuzk::cli::unreachable_message(a.addr, std::string("transport: ") + e.getDescription().cStr()),
                 kExitUnavailable);
  }
}

}  // namespace

void register_watch(CLI::App& app, Context& ctx) {
  auto args = std::make_shared<WatchArgs>();  // owned by the callback (and so by `app`)
  auto* wa = app.add_subcommand("watch", "daemon: live view (like top); --stream: raw job events");
  wa->add_option("--interval-ms", args->interval_ms, "refresh interval (default 1000)");
  wa->add_option("--events", args->event_rows, "recent events kept and shown (default 12)");
  wa->add_flag("--once", args->once, "print one frame and exit");
  wa->add_flag("--stream", args->stream, "print each job event as a line instead of frames");
  wa->add_option("--max-events", args->max_events, "--stream: exit after N events (0: until the daemon stops)");
  wa->callback([&ctx, args] {
    args->addr = ctx.connection.addr;  // a root option (main.cpp)
    run_watch(ctx, *args);
  });
}

}  // namespace cuzkctl
