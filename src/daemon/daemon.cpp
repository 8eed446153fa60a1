#include "daemon/daemon.hpp"
#include "daemon/metrics_http.hpp"

#include <systemd/sd-daemon.h>
#include <toml++/toml.h>

#include <csignal>
#include <ctime>
#include <fstream>
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "engine/engine.hpp"
#include "policy/memory_budget.hpp"
#include "engine/job_journal.hpp"
#include "engine/param_store.hpp"
#include "io/loop_ring.hpp"
#include "rpc/kj_asio.hpp"
#include "rpc/server.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/task_set.hpp"
#include "runtime/sd_notifier.hpp"

namespace cuzk::daemon {
namespace {

using std::chrono::milliseconds;

// A second SIGTERM/SIGINT during the drain: stop waiting for running jobs.
asio::awaitable<void> second_signal(asio::signal_set& signals, engine::Engine& engine, runtime::Logger& log) {
  co_await signals.async_wait(asio::use_awaitable);  // throws operation_aborted once the drain is over
  log.warn("second signal: cancelling running jobs");
  engine.cancel_running();
}

asio::awaitable<void> lifecycle(asio::io_context& io, asio::signal_set& signals, engine::Engine& engine,
                                rpc::Server& server, MetricsHttpServer* metrics, runtime::TaskSet& ops,
                                io::LoopRing* ring, runtime::SdNotifier& notify, runtime::Logger& log,
                                milliseconds grace) {
  int signo = co_await signals.async_wait(asio::use_awaitable);
  log.info("signal received, draining", {{"signal", signo == SIGTERM ? "SIGTERM" : "SIGINT"}});
  notify.send("STOPPING=1\nSTATUS=draining");
  // The watchdog keeps pinging during the drain (the loop is alive); SIGHUP
  // reloads stop here.
  runtime::TaskSet watchers(io.get_executor());
  watchers.spawn(second_signal(signals, engine, log));
  server.stop_accepting();
  co_await engine.drain();
  co_await server.shutdown(grace);
  if (metrics != nullptr) co_await metrics->stop();  // scraped until the drain ends
  signals.cancel();
  co_await watchers.join();
  ops.close();
  ops.cancel_all();
  co_await ops.join();
  if (ring != nullptr) co_await ring->close();  // after the drain: no parameter read is left
  log.info("stopped");
  io.stop();
}

// WATCHDOG=1 every `period` from the loop itself (see daemon.hpp), never
// blocking the loop (runtime/sd_notifier.hpp).
asio::awaitable<void> watchdog(asio::io_context& io, std::chrono::microseconds period, runtime::SdNotifier& notify,
                               runtime::Logger& log) {
  asio::steady_timer timer(io);
  for (;;) {
    if (!notify.send("WATCHDOG=1") && notify.dropped() == 1) log.warn("systemd notification dropped (socket full)");
    timer.expires_after(period);
    co_await timer.async_wait(asio::use_awaitable);  // throws operation_aborted when cancelled
  }
}

std::string load_token(const std::filesystem::path& path) {
  if (path.empty()) return "";
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("daemon.token_file: cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  std::string token = text.str();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.size() < rpc::kMinTokenBytes) {
    throw ConfigError("daemon.token_file: " + path.string() + " holds fewer than " +
                      std::to_string(rpc::kMinTokenBytes) + " bytes (use e.g. `openssl rand -hex 32`)");
  }
  return token;
}

// Keys SIGHUP applies; every other changed key is reported as needing a restart.
const std::set<std::string> kReloadable = {
    "logging.level",         "logging.format",        "daemon.max_calls_per_connection", "daemon.token_file",
    "engine.queue_capacity", "engine.urgent_reserve", "engine.max_demo_log_domain"};

class Reloader {
 public:
  Reloader(ConfigReloader reload, Config current, std::string text, rpc::Server& server, engine::Engine& engine,
           runtime::Logger& log)
      : reload_(std::move(reload)),
        current_(std::move(current)),
        text_(std::move(text)),
        server_(server),
        engine_(engine),
        log_(log) {}

