// The `cuzkctl watch` frame, rendered from hand-made statuses.
#include "cuzkctl/watch_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cuzkctl {
namespace {

namespace eng = cuzk::engine;

eng::JobView job(eng::JobId id, eng::JobState state, std::string stage, std::uint64_t age_ms,
                 eng::ProofKind kind = eng::ProofKind::kGroth16Demo) {
  eng::JobView v;
  v.id = id;
  v.request_id = "r" + std::to_string(id);
  v.kind = kind;
  v.state = state;
  v.stage = std::move(stage);
  v.age_ms = age_ms;
  return v;
}

cuzk::rpc::ClientStatus sample_status() {
  cuzk::rpc::ClientStatus s;
  s.schema_version = 1;
  s.params_bytes = 3u << 20;
  eng::EngineStatus& e = s.engine;
  e.uptime_ms = 65'000;
  e.queued = {1, 2, 0, 3};  // low, normal, high, critical
  e.queue_capacity = 64;
  e.jobs = {job(9, eng::JobState::kDone, "done", 4'000), job(7, eng::JobState::kRunning, "prove", 2'500),
            job(8, eng::JobState::kQueued, "queued", 300), job(6, eng::JobState::kFailed, "failed", 9'000),
            job(10, eng::JobState::kRunning, "params", 100, eng::ProofKind::kPoRepC2)};
  e.workers = {{0, 7}, {1, std::nullopt}};
  e.loaded_params = {{"demo-10", 3u << 20}};
  e.resident_bytes = 100u << 20;
  e.completed_total = 41;
  e.failed_total = 2;
  e.cancelled_total = 1;
  return s;
}

// The first line containing `needle` (fails the test when there is none).
std::string line_with(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return l;
  ADD_FAILURE() << "no line contains '" << needle << "'";
  return {};
}

std::size_t index_of(const std::vector<std::string>& lines, const std::string& needle) {
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(needle) != std::string::npos) return i;
  ADD_FAILURE() << "no line contains '" << needle << "'";
  return lines.size();
}

TEST(WatchView, TitleTotalsAndQueues) {
  WatchInput in{"unix:///tmp/d.sock", sample_status(), nullptr, 0};
  auto lines = render_watch(in, {});
  EXPECT_NE(lines[0].find("unix:///tmp/d.sock"), std::string::npos);
  EXPECT_NE(lines[0].find("up 1m05s"), std::string::npos);
  EXPECT_EQ(lines[0].find("DRAINING"), std::string::npos);
  EXPECT_EQ(lines[0].find("UTC"), std::string::npos);  // no clock given, none shown
  EXPECT_NE(line_with(lines, "totals:").find("done 41  failed 2  cancelled 1"), std::string::npos);
  EXPECT_NE(line_with(lines, "queues (").find("6 queued, capacity 64"), std::string::npos);
  // Highest priority first, each with the capacity.
  std::size_t c = index_of(lines, "  critical"), h = index_of(lines, "  high"), n = index_of(lines, "  normal"),
              l = index_of(lines, "  low");
  EXPECT_LT(c, h);
  EXPECT_LT(h, n);
  EXPECT_LT(n, l);
  EXPECT_NE(lines[c].find("3 / 64"), std::string::npos);
  EXPECT_NE(lines[n].find("2 / 64"), std::string::npos);
  EXPECT_NE(lines[h].find("[....................]"), std::string::npos);  // empty queue, empty bar
  EXPECT_NE(lines[c].find("[#"), std::string::npos);                      // 3 of 64 still shows

  in.status.engine.draining = true;
  in.now_unix_ms = 1'700'000'000'000ull + 3'723'000;  // 2023-11-14 22:13:20 UTC + 1h02m03s
  lines = render_watch(in, {});
  EXPECT_NE(lines[0].find("DRAINING"), std::string::npos);
  EXPECT_NE(lines[0].find("23:15:23 UTC"), std::string::npos);
}

TEST(WatchView, StagesJobsAndWorkers) {
  WatchInput in{"a", sample_status(), nullptr, 0};
  auto lines = render_watch(in, {});
  std::string stages = line_with(lines, "stages:");
  EXPECT_NE(stages.find("queued 1"), std::string::npos);
  EXPECT_NE(stages.find("setup 1"), std::string::npos);
  EXPECT_NE(stages.find("prove 1"), std::string::npos);
  EXPECT_NE(stages.find("synthesis 0"), std::string::npos);
  EXPECT_NE(stages.find("finished 2"), std::string::npos);
  EXPECT_NE(line_with(lines, "jobs (").find("3 unfinished, 2 finished"), std::string::npos);
  // Unfinished jobs oldest first, then finished newest first.
  std::size_t j7 = index_of(lines, "r7 "), j8 = index_of(lines, "r8 "), j10 = index_of(lines, "r10 "),
              j9 = index_of(lines, "r9 "), j6 = index_of(lines, "r6 ");
  EXPECT_LT(j7, j8);
  EXPECT_LT(j8, j10);
  EXPECT_LT(j10, j9);
  EXPECT_LT(j9, j6);
  EXPECT_NE(lines[j7].find("[###..] 3/5"), std::string::npos);  // queued, setup, synthesis done; proving
  EXPECT_NE(lines[j7].find("2.5 s"), std::string::npos);
  EXPECT_NE(lines[j10].find("[#....] 1/5"), std::string::npos);  // PoRep params: the setup phase
  EXPECT_NE(lines[j9].find("[#####] 5/5"), std::string::npos);
  EXPECT_NE(lines[j6].find(" - "), std::string::npos);
  EXPECT_NE(line_with(lines, "workers (").find("1 of 2 busy"), std::string::npos);
  EXPECT_NE(line_with(lines, "worker 0").find("job 7 (prove)"), std::string::npos);
  EXPECT_NE(line_with(lines, "worker 1").find("idle"), std::string::npos);
  EXPECT_NE(line_with(lines, "demo-10").find("3.0 MiB"), std::string::npos);
}

TEST(WatchView, JobRowsAreBounded) {
  cuzk::rpc::ClientStatus s;
  for (eng::JobId id = 1; id <= 20; ++id) s.engine.jobs.push_back(job(id, eng::JobState::kQueued, "queued", 0));
  WatchLayout layout;
  layout.max_job_rows = 5;
  auto lines = render_watch(WatchInput{"a", s, nullptr, 0}, layout);
  EXPECT_NE(line_with(lines, "  ... ").find("15 more"), std::string::npos);
  auto job_row = [](const std::string& l) { return l.find(" queued    ") != std::string::npos; };
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(), job_row), 5);
}

