// cuzkd: the cuzk proving daemon. Parses the command line and config, then
// hands over to daemon::run (the composition root).
#include <CLI/CLI.hpp>

#include <cstdio>

#include "daemon/config.hpp"
#include "daemon/daemon.hpp"
#include "rpc/server.hpp"
#include "runtime/event_loop.hpp"

int main(int argc, char** argv) {
  CLI::App app{"cuzkd - cuzk Groth16 proving daemon"};
  std::string config_path, listen, state_dir;
  app.add_option("-c,--config", config_path, "TOML config file (see cuzkd.example.toml); absent: defaults");
  app.add_option("-l,--listen", listen, "listen address, unix:///path/cuzkd.sock (overrides daemon.listen)");
  app.add_option("--state-dir", state_dir, "state directory: parameters (overrides daemon.state_dir)");
  CLI11_PARSE(app, argc, argv);

  cuzk::daemon::Config config;
  try {
    if (!config_path.empty()) config = cuzk::daemon::load_config(config_path);
  } catch (const cuzk::daemon::ConfigError& e) {
    std::fprintf(stderr, "cuzkd: config error: %s\n", e.what());
    return 2;
  }
  if (!listen.empty()) config.listen = listen;
  if (!state_dir.empty()) config.state_dir = state_dir;

  cuzk::runtime::Logger log(config.log_level, config.log_format);
  try {
    return cuzk::daemon::run(config, log);
  } catch (const cuzk::rpc::ServerError& e) {
    log.error("cannot serve", {{"error", e.what()}});
  } catch (const cuzk::runtime::RuntimeError& e) {
    log.error("cannot start the event loop", {{"error", e.what()}});
  }
  return 1;
}
