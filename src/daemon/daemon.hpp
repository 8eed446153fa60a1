// cuzkd's composition root: builds the loop, pools, parameter store, engine
// and RPC server from a Config, runs until SIGTERM/SIGINT, then drains:
//   1. sd_notify STOPPING, stop accepting connections;
//   2. engine drain: refuse new jobs (shuttingDown), cancel queued jobs, let
//      running jobs finish for up to drain_timeout, then cancel them;
//   3. server shutdown: answer pending awaits, close connections;
//   4. leave the loop; exit status 0.
#pragma once

#include "daemon/config.hpp"
#include "runtime/log.hpp"

namespace cuzk::daemon {

// Returns the process exit status.
int run(const Config& config, runtime::Logger& log);

}  // namespace cuzk::daemon