  void reload() {
    if (!reload_) {
      log_.warn("SIGHUP: no config file (--config), nothing to reload");
      return;
    }
    LoadedConfig next;
    rpc::ServerLimits limits;
    try {
      next = reload_();
      limits.max_calls_per_connection = next.config.max_calls_per_connection;
      limits.token = load_token(next.config.token_file);
    } catch (const ConfigError& e) {
      log_.error("SIGHUP: config rejected, nothing changed", {{"error", e.what()}});
      return;
    }
    std::vector<std::string> applied;
    const Config& c = next.config;
    if (limits.max_calls_per_connection != server_.limits().max_calls_per_connection)
      applied.push_back("daemon.max_calls_per_connection=" + std::to_string(limits.max_calls_per_connection));
    if (limits.token != server_.limits().token) applied.push_back("daemon.token_file (token replaced)");
    try {
      server_.reload(limits);
    } catch (const rpc::ServerError& e) {
      log_.error("SIGHUP: server limits rejected, nothing changed", {{"error", e.what()}});
      return;
    }
    const auto& adm = c.engine.admission;
    const auto& old_adm = current_.engine.admission;
    if (adm.capacity != old_adm.capacity || adm.reserved_for_urgent != old_adm.reserved_for_urgent ||
        c.engine.max_demo_log_domain != current_.engine.max_demo_log_domain) {
      engine_.reconfigure(adm, c.engine.max_demo_log_domain);  // parse_config checked reserve < capacity
      if (adm.capacity != old_adm.capacity) applied.push_back("engine.queue_capacity=" + std::to_string(adm.capacity));
      if (adm.reserved_for_urgent != old_adm.reserved_for_urgent)
        applied.push_back("engine.urgent_reserve=" + std::to_string(adm.reserved_for_urgent));
      if (c.engine.max_demo_log_domain != current_.engine.max_demo_log_domain)
        applied.push_back("engine.max_demo_log_domain=" + std::to_string(c.engine.max_demo_log_domain));
    }
    if (c.log_level != current_.log_level) {
      log_.set_level(c.log_level);
      applied.push_back("logging.level=" + std::string(runtime::to_string(c.log_level)));
    }
    if (c.log_format != current_.log_format) {
      log_.set_format(c.log_format);
      applied.push_back(std::string("logging.format=") + (c.log_format == runtime::LogFormat::kJson ? "json" : "text"));
    }
    std::string restart;
    for (const std::string& key : changed_keys(text_, next.toml_text)) {
      if (kReloadable.count(key)) continue;
      restart += (restart.empty() ? "" : ",") + key;
    }
    std::string applied_list;
    for (const auto& a : applied) applied_list += (applied_list.empty() ? "" : ",") + a;
    log_.info("config reloaded", {{"applied", applied_list.empty() ? "nothing" : applied_list},
                                  {"needs_restart", restart.empty() ? "nothing" : restart}});
    if (!restart.empty()) log_.warn("changed keys need a restart to take effect", {{"keys", restart}});
    current_ = next.config;
    text_ = next.toml_text;
  }

 private:
  ConfigReloader reload_;
  Config current_;
  std::string text_;
  rpc::Server& server_;
  engine::Engine& engine_;
  runtime::Logger& log_;
};

asio::awaitable<void> sighup_loop(asio::io_context& io, Reloader& reloader, runtime::SdNotifier& notify) {
  asio::signal_set hup(io, SIGHUP);
  for (;;) {
    co_await hup.async_wait(asio::use_awaitable);  // throws operation_aborted when cancelled
    // Type=notify-reload wants the CLOCK_MONOTONIC time of the reload request.
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    auto usec = static_cast<unsigned long long>(now.tv_sec) * 1'000'000ull +
                static_cast<unsigned long long>(now.tv_nsec / 1000);
    notify.send("RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=" + std::to_string(usec));
    reloader.reload();
    notify.send("READY=1\nSTATUS=serving");
  }
}

void flatten(const toml::table& t, const std::string& prefix, std::map<std::string, std::string>& out) {
  for (auto&& [k, v] : t) {
    std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const toml::table* sub = v.as_table()) {
      flatten(*sub, key, out);
    } else {
      std::ostringstream text;
      v.visit([&](auto&& node) { text << node; });
      out[key] = text.str();
    }
  }
}

std::map<std::string, std::string> flat_toml(const std::string& text) {
  std::map<std::string, std::string> out;
  try {
    flatten(toml::parse(text), "", out);
  } catch (const toml::parse_error&) {
  }
  return out;
}

}  // namespace

