#include "daemon/config.hpp"

#include <toml++/toml.h>

#include "policy/memory_budget.hpp"

#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace cuzk::daemon {
namespace {

class Reader {
 public:
  Reader(const toml::table& root, std::string origin) : root_(root), origin_(std::move(origin)) {
    for (auto&& [k, v] : root_) {
      std::string key(k.str());
      if (!v.is_table()) fail(key, "expected a [" + key + "] table");
      if (!kSections.count(key)) fail(key, "unknown section");
    }
  }

  template <class T>
  std::optional<T> get(const std::string& section, const std::string& key) {
    known_.insert(section + "." + key);
    const toml::node* node = root_.at_path(section + "." + key).node();
    if (!node) return std::nullopt;
    if constexpr (std::is_same_v<T, std::string>) {
      auto v = node->value<std::string>();
      if (!v || !node->is_string()) fail(section + "." + key, "expected a string");
      return *v;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!node->is_boolean()) fail(section + "." + key, "expected true or false");
      return *node->value<bool>();
    } else {
      if (!node->is_integer()) fail(section + "." + key, "expected an integer");
      std::int64_t v = *node->value<std::int64_t>();
      if (v < 0) fail(section + "." + key, "must not be negative");
      // A value beyond T would wrap (2^32 + 1 read as 1 by a uint32 key)
      // and slip past the key's own range check.
      if (static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max()) {
        fail(section + "." + key, "too large (at most " + std::to_string(std::numeric_limits<T>::max()) + ")");
      }
      return static_cast<T>(v);
    }
  }

  // Every key present must have been asked for: catches typos.
  void reject_unknown() const {
    for (auto&& [sk, sv] : root_) {
      for (auto&& [k, v] : *sv.as_table()) {
        std::string full = std::string(sk.str()) + "." + std::string(k.str());
        if (!known_.count(full)) fail(full, "unknown key");
      }
    }
  }

  [[noreturn]] void fail(const std::string& key, const std::string& why) const {
    throw ConfigError(origin_ + ": " + key + ": " + why);
  }

 private:
  inline static const std::set<std::string> kSections = {"daemon", "engine", "cpu",  "logging", "gpu",
                                                         "memory", "porep",  "snap", "srs",     "metrics"};
  const toml::table& root_;
  std::string origin_;
  std::set<std::string> known_;
};

}  // namespace

