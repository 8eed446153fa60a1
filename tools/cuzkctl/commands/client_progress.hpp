// Progress of long daemon calls on stderr, so that a client never sits
// silent for minutes while the daemon works (a first PoRep job or a preload
// that generates parameters takes minutes).
//
// On a terminal: one status line rewritten in place, cleared at the end.
// Otherwise (a pipe, a log): plain newline-terminated lines, fewer of them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "rpc/client.hpp"
#include "rpc/client_impl.hpp"

namespace cuzkctl {

// Elapsed time of one blocking call: "<what>: 12 s" every second on a
// terminal, a line every 15 s otherwise, followed by `detail()` when given
// (called on the ticker's own thread; "" adds nothing).
class ElapsedTicker {
 public:
  explicit ElapsedTicker(std::string what, std::function<std::string()> detail = {});
  ~ElapsedTicker();  // stops the ticker and clears its line
  ElapsedTicker(const ElapsedTicker&) = delete;
  ElapsedTicker& operator=(const ElapsedTicker&) = delete;

 private:
  bool tty_;
  std::jthread thread_;
};

// The daemon's job events (cuzk.capnp watch) of the jobs followed, printed
// while the caller waits. The watch runs on a second connection of its own,
// so it takes no call slot (daemon.max_calls_per_connection) from the
// connection that proves; both share the thread's KJ loop, so events arrive
// during the caller's blocking calls. No progress (and no error) when that
// connection cannot be made. plain_lines: also print them when stderr is not
// a terminal.
// For ElapsedTicker: the parameter files the daemon at `addr` is reading now
// ("loading F: 45% read, 40% decoded of 47.4 GiB, 41 s"), from its status on
// a connection of the calling thread's own (made on first call); "" when
// none or when the daemon cannot be asked.
std::function<std::string()> daemon_loading_detail(std::string addr);

class JobProgress {
 public:
  JobProgress(const std::string& addr, bool plain_lines);
  ~JobProgress();  // clears the terminal line; dropping the handle ends the stream
  JobProgress(const JobProgress&) = delete;
  JobProgress& operator=(const JobProgress&) = delete;

  void follow(std::uint64_t job_id);
  // Clears the terminal line before the caller prints to stdout.
  void clear_line();

  struct State {
    bool tty = false;
    bool plain_lines = false;
    std::set<std::uint64_t> jobs;
    bool line_open = false;  // a terminal line is drawn
  };

 private:
  std::shared_ptr<State> state_;
  std::unique_ptr<cuzk::rpc::Client> client_;  // before handle_: outlives it
  cuzk::rpc::schema::WatchHandle::Client handle_;
};

}  // namespace cuzkctl
