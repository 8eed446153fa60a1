#include "load_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "rpc/client.hpp"

namespace cuzk::bench {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

engine::JobRequest make_request(const LoadClass& c, const LoadOptions& o, std::uint64_t draw) {
  engine::JobRequest req;  // no request id: the daemon assigns one, so nothing is deduplicated
  req.kind = c.kind;
  req.priority = c.priority;
  if (c.kind == engine::ProofKind::kGroth16Demo) {
    req.demo_log_domain = c.demo_log_domain;
    req.demo_seed = o.seed + draw;
  } else {
    req.input = o.c1_json;
  }
  return req;
}

// What the worker threads share. The counters are read by the progress bar
// while the workers run.
struct Shared {
  std::atomic<std::uint64_t> next_draw{0};
  std::atomic<std::uint64_t> ok{0}, failed{0};
  std::atomic<std::uint32_t> workers_left{0};
  std::atomic<bool> stop{false};  // a connection failed
  std::mutex mu;                  // guards the two below
  std::vector<Sample> samples;
  std::string unreachable_message;
};

// One proof, timed on the client side.
Sample prove_one(rpc::Client& client, const LoadOptions& o, const std::vector<LoadClass>& classes,
                 std::size_t class_index, std::uint64_t draw) {
  Sample s;
  s.class_index = class_index;
  auto t0 = Clock::now();
  engine::Result<engine::JobOutcome> r = client.prove(make_request(classes[class_index], o, draw), o.timeout_ms);
  s.latency_ms = ms_since(t0);
  if (r) {
    s.ok = true;
    s.timings = r.value().output.timings;
  } else {
    s.error_kind = std::string(engine::to_string(r.error().kind));
  }
  return s;
}

void worker(const LoadOptions& o, const std::vector<LoadClass>& classes, const std::vector<std::size_t>& schedule,
            std::optional<Clock::time_point> deadline, Shared& sh) {
  auto fail_transport = [&](const std::string& why, std::optional<std::size_t> class_index) {
    std::lock_guard lock(sh.mu);
    if (sh.unreachable_message.empty()) sh.unreachable_message = why;
    if (class_index) {
      Sample s;
      s.class_index = *class_index;
      s.error_kind = "unavailable";
      sh.samples.push_back(s);
      sh.failed.fetch_add(1);
    }
    sh.stop.store(true);
  };
  std::unique_ptr<rpc::Client> client;
  try {
    client = std::make_unique<rpc::Client>(o.addr);
  } catch (const rpc::ClientError& e) {
    fail_transport(e.what(), std::nullopt);
    return;
  }
  while (!sh.stop.load()) {
    if (deadline && Clock::now() >= *deadline) return;
    std::uint64_t draw = sh.next_draw.fetch_add(1);
    if (o.count != 0 && draw >= o.count) return;
    std::size_t ci = schedule[draw % schedule.size()];
    try {
      Sample s = prove_one(*client, o, classes, ci, draw);
      (s.ok ? sh.ok : sh.failed).fetch_add(1);
      std::lock_guard lock(sh.mu);
      sh.samples.push_back(std::move(s));
    } catch (const rpc::ClientError& e) {
      fail_transport(e.what(), ci);
      return;
    }
  }
}

// One line on stderr, rewritten in place: "\r" + text + clear to end of line.
void draw_progress(const LoadOptions& o, const Shared& sh, Clock::time_point t0) {
  const double elapsed_s = ms_since(t0) / 1000.0;
  const std::uint64_t ok = sh.ok.load(), failed = sh.failed.load();
  double fraction = 0;
  if (o.count != 0)
    fraction = static_cast<double>(ok + failed) / static_cast<double>(o.count);
  else if (o.duration_s > 0)
    fraction = elapsed_s / o.duration_s;
  fraction = std::min(fraction, 1.0);
  constexpr int kCells = 30;
  const int filled = static_cast<int>(fraction * kCells);
  std::string cells(static_cast<std::size_t>(filled), '#');
  cells.resize(kCells, '.');
  const double per_min = elapsed_s > 0 ? static_cast<double>(ok) * 60.0 / elapsed_s : 0;
  std::string what = o.count != 0 ? std::to_string(ok + failed) + "/" + std::to_string(o.count)
                                  : (fraction < 1.0 ? "running" : "draining");
  std::fprintf(stderr, "\r[%s] %s  ok %llu  failed %llu  %.1f proofs/min  %.1f s\x1b[K", cells.c_str(), what.c_str(),
               static_cast<unsigned long long>(ok), static_cast<unsigned long long>(failed), per_min, elapsed_s);
  std::fflush(stderr);
}

}  // namespace

LoadOutcome run_load(const LoadOptions& o, const std::vector<LoadClass>& classes) {
  const std::vector<std::size_t> schedule = mix_schedule(classes);
  LoadOutcome out;
  if (o.warmup) {
    try {
      rpc::Client client(o.addr);
      for (std::size_t ci = 0; ci < classes.size(); ++ci) prove_one(client, o, classes, ci, 0);
    } catch (const rpc::ClientError& e) {
      out.unreachable = true;
      out.unreachable_message = e.what();
      out.report = make_report(o.mode, o.concurrency, 0, classes, {});
      return out;
    }
  }
  Shared sh;
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> deadline;
  if (o.count == 0)
    deadline = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.duration_s));
  const bool progress = !o.no_progress && ::isatty(STDERR_FILENO);
  std::vector<Clock::time_point> ends(o.concurrency, t0);
  {
    std::vector<std::jthread> threads;
    sh.workers_left = o.concurrency;
    for (std::uint32_t i = 0; i < o.concurrency; ++i)
      threads.emplace_back([&, i] {
        worker(o, classes, schedule, deadline, sh);
        ends[i] = Clock::now();  // each thread its own slot; read after the join
        sh.workers_left.fetch_sub(1);
      });
    while (sh.workers_left.load() > 0) {
      if (progress) draw_progress(o, sh, t0);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }  // joins every worker
  // Wall time ends when the last worker did, not when this loop noticed.
  const double wall_s = std::chrono::duration<double>(*std::max_element(ends.begin(), ends.end()) - t0).count();
  if (progress) std::fprintf(stderr, "\r\x1b[K");
  out.report = make_report(o.mode, o.concurrency, wall_s, classes, sh.samples);
  out.unreachable = !sh.unreachable_message.empty();
  out.unreachable_message = sh.unreachable_message;
  return out;
}

}  // namespace cuzk::bench
