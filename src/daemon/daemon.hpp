// cuzkd's composition root: builds the loop, pools, parameter store, engine
// and RPC server from a Config, runs until SIGTERM/SIGINT, then drains:
//   1. sd_notify STOPPING, stop accepting connections;
//   2. engine drain: refuse new jobs (shuttingDown), cancel queued jobs, let
//      running jobs finish for up to drain_timeout, then cancel them;
//   3. server shutdown: answer pending awaits, close connections;
//   4. leave the loop; exit status 0.
//
// Operations while running:
// - SIGHUP: sd_notify RELOADING=1, re-read the config file, apply what can
//   change on a running daemon (logging.level, logging.format,
//   daemon.max_calls_per_connection, the contents of daemon.token_file,
//   engine.queue_capacity, engine.urgent_reserve, engine.max_demo_log_domain),
//   log every applied change and every changed key that needs a restart, then
//   READY=1. A config that fails to parse changes nothing (logged as error).
// - Watchdog: when systemd sets WATCHDOG_USEC (WatchdogSec=), WATCHDOG=1 is
//   sent from a timer ON THE EVENT LOOP every WATCHDOG_USEC/2, so a loop that
//   is stuck (a blocking call, a livelock) stops the pings and systemd
//   restarts the service.
// - Every notification (READY, STOPPING, RELOADING, WATCHDOG) is a
//   non-blocking datagram (runtime/sd_notifier.hpp): a notify socket nobody
//   reads drops messages instead of stalling the loop.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "daemon/config.hpp"
#include "runtime/log.hpp"

namespace cuzk::daemon {

// A config as loaded: the parsed values and the TOML text they came from
// (the text lets a reload name every changed key, including sections this
// file does not know).
struct LoadedConfig {
  Config config;
  std::string toml_text;
};
// Re-reads the configuration for SIGHUP (throws ConfigError). Empty: the
// daemon runs without a config file and SIGHUP only logs that.
using ConfigReloader = std::function<LoadedConfig()>;

// The proving back ends a binary provides (cuzkd links the GPU service when
// CUDA is built; tests and CPU-only builds leave it empty: CPU proving).
struct BackendFactory {
  // GPU back ends for the [gpu] section: devices ("auto", "none", "0,1"),
  // workers_per_device, critical_lane, abc_on_device, msm_scratch, srs_device_budget
  // (Config's gpu_* fields).
  std::function<std::vector<std::shared_ptr<engine::DeviceBackend>>(const Config& config, ThreadPool& math,
                                                                    runtime::Logger& log)>
      make_gpus;
  // The development-parameter generator running on a GPU back end.
  std::function<engine::DevParamsGenerator(std::shared_ptr<engine::DeviceBackend>)> dev_params;
};

// Returns the process exit status.
int run(const Config& config, runtime::Logger& log, ConfigReloader reload = {}, std::string toml_text = "",
        const BackendFactory& backends = {});

// The keys whose values differ between two TOML texts ("section.key",
// sorted); unparsable text counts as empty.
std::vector<std::string> changed_keys(const std::string& old_toml, const std::string& new_toml);

}  // namespace cuzk::daemon
