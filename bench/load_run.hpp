// Drives load against a running cuzkd: `concurrency` client threads, each
// with its own connection (rpc::Client is synchronous), each proving one
// request at a time (closed loop), drawing classes in mix_schedule() order.
// A batch stops after `count` proofs; a mixed run stops starting proofs after
// `duration_s` and waits for those in flight.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "load_report.hpp"

namespace cuzk::bench {

struct LoadOptions {
  std::string mode = "batch";  // single | batch | mixed (labels the report)
  std::string addr;            // unix:///path.sock
  std::uint32_t concurrency = 1;
  std::uint64_t count = 3;       // proofs in all; 0: until duration_s
  double duration_s = 0;         // used when count == 0
  std::uint64_t seed = 1;        // demo witness of draw k: seed + k
  std::uint64_t timeout_ms = 0;  // per proof; 0: none
  std::string c1_json;           // porep classes: the C1 output
  bool warmup = false;           // one untimed proof per class before the clock starts
  bool no_progress = false;      // no progress bar even on a terminal
};

struct LoadOutcome {
  Report report;
  bool unreachable = false;  // a connection failed: the run stopped early
  std::string unreachable_message;
};

LoadOutcome run_load(const LoadOptions& opts, const std::vector<LoadClass>& classes);

}  // namespace cuzk::bench
