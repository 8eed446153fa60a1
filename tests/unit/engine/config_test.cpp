// cuzkd's TOML config: defaults, every key, and strict errors that name the
// offending key.
#include <gtest/gtest.h>

#include "daemon/config.hpp"

namespace cuzk::daemon {
namespace {

TEST(Config, EmptyFileGivesDefaults) {
  Config c = parse_config("", "test");
  EXPECT_EQ(c.listen, "unix:///run/cuzkd/cuzkd.sock");
  EXPECT_EQ(c.socket_mode, 0660u);
  EXPECT_EQ(c.engine.admission.capacity, 64u);
  EXPECT_EQ(c.engine.admission.reserved_for_urgent, 4u);
  EXPECT_EQ(c.engine.max_concurrent_jobs, 1u);
  EXPECT_EQ(c.engine.critical_workers, 1u);
  EXPECT_EQ(c.log_format, runtime::LogFormat::kText);
}

TEST(Config, ReadsEveryKey) {
  Config c = parse_config(R"(
[daemon]
listen = "unix:///tmp/x.sock"
state_dir = "/srv/cuzk"
socket_mode = "0600"
max_message_bytes = 1048576
drain_timeout_ms = 1500
[engine]
max_concurrent_jobs = 3
critical_workers = 2
queue_capacity = 10
urgent_reserve = 2
result_ttl_s = 5
max_demo_log_domain = 20
[cpu]
math_threads = 4
pipeline_threads = 5
[logging]
level = "debug"
format = "json"
)",
                          "test");
  EXPECT_EQ(c.listen, "unix:///tmp/x.sock");
  EXPECT_EQ(c.state_dir, "/srv/cuzk");
  EXPECT_EQ(c.socket_mode, 0600u);
  EXPECT_EQ(c.max_message_bytes, 1048576u);
  EXPECT_EQ(c.drain_timeout.count(), 1500);
  EXPECT_EQ(c.engine.drain_timeout.count(), 1500);
  EXPECT_EQ(c.engine.max_concurrent_jobs, 3u);
  EXPECT_EQ(c.engine.critical_workers, 2u);
  EXPECT_EQ(c.engine.admission.capacity, 10u);
  EXPECT_EQ(c.engine.admission.reserved_for_urgent, 2u);
  EXPECT_EQ(c.engine.result_ttl.count(), 5000);
  EXPECT_EQ(c.engine.max_demo_log_domain, 20u);
  EXPECT_EQ(c.math_threads, 4u);
  EXPECT_EQ(c.pipeline_threads, 5u);
  EXPECT_EQ(c.log_level, runtime::LogLevel::kDebug);
  EXPECT_EQ(c.log_format, runtime::LogFormat::kJson);
}

void expect_error(const std::string& toml, const std::string& fragment) {
  try {
    parse_config(toml, "cfg");
    ADD_FAILURE() << "accepted: " << toml;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Config, RejectsWithTheOffendingKeyNamed) {
  expect_error("[engine]\nqueue_capacty = 3\n", "engine.queue_capacty: unknown key");
  expect_error("[gpus]\nx = 1\n", "gpus: unknown section");
  expect_error("[engine]\nqueue_capacity = \"ten\"\n", "engine.queue_capacity: expected an integer");
  expect_error("[engine]\nqueue_capacity = -1\n", "must not be negative");
  expect_error("[engine]\nqueue_capacity = 4\nurgent_reserve = 4\n", "engine.urgent_reserve");
  expect_error("[daemon]\nsocket_mode = \"0999\"\n", "daemon.socket_mode");
  expect_error("[daemon]\nmax_message_bytes = 10\n", "daemon.max_message_bytes");
  expect_error("[logging]\nformat = \"xml\"\n", "logging.format");
  expect_error("[engine]\ncritical_workers = 17\n", "engine.critical_workers");
  expect_error("[engine\n", "cfg:1");  // syntax error with its position
}

// Found by fuzz/config_fuzz.cpp: integers beyond a uint32 key wrapped into its
// range (2^32 + 1 read as 1), and unbounded durations overflowed the clock
// arithmetic (result_ttl_s in seconds -> milliseconds, UB for 2^63 - 1).
TEST(Config, RejectsIntegersBeyondTheKeysTypeAndOverflowingDurations) {
  expect_error("[daemon]\nmax_calls_per_connection = 4294967297\n", "daemon.max_calls_per_connection: too large");
  expect_error("[gpu]\nworkers_per_device = 4294967297\n", "gpu.workers_per_device: too large");
  expect_error("[engine]\nmax_demo_log_domain = 4294967299\n", "engine.max_demo_log_domain: too large");
  expect_error("[engine]\nresult_ttl_s = 9223372036854775807\n", "engine.result_ttl_s");
  expect_error("[daemon]\ndrain_timeout_ms = 9223372036854775807\n", "daemon.drain_timeout_ms");
  Config c = parse_config("[engine]\nresult_ttl_s = 31536000\n[daemon]\ndrain_timeout_ms = 86400000\n", "test");
  EXPECT_EQ(c.engine.result_ttl, std::chrono::seconds(31'536'000));
  EXPECT_EQ(c.drain_timeout, std::chrono::milliseconds(86'400'000));
}

TEST(Config, LoweringOnlyTheCapacityKeepsTheReserveConsistent) {
  Config c = parse_config("[engine]\nqueue_capacity = 2\n", "test");
  EXPECT_LT(c.engine.admission.reserved_for_urgent, c.engine.admission.capacity);
}

}  // namespace
}  // namespace cuzk::daemon