std::vector<std::string> changed_keys(const std::string& old_toml, const std::string& new_toml) {
  auto a = flat_toml(old_toml), b = flat_toml(new_toml);
  std::vector<std::string> out;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) out.push_back(k);
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) out.push_back(k);
  std::sort(out.begin(), out.end());
  return out;
}

int run(const Config& config, runtime::Logger& log, ConfigReloader reload, std::string toml_text,
        const BackendFactory& backends) {
  // A client that disconnects mid-reply must cost an EPIPE, not the process.
  std::signal(SIGPIPE, SIG_IGN);
  // SIGHUP is handled by the loop (asio's signal_set); until that handler is
  // installed an early SIGHUP must not kill the daemon.
  std::signal(SIGHUP, SIG_IGN);
  runtime::EventLoop loop;
  log.info("event loop", {{"sockets", runtime::to_string(loop.socket_backend())},
                          {"io_uring", loop.probe().detail},
                          {"files_on_io_uring", loop.files_on_io_uring() ? "yes" : "no"}});
  rpc::KjOnAsio kj(loop.io());
  // Every parameter and R1CS file is read by coroutines on this loop through
  // one io_uring ring (io/loop_ring.hpp); where io_uring is refused, by the
  // pread pool.
  std::unique_ptr<io::LoopRing> ring;
  if (loop.files_on_io_uring()) {
    try {
      ring = std::make_unique<io::LoopRing>(loop.executor());
    } catch (const io::IoError& e) {
      log.warn("parameter reads fall back to the pread pool", {{"error", e.what()}});
    }
  }
  ThreadPool math(config.math_threads);
  std::size_t pipeline_threads =
      config.pipeline_threads != 0 ? config.pipeline_threads : config.engine.max_concurrent_jobs + 1;
  runtime::WorkerPool pipeline(pipeline_threads);
  engine::ParamStore params(config.state_dir, math, log, ring.get());
  engine::EngineConfig engine_config = config.engine;
  if (config.journal) engine_config.journal_dir = config.state_dir;
  // The host-memory budget: "auto" is the RAM this process may use (cgroup
  // limit included) less a margin.
  {
    auto setting = policy::parse_budget_setting(config.memory_total_budget);
    std::optional<std::uint64_t> physical = policy::physical_memory_bytes();
    if (setting && !setting.value().automatic) {
      engine_config.memory_budget_bytes = setting.value().explicit_bytes;
    } else if (setting && physical) {
      auto resolved = policy::resolve_budget_bytes(setting.value(), *physical, config.memory_auto_margin_bytes);
      if (resolved) {
        engine_config.memory_budget_bytes = resolved.value();
      } else {
        // A small machine (CI, a laptop): the margin would leave nothing.
        engine_config.memory_budget_bytes = *physical / 2;
        log.warn("memory.auto_margin leaves nothing: using half the RAM",
                 {{"error", resolved.error().message}, {"budget_bytes", engine_config.memory_budget_bytes}});
      }
    }
    log.info("memory budget", {{"budget_bytes", engine_config.memory_budget_bytes},
                               {"physical_bytes", physical.value_or(0)},
                               {"setting", config.memory_total_budget}});
  }
  runtime::SteadyLoopClock clock;  // every decision in time the engine makes
  engine_config.clock = &clock;
  engine::Engine engine(loop.executor(), pipeline, math, params, log, engine_config);
  // Proving back ends: the GPUs of [gpu] devices when this binary has the
  // GPU service, else (or with none found) the CPU.
  {
    std::vector<std::shared_ptr<engine::DeviceBackend>> gpus;
    if (backends.make_gpus && config.gpu_devices != "none") {
      try {
        gpus = backends.make_gpus(config, math, log);
      } catch (const std::exception& e) {
        log.error("gpu.devices", {{"error", e.what()}});
        return 2;
      }
    }
    if (gpus.empty()) {
      log.info("proving on the CPU", {{"reason", !backends.make_gpus            ? "built without CUDA"
                                                 : config.gpu_devices == "none" ? "gpu.devices = none"
                                                                                : "no usable GPU"},
                                      {"math_threads", math.size()}});
    } else {
      const auto lanes = static_cast<std::size_t>(
          std::count_if(gpus.begin(), gpus.end(), [](const auto& b) { return b->critical_lane(); }));
      log.info("proving on GPUs",
               {{"workers", gpus.size() - lanes}, {"critical_lanes", lanes}, {"first", gpus.front()->name()}});
      if (backends.dev_params) engine.set_dev_params_generator(backends.dev_params(gpus.front()));
      engine.set_gpu_backends(std::move(gpus));
    }
  }

  rpc::ServerConfig server_config;
  server_config.socket_mode = config.socket_mode;
  server_config.max_message_bytes = config.max_message_bytes;
  server_config.tcp.address = config.listen_tcp;
  server_config.tcp.tls_cert_file = config.tls_cert_file;
  server_config.tcp.tls_key_file = config.tls_key_file;
  server_config.tcp.insecure_loopback = config.tcp_insecure_loopback;
  server_config.tcp.auth_timeout = config.auth_timeout;
  server_config.limits.max_calls_per_connection = config.max_calls_per_connection;
  try {
    server_config.limits.token = load_token(config.token_file);
  } catch (const ConfigError& e) {
    throw rpc::ServerError(e.what());
  }
  // systemd socket activation (cuzkd.socket): one inherited listening fd.
  int inherited = sd_listen_fds(1);
  if (inherited == 1) {
    server_config.inherited_fd = SD_LISTEN_FDS_START;
  } else {
    server_config.socket_path = rpc::parse_unix_address(config.listen);
  }
  rpc::Server server(loop.io(), engine, log, server_config);
  Reloader reloader(std::move(reload), config, std::move(toml_text), server, engine, log);

  // Signals are delivered to the loop (asio's handler only writes to a pipe,
  // whichever thread the kernel picks).
  asio::signal_set signals(loop.io(), SIGTERM, SIGINT);
  runtime::SdNotifier notify;  // before the task sets: their coroutines use it
  runtime::TaskSet main_tasks(loop.executor());
  runtime::TaskSet ops(loop.executor());  // SIGHUP and watchdog loops, cancelled by the drain

  // The Prometheus endpoint ([metrics] listen): the text of `cuzkctl metrics`.
  std::optional<MetricsHttpServer> metrics;
  if (!config.metrics_listen.empty()) {
    MetricsHttpConfig mc;
    mc.listen = config.metrics_listen;
    mc.allow_non_loopback = config.metrics_allow_non_loopback;
    try {
      metrics.emplace(
          loop.io(), mc, [&engine] { return engine.metrics(); }, log);
    } catch (const std::runtime_error& e) {
      log.error("metrics endpoint", {{"error", e.what()}});
      return 2;
    }
  }

  // Listeners are bound before the engine starts (a bad address or TLS file
  // stops the daemon while nothing runs yet), and accept after it.
  server.bind();
  if (metrics) {
    try {
      metrics->bind();
    } catch (const std::runtime_error& e) {
      log.error("metrics endpoint", {{"error", e.what()}});
      return 2;
    }
  }
  // The engine first: it recovers the job journal, and a journal it cannot
  // open stops the daemon before anything else has started.
  try {
    engine.start();
  } catch (const engine::JobJournalError& e) {
    // No durability, no service: clients would be told "accepted" for jobs a crash loses.
    log.error("cannot open the job journal", {{"error", e.what()}});
    return 1;
  }
  server.start();
  if (metrics) metrics->start();
  ops.spawn(sighup_loop(loop.io(), reloader, notify));
  std::uint64_t watchdog_usec = 0;
  if (sd_watchdog_enabled(0, &watchdog_usec) > 0 && watchdog_usec > 0 && notify.enabled()) {
    ops.spawn(watchdog(loop.io(), std::chrono::microseconds(watchdog_usec / 2), notify, log));
    log.info("watchdog", {{"interval_ms", watchdog_usec / 2000}});
  }
  if (ring) ring->start();
  main_tasks.spawn(lifecycle(loop.io(), signals, engine, server, metrics ? &*metrics : nullptr, ops, ring.get(), notify,
                             log, config.drain_timeout));
  log.info("cuzkd ready", {{"listen", inherited == 1 ? std::string("systemd socket") : config.listen},
                           {"listen_tcp", config.listen_tcp.empty() ? std::string("off") : config.listen_tcp},
                           {"state_dir", config.state_dir.string()},
                           {"math_threads", math.size()},
                           {"pipeline_threads", pipeline_threads}});
  notify.send("READY=1\nSTATUS=serving");
  loop.run();
  if (main_tasks.size() != 0 || ops.size() != 0) {
    log.error("event loop left with tasks running");
    return 1;
  }
  return 0;
}

}  // namespace cuzk::daemon