TEST(WatchView, EventRingKeepsTheNewest) {
  EventRing ring(2);
  for (eng::JobId id = 1; id <= 3; ++id) {
    eng::JobEvent e;
    e.id = id;
    e.request_id = "ev" + std::to_string(id);
    e.state = eng::JobState::kRunning;
    e.stage = "prove";
    e.elapsed_ms = 1200;
    ring.push({e, 1'700'000'000'000ull + id * 1000});
  }
  eng::JobEvent failed;
  failed.id = 4;
  failed.state = eng::JobState::kFailed;
  failed.stage = "failed";
  failed.error = eng::Error{eng::ErrorKind::kInternal, "boom"};
  ring.push({failed, 1'700'000'000'000ull});
  EXPECT_EQ(ring.total(), 4u);
  ASSERT_EQ(ring.events().size(), 2u);
  EXPECT_EQ(ring.events().front().event.id, 3u);

  auto lines = render_watch(WatchInput{"a", {}, &ring, 0}, {});
  EXPECT_NE(line_with(lines, "recent events").find("2 of 4"), std::string::npos);
  for (const auto& l : lines) EXPECT_EQ(l.find("ev1"), std::string::npos) << l;
  std::string e3 = line_with(lines, "ev3");
  EXPECT_NE(e3.find("22:13:23"), std::string::npos);  // 1'700'000'003 s = 2023-11-14 22:13:23 UTC
  EXPECT_NE(e3.find("running/prove"), std::string::npos);
  EXPECT_NE(e3.find("+1.2 s"), std::string::npos);
  EXPECT_NE(line_with(lines, "failed/failed").find("internal: boom"), std::string::npos);

  EventRing empty(4);
  lines = render_watch(WatchInput{"a", {}, &empty, 0}, {});
  EXPECT_NE(lines[index_of(lines, "recent events") + 1].find("(none yet)"), std::string::npos);
}

