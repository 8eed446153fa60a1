#include "daemon/daemon.hpp"

#include <systemd/sd-daemon.h>

#include <csignal>
#include <thread>

#include "engine/engine.hpp"
#include "engine/param_store.hpp"
#include "rpc/kj_asio.hpp"
#include "rpc/server.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::daemon {
namespace {

// A second SIGTERM/SIGINT during the drain: stop waiting for running jobs.
asio::awaitable<void> second_signal(asio::signal_set& signals, engine::Engine& engine, runtime::Logger& log) {
  co_await signals.async_wait(asio::use_awaitable);  // throws operation_aborted once the drain is over
  log.warn("second signal: cancelling running jobs");
  engine.cancel_running();
}

asio::awaitable<void> lifecycle(asio::io_context& io, asio::signal_set& signals, engine::Engine& engine,
                                rpc::Server& server, runtime::Logger& log, std::chrono::milliseconds grace) {
  int signo = co_await signals.async_wait(asio::use_awaitable);
  log.info("signal received, draining", {{"signal", signo == SIGTERM ? "SIGTERM" : "SIGINT"}});
  sd_notify(0, "STOPPING=1\nSTATUS=draining");
  runtime::TaskSet watchers(io.get_executor());
  watchers.spawn(second_signal(signals, engine, log));
  server.stop_accepting();
  co_await engine.drain();
  co_await server.shutdown(grace);
  signals.cancel();
  co_await watchers.join();
  log.info("stopped");
  io.stop();
}

}  // namespace

int run(const Config& config, runtime::Logger& log) {
  // A client that disconnects mid-reply must cost an EPIPE, not the process.
  std::signal(SIGPIPE, SIG_IGN);
  runtime::EventLoop loop;
  log.info("event loop", {{"sockets", runtime::to_string(loop.socket_backend())},
                          {"io_uring", loop.probe().detail},
                          {"files_on_io_uring", loop.files_on_io_uring() ? "yes" : "no"}});
  rpc::KjOnAsio kj(loop.io());
  ThreadPool math(config.math_threads);
  std::size_t pipeline_threads =
      config.pipeline_threads != 0 ? config.pipeline_threads : config.engine.max_concurrent_jobs + 1;
  runtime::WorkerPool pipeline(pipeline_threads);
  engine::ParamStore params(config.state_dir, math, log);
  engine::Engine engine(loop.executor(), pipeline, math, params, log, config.engine);

  rpc::ServerConfig server_config;
  server_config.socket_mode = config.socket_mode;
  server_config.max_message_bytes = config.max_message_bytes;
  // systemd socket activation (cuzkd.socket): one inherited listening fd.
  int inherited = sd_listen_fds(1);
  if (inherited == 1) {
    server_config.inherited_fd = SD_LISTEN_FDS_START;
  } else {
    server_config.socket_path = rpc::parse_unix_address(config.listen);
  }
  rpc::Server server(loop.io(), engine, log, server_config);

  // Signals are delivered to the loop (asio's handler only writes to a pipe,
  // whichever thread the kernel picks).
  asio::signal_set signals(loop.io(), SIGTERM, SIGINT);
  runtime::TaskSet main_tasks(loop.executor());

  server.start();
  engine.start();
  main_tasks.spawn(lifecycle(loop.io(), signals, engine, server, log, config.drain_timeout));
  log.info("cuzkd ready", {{"listen", inherited == 1 ? std::string("systemd socket") : config.listen},
                           {"state_dir", config.state_dir.string()},
                           {"math_threads", math.size()},
                           {"pipeline_threads", pipeline_threads}});
  sd_notify(0, "READY=1\nSTATUS=serving");
  loop.run();
  if (main_tasks.size() != 0) {
    log.error("event loop left with tasks running");
    return 1;
  }
  return 0;
}

}  // namespace cuzk::daemon
