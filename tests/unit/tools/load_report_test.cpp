// cuzk-bench's load arithmetic: mix parsing, the draw order, percentiles and
// the report, on hand-made samples.
#include "load_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

namespace cuzk::bench {
namespace {

TEST(LoadMix, ParsesClasses) {
  std::string why;
  auto mix = parse_mix("demo:14:normal=3,demo:12:high=1,porep:critical,demo:10", &why);
  ASSERT_TRUE(mix) << why;
  ASSERT_EQ(mix->size(), 4u);
  EXPECT_EQ((*mix)[0].kind, engine::ProofKind::kGroth16Demo);
  EXPECT_EQ((*mix)[0].demo_log_domain, 14u);
  EXPECT_EQ((*mix)[0].priority, engine::Priority::kNormal);
  EXPECT_EQ((*mix)[0].weight, 3u);
  EXPECT_EQ((*mix)[1].priority, engine::Priority::kHigh);
  EXPECT_EQ((*mix)[1].weight, 1u);
  EXPECT_EQ((*mix)[2].kind, engine::ProofKind::kPoRepC2);
  EXPECT_EQ((*mix)[2].priority, engine::Priority::kCritical);
  EXPECT_FALSE((*mix)[3].priority.has_value());
  EXPECT_EQ((*mix)[0].label(), "demo:14:normal");
  EXPECT_EQ((*mix)[2].label(), "porep:critical");
  EXPECT_EQ((*mix)[3].label(), "demo:10:default");
}

TEST(LoadMix, RejectsMalformedSpecs) {
  for (const char* bad : {"", "demo", "demo=2", "demo:x", "demo:14:urgent", "gpu:1", "demo:14=0", "demo:14:normal:x",
                          "demo:14=-1", "porep:high:x", "demo:14,,demo:12"}) {
    std::string why;
    EXPECT_FALSE(parse_mix(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(LoadMix, ScheduleHonoursWeightsAndSpreads) {
  std::string why;
  auto mix = parse_mix("demo:14=3,demo:12=1", &why);
  ASSERT_TRUE(mix);
  // Credits (3,1) -> draw 0 -> (-1,1); (2,2) -> 0 -> (-2,2); (1,3) -> 1 -> (1,-1); (4,0) -> 0.
  EXPECT_EQ(mix_schedule(*mix), (std::vector<std::size_t>{0, 0, 1, 0}));

  mix = parse_mix("demo:10=5,demo:11=2,demo:12=1", &why);
  ASSERT_TRUE(mix);
  auto order = mix_schedule(*mix);
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(std::count(order.begin(), order.end(), 0u), 5);
  EXPECT_EQ(std::count(order.begin(), order.end(), 1u), 2);
  EXPECT_EQ(std::count(order.begin(), order.end(), 2u), 1);
  // Spread: the heavy class never runs more than twice in a row here, even across the cycle's wrap.
  for (std::size_t i = 0; i < order.size(); ++i)
    EXPECT_FALSE(order[i] == 0 && order[(i + 1) % 8] == 0 && order[(i + 2) % 8] == 0) << i;
}

TEST(LoadReport, NearestRankPercentiles) {
  std::vector<double> v(100);
  std::iota(v.begin(), v.end(), 1.0);
  std::reverse(v.begin(), v.end());  // order must not matter
  EXPECT_EQ(percentile(v, 50), 50);
  EXPECT_EQ(percentile(v, 90), 90);
  EXPECT_EQ(percentile(v, 99), 99);
  EXPECT_EQ(percentile(v, 100), 100);
  EXPECT_EQ(percentile({7}, 50), 7);
  EXPECT_EQ(percentile({7}, 99), 7);
  // Ten samples: p99 is the largest, p50 the fifth, p90 the ninth.
  std::vector<double> ten = {10, 20, 30, 40, 50, 60, 70, 80, 90, 1000};
  EXPECT_EQ(percentile(ten, 99), 1000);
  EXPECT_EQ(percentile(ten, 50), 50);
  EXPECT_EQ(percentile(ten, 90), 90);
  EXPECT_EQ(percentile({}, 50), 0);
}

Sample ok(std::size_t ci, double latency_ms, std::uint64_t queue_ms, std::uint64_t prove_ms) {
  Sample s;
  s.class_index = ci;
  s.ok = true;
  s.latency_ms = latency_ms;
  s.timings.queue_ms = queue_ms;
  s.timings.prove_ms = prove_ms;
  s.timings.total_ms = queue_ms + prove_ms;
  return s;
}

Sample failed(std::size_t ci, const char* kind) {
  Sample s;
  s.class_index = ci;
  s.error_kind = kind;
  s.latency_ms = 5;
  return s;
}

TEST(LoadReport, AggregatesPerClass) {
  std::string why;
  auto classes = *parse_mix("demo:14:normal=3,demo:12:high=1", &why);
  std::vector<Sample> samples = {ok(0, 300, 10, 200),     ok(0, 100, 30, 60), ok(0, 200, 20, 100),
                                 failed(0, "overloaded"), ok(1, 50, 0, 40),   failed(1, "timeout"),
                                 failed(1, "overloaded")};
  Report r = make_report("mixed", 4, 30.0, classes, samples);
  EXPECT_EQ(r.completed, 4u);
  EXPECT_EQ(r.failed, 3u);
  EXPECT_DOUBLE_EQ(r.throughput_per_min, 8.0);  // 4 proofs in 30 s
  ASSERT_EQ(r.classes.size(), 2u);
  const ClassReport& c0 = r.classes[0];
  EXPECT_EQ(c0.label, "demo:14:normal");
  EXPECT_EQ(c0.completed, 3u);
  EXPECT_EQ(c0.failed, 1u);
  EXPECT_DOUBLE_EQ(c0.throughput_per_min, 6.0);
  EXPECT_EQ(c0.p50_ms, 200);  // failures' latencies are not in the percentiles
  EXPECT_EQ(c0.p99_ms, 300);
  EXPECT_EQ(c0.max_ms, 300);
  EXPECT_DOUBLE_EQ(c0.mean_ms, 200);
  EXPECT_DOUBLE_EQ(c0.queue_ms, 20);
  EXPECT_DOUBLE_EQ(c0.prove_ms, 120);
  EXPECT_DOUBLE_EQ(c0.total_ms, 140);
  EXPECT_EQ(r.classes[1].completed, 1u);
  EXPECT_EQ(r.classes[1].max_ms, 50);
  EXPECT_EQ(r.failures.at("overloaded"), 2u);
  EXPECT_EQ(r.failures.at("timeout"), 1u);
  EXPECT_EQ(r.failures.size(), 2u);

  auto table = report_table(r);
  ASSERT_FALSE(table.empty());
  EXPECT_NE(table[0].find("4 completed, 3 failed"), std::string::npos);
  EXPECT_NE(table[0].find("8.00 proofs/min"), std::string::npos);
  bool latency_header = false, stage_header = false;
  for (const auto& l : table) {
    if (l.find("p50") != std::string::npos && l.find("p90") != std::string::npos &&
        l.find("p99") != std::string::npos && l.find("max") != std::string::npos)
      latency_header = true;
    if (l.find("queue") != std::string::npos && l.find("synthesis") != std::string::npos &&
        l.find("verify") != std::string::npos)
      stage_header = true;
  }
  EXPECT_TRUE(latency_header);
  EXPECT_TRUE(stage_header);

  auto j = nlohmann::json::parse(report_json(r));
  EXPECT_EQ(j["mode"], "mixed");
  EXPECT_EQ(j["completed"], 4);
  EXPECT_EQ(j["failures"]["overloaded"], 2);
  EXPECT_EQ(j["classes"][0]["latency_ms"]["p50"], 200.0);
  EXPECT_EQ(j["classes"][1]["class"], "demo:12:high");
  EXPECT_EQ(j["classes"][0]["stages_ms"]["prove"], 120.0);
}

TEST(LoadReport, EmptyRunHasZeros) {
  std::string why;
  Report r = make_report("batch", 1, 0.0, *parse_mix("demo:10", &why), {});
  EXPECT_EQ(r.completed, 0u);
  EXPECT_EQ(r.throughput_per_min, 0);
  EXPECT_EQ(r.classes[0].p99_ms, 0);
}

}  // namespace
}  // namespace cuzk::bench
