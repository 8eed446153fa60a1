// The demo job request the engine and journal tests submit (shared by
// engine_fixture.hpp and the tests that need no engine).
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "engine/types.hpp"

namespace cuzk::engine::testing {

// A demo job: a 2^log_domain-constraint circuit with a witness from `seed`.
inline JobRequest demo(std::uint32_t log_domain, std::uint64_t seed, std::string request_id = {}) {
  JobRequest r;
  r.kind = ProofKind::kGroth16Demo;
  r.demo_log_domain = log_domain;
  r.demo_seed = seed;
  r.request_id = std::move(request_id);
  return r;
}

}  // namespace cuzk::engine::testing