TEST(WatchView, WidthTruncatesEveryLine) {
  EventRing ring(3);
  ring.push({eng::JobEvent{5, std::string(100, 'x'), eng::JobState::kQueued, "queued", 0, std::nullopt}, 0});
  WatchLayout layout;
  layout.width = 40;
  auto lines = render_watch(WatchInput{std::string(80, 'a'), sample_status(), &ring, 0}, layout);
  ASSERT_GT(lines.size(), 10u);
  for (const auto& l : lines) EXPECT_LE(l.size(), 40u) << l;
}

TEST(WatchView, DevicesBudgetAndSrs) {
  cuzk::rpc::ClientStatus s = sample_status();
  // Absent from an older daemon's status: no sections at all.
  auto lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  for (const auto& l : lines) {
    EXPECT_EQ(l.find("devices ("), std::string::npos) << l;
    EXPECT_EQ(l.find("memory budget"), std::string::npos) << l;
    EXPECT_EQ(l.find("SRS residency"), std::string::npos) << l;
  }

  eng::EngineStatus& e = s.engine;
  eng::DeviceWorkerView gpu;
  gpu.index = 0;
  gpu.name = "cuda:0 NVIDIA H200";
  gpu.ordinal = 0;
  gpu.job = 7;
  gpu.partition = 3;
  gpu.stage = "prove";
  gpu.jobs_placed = 12;
  gpu.proofs_done = 340;
  gpu.verify_failures = 1;
  gpu.resident_srs = "porep-32g";
  gpu.resident_srs_bytes = 45ull << 30;
  gpu.memory_total_bytes = 140ull << 30;
  gpu.memory_free_bytes = 70ull << 30;
  eng::DeviceWorkerView cpu;
  cpu.index = 1;
  cpu.name = "cpu";
  cpu.stage = "idle";
  e.devices = {gpu, cpu};
  e.cpu_retries_total = 4;
  e.memory = {64ull << 30, 16ull << 30, 48ull << 30, 32ull << 30, 2, 3ull << 30};
  e.srs = {{"porep-32g", "device", 0, 45ull << 30},
           {"demo-10", "host", -1, 1u << 20},
           {"porep-32g", "host", -1, 45ull << 30}};
  lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  EXPECT_NE(line_with(lines, "devices (").find("1 of 2 busy; GPU proofs re-proved on the CPU: 4"), std::string::npos);
  std::string g = line_with(lines, "cuda:0 NVIDIA H200");
  EXPECT_NE(g.find("porep-32g 45.0 GiB"), std::string::npos) << g;
  EXPECT_NE(line_with(lines, "  #  DEVICE").find("SRS ON DEVICE                  R1CS  MSM ARENA  DEVICE MEMORY USED"),
            std::string::npos);
  EXPECT_NE(g.find("porep-32g 45.0 GiB                -          -  70.0 GiB"), std::string::npos)
      << g;  // no matrices, no arena
  EXPECT_NE(g.find("70.0 GiB / 140.0 GiB [#####.....]"), std::string::npos) << g;
  EXPECT_NE(g.find("   7    3  prove"), std::string::npos) << g;  // job, partition, stage
  EXPECT_NE(g.find("    12     340     1"), std::string::npos) << g;
  std::string c = line_with(lines, "  1  cpu");
  EXPECT_NE(c.find("     -    -  idle"), std::string::npos) << c;
  std::string b = line_with(lines, "memory budget");
  EXPECT_NE(b.find("reserved 16.0 GiB of 64.0 GiB [#####...............]"), std::string::npos) << b;
  EXPECT_NE(b.find("available 48.0 GiB, peak 32.0 GiB; waiting 2 (3.0 GiB)"), std::string::npos) << b;
  EXPECT_NE(line_with(lines, "SRS residency (").find("host 2, 45.0 GiB; device 1, 45.0 GiB"), std::string::npos);
  // Host rows first, then device rows, which name the device.
  std::size_t dev = index_of(lines, "  device 0   porep-32g"), host = index_of(lines, "  host       demo-10");
  EXPECT_LT(host, dev);
  for (const auto& l : lines) EXPECT_EQ(l.find("parameters in memory"), std::string::npos) << l;  // subsumed

  // The R1CS matrices a GPU keeps for a, b, c on the device: their own
  // column, between the SRS and the memory used.
  e.devices[0].r1cs_matrices_bytes = 7'340'032'000;  // 6.8 GiB: a 32 GiB PoRep's
  lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  g = line_with(lines, "cuda:0 NVIDIA H200");
  EXPECT_NE(g.find("porep-32g 45.0 GiB          6.8 GiB          -  70.0 GiB / 140.0 GiB"), std::string::npos) << g;
  c = line_with(lines, "  1  cpu");
  EXPECT_EQ(c.find("GiB"), std::string::npos) << c;  // the CPU keeps none
  EXPECT_EQ(status_device_line(e.devices[0]),
            "device 0 cuda:0 NVIDIA H200: job 7 partition 3 prove; jobs 12, proofs 340, verify failures 1; "
            "memory 70.0/140.0 GiB free; r1cs matrices 6.84 GiB (7340032000 bytes)");
  EXPECT_EQ(status_device_line(e.devices[1]), "device 1 cpu: idle; jobs 0, proofs 0, verify failures 0");

  // The MSM scratch arena: its own column after the matrices, and against
  // its limit in the status line (an H200 after a 32 GiB PoRep).
  e.devices[0].msm_scratch_bytes = 58'091'372'544;        // 54.1 GiB
  e.devices[0].msm_scratch_limit_bytes = 62'491'774'976;  // 58.2 GiB
  lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  g = line_with(lines, "cuda:0 NVIDIA H200");
  EXPECT_NE(g.find("porep-32g 45.0 GiB          6.8 GiB   54.1 GiB  70.0 GiB / 140.0 GiB"), std::string::npos) << g;
  c = line_with(lines, "  1  cpu");
  EXPECT_EQ(c.find("GiB"), std::string::npos) << c;  // nor an arena
  EXPECT_EQ(status_device_line(e.devices[0]),
            "device 0 cuda:0 NVIDIA H200: job 7 partition 3 prove; jobs 12, proofs 340, verify failures 1; "
            "memory 70.0/140.0 GiB free; r1cs matrices 6.84 GiB (7340032000 bytes); msm scratch 54.10 / 58.20 GiB");
  e.devices[0].r1cs_matrices_bytes = 0;
  EXPECT_EQ(status_device_line(e.devices[0]).find("r1cs"), std::string::npos);
  EXPECT_NE(status_device_line(e.devices[0]).find("; msm scratch 54.10 / 58.20 GiB"), std::string::npos);
  e.devices[0].msm_scratch_bytes = 0;  // released, or no MSM yet: hidden, the limit alone says nothing
  EXPECT_EQ(status_device_line(e.devices[0]).find("msm scratch"), std::string::npos);
  e.devices[0].msm_scratch_limit_bytes = 0;

  // No prover stage reported: no stage line.
  for (const auto& l : lines) EXPECT_EQ(l.find("prover stage"), std::string::npos) << l;

  e.memory = {0, 1u << 20, 0, 1u << 20, 0, 0};
  lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  EXPECT_NE(line_with(lines, "memory budget").find("reserved 1.0 MiB (unlimited)"), std::string::npos);

  // The GPU prover's stage goes on a line right under its device's.
  e.devices[0].prover_stage = "h_msm";
  e.devices[0].prover_stage_ms = 120;
  e.devices[0].prover_stream = 0x5a00;
  e.devices[0].prover_streams = 3;
  e.devices[0].prover_events = 8;
  lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  std::size_t gi = index_of(lines, "cuda:0 NVIDIA H200");
  ASSERT_LT(gi + 1, lines.size());
  EXPECT_EQ(lines[gi + 1], "      prover stage h_msm for 120 ms on stream 0x5a00 (prover owns 3 streams, 8 events)");
  e.devices[0].prover_stream = 0;
  e.devices[0].prover_streams = 0;
  e.devices[0].prover_events = 0;
  lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  EXPECT_EQ(lines[index_of(lines, "cuda:0 NVIDIA H200") + 1],
            "      prover stage h_msm for 120 ms on the default stream");
}