namespace cuzk::daemon {
namespace {

// systemd/cuzkd.example.toml documents every key with its default: it must
// parse, and parse to exactly the built-in defaults.
TEST(Config, ExampleFileDocumentsTheDefaults) {
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  Config d;
  EXPECT_EQ(example.listen, d.listen);
  EXPECT_EQ(example.state_dir, d.state_dir);
  EXPECT_EQ(example.socket_mode, d.socket_mode);
  EXPECT_EQ(example.max_message_bytes, d.max_message_bytes);
  EXPECT_EQ(example.drain_timeout, d.drain_timeout);
  EXPECT_EQ(example.engine.max_concurrent_jobs, d.engine.max_concurrent_jobs);
  EXPECT_EQ(example.engine.critical_workers, d.engine.critical_workers);
  EXPECT_EQ(example.engine.admission.capacity, d.engine.admission.capacity);
  EXPECT_EQ(example.engine.admission.reserved_for_urgent, d.engine.admission.reserved_for_urgent);
  EXPECT_EQ(example.engine.result_ttl, d.engine.result_ttl);
  EXPECT_EQ(example.engine.max_demo_log_domain, d.engine.max_demo_log_domain);
  EXPECT_EQ(example.engine.batch_max_size, d.engine.batch_max_size);
  EXPECT_EQ(example.engine.batch_max_wait, d.engine.batch_max_wait);
  EXPECT_EQ(example.math_threads, d.math_threads);
  EXPECT_EQ(example.pipeline_threads, d.pipeline_threads);
  EXPECT_EQ(example.log_level, d.log_level);
  EXPECT_EQ(example.log_format, d.log_format);
  EXPECT_EQ(example.metrics_listen, d.metrics_listen);
  EXPECT_EQ(example.metrics_allow_non_loopback, d.metrics_allow_non_loopback);
}

TEST(Config, MetricsEndpointIsOffByDefaultAndReadsItsKeys) {
  Config d = parse_config("", "test");
  EXPECT_EQ(d.metrics_listen, "");
  EXPECT_FALSE(d.metrics_allow_non_loopback);
  Config c = parse_config("[metrics]\nlisten = \"127.0.0.1:9821\"\nallow_non_loopback = true\n", "test");
  EXPECT_EQ(c.metrics_listen, "127.0.0.1:9821");
  EXPECT_TRUE(c.metrics_allow_non_loopback);
  EXPECT_THROW(parse_config("[metrics]\nlisten = 9821\n", "test"), ConfigError);
  EXPECT_THROW(parse_config("[metrics]\nport = 9821\n", "test"), ConfigError);
}

}  // namespace
}  // namespace cuzk::daemon

