// Hostile C1 JSON given to the engine: every one is the client's error
// (invalid_input), never internal and never a crash of the daemon (which
// would replay the job from its journal and crash again).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "engine/engine.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;

TEST(PorepInput, HostileC1JsonIsInvalidInput) {
  namespace fc = circuits::filecoin;
  const std::string good = fc::to_json(fc::make_synthetic_c1(fc::SealProof::StackedDrg2KiBV1_1, {}));
  const std::size_t at = good.find("\"seed\":[") + 8;
  const std::size_t end = good.find(',', at);
  // One labeling-proof parent byte changed (still a byte): the labeling
  // proof no longer repeats the parent column's row.
  const std::size_t parent = good.find("\"parents\":[[") + 12;
  const std::size_t parent_end = good.find(',', parent);
  const int byte = std::stoi(good.substr(parent, parent_end - parent));
  const std::string labels = good.substr(0, parent) + std::to_string((byte + 1) % 256) + good.substr(parent_end);
  std::string all_ff = "[255";
  for (int i = 1; i < 32; ++i) all_ff += ",255";
  all_ff += "]";
  const std::vector<std::string> hostile = {
      good.substr(0, at) + "1e400" + good.substr(end),  // nlohmann out_of_range
      good.substr(0, at) + std::string(200000, '[') + std::string(200000, ']') + good.substr(end),  // deep
      good + std::string(1, '\0') + "{}",                                                           // trailing data
      labels,
      // replica_id >= r: the public inputs' Fr conversion aborted the daemon.
      good.substr(0, good.find("\"replica_id\":[") + 13) + all_ff +
          good.substr(good.find(']', good.find("\"replica_id\":[")) + 1),
  };
  struct Rig : testing::EngineRig {
    Rig() : EngineRig("cuzk-porep-input-test", 2) {
      EngineConfig cfg;
      cfg.admission = AdmissionPolicy{16, 1};
      cfg.drain_timeout = 10s;
      make_engine(cfg);
    }
  } rig;
  testing::run_scenario(rig, [&hostile](Engine& e) -> asio::awaitable<void> {
    for (std::size_t i = 0; i < hostile.size(); ++i) {
      JobRequest r;
      r.kind = ProofKind::kPoRepC2;
      r.input = hostile[i];
      const JobId id = e.submit(std::move(r)).value().id;
      auto out = co_await e.await(id, 0ms);
      EXPECT_FALSE(out.ok()) << i;
      if (!out.ok()) {
        EXPECT_EQ(out.error().kind, ErrorKind::kInvalidInput) << i << ": " << out.error().message;
        EXPECT_LT(out.error().message.size(), 1000u) << i;
      }
    }
  });
}

}  // namespace
}  // namespace cuzk::engine