// A device SRS streamed in part: its page-locked host part is a tier of its
// own ("pinned", naming the device), listed after the device rows whatever
// order the daemon sent.
TEST(WatchView, PinnedSrsTierAfterTheDevices) {
  cuzk::rpc::ClientStatus s = sample_status();
  s.engine.srs = {{"porep-32g", "pinned", 1, 12ull << 30},
                  {"porep-32g", "device", 1, 32ull << 30},
                  {"porep-32g", "host", -1, 45ull << 30}};
  auto lines = render_watch(WatchInput{"a", s, nullptr, 0}, {});
  EXPECT_NE(line_with(lines, "SRS residency (").find("host 1, 45.0 GiB; device 1, 32.0 GiB; pinned 1, 12.0 GiB"),
            std::string::npos);
  std::size_t dev = index_of(lines, "  device 1   porep-32g"), pinned = index_of(lines, "  pinned 1   porep-32g");
  ASSERT_LT(pinned, lines.size());
  EXPECT_LT(dev, pinned);
  EXPECT_NE(lines[pinned].find("12.0 GiB"), std::string::npos) << lines[pinned];
}

TEST(WatchView, Formats) {
  EXPECT_EQ(format_duration_ms(0), "0 ms");
  EXPECT_EQ(format_duration_ms(999), "999 ms");
  EXPECT_EQ(format_duration_ms(1'500), "1.5 s");
  EXPECT_EQ(format_duration_ms(65'000), "1m05s");
  EXPECT_EQ(format_duration_ms(3'723'000), "1h02m");
  EXPECT_EQ(format_bytes(0), "0 B");
  EXPECT_EQ(format_bytes(1023), "1023 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(5ull << 30), "5.0 GiB");
  // Raw stages fold into queued, setup, synthesis, prove, verify.
  struct Case {
    const char* stage;
    unsigned done;
  };
  for (Case c :
       {Case{"queued", 0}, Case{"params", 1}, Case{"c1", 1}, Case{"inputs", 1}, Case{"memory", 2}, Case{"synthesis", 2},
        Case{"partition 3: synthesis", 2}, Case{"check", 2}, Case{"queued for device", 3}, Case{"device wait", 3},
        Case{"prove (gpu)", 3}, Case{"partition 0: prove (cpu)", 3}, Case{"verify", 4}}) {
    StageProgress p = stage_progress(eng::JobState::kRunning, c.stage);
    EXPECT_EQ(p.done, c.done) << c.stage;
    EXPECT_EQ(p.total, 5u) << c.stage;
  }
  EXPECT_EQ(stage_progress(eng::JobState::kDone, "done").done, 5u);
  EXPECT_EQ(stage_progress(eng::JobState::kRunning, "no-such-stage").total, 0u);
  EXPECT_EQ(stage_progress(eng::JobState::kRunning, "partition 2: no-such-step").total, 0u);
}

TEST(WatchView, ParameterFileBeingRead) {
  eng::ParamsLoadView l{"v28-porep.params", 40ull << 30, 20ull << 30, 10ull << 30, 12'500};
  EXPECT_EQ(loading_line(l), "loading v28-porep.params: 50% read, 25% decoded of 40.0 GiB, 12.5 s");
  l.file_bytes = 0;  // not yet opened
  EXPECT_EQ(loading_line(l).find("loading v28-porep.params: 0% read, 0% decoded"), 0u);
}

}  // namespace
}  // namespace cuzkctl
