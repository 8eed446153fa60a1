// The arithmetic of `cuzk-bench single|batch|mixed`: the load classes a run
// draws from, the samples it records, and the report (throughput, latency
// percentiles, failures by kind, mean stage timings). Pure: no clock, no
// sockets, so it is unit-tested with hand-made samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/types.hpp"
#include "engine/views.hpp"

namespace cuzk::bench {

// One kind of request in the load: a demo circuit of a size, or a PoRep C2
// from the C1 file given on the command line, at a priority.
struct LoadClass {
  engine::ProofKind kind = engine::ProofKind::kGroth16Demo;
  std::uint32_t demo_log_domain = 0;         // demo only
  std::optional<engine::Priority> priority;  // nullopt: the kind's default
  std::uint32_t weight = 1;                  // share of the mix
  std::string label() const;                 // "demo:14:normal", "porep:default"
};

// Parses "demo:14:normal=3,demo:12:high=1,porep:high=1": comma-separated
// KIND[:SIZE][:PRIORITY][=WEIGHT]; demo needs SIZE; the weight defaults to 1.
// Returns nullopt and sets *why on a malformed spec.
std::optional<std::vector<LoadClass>> parse_mix(const std::string& spec, std::string* why);

// The order classes are drawn in: smooth weighted round-robin, so any window
// of sum(weights) consecutive draws holds each class exactly `weight` times
// and heavy classes are spread out rather than bunched.
std::vector<std::size_t> mix_schedule(const std::vector<LoadClass>& classes);

struct Sample {
  std::size_t class_index = 0;
  bool ok = false;
  std::string error_kind;   // failures: engine::to_string(ErrorKind), or "unavailable" (transport)
  double latency_ms = 0;    // client side: request sent to result received
  engine::Timings timings;  // the daemon's stage timings (successes only)
};

// Nearest-rank percentile: the smallest sample with at least p% of the
// samples at or below it. p in (0, 100]; 0 for an empty set.
double percentile(std::vector<double> values, double p);

struct ClassReport {
  std::string label;
  std::uint64_t completed = 0, failed = 0;
  double throughput_per_min = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  // Means of the daemon's timings over the class's successes (ms).
  double queue_ms = 0, params_ms = 0, synthesis_ms = 0, prove_ms = 0, verify_ms = 0, total_ms = 0;
};

struct Report {
  std::string mode;
  std::uint32_t concurrency = 0;
  double wall_s = 0;
  std::uint64_t completed = 0, failed = 0;
  double throughput_per_min = 0;                  // completed proofs per minute of wall time
  std::vector<ClassReport> classes;               // in the order of the classes given
  std::map<std::string, std::uint64_t> failures;  // error kind -> count
};

Report make_report(const std::string& mode, std::uint32_t concurrency, double wall_s,
                   const std::vector<LoadClass>& classes, const std::vector<Sample>& samples);

// The human table (one string per line) and the JSON document (one line).
std::vector<std::string> report_table(const Report& r);
std::string report_json(const Report& r);

}  // namespace cuzk::bench
