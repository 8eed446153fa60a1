// cuzkd's TOML configuration (daemon/config.cpp parse_config). Only
// ConfigError may come out, and an accepted configuration must satisfy the
// invariants the daemon relies on without rechecking them.
#include "daemon/config.hpp"
#include "fuzz_util.hpp"

using namespace cuzk;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  daemon::Config c;
  try {
    c = daemon::parse_config(text, "fuzz.toml");
  } catch (const daemon::ConfigError&) {
    return 0;
  }
  const auto& adm = c.engine.admission;
  fuzz::require(adm.reserved_for_urgent < adm.capacity, "urgent_reserve >= queue_capacity accepted");
  fuzz::require(c.socket_mode <= 0777, "socket_mode out of range");
  fuzz::require(c.max_message_bytes >= 4096 && c.max_message_bytes <= (1ull << 31), "max_message_bytes range");
  fuzz::require(c.max_calls_per_connection >= 1 && c.max_calls_per_connection <= 1'000'000,
                "max_calls_per_connection range");
  fuzz::require(c.engine.max_concurrent_jobs >= 1 && c.engine.max_concurrent_jobs <= 256, "max_concurrent_jobs");
  fuzz::require(c.engine.max_demo_log_domain >= 3 && c.engine.max_demo_log_domain <= 28, "max_demo_log_domain");
  fuzz::require(c.gpu_workers_per_device >= 1 && c.gpu_workers_per_device <= 4, "workers_per_device");
  return 0;
}