namespace cuzk::daemon {
namespace {

TEST(Config, JournalIsOnByDefaultAndCanBeTurnedOff) {
  EXPECT_TRUE(parse_config("", "test").journal);
  EXPECT_FALSE(parse_config("[engine]\njournal = false\n", "test").journal);
  EXPECT_TRUE(load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml").journal);
  expect_error("[engine]\njournal = 1\n", "engine.journal: expected true or false");
}

}  // namespace
}  // namespace cuzk::daemon

namespace cuzk::daemon {
namespace {

// [daemon] TCP/TLS/token and per-connection limits (rpc/server.hpp).
TEST(Config, TcpKeysAndTheirDefaults) {
  Config d = parse_config("", "test");
  EXPECT_TRUE(d.listen_tcp.empty());
  EXPECT_EQ(d.max_message_bytes, 128ull << 20);  // a 32 GiB C1 JSON is ~51 MB
  EXPECT_EQ(d.max_calls_per_connection, 64u);
  Config c = parse_config(R"([daemon]
listen_tcp = "tcp://0.0.0.0:9820"
tls_cert_file = "/etc/cuzkd/cert.pem"
tls_key_file = "/etc/cuzkd/key.pem"
token_file = "/etc/cuzkd/token"
auth_timeout_ms = 2500
max_calls_per_connection = 7
)",
                          "test");
  EXPECT_EQ(c.listen_tcp, "tcp://0.0.0.0:9820");
  EXPECT_EQ(c.tls_cert_file, "/etc/cuzkd/cert.pem");
  EXPECT_EQ(c.tls_key_file, "/etc/cuzkd/key.pem");
  EXPECT_EQ(c.token_file, "/etc/cuzkd/token");
  EXPECT_EQ(c.auth_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(c.max_calls_per_connection, 7u);
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  EXPECT_EQ(example.listen_tcp, d.listen_tcp);
  EXPECT_EQ(example.tcp_insecure_loopback, d.tcp_insecure_loopback);
  EXPECT_EQ(example.auth_timeout, d.auth_timeout);
  EXPECT_EQ(example.max_calls_per_connection, d.max_calls_per_connection);
  // TCP without TLS material (and not the loopback opt-out) is refused up front.
  expect_error("[daemon]\nlisten_tcp = \"tcp://0.0.0.0:1\"\n", "daemon.listen_tcp: TCP needs tls_cert_file");
  EXPECT_NO_THROW(parse_config("[daemon]\nlisten_tcp = \"tcp://127.0.0.1:1\"\ntcp_insecure_loopback = true\n", "t"));
  expect_error("[daemon]\nmax_calls_per_connection = 0\n", "daemon.max_calls_per_connection");
  expect_error("[daemon]\nauth_timeout_ms = 5\n", "daemon.auth_timeout_ms");
  expect_error("[daemon]\ntcp_insecure_loopback = 1\n", "expected true or false");
}

}  // namespace
}  // namespace cuzk::daemon

namespace cuzk::daemon {
namespace {

TEST(Config, PorepBatchKeysTheirBoundsAndDefaults) {
  Config c = parse_config("[porep]\nbatch_max_jobs = 3\nbatch_max_wait_ms = 250\n", "cfg");
  EXPECT_EQ(c.engine.porep_batch_max_jobs, 3u);
  EXPECT_EQ(c.engine.porep_batch_max_wait, std::chrono::milliseconds(250));
  expect_error("[porep]\nbatch_max_jobs = 0\n", "porep.batch_max_jobs");
  expect_error("[porep]\nbatch_max_jobs = 17\n", "porep.batch_max_jobs");
  expect_error("[porep]\nbatch_max_wait_ms = 600001\n", "porep.batch_max_wait_ms");
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  Config d;
  EXPECT_EQ(example.engine.porep_batch_max_jobs, d.engine.porep_batch_max_jobs);
  EXPECT_EQ(example.engine.porep_batch_max_wait, d.engine.porep_batch_max_wait);
}

TEST(Config, SnapBatchKeysTheirBoundsAndDefaults) {
  Config c = parse_config("[snap]\nbatch_max_jobs = 4\nbatch_max_wait_ms = 500\n", "cfg");
  EXPECT_EQ(c.engine.snap_batch_max_jobs, 4u);
  EXPECT_EQ(c.engine.snap_batch_max_wait, std::chrono::milliseconds(500));
  expect_error("[snap]\nbatch_max_jobs = 0\n", "snap.batch_max_jobs");
  expect_error("[snap]\nbatch_max_jobs = 17\n", "snap.batch_max_jobs");
  expect_error("[snap]\nbatch_max_wait_ms = 600001\n", "snap.batch_max_wait_ms");
  expect_error("[snap]\njoin_running_batch = true\n", "snap.join_running_batch");  // not a key
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  Config d;
  EXPECT_EQ(example.engine.snap_batch_max_jobs, d.engine.snap_batch_max_jobs);
  EXPECT_EQ(example.engine.snap_batch_max_wait, d.engine.snap_batch_max_wait);
}

TEST(Config, PorepJoinRunningBatchIsOnByDefaultAndInTheExample) {
  Config d;
  EXPECT_TRUE(d.engine.porep_join_running_batch);
  EXPECT_FALSE(parse_config("[porep]\njoin_running_batch = false\n", "cfg").engine.porep_join_running_batch);
  EXPECT_TRUE(parse_config("[porep]\njoin_running_batch = true\n", "cfg").engine.porep_join_running_batch);
  expect_error("[porep]\njoin_running_batch = 1\n", "expected true or false");
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  EXPECT_TRUE(example.engine.porep_join_running_batch);
}

TEST(Config, WinningPostCpuRaceIsOnByDefaultAndInTheExample) {
  Config d;
  EXPECT_TRUE(d.engine.winning_post_cpu_race);
  EXPECT_FALSE(parse_config("[engine]\nwinning_post_cpu_race = false\n", "cfg").engine.winning_post_cpu_race);
  expect_error("[engine]\nwinning_post_cpu_race = 2\n", "expected true or false");
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  EXPECT_TRUE(example.engine.winning_post_cpu_race);
}

}  // namespace
}  // namespace cuzk::daemon
