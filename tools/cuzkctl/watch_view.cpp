#include "cuzkctl/watch_view.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>
#include <map>
#include <string_view>
#include <tuple>
#include <utility>

namespace cuzkctl {
namespace {

namespace eng = cuzk::engine;

std::string pad_right(std::string s, std::size_t w) {
  if (s.size() > w) s = s.substr(0, w);
  s.resize(w, ' ');
  return s;
}

std::string pad_left(const std::string& s, std::size_t w) {
  return s.size() >= w ? s : std::string(w - s.size(), ' ') + s;
}

// `part` of `whole` as `cells` cells, filled from the left: "[####......]".
std::string bar(std::uint64_t part, std::uint64_t whole, std::size_t cells) {
  std::size_t filled = 0;
  if (whole > 0) filled = static_cast<std::size_t>(std::min<std::uint64_t>(part, whole) * cells / whole);
  if (part > 0 && filled == 0) filled = 1;  // anything at all shows
  return "[" + std::string(filled, '#') + std::string(cells - filled, '.') + "]";
}

std::string clock_utc(std::uint64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[16];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

// A job's raw stage names the engine's current step ("params", "partition 3:
// synthesis", "queued for device", "prove (gpu)", ...; they grow with the
// engine). The view folds them into five phases common to every kind; the
// raw stage is shown beside. Phase k of 5 done means phases 0..k-1 are over.
enum class Phase : std::uint8_t { kQueued, kSetup, kSynthesis, kProve, kVerify, kUnknown };
constexpr std::array<std::string_view, 5> kPhaseNames = {"queued", "setup", "synthesis", "prove", "verify"};
constexpr unsigned kPhases = kPhaseNames.size();

Phase phase_of(std::string_view stage) {
  // PoRep C2 runs partitions: "partition K: <step>".
  if (stage.starts_with("partition ")) {
    if (auto colon = stage.find(": "); colon != std::string_view::npos) stage = stage.substr(colon + 2);
  }
  auto starts = [&](std::string_view p) { return stage.starts_with(p); };
  if (stage == "queued") return Phase::kQueued;
  if (starts("params") || starts("c1") || starts("inputs")) return Phase::kSetup;
  if (starts("memory") || starts("synthesis") || starts("check")) return Phase::kSynthesis;
  if (starts("queued for device") || starts("device") || starts("prove")) return Phase::kProve;
  if (starts("verify")) return Phase::kVerify;
  return Phase::kUnknown;
}

void section_title(std::vector<std::string>& out, const std::string& title) {
  out.emplace_back();
  out.push_back(title);
}

void render_queues(std::vector<std::string>& out, const eng::EngineStatus& e) {
  std::uint64_t queued_all = 0;
  for (auto q : e.queued) queued_all += q;
  section_title(
      out, "queues (" + std::to_string(queued_all) + " queued, capacity " + std::to_string(e.queue_capacity) + ")");
  for (int p = eng::kNumPriorities - 1; p >= 0; --p) {
    std::uint32_t n = e.queued[static_cast<std::size_t>(p)];
    out.push_back("  " + pad_right(std::string(eng::to_string(static_cast<eng::Priority>(p))), 9) +
                  pad_left(std::to_string(n), 5) + " / " + pad_right(std::to_string(e.queue_capacity), 5) + " " +
                  bar(n, e.queue_capacity, 20));
  }
}

void render_stages(std::vector<std::string>& out, const eng::EngineStatus& e) {
  std::array<unsigned, kPhases> known{};
  unsigned finished = 0, unknown = 0;
  for (const auto& j : e.jobs) {
    if (eng::is_finished(j.state)) {
      ++finished;
      continue;
    }
    Phase p = phase_of(j.stage);
    if (p == Phase::kUnknown)
      ++unknown;
    else
      ++known[static_cast<std::size_t>(p)];
  }
  std::string line = "stages:";
  for (std::size_t i = 0; i < kPhases; ++i) line += "  " + std::string(kPhaseNames[i]) + " " + std::to_string(known[i]);
  if (unknown > 0) line += "  other " + std::to_string(unknown);
  line += "  | finished " + std::to_string(finished);
  out.push_back(line);
}

void render_jobs(std::vector<std::string>& out, const eng::EngineStatus& e, const WatchLayout& layout) {
  std::vector<const eng::JobView*> open, closed;
  for (const auto& j : e.jobs) (eng::is_finished(j.state) ? closed : open).push_back(&j);
  // Unfinished oldest first (the order they will finish in, roughly);
  // finished newest first.
  std::sort(open.begin(), open.end(), [](auto* a, auto* b) { return a->id < b->id; });
  std::sort(closed.begin(), closed.end(), [](auto* a, auto* b) { return a->id > b->id; });
  section_title(out, "jobs (" + std::to_string(open.size()) + " unfinished, " + std::to_string(closed.size()) +
                         " finished, listed until they expire)");
  if (e.jobs.empty()) {
    out.push_back("  (none)");
    return;
  }
  out.push_back("  " + pad_left("JOB", 6) + "  " + pad_right("REQUEST", 18) + " " + pad_right("KIND", 12) + " " +
                pad_right("STATE", 9) + " " + pad_right("STAGE", 22) + " " + pad_right("PROGRESS", 13) + " " +
                pad_left("AGE", 7));
  std::size_t shown = 0;
  for (const auto* list : {&open, &closed}) {
    for (const eng::JobView* j : *list) {
      if (shown == layout.max_job_rows) break;
      ++shown;
      StageProgress p = stage_progress(j->state, j->stage);
      std::string progress = "?";  // a stage this view does not know
      if (j->state == eng::JobState::kFailed || j->state == eng::JobState::kCancelled)
        progress = "-";
      else if (p.total != 0)
        progress = bar(p.done, p.total, p.total) + " " + std::to_string(p.done) + "/" + std::to_string(p.total);
      out.push_back("  " + pad_left(std::to_string(j->id), 6) + "  " + pad_right(j->request_id, 18) + " " +
                    pad_right(std::string(eng::to_string(j->kind)), 12) + " " +
                    pad_right(std::string(eng::to_string(j->state)), 9) + " " + pad_right(j->stage, 22) + " " +
                    pad_right(progress, 13) + " " + pad_left(format_duration_ms(j->age_ms), 7));
    }
  }
  if (shown < e.jobs.size()) out.push_back("  ... " + std::to_string(e.jobs.size() - shown) + " more");
}

void render_workers(std::vector<std::string>& out, const eng::EngineStatus& e) {
  std::size_t busy = 0;
  for (const auto& w : e.workers) busy += w.job.has_value() ? 1 : 0;
  section_title(out, "workers (" + std::to_string(busy) + " of " + std::to_string(e.workers.size()) + " busy)");
  std::map<eng::JobId, const eng::JobView*> by_id;
  for (const auto& j : e.jobs) by_id[j.id] = &j;
  for (const auto& w : e.workers) {
    std::string line = "  worker " + pad_right(std::to_string(w.id), 3);
    if (!w.job) {
      line += " idle";
    } else {
      line += " job " + std::to_string(*w.job);
      if (auto it = by_id.find(*w.job); it != by_id.end()) line += " (" + it->second->stage + ")";
    }
    out.push_back(line);
  }
}

// Proving back ends: GPUs first, then the CPU.
void render_devices(std::vector<std::string>& out, const eng::EngineStatus& e) {
  std::size_t busy = 0;
  for (const auto& d : e.devices) busy += d.job.has_value() ? 1 : 0;
  section_title(out, "devices (" + std::to_string(busy) + " of " + std::to_string(e.devices.size()) +
                         " busy; GPU proofs re-proved on the CPU: " + std::to_string(e.cpu_retries_total) + ")");
  out.push_back("  " + pad_left("#", 2) + "  " + pad_right("DEVICE", 24) + " " + pad_left("JOB", 6) + " " +
                pad_left("PART", 4) + "  " + pad_right("STAGE", 8) + " " + pad_left("PLACED", 6) + " " +
                pad_left("PROOFS", 7) + " " + pad_left("VFAIL", 5) + "  " + pad_right("SRS ON DEVICE", 24) + " " +
                pad_left("R1CS", 10) + " " + pad_left("MSM ARENA", 10) + "  " + "DEVICE MEMORY USED");
  for (const auto& d : e.devices) {
    std::string srs = d.resident_srs.empty() ? "-" : d.resident_srs + " " + format_bytes(d.resident_srs_bytes);
    // The circuit's matrices kept beside the SRS for a, b, c on the device:
    // part of the memory used, not of the SRS.
    std::string r1cs = d.r1cs_matrices_bytes == 0 ? "-" : format_bytes(d.r1cs_matrices_bytes);
    // The MSM scratch arena, kept between proofs: also part of the memory used.
    std::string arena = d.msm_scratch_bytes == 0 ? "-" : format_bytes(d.msm_scratch_bytes);
    std::string mem = "-";
    if (d.memory_total_bytes > 0) {
      const std::uint64_t used = d.memory_total_bytes - std::min(d.memory_free_bytes, d.memory_total_bytes);
      mem = format_bytes(used) + " / " + format_bytes(d.memory_total_bytes) + " " + bar(used, d.memory_total_bytes, 10);
    }
    out.push_back("  " + pad_left(std::to_string(d.index), 2) + "  " + pad_right(d.name, 24) + " " +
                  pad_left(d.job ? std::to_string(*d.job) : "-", 6) + " " +
                  pad_left(d.partition ? std::to_string(*d.partition) : "-", 4) + "  " +
                  pad_right(d.stage.empty() ? "idle" : d.stage, 8) + " " + pad_left(std::to_string(d.jobs_placed), 6) +
                  " " + pad_left(std::to_string(d.proofs_done), 7) + " " +
                  pad_left(std::to_string(d.verify_failures), 5) + "  " + pad_right(srs, 24) + " " +
                  pad_left(r1cs, 10) + " " + pad_left(arena, 10) + "  " + mem);
    // The GPU prover's own stage, under its device's line, while it runs.
    if (!d.prover_stage.empty()) {
      std::string line =
          "      prover stage " + d.prover_stage + " for " + std::to_string(d.prover_stage_ms) + " ms on ";
      if (d.prover_stream == 0) {
        line += "the default stream";
      } else {
        char hex[32];
        std::snprintf(hex, sizeof hex, "stream 0x%llx", static_cast<unsigned long long>(d.prover_stream));
        line += hex;
      }
      if (d.prover_streams > 0 || d.prover_events > 0) {
        line += " (prover owns " + std::to_string(d.prover_streams) + " streams, " + std::to_string(d.prover_events) +
                " events)";
      }
      out.push_back(line);
    }
  }
}

// The host-memory budget: what proofs in flight hold, and who waits.
void render_budget(std::vector<std::string>& out, const eng::MemoryBudgetView& m) {
  out.emplace_back();
  std::string line = "memory budget: reserved " + format_bytes(m.reserved_bytes);
  if (m.total_bytes == 0) {
    line += " (unlimited)";
  } else {
    line += " of " + format_bytes(m.total_bytes) + " " + bar(m.reserved_bytes, m.total_bytes, 20) + ", available " +
            format_bytes(m.available_bytes);
  }
  if (m.kept_witness_bytes != 0) line += " (kept witnesses " + format_bytes(m.kept_witness_bytes) + ")";
  line += ", peak " + format_bytes(m.peak_reserved_bytes) + "; waiting " + std::to_string(m.waiting);
  if (m.waiting > 0) line += " (" + format_bytes(m.waiting_bytes) + ")";
  out.push_back(line);
}

// Parameter sets by tier: host memory, then each device, then the devices'
// pinned host parts, then any other tier.
int tier_rank(const std::string& tier) { return tier == "host" ? 0 : tier == "device" ? 1 : tier == "pinned" ? 2 : 3; }

void render_srs(std::vector<std::string>& out, const eng::EngineStatus& e) {
  std::vector<const eng::SrsResidencyView*> rows;
  for (const auto& r : e.srs) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) {
    return std::make_tuple(tier_rank(a->tier), a->tier, a->device) <
           std::make_tuple(tier_rank(b->tier), b->tier, b->device);
  });
  // Title: sets and bytes per tier, in the rows' order.
  std::string title = "SRS residency (";
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t sets = 0;
    std::uint64_t bytes = 0;
    const std::string& tier = rows[i]->tier;
    for (; i < rows.size() && rows[i]->tier == tier; ++i) {
      ++sets;
      bytes += rows[i]->bytes;
    }
    title += (title.back() == '(' ? "" : "; ") + tier + " " + std::to_string(sets) + ", " + format_bytes(bytes);
  }
  section_title(out, title + ")");
  for (const auto* r : rows) {
    std::string tier = r->tier + (r->device >= 0 ? " " + std::to_string(r->device) : "");
    out.push_back("  " + pad_right(tier, 10) + " " + pad_right(r->srs, 28) + " " +
                  pad_left(format_bytes(r->bytes), 10));
  }
}

