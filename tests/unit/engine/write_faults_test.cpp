// Writes that fail part-way, injected with the operating system's own limit
// (RLIMIT_FSIZE, SIGXFSZ ignored: a write past the limit fails with EFBIG, as
// it would with ENOSPC on a full disk), through the real write paths:
//   - development parameters (.vk, .params) and the R1CS shape cache: the job
//     goes on with its in-memory copy, nothing half-written stays under a
//     final name, and the next load generates / compiles again;
//   - the job journal's accept (the input file): the submit fails with a
//     typed error, the request id stays free, and a restarted engine restores
//     nothing of it.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "circuits/demo.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/post_proof.hpp"
#include "engine/engine.hpp"
#include "engine/filecoin_request.hpp"
#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "unit/engine/engine_fixture.hpp"

namespace cuzk::engine {
namespace {

namespace fs = std::filesystem;
namespace fc = circuits::filecoin;
using namespace std::chrono_literals;

// While alive, files of this process cannot grow past `bytes`.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &old_), 0);
    rlimit r = old_;
    r.rlim_cur = bytes;
    EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &r), 0);
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &old_);
    std::signal(SIGXFSZ, old_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit old_{};
  void (*old_handler_)(int) = nullptr;
};

groth16::R1cs small_circuit() {
  return groth16::compile(circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(8), std::nullopt));
}

// Development parameters of a small circuit in a temporary directory.
class ParamsWrite : public ::testing::Test {
 protected:
  ~ParamsWrite() override { fs::remove_all(dir); }
  fc::LoadedParams ensure() { return fc::ensure_dev_params(official, dev, "write fault test", dir, r1cs, pool, {}); }

  const fs::path dir = testing::make_temp_dir("cuzk-write-faults");
  ThreadPool pool{2};
  const groth16::R1cs r1cs = small_circuit();
  const fc::ParamFileNames official{"fault.params", "fault.vk"};
  const fc::ParamFileNames dev{"fault-dev.params", "fault-dev.vk"};
};

// Limits inside the .vk (~1 KiB), just past it, and inside the .params.
TEST_F(ParamsWrite, ParametersThatCannotBeWrittenAreNeverReadBack) {
  for (const rlim_t limit : {rlim_t{100}, rlim_t{2000}, rlim_t{20000}}) {
    SCOPED_TRACE("file size limit " + std::to_string(limit));
    fs::remove_all(dir);
    fs::create_directories(dir);
    {
      FileSizeLimit l(limit);
      const fc::LoadedParams p = ensure();
      EXPECT_FALSE(p.persisted);
      EXPECT_EQ(p.origin, fc::ParamsOrigin::kDevelopmentGenerated);
      EXPECT_EQ(p.params.h.size(), groth16::domain_size(r1cs) - 1);  // usable in memory
    }
    EXPECT_FALSE(fs::exists(dir / dev.params));
    EXPECT_FALSE(fs::exists(dir / (dev.params + ".tmp")));
    EXPECT_FALSE(fs::exists(dir / (dev.vk + ".tmp")));
    // A .vk left without its .params is a whole one (the write was checked).
    if (fs::exists(dir / dev.vk)) {
      EXPECT_NO_THROW(groth16::read_vk(dir / dev.vk));
    }
    // The next load finds no parameters: it generates (and writes) them again.
    const fc::LoadedParams again = ensure();
    EXPECT_EQ(again.origin, fc::ParamsOrigin::kDevelopmentGenerated);
    EXPECT_TRUE(again.persisted);
    const fc::LoadedParams read = ensure();
    EXPECT_EQ(read.origin, fc::ParamsOrigin::kDevelopment);
    EXPECT_EQ(read.params.vk, again.params.vk);
    EXPECT_EQ(groth16::read_vk(dir / dev.vk), again.params.vk);
  }
}

