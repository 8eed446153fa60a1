// The [gpu], [memory] and [porep] sections of cuzkd's config: defaults, every
// key, strict errors naming the key, and the example file's defaults.
#include <gtest/gtest.h>

#include "daemon/config.hpp"

namespace cuzk::daemon {
namespace {

TEST(GpuConfig, Defaults) {
  Config c = parse_config("", "test");
  EXPECT_EQ(c.gpu_devices, "auto");
  EXPECT_EQ(c.gpu_workers_per_device, 1u);
  EXPECT_TRUE(c.gpu_abc_on_device);
  EXPECT_TRUE(c.gpu_critical_lane);
  EXPECT_EQ(c.gpu_msm_scratch_bytes, 0u);
  EXPECT_FALSE(c.gpu_srs_device_budget_bytes.has_value());
  EXPECT_EQ(c.memory_total_budget, "auto");
  EXPECT_EQ(c.memory_auto_margin_bytes, 12ull << 30);
  EXPECT_EQ(c.engine.memory_critical_overdraft_bytes, 1ull << 30);
  EXPECT_EQ(c.engine.staging_keep_idle, std::chrono::minutes(2));
  EXPECT_EQ(c.engine.porep_synthesis_threads, 1u);
  EXPECT_EQ(c.engine.porep_synthesis_lanes, 0u);
  EXPECT_EQ(c.engine.porep_max_partitions_in_flight, 0u);
  EXPECT_TRUE(c.engine.porep_check_satisfaction);
}

TEST(GpuConfig, ReadsEveryKey) {
  Config c = parse_config(R"(
[gpu]
devices = "0,2"
workers_per_device = 2
abc_on_device = false
critical_lane = false
msm_scratch = "24GiB"
srs_device_budget = "20GiB"
[memory]
total_budget = "96GiB"
auto_margin = "4GiB"
critical_overdraft = "2GiB"
staging_keep_idle_s = 0
[porep]
synthesis_threads = 6
synthesis_concurrency = 3
max_partitions_in_flight = 5
check_satisfaction = false
)",
                          "test");
  EXPECT_EQ(c.gpu_devices, "0,2");
  EXPECT_EQ(c.gpu_workers_per_device, 2u);
  EXPECT_FALSE(c.gpu_abc_on_device);
  EXPECT_FALSE(c.gpu_critical_lane);
  EXPECT_EQ(c.gpu_msm_scratch_bytes, 24ull << 30);
  EXPECT_EQ(parse_config("[gpu]\nmsm_scratch = \"auto\"\n", "t").gpu_msm_scratch_bytes, 0u);
  EXPECT_EQ(parse_config("[gpu]\nmsm_scratch = \"256MiB\"\n", "t").gpu_msm_scratch_bytes, kMinGpuMsmScratchBytes);
  EXPECT_EQ(c.gpu_srs_device_budget_bytes, std::optional<std::uint64_t>(20ull << 30));
  EXPECT_FALSE(parse_config("[gpu]\nsrs_device_budget = \"auto\"\n", "t").gpu_srs_device_budget_bytes.has_value());
  EXPECT_EQ(parse_config("[gpu]\nsrs_device_budget = \"0\"\n", "t").gpu_srs_device_budget_bytes,
            std::optional<std::uint64_t>(0));  // the whole SRS streamed from host memory
  EXPECT_EQ(c.memory_total_budget, "96GiB");
  EXPECT_TRUE(parse_config("[gpu]\nabc_on_device = true\n", "t").gpu_abc_on_device);
  EXPECT_EQ(c.memory_auto_margin_bytes, 4ull << 30);
  EXPECT_EQ(c.engine.memory_critical_overdraft_bytes, 2ull << 30);
  EXPECT_EQ(c.engine.staging_keep_idle.count(), 0);
  EXPECT_EQ(c.engine.porep_synthesis_threads, 6u);
  EXPECT_EQ(c.engine.porep_synthesis_lanes, 3u);
  EXPECT_EQ(c.engine.porep_max_partitions_in_flight, 5u);
  EXPECT_FALSE(c.engine.porep_check_satisfaction);
  EXPECT_EQ(parse_config("[gpu]\ndevices = \"none\"\n", "t").gpu_devices, "none");
}

TEST(GpuConfig, ErrorsNameTheKey) {
  auto fails_with = [](const std::string& text, const std::string& key) {
    try {
      parse_config(text, "t");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  fails_with("[gpu]\ndevices = \"all\"\n", "gpu.devices");
  fails_with("[gpu]\ndevices = \"0,,1\"\n", "gpu.devices");
  fails_with("[gpu]\ndevices = \"1,\"\n", "gpu.devices");
  fails_with("[gpu]\nworkers_per_device = 0\n", "gpu.workers_per_device");
  fails_with("[gpu]\ncolor = 1\n", "gpu.color");
  fails_with("[gpu]\nabc_on_device = 1\n", "gpu.abc_on_device");
  fails_with("[gpu]\nabc_on_device = \"yes\"\n", "gpu.abc_on_device");
  fails_with("[gpu]\ncritical_lane = \"on\"\n", "gpu.critical_lane");
  fails_with("[gpu]\nmsm_scratch = \"lots\"\n", "gpu.msm_scratch");
  fails_with("[gpu]\nmsm_scratch = \"64MiB\"\n", "gpu.msm_scratch");
  fails_with("[gpu]\nmsm_scratch = 8\n", "gpu.msm_scratch");
  fails_with("[gpu]\nsrs_device_budget = \"most\"\n", "gpu.srs_device_budget");
  fails_with("[gpu]\nsrs_device_budget = 0\n", "gpu.srs_device_budget");
  fails_with("[memory]\nstaging_keep_idle_s = 86401\n", "memory.staging_keep_idle_s");
  fails_with("[memory]\ntotal_budget = \"lots\"\n", "memory.total_budget");
  fails_with("[memory]\nauto_margin = \"-1GiB\"\n", "memory.auto_margin");
  fails_with("[memory]\ncritical_overdraft = \"some\"\n", "memory.critical_overdraft");
  fails_with("[porep]\nsynthesis_concurrency = 65\n", "porep.synthesis_concurrency");
  fails_with("[porep]\nsynthesis_threads = 1025\n", "porep.synthesis_threads");
  fails_with("[porep]\ncheck_satisfaction = 1\n", "porep.check_satisfaction");
}

TEST(GpuConfig, ExampleFileHasTheDefaults) {
  Config d;
  Config example = load_config(std::string(CUZK_TEST_DATA_DIR) + "/../../systemd/cuzkd.example.toml");
  EXPECT_EQ(example.gpu_devices, d.gpu_devices);
  EXPECT_EQ(example.gpu_workers_per_device, d.gpu_workers_per_device);
  EXPECT_EQ(example.gpu_abc_on_device, d.gpu_abc_on_device);
  EXPECT_EQ(example.gpu_critical_lane, d.gpu_critical_lane);
  EXPECT_EQ(example.gpu_msm_scratch_bytes, d.gpu_msm_scratch_bytes);
  EXPECT_EQ(example.gpu_srs_device_budget_bytes, d.gpu_srs_device_budget_bytes);
  EXPECT_EQ(example.memory_total_budget, d.memory_total_budget);
  EXPECT_EQ(example.memory_auto_margin_bytes, d.memory_auto_margin_bytes);
  EXPECT_EQ(example.engine.memory_critical_overdraft_bytes, d.engine.memory_critical_overdraft_bytes);
  EXPECT_EQ(example.engine.porep_synthesis_threads, d.engine.porep_synthesis_threads);
  EXPECT_EQ(example.engine.porep_synthesis_lanes, d.engine.porep_synthesis_lanes);
  EXPECT_EQ(example.engine.porep_max_partitions_in_flight, d.engine.porep_max_partitions_in_flight);
  EXPECT_EQ(example.engine.porep_check_satisfaction, d.engine.porep_check_satisfaction);
}

}  // namespace
}  // namespace cuzk::daemon
