// cuzkd: the cuzk proving daemon. Parses the command line and config, then
// hands over to daemon::run (the composition root). Command-line and config
// errors keep the contract of every cuzk binary (tools/cli/cli_contract.hpp):
// one line "error: <kind>: <message>", exit 2; once running, failures are
// log lines and exit 1.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/cli_contract.hpp"
#include "daemon/config.hpp"
#include "daemon/daemon.hpp"
#include "rpc/server.hpp"
#include "runtime/event_loop.hpp"
#if CUZK_WITH_GPU
#include "gpu/service/gpu_backend.hpp"
#endif

namespace {

struct Overrides {
  std::string listen, listen_tcp, state_dir;
  void apply(cuzk::daemon::Config& c) const {
    if (!listen.empty()) c.listen = listen;
    if (!listen_tcp.empty()) c.listen_tcp = listen_tcp;
    if (!state_dir.empty()) c.state_dir = state_dir;
  }
};

// A config file that cannot be opened (not a parse error: not_found).
struct ConfigMissing : cuzk::daemon::ConfigError {
  using ConfigError::ConfigError;
};

// The file's text and its parsed config with the command-line overrides.
cuzk::daemon::LoadedConfig load(const std::string& path, const Overrides& overrides) {
  std::ifstream in(path);
  if (!in) throw ConfigMissing(path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  cuzk::daemon::LoadedConfig out{cuzk::daemon::parse_config(text.str(), path), text.str()};
  overrides.apply(out.config);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cuzkd - cuzk Groth16 proving daemon"};
  std::string config_path;
  Overrides overrides;
  app.add_option("-c,--config", config_path, "TOML config file (see cuzkd.example.toml); absent: defaults");
  app.add_option("-l,--listen", overrides.listen, "listen address, unix:///path/cuzkd.sock (overrides daemon.listen)");
  app.add_option("--listen-tcp", overrides.listen_tcp,
                 "TCP listen address, tcp://host:port (overrides daemon.listen_tcp; TLS keys from the config)");
  app.add_option("--state-dir", overrides.state_dir, "state directory: parameters (overrides daemon.state_dir)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return cuzk::cli::exit_for_parse_error(app, e);
  }

  cuzk::daemon::LoadedConfig loaded;
  try {
    if (!config_path.empty()) loaded = load(config_path, overrides);
  } catch (const ConfigMissing& e) {
    cuzk::cli::print_error(cuzk::cli::kind::kNotFound, std::string("config: ") + e.what());
    return cuzk::cli::kExitUsage;
  } catch (const cuzk::daemon::ConfigError& e) {
    cuzk::cli::print_error(cuzk::cli::kind::kInvalidInput, std::string("config: ") + e.what());
    return cuzk::cli::kExitUsage;
  }
  overrides.apply(loaded.config);
  cuzk::daemon::ConfigReloader reload;
  if (!config_path.empty()) reload = [config_path, overrides] { return load(config_path, overrides); };

  cuzk::runtime::Logger log(loaded.config.log_level, loaded.config.log_format);
  try {
    cuzk::daemon::BackendFactory backends;
#if CUZK_WITH_GPU
    backends.make_gpus = [](const cuzk::daemon::Config& c, cuzk::ThreadPool& math, cuzk::runtime::Logger& log) {
      cuzk::gpu_service::GpuBackendOptions options;
      options.abc_on_device = c.gpu_abc_on_device;
      options.msm_scratch_bytes = c.gpu_msm_scratch_bytes;
      options.srs_device_budget_bytes = c.gpu_srs_device_budget_bytes;
      return cuzk::gpu_service::make_gpu_backends(c.gpu_devices, c.gpu_workers_per_device, c.gpu_critical_lane, options,
                                                  math, log);
    };
    backends.dev_params = cuzk::gpu_service::gpu_dev_params_generator;
#endif
    return cuzk::daemon::run(loaded.config, log, std::move(reload), std::move(loaded.toml_text), backends);
  } catch (const cuzk::rpc::ServerError& e) {
    log.error("cannot serve", {{"error", e.what()}});
  } catch (const cuzk::runtime::RuntimeError& e) {
    log.error("cannot start the event loop", {{"error", e.what()}});
  }
  return 1;
}