// A process killed while writing leaves only temporary files (writes go to
// <name>.tmp, renamed when complete): the next start neither reads nor
// trusts them, and writes whole files over them.
TEST_F(ParamsWrite, TemporaryFilesOfAKilledWriterAreIgnoredAndReplaced) {
  for (const std::string& name : {dev.params + ".tmp", dev.vk + ".tmp"}) {
    std::FILE* f = std::fopen((dir / name).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fputs("half a file", f);
    std::fclose(f);
  }
  const fc::LoadedParams p = ensure();
  EXPECT_EQ(p.origin, fc::ParamsOrigin::kDevelopmentGenerated);
  EXPECT_TRUE(p.persisted);
  EXPECT_FALSE(fs::exists(dir / (dev.params + ".tmp")));
  EXPECT_EQ(groth16::read_vk(dir / dev.vk), p.params.vk);
}

TEST(WriteFaults, R1csCacheThatCannotBeWrittenIsCompiledAgain) {
  const fs::path dir = testing::make_temp_dir("cuzk-write-faults");
  const fs::path cache = dir / "shape.r1cs";
  int compiles = 0;
  const std::function<groth16::R1cs()> compile = [&] {
    ++compiles;
    return small_circuit();
  };
  const std::size_t inputs = small_circuit().num_inputs();
  std::shared_ptr<const groth16::R1cs> first;
  {
    FileSizeLimit l(1000);
    first = fc::load_or_compile_shape(cache, inputs, compile, "write fault test");
  }
  EXPECT_EQ(compiles, 1);
  EXPECT_FALSE(fs::exists(cache));
  EXPECT_FALSE(fs::exists(cache.string() + ".tmp"));
  const auto second = fc::load_or_compile_shape(cache, inputs, compile, "write fault test");
  EXPECT_EQ(compiles, 2);
  EXPECT_TRUE(fs::exists(cache));
  const auto third = fc::load_or_compile_shape(cache, inputs, compile, "write fault test");
  EXPECT_EQ(compiles, 2);  // read from the cache
  EXPECT_EQ(*third, *first);
  fs::remove_all(dir);
}

struct JournalRig : testing::EngineRig {
  explicit JournalRig(const fs::path& state) : EngineRig("cuzk-write-faults", 2) {
    EngineConfig cfg;
    cfg.admission = AdmissionPolicy{8, 1};
    cfg.max_demo_log_domain = 8;
    cfg.journal_dir = state.empty() ? dir / "state" : state;
    make_engine(cfg);
  }
};

// A WindowPoSt request whose framing passes the submit screen, with a 64 KiB
// vanilla proof: its journal input file cannot be written under a 16 KiB limit.
JobRequest large_post_request() {
  PostRequest r;
  r.registered_proof = fc::post_proof_info(fc::PostProof::Window2KiBV1_2).registered_id;
  r.randomness.assign(32, 7);
  r.vanilla_proofs.push_back(std::vector<std::uint8_t>(64 << 10, 0x5a));
  JobRequest j;
  j.kind = ProofKind::kWindowPost;
  j.request_id = "large";
  j.input = encode_post_request(r);
  return j;
}

TEST(WriteFaults, JournalInputThatCannotBeWrittenFailsTheSubmitAndIsNotRestored) {
  JournalRig first({});
  testing::run_scenario(first, [](Engine& e) -> asio::awaitable<void> {
    Result<JobView> kept = co_await e.submit_durable(testing::demo(5, 1, "kept"));
    EXPECT_TRUE(kept.ok());
    if (kept) {
      EXPECT_TRUE((co_await e.await(kept.value().id, 0ms)).ok());
    }
    std::optional<Result<JobView>> refused;
    {
      FileSizeLimit l(16 << 10);
      refused = co_await e.submit_durable(large_post_request());
    }
    EXPECT_FALSE(refused->ok());
    if (!refused->ok()) {
      EXPECT_EQ(refused->error().kind, ErrorKind::kInternal) << refused->error().message;
    }
    // The request id is free again: the same request is accepted once the
    // disk takes it (its junk vanilla proof then fails the job, typed).
    Result<JobView> retried = co_await e.submit_durable(large_post_request());
    EXPECT_TRUE(retried.ok());
    if (retried) {
      EXPECT_FALSE(retried.value().deduplicated);
      Result<JobOutcome> out = co_await e.await(retried.value().id, 0ms);
      EXPECT_FALSE(out.ok());
      if (!out) {
        EXPECT_EQ(out.error().kind, ErrorKind::kInvalidInput);
      }
    }
  });
  first.engine.reset();  // releases the journal's lock

  JournalRig second(first.dir / "state");
  testing::run_scenario(second, [](Engine& e) -> asio::awaitable<void> {
    const EngineStatus s = e.status();
    std::size_t large = 0, kept = 0;
    for (const JobView& v : s.jobs) {
      large += v.request_id == "large";
      kept += v.request_id == "kept";
    }
    EXPECT_EQ(kept, 1u);
    EXPECT_EQ(large, 1u);  // the retried job only
    co_return;
  });
}

}  // namespace
}  // namespace cuzk::engine
