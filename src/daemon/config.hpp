// cuzkd configuration: a TOML file (every key optional, defaults below and in
// systemd/cuzkd.example.toml), then command-line overrides. Parsing is
// strict: an unknown key, a wrong type or an out-of-range value is an error
// naming the key, never a silent default.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>

#include "engine/engine.hpp"
#include "runtime/log.hpp"

namespace cuzk::daemon {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Config {
  // [daemon]
  std::string listen = "unix:///run/cuzkd/cuzkd.sock";
  std::filesystem::path state_dir = "/var/lib/cuzkd";
  unsigned socket_mode = 0660;
  std::uint64_t max_message_bytes = 128ull << 20;  // fits a 32 GiB PoRep C1 JSON (~51 MB) with margin
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
  // [daemon] TCP listener (rpc/server.hpp: TLS + bearer token).
  std::string listen_tcp;  // "tcp://host:port"; empty: Unix socket only
  std::filesystem::path tls_cert_file, tls_key_file, token_file;
  bool tcp_insecure_loopback = false;
  std::chrono::milliseconds auth_timeout{std::chrono::seconds(10)};
  std::uint32_t max_calls_per_connection = 64;
  // [engine]
  engine::EngineConfig engine;
  // Durable job journal under state_dir (engine/job_journal.hpp); the daemon
  // sets engine.journal_dir from it.
  bool journal = true;
  // [cpu]
  std::size_t math_threads = 0;      // data-parallel proving threads (0: all cores)
  std::size_t pipeline_threads = 0;  // stage runner threads (0: max_concurrent_jobs + 1)
  // [gpu]
  std::string gpu_devices = "auto";          // "auto" (every device), "none" (CPU only), or ordinals "0,1"
  std::uint32_t gpu_workers_per_device = 1;  // provers per device (each holds its own SRS copy)
  // a, b, c = A.w, B.w, C.w (and the satisfaction check) on the device from
  // R1CS matrices kept there, instead of on the host pool
  // (gpu_service::GpuBackendOptions::abc_on_device).
  bool gpu_abc_on_device = true;
  // One more prover per device for small critical partitions, on streams of
  // the device's greatest priority (gpu_service::GpuBackendOptions::critical_lane).
  bool gpu_critical_lane = true;
  // Device memory one prover's MSMs may use as scratch (gpu.msm_scratch:
  // "auto" or a size); 0: the device's default (a quarter of its memory
  // within 8..32 GiB; 5/12 up to 64 GiB from 128 GiB on). Less makes large
  // MSMs run in more chunks.
  std::uint64_t gpu_msm_scratch_bytes = 0;
  // Device memory one prover keeps its SRS in (gpu.srs_device_budget: "auto"
  // or a size; 0 streams all of it from pinned host memory); empty: auto,
  // the whole SRS when it fits beside the prover's working set, else what is
  // left beside it (gpu::GpuProverOptions::srs_device_budget_bytes).
  std::optional<std::uint64_t> gpu_srs_device_budget_bytes = std::nullopt;
  // [memory]
  std::string memory_total_budget = "auto";              // host-memory budget: "auto" (RAM - margin) or a size
  std::uint64_t memory_auto_margin_bytes = 12ull << 30;  // what "auto" leaves to the OS and the rest
  // [porep] per-partition pipeline of PoRep C2 jobs: engine.porep_* fields.
  // [srs] parameter-set residency: engine.srs_min_idle, engine.srs_max_host_bytes.
  // [metrics] the Prometheus scrape endpoint (daemon/metrics_http.hpp):
  // "127.0.0.1:9821" or "[::1]:9821"; empty: off. A non-loopback address
  // needs allow_non_loopback.
  std::string metrics_listen;
  bool metrics_allow_non_loopback = false;
  // [logging]
  runtime::LogLevel log_level = runtime::LogLevel::kInfo;
  runtime::LogFormat log_format = runtime::LogFormat::kText;
};

// The smallest gpu.msm_scratch accepted: below it even a 2^20-point MSM
// would run in many chunks.
inline constexpr std::uint64_t kMinGpuMsmScratchBytes = std::uint64_t{256} << 20;

// Parses TOML text; `origin` names the source in error messages.
Config parse_config(const std::string& toml_text, const std::string& origin);
Config load_config(const std::filesystem::path& path);

}  // namespace cuzk::daemon