Config parse_config(const std::string& toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream o;
    o << origin << ":" << e.source().begin.line << ":" << e.source().begin.column << ": " << e.description();
    throw ConfigError(o.str());
  }
  Reader r(root, origin);
  Config c;
  if (auto v = r.get<std::string>("daemon", "listen")) c.listen = *v;
  if (auto v = r.get<std::string>("daemon", "state_dir")) c.state_dir = *v;
  if (auto v = r.get<std::string>("daemon", "socket_mode")) {
    // Octal string ("0660"): TOML integers would read 0660 as decimal 660.
    try {
      std::size_t used = 0;
      unsigned long mode = std::stoul(*v, &used, 8);
      if (used != v->size() || mode > 0777) throw std::invalid_argument("range");
      c.socket_mode = static_cast<unsigned>(mode);
    } catch (const std::exception&) {
      r.fail("daemon.socket_mode", "expected an octal mode string like \"0660\"");
    }
  }
  if (auto v = r.get<std::uint64_t>("daemon", "max_message_bytes")) {
    if (*v < 4096 || *v > (1ull << 31)) r.fail("daemon.max_message_bytes", "must be in [4096, 2^31]");
    c.max_message_bytes = *v;
  }
  // Durations are bounded so that the clock arithmetic done with them (now()
  // + timeout in nanoseconds, seconds -> milliseconds) cannot overflow.
  if (auto v = r.get<std::uint64_t>("daemon", "drain_timeout_ms")) {
    if (*v > 86'400'000) r.fail("daemon.drain_timeout_ms", "must be at most 86400000 (a day)");
    c.drain_timeout = std::chrono::milliseconds(*v);
  }
  if (auto v = r.get<std::string>("daemon", "listen_tcp")) c.listen_tcp = *v;
  if (auto v = r.get<std::string>("daemon", "tls_cert_file")) c.tls_cert_file = *v;
  if (auto v = r.get<std::string>("daemon", "tls_key_file")) c.tls_key_file = *v;
  if (auto v = r.get<std::string>("daemon", "token_file")) c.token_file = *v;
  if (auto v = r.get<bool>("daemon", "tcp_insecure_loopback")) c.tcp_insecure_loopback = *v;
  if (auto v = r.get<std::uint64_t>("daemon", "auth_timeout_ms")) {
    if (*v < 100 || *v > 600'000) r.fail("daemon.auth_timeout_ms", "must be in [100, 600000]");
    c.auth_timeout = std::chrono::milliseconds(*v);
  }
  if (auto v = r.get<std::uint32_t>("daemon", "max_calls_per_connection")) {
    if (*v == 0 || *v > 1'000'000) r.fail("daemon.max_calls_per_connection", "must be in [1, 1000000]");
    c.max_calls_per_connection = *v;
  }
  if (!c.listen_tcp.empty() && !c.tcp_insecure_loopback &&
      (c.tls_cert_file.empty() || c.tls_key_file.empty() || c.token_file.empty())) {
    r.fail("daemon.listen_tcp",
           "TCP needs tls_cert_file, tls_key_file and token_file (or tcp_insecure_loopback = true on a loopback "
           "address)");
  }
  if (auto v = r.get<std::size_t>("engine", "max_concurrent_jobs")) {
    if (*v == 0 || *v > 256) r.fail("engine.max_concurrent_jobs", "must be in [1, 256]");
    c.engine.max_concurrent_jobs = *v;
  }
  if (auto v = r.get<std::size_t>("engine", "critical_workers")) {
    if (*v > 16) r.fail("engine.critical_workers", "must be in [0, 16]");
    c.engine.critical_workers = *v;
  }
  if (auto v = r.get<std::size_t>("engine", "queue_capacity")) {
    if (*v == 0 || *v > 1'000'000) r.fail("engine.queue_capacity", "must be in [1, 1000000]");
    c.engine.admission.capacity = *v;
  }
  if (auto v = r.get<std::size_t>("engine", "urgent_reserve")) c.engine.admission.reserved_for_urgent = *v;
  if (c.engine.admission.reserved_for_urgent >= c.engine.admission.capacity) {
    // Keep the defaults consistent when only the capacity is lowered.
    if (c.engine.admission.capacity > 1 && !root.at_path("engine.urgent_reserve")) {
      c.engine.admission.reserved_for_urgent = c.engine.admission.capacity / 4;
    } else {
      r.fail("engine.urgent_reserve", "must be smaller than engine.queue_capacity");
    }
  }
  if (auto v = r.get<std::uint64_t>("engine", "result_ttl_s")) {
    if (*v > 31'536'000) r.fail("engine.result_ttl_s", "must be at most 31536000 (365 days)");
    c.engine.result_ttl = std::chrono::seconds(*v);
  }
  if (auto v = r.get<bool>("engine", "journal")) c.journal = *v;
  if (auto v = r.get<bool>("engine", "winning_post_cpu_race")) c.engine.winning_post_cpu_race = *v;
  if (auto v = r.get<std::uint32_t>("engine", "max_demo_log_domain")) {
    if (*v < 3 || *v > 28) r.fail("engine.max_demo_log_domain", "must be in [3, 28]");
    c.engine.max_demo_log_domain = *v;
  }
  if (auto v = r.get<std::size_t>("engine", "batch_max_size")) {
    if (*v == 0 || *v > 64) r.fail("engine.batch_max_size", "must be in [1, 64]");
    c.engine.batch_max_size = *v;
  }
  if (auto v = r.get<std::uint64_t>("engine", "batch_max_wait_ms")) {
    if (*v > 60'000) r.fail("engine.batch_max_wait_ms", "must be at most 60000");
    c.engine.batch_max_wait = std::chrono::milliseconds(*v);
  }
  if (auto v = r.get<std::size_t>("cpu", "math_threads")) c.math_threads = *v;
  if (auto v = r.get<std::size_t>("cpu", "pipeline_threads")) c.pipeline_threads = *v;
  if (auto v = r.get<std::string>("gpu", "devices")) {
    bool ok = *v == "auto" || *v == "none";
    if (!ok && !v->empty()) {
      ok = true;
      for (char ch : *v) ok = ok && ((ch >= '0' && ch <= '9') || ch == ',');
      ok = ok && v->front() != ',' && v->back() != ',' && v->find(",,") == std::string::npos;
    }
    if (!ok) r.fail("gpu.devices", "expected \"auto\", \"none\" or device ordinals like \"0,1\"");
    c.gpu_devices = *v;
  }
  if (auto v = r.get<std::uint32_t>("gpu", "workers_per_device")) {
    if (*v == 0 || *v > 4) r.fail("gpu.workers_per_device", "must be in [1, 4]");
    c.gpu_workers_per_device = *v;
  }
  if (auto v = r.get<bool>("gpu", "abc_on_device")) c.gpu_abc_on_device = *v;
  if (auto v = r.get<bool>("gpu", "critical_lane")) c.gpu_critical_lane = *v;
  if (auto v = r.get<std::string>("gpu", "msm_scratch")) {
    if (*v == "auto") {
      c.gpu_msm_scratch_bytes = 0;
    } else {
      auto b = policy::parse_size_bytes(*v);
      if (!b) {
        r.fail("gpu.msm_scratch", b.error().message);
      } else if (b.value() < kMinGpuMsmScratchBytes) {
        r.fail("gpu.msm_scratch", "\"auto\" or at least 256MiB");
      }
      c.gpu_msm_scratch_bytes = b.value();
    }
  }
  if (auto v = r.get<std::string>("gpu", "srs_device_budget")) {
    if (*v == "auto") {
      c.gpu_srs_device_budget_bytes.reset();
    } else {
      auto b = policy::parse_size_bytes(*v);
      if (!b) r.fail("gpu.srs_device_budget", "expected \"auto\" or a size: " + b.error().message);
      c.gpu_srs_device_budget_bytes = b.value();
    }
  }
  if (auto v = r.get<std::string>("memory", "total_budget")) {
    auto s = policy::parse_budget_setting(*v);
    if (!s) r.fail("memory.total_budget", s.error().message);
    c.memory_total_budget = *v;
  }
  if (auto v = r.get<std::string>("memory", "critical_overdraft")) {
    auto b = policy::parse_size_bytes(*v);
    if (!b)
      r.fail("memory.critical_overdraft", b.error().message);
    else
      c.engine.memory_critical_overdraft_bytes = b.value();
  }
  if (auto v = r.get<std::uint64_t>("memory", "staging_keep_idle_s")) {
    if (*v > 24 * 3600) r.fail("memory.staging_keep_idle_s", "must be in [0, 86400]");
    c.engine.staging_keep_idle = std::chrono::seconds(*v);
  }
  if (auto v = r.get<std::string>("memory", "auto_margin")) {
    auto b = policy::parse_size_bytes(*v);
    if (!b) r.fail("memory.auto_margin", b.error().message);
    c.memory_auto_margin_bytes = b.value();
  }
  if (auto v = r.get<std::size_t>("porep", "synthesis_threads")) {
    if (*v > 1024) r.fail("porep.synthesis_threads", "must be in [0, 1024] (0 or 1: sequential)");
    c.engine.porep_synthesis_threads = *v;
  }
  if (auto v = r.get<std::size_t>("porep", "synthesis_concurrency")) {
    if (*v > 64) r.fail("porep.synthesis_concurrency", "must be in [0, 64] (0: cores / synthesis_threads)");
    c.engine.porep_synthesis_lanes = *v;
  }
  if (auto v = r.get<std::size_t>("porep", "max_partitions_in_flight")) {
    if (*v > 64) r.fail("porep.max_partitions_in_flight", "must be in [0, 64] (0: synthesis_concurrency + 1)");
    c.engine.porep_max_partitions_in_flight = *v;
  }
  if (auto v = r.get<bool>("porep", "check_satisfaction")) c.engine.porep_check_satisfaction = *v;
  if (auto v = r.get<std::size_t>("porep", "batch_max_jobs")) {
    if (*v == 0 || *v > 16) r.fail("porep.batch_max_jobs", "must be in [1, 16]");
    c.engine.porep_batch_max_jobs = *v;
  }
  if (auto v = r.get<std::uint64_t>("porep", "batch_max_wait_ms")) {
    if (*v > 600'000) r.fail("porep.batch_max_wait_ms", "must be at most 600000");
    c.engine.porep_batch_max_wait = std::chrono::milliseconds(*v);
  }
  if (auto v = r.get<bool>("porep", "join_running_batch")) c.engine.porep_join_running_batch = *v;
  if (auto v = r.get<std::size_t>("snap", "batch_max_jobs")) {
    if (*v == 0 || *v > 16) r.fail("snap.batch_max_jobs", "must be in [1, 16]");
    c.engine.snap_batch_max_jobs = *v;
  }
  if (auto v = r.get<std::uint64_t>("snap", "batch_max_wait_ms")) {
    if (*v > 600'000) r.fail("snap.batch_max_wait_ms", "must be at most 600000");
    c.engine.snap_batch_max_wait = std::chrono::milliseconds(*v);
  }
  if (auto v = r.get<std::uint64_t>("srs", "min_idle_s")) {
    if (*v > 7 * 24 * 3600) r.fail("srs.min_idle_s", "must be in [0, 604800]");
    c.engine.srs_min_idle = std::chrono::seconds(*v);
  }
  if (auto v = r.get<std::uint64_t>("srs", "reload_mib_per_s")) {
    if (*v > 1'000'000) r.fail("srs.reload_mib_per_s", "must be in [0, 1000000]");
    c.engine.srs_reload_bytes_per_s = *v << 20;
  }
  if (auto v = r.get<bool>("srs", "release_host_copy")) c.engine.srs_release_host_copy = *v;
  if (auto v = r.get<std::string>("srs", "max_host_bytes")) {
    if (*v == "unlimited") {
      c.engine.srs_max_host_bytes = UINT64_MAX;
    } else {
      auto b = policy::parse_size_bytes(*v);
      if (!b)
        r.fail("srs.max_host_bytes", "expected \"unlimited\" or a size: " + b.error().message);
      else
        c.engine.srs_max_host_bytes = b.value();
    }
  }
  if (auto v = r.get<std::string>("metrics", "listen")) c.metrics_listen = *v;
  if (auto v = r.get<bool>("metrics", "allow_non_loopback")) c.metrics_allow_non_loopback = *v;
  if (auto v = r.get<std::string>("logging", "level")) {
    auto l = runtime::parse_log_level(*v);
    if (!l) r.fail("logging.level", "expected debug, info, warn or error");
    c.log_level = *l;
  }
  if (auto v = r.get<std::string>("logging", "format")) {
    auto f = runtime::parse_log_format(*v);
    if (!f) r.fail("logging.format", "expected text or json");
    c.log_format = *f;
  }
  r.reject_unknown();
  c.engine.drain_timeout = c.drain_timeout;
  return c;
}

Config load_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  return parse_config(text.str(), path.string());
}

}  // namespace cuzk::daemon