void render_params(std::vector<std::string>& out, const cuzk::rpc::ClientStatus& s) {
  section_title(out, "parameters in memory (" + std::to_string(s.engine.loaded_params.size()) + ", " +
                         format_bytes(s.params_bytes) + ")");
  for (const auto& p : s.engine.loaded_params)
    out.push_back("  " + pad_right(p.circuit_id, 28) + " " + pad_left(format_bytes(p.bytes), 10));
  for (const auto& l : s.engine.loading_params) out.push_back("  " + loading_line(l));
}

void render_events(std::vector<std::string>& out, const EventRing& ring) {
  section_title(out, "recent events (" + std::to_string(ring.events().size()) + " of " + std::to_string(ring.total()) +
                         ", newest last)");
  if (ring.events().empty()) out.push_back("  (none yet)");
  for (const ReceivedEvent& r : ring.events()) {
    const eng::JobEvent& e = r.event;
    std::string line = "  " + clock_utc(r.received_unix_ms) + "  job " + pad_right(std::to_string(e.id), 5) + " " +
                       pad_right(e.request_id, 18) + " " +
                       pad_right(std::string(eng::to_string(e.state)) + "/" + e.stage, 30) + " +" +
                       format_duration_ms(e.elapsed_ms);
    if (e.error) line += "  " + std::string(eng::to_string(e.error->kind)) + ": " + e.error->message;
    out.push_back(line);
  }
}

}  // namespace

