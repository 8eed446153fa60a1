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
  std::uint64_t max_message_bytes = 64ull << 20;
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
  // [engine]
  engine::EngineConfig engine;
  // [cpu]
  std::size_t math_threads = 0;      // data-parallel proving threads (0: all cores)
  std::size_t pipeline_threads = 0;  // stage runner threads (0: max_concurrent_jobs + 1)
  // [logging]
  runtime::LogLevel log_level = runtime::LogLevel::kInfo;
  runtime::LogFormat log_format = runtime::LogFormat::kText;
};

// Parses TOML text; `origin` names the source in error messages.
Config parse_config(const std::string& toml_text, const std::string& origin);
Config load_config(const std::filesystem::path& path);

}  // namespace cuzk::daemon
