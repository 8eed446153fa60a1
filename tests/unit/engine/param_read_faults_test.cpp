// A failing disk under the daemon's parameter reads (io/loop_ring.hpp: every
// parameter file is read by coroutines on the engine's event loop): an EIO
// injected into one parameter file's reads fails the jobs that need it with a
// typed error naming the file and offset, while a job of another parameter set
// proves and verifies; nothing half-read is cached, so once the disk answers
// again the same set loads and proves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <string>

#include "io/loop_ring.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

std::string fd_path(int fd) {
  std::error_code ec;
  return fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec).string();
}

struct FaultRig : testing::EngineRig {
  FaultRig() : EngineRig("cuzk-param-faults", 2) {
    // Parameters of both sets on disk, as a restarted daemon finds them.
    ParamStore writer(dir, math, log);
    writer.get_demo(5);
    writer.get_demo(6);
    ring = std::make_unique<io::LoopRing>(loop.executor());
    ring->set_fault([this](int fd, std::uint64_t, std::size_t) {
      return fail_demo5.load() && fd_path(fd).ends_with("demo-5.params") ? -EIO : 0;
    });
    params = std::make_unique<ParamStore>(dir, math, log, ring.get());
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 8;
    make_engine(cfg);
    ring->start();
  }
  ~FaultRig() {
    engine.reset();
    params.reset();
  }
  std::atomic<bool> fail_demo5{true};
  std::unique_ptr<io::LoopRing> ring;
};

TEST(ParamReadFaults, AnEioInOneParameterFileFailsOnlyItsJobsAndLosesNothing) {
  if (!io::probe_io_uring().usable) GTEST_SKIP() << "io_uring NOT usable here: the loop's ring cannot be tested";
  FaultRig rig;
  testing::run_scenario(rig, [&rig](Engine& e) -> asio::awaitable<void> {
    auto bad = e.submit(testing::demo(5, 1));
    auto good = e.submit(testing::demo(6, 2));
    EXPECT_TRUE(bad.ok() && good.ok());
    auto bad_out = co_await e.await(bad.value().id, 0ms);
    auto good_out = co_await e.await(good.value().id, 0ms);
    EXPECT_FALSE(bad_out.ok());
    if (!bad_out.ok()) {
      EXPECT_EQ(bad_out.error().kind, ErrorKind::kInternal);
      EXPECT_NE(bad_out.error().message.find("demo-5.params"), std::string::npos) << bad_out.error().message;
      EXPECT_NE(bad_out.error().message.find("Input/output error"), std::string::npos) << bad_out.error().message;
    }
    EXPECT_TRUE(good_out.ok());
    if (good_out.ok()) {
      EXPECT_TRUE(testing::output_verifies(good_out.value().output));
    }
    // The disk recovers: the set was not cached half-read, so it loads now.
    rig.fail_demo5 = false;
    auto again = e.submit(testing::demo(5, 3));
    EXPECT_TRUE(again.ok());
    auto again_out = co_await e.await(again.value().id, 0ms);
    EXPECT_TRUE(again_out.ok());
    if (again_out.ok()) {
      EXPECT_TRUE(testing::output_verifies(again_out.value().output));
    }
    co_await rig.ring->close();
  });
}

}  // namespace
}  // namespace cuzk::engine