void EventRing::push(ReceivedEvent e) {
  ++total_;
  if (capacity_ == 0) return;
  if (events_.size() == capacity_) events_.pop_front();
  events_.push_back(std::move(e));
}

StageProgress stage_progress(eng::JobState state, const std::string& stage) {
  if (state == eng::JobState::kDone) return {kPhases, kPhases};
  Phase p = phase_of(stage);
  if (p == Phase::kUnknown) return {};
  return {static_cast<unsigned>(p), kPhases};
}

std::string loading_line(const eng::ParamsLoadView& l) {
  auto percent = [&](std::uint64_t part) {
    return l.file_bytes == 0 ? std::string("0%") : std::to_string(part * 100 / l.file_bytes) + "%";
  };
  return "loading " + l.file + ": " + percent(l.read_bytes) + " read, " + percent(l.decoded_bytes) + " decoded of " +
         format_bytes(l.file_bytes) + ", " + format_duration_ms(l.elapsed_ms);
}

std::string status_device_line(const eng::DeviceWorkerView& d) {
  auto gib = [](std::uint64_t b) { return static_cast<double>(b) / static_cast<double>(1ull << 30); };
  std::string doing =
      d.job ? "job " + std::to_string(*d.job) + " partition " + std::to_string(d.partition.value_or(0)) + " " + d.stage
            : "idle";
  char buf[512];
  std::snprintf(buf, sizeof buf, "device %u %s: %s; jobs %u, proofs %llu, verify failures %llu", d.index,
                d.name.c_str(), doing.c_str(), d.jobs_placed, static_cast<unsigned long long>(d.proofs_done),
                static_cast<unsigned long long>(d.verify_failures));
  std::string line = buf;
  if (d.memory_total_bytes != 0) {
    std::snprintf(buf, sizeof buf, "; memory %.1f/%.1f GiB free", gib(d.memory_free_bytes), gib(d.memory_total_bytes));
    line += buf;
  }
  // Exact bytes beside GiB: the matrices' size is what an operator compares
  // with the upload log line ("r1cs matrices on device").
  if (d.r1cs_matrices_bytes != 0) {
    std::snprintf(buf, sizeof buf, "; r1cs matrices %.2f GiB (%llu bytes)", gib(d.r1cs_matrices_bytes),
                  static_cast<unsigned long long>(d.r1cs_matrices_bytes));
    line += buf;
  }
  // The arena against its limit: how far it may still grow (an H200 after a
  // 32 GiB PoRep: ~54 of 58.2 GiB).
  if (d.msm_scratch_bytes != 0) {
    std::snprintf(buf, sizeof buf, "; msm scratch %.2f / %.2f GiB", gib(d.msm_scratch_bytes),
                  gib(d.msm_scratch_limit_bytes));
    line += buf;
  }
  return line;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 5> kUnits = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < kUnits.size()) {
    v /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string format_duration_ms(std::uint64_t ms) {
  char buf[32];
  if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%llu ms", static_cast<unsigned long long>(ms));
  else if (ms < 60'000)
    std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ms) / 1000.0);
  else if (ms < 3'600'000)
    std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(ms / 60'000),
                  static_cast<unsigned long long>(ms / 1000 % 60));
  else
    std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(ms / 3'600'000),
                  static_cast<unsigned long long>(ms / 60'000 % 60));
  return buf;
}

std::vector<std::string> render_watch(const WatchInput& in, const WatchLayout& layout) {
  const eng::EngineStatus& e = in.status.engine;
  std::vector<std::string> out;
  std::string title = "cuzkd " + in.addr + "   schema v" + std::to_string(in.status.schema_version) + "   up " +
                      format_duration_ms(e.uptime_ms);
  if (in.now_unix_ms != 0) title += "   " + clock_utc(in.now_unix_ms) + " UTC";
  if (e.draining) title += "   DRAINING (no new work accepted)";
  out.push_back(title);
  out.push_back("totals: done " + std::to_string(e.completed_total) + "  failed " + std::to_string(e.failed_total) +
                "  cancelled " + std::to_string(e.cancelled_total) + "   resident " + format_bytes(e.resident_bytes));
  render_queues(out, e);
  out.emplace_back();
  render_stages(out, e);
  render_jobs(out, e, layout);
  render_workers(out, e);
  if (!e.devices.empty()) render_devices(out, e);
  const eng::MemoryBudgetView& m = e.memory;
  if (m.total_bytes != 0 || m.reserved_bytes != 0 || m.peak_reserved_bytes != 0 || m.waiting != 0)
    render_budget(out, m);
  // The SRS residency lists the host tier too: the older parameters list
  // only when a daemon does not report residency.
  if (!e.srs.empty())
    render_srs(out, e);
  else
    render_params(out, in.status);
  if (in.events != nullptr) render_events(out, *in.events);
  if (layout.width > 0)
    for (auto& line : out)
      if (line.size() > layout.width) line.resize(layout.width);
  return out;
}

}  // namespace cuzkctl
