// The host copy of a set's bases (engine/host_srs.hpp): released only with
// no user, read back from the set's file with the same values, refused
// (typed, still released) when the file changed; and in the partition
// pipeline with fake GPUs that keep a "device" copy: released once every GPU
// holds the set, read back before a GPU that lost it or a CPU retry proves
// (a fake reading released memory would fault), the budget's books told.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "engine/host_srs.hpp"
#include "engine/param_store.hpp"
#include "engine/pipeline.hpp"
#include "groth16/params.hpp"
#include "groth16/verifier.hpp"
#include "runtime/task_set.hpp"
#include "unit/engine/engine_fixture.hpp"
#include "unit/engine/fake_backend.hpp"
#include "unit/engine/pipeline_rig.hpp"
#include "unit/util/resident_pages.hpp"

namespace cuzk::engine {
namespace {

namespace fs = std::filesystem;

using cuzk::testing::resident_pages;

struct Rig : testing::PipelineRig {
  explicit Rig(std::size_t gpus)
      : PipelineRig("cuzk-host-srs-test", {gpus, 1ull << 40, 3, 4, runtime::LogLevel::kWarn}) {
    big = params->get_demo(kLogDomain).params;  // generated and written to the state dir
    for (auto& f : fakes) f->models_device_srs = true;
  }
  static constexpr std::uint32_t kLogDomain = 10;  // bases of ~100 KB per vector: whole pages to release

  fs::path file() const { return params->dir() / (big->circuit_id + ".params"); }
  HostSrsCopy::Reader reader() {
    return [this](const fs::path& f, groth16::Parameters& into) { params->read_params_into(f, math, into); };
  }

  static groth16::Witness witness(std::uint64_t seed) {
    const std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(kLogDomain);
    return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)));
  }
  PartitionPlan plan(std::uint32_t n, HostSrsCopy& copy) {
    PartitionPlan p = demo_plan(n, 2, 4);
    p.srs_key = big->circuit_id;
    p.params = &big->params;
    p.r1cs = &big->r1cs;
    p.pvk = &big->pvk;
    p.host_copy = &copy;
    p.on_host_copy = [this](std::uint64_t released) { books.push_back(released); };
    p.synthesize = [](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> { return witness(300 + k); };
    return p;
  }
  Result<PipelineOutcome> run(const PartitionPlan& p) { return run_plan(p); }
  void expect_all_verify(const Result<PipelineOutcome>& out, std::uint32_t n) const {
    ASSERT_TRUE(out.ok()) << out.error().message;
    ASSERT_EQ(out.value().proofs.size(), n);
    for (std::uint32_t k = 0; k < n; ++k) {
      EXPECT_EQ(groth16::verify(big->pvk, out.value().proofs[k], out.value().public_inputs[k]),
                groth16::VerifyResult::kValid)
          << "partition " << k;
    }
  }
  std::size_t resident_h_pages() const {
    return resident_pages(big->params.h.data(), big->params.h.size() * sizeof(ec::G1Affine));
  }

  std::shared_ptr<const CircuitParams> big;
  std::vector<std::uint64_t> books;  // on_host_copy calls
};

TEST(HostSrsCopy, ReleasesOnlyWithoutUsersAndReadsTheSameValuesBack) {
  Rig rig(1);
  const groth16::Parameters before = rig.big->params;  // a private copy to compare with
  {
    HostSrsCopy copy(rig.big->params, rig.file(), rig.reader());
    EXPECT_EQ(copy.bases_bytes(), HostSrsCopy::bases_bytes_of(rig.big->params));
    ASSERT_FALSE(copy.acquire().has_value());
    EXPECT_EQ(copy.release_if_unused(), 0u);  // in use
    EXPECT_FALSE(copy.released());
    copy.end_use();

    const std::size_t pages_before = rig.resident_h_pages();
    ASSERT_GT(pages_before, 0u);
    const std::uint64_t released = copy.release_if_unused();
    EXPECT_GT(released, copy.bases_bytes() / 2);  // all but the vectors' partial edge pages
    EXPECT_LE(released, copy.bases_bytes());
    EXPECT_TRUE(copy.released());
    EXPECT_EQ(rig.resident_h_pages(), 0u);
    EXPECT_EQ(copy.release_if_unused(), 0u);  // already released
    // Sizes and the verifying key stay readable for every holder.
    EXPECT_EQ(rig.big->params.h.size(), before.h.size());
    EXPECT_EQ(rig.big->params.vk, before.vk);

    ASSERT_FALSE(copy.acquire().has_value());  // read back from the file
    EXPECT_FALSE(copy.released());
    EXPECT_EQ(copy.reloads(), 1u);
    EXPECT_TRUE(rig.big->params == before);
    copy.end_use();
    EXPECT_GT(copy.release_if_unused(), 0u);
    EXPECT_EQ(copy.releases(), 2u);
  }
  // Destroyed released: the pages are restored (zero), the vectors freeable.
  EXPECT_EQ(rig.big->params.h.size(), before.h.size());
}

TEST(HostSrsCopy, AFileThatChangedIsRefusedAndTheCopyStaysReleased) {
  Rig rig(1);
  const fs::path other = rig.dir / "other.params";
  // Parameters of another circuit size under the set's name.
  groth16::write_params(rig.demo->params, other);
  HostSrsCopy copy(rig.big->params, other, rig.reader());
  ASSERT_GT(copy.release_if_unused(), 0u);
  std::optional<Error> e = copy.acquire();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, ErrorKind::kInternal);
  EXPECT_NE(e->message.find("other.params"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("changed on disk"), std::string::npos) << e->message;
  EXPECT_TRUE(copy.released());
}

// A point that no longer decodes halfway through the file: the read-back
// fails after refilling part of the vectors, so the copy is released again
// (nothing may prove from a partial read-back); once the file is good again
// the next acquire reads it back whole.
TEST(HostSrsCopy, APartialReadBackIsReleasedAgainAndALaterAcquireRecovers) {
  Rig rig(1);
  const groth16::Parameters before = rig.big->params;
  const fs::path broken = rig.dir / "broken.params";
  fs::copy_file(rig.file(), broken);
  {
    // One bit of a point's coordinate halfway through the file: off the curve.
    const auto at = static_cast<std::streamoff>(fs::file_size(broken) / 2);
    std::fstream f(broken, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(at);
    const char c = static_cast<char>(f.get());
    f.seekp(at);
    f.put(static_cast<char>(c ^ 0x01));
  }
  HostSrsCopy copy(rig.big->params, broken, rig.reader());
  ASSERT_GT(copy.release_if_unused(), 0u);
  std::optional<Error> e = copy.acquire();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, ErrorKind::kInternal);
  EXPECT_NE(e->message.find("broken.params"), std::string::npos) << e->message;
  EXPECT_EQ(e->message.find("changed on disk"), std::string::npos) << e->message;  // a bad point, not another set
  EXPECT_TRUE(copy.released());
  EXPECT_EQ(rig.resident_h_pages(), 0u);  // h was refilled before the bad point, then released again
  EXPECT_EQ(copy.reloads(), 0u);

  fs::copy_file(rig.file(), broken, fs::copy_options::overwrite_existing);
  ASSERT_FALSE(copy.acquire().has_value());
  EXPECT_FALSE(copy.released());
  EXPECT_TRUE(rig.big->params == before);
  copy.end_use();
}

TEST(HostSrsCopy, AMissingFileIsATypedError) {
  Rig rig(1);
  HostSrsCopy copy(rig.big->params, rig.dir / "gone.params", rig.reader());
  ASSERT_GT(copy.release_if_unused(), 0u);
  std::optional<Error> e = copy.acquire();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->kind, ErrorKind::kInternal);
  EXPECT_NE(e->message.find("gone.params"), std::string::npos) << e->message;
}

// One GPU: the first partition uploads, the host copy goes; later jobs prove
// from the "device" copy; a GPU that lost the set (another set's upload)
// makes the next job read it back first, then it goes again.
TEST(HostSrsPipeline, ReleasedOnceTheGpuHoldsTheSetAndReadBackWhenItDoesNot) {
  Rig rig(1);
  HostSrsCopy copy(rig.big->params, rig.file(), rig.reader());
  rig.expect_all_verify(rig.run(rig.plan(4, copy)), 4);
  EXPECT_TRUE(copy.released());
  EXPECT_EQ(copy.releases(), 1u);
  EXPECT_EQ(copy.reloads(), 0u);
  EXPECT_EQ(rig.fakes[0]->srs_uploads.load(), 1);
  EXPECT_EQ(rig.resident_h_pages(), 0u);
  ASSERT_EQ(rig.books.size(), 1u);
  EXPECT_GT(rig.books[0], 0u);

  // Warm: nothing read back, nothing uploaded.
  rig.expect_all_verify(rig.run(rig.plan(3, copy)), 3);
  EXPECT_EQ(copy.reloads(), 0u);
  EXPECT_EQ(rig.fakes[0]->srs_uploads.load(), 1);

  rig.fakes[0]->release_resident_srs();  // another set took the device
  rig.expect_all_verify(rig.run(rig.plan(2, copy)), 2);
  EXPECT_EQ(copy.reloads(), 1u);
  EXPECT_EQ(rig.fakes[0]->srs_uploads.load(), 2);
  EXPECT_TRUE(copy.released());  // and released again
  EXPECT_EQ(copy.releases(), 2u);
  ASSERT_EQ(rig.books.size(), 3u);
  EXPECT_EQ(rig.books[1], 0u);  // read back whole
  EXPECT_GT(rig.books[2], 0u);
}

// A proof the GPU got wrong is proved again on the CPU, which reads the
// bases: they are read back first.
TEST(HostSrsPipeline, ACpuRetryReadsTheReleasedCopyBack) {
  Rig rig(1);
  HostSrsCopy copy(rig.big->params, rig.file(), rig.reader());
  rig.expect_all_verify(rig.run(rig.plan(2, copy)), 2);
  ASSERT_TRUE(copy.released());
  rig.fakes[0]->corrupt_next = 1;
  rig.expect_all_verify(rig.run(rig.plan(2, copy)), 2);
  EXPECT_EQ(copy.reloads(), 1u);
  EXPECT_EQ(rig.devices->cpu_retries(), 1u);
}

// Two GPUs: a set only one of them holds keeps its host copy (the other
// would upload from it).
TEST(HostSrsPipeline, KeptUntilEveryGpuHoldsTheSet) {
  Rig rig(2);
  HostSrsCopy copy(rig.big->params, rig.file(), rig.reader());
  rig.expect_all_verify(rig.run(rig.plan(1, copy)), 1);
  EXPECT_EQ(rig.fakes[0]->srs_uploads.load() + rig.fakes[1]->srs_uploads.load(), 1);
  EXPECT_FALSE(copy.released());
  EXPECT_EQ(copy.releases(), 0u);
  EXPECT_TRUE(rig.books.empty());
  EXPECT_GT(rig.resident_h_pages(), 0u);
}

// Without a host copy (small sets, the option off) nothing changes.
TEST(HostSrsPipeline, NoHostCopyNoRelease) {
  Rig rig(1);
  PartitionPlan p = rig.demo_plan(2, 2, 4);
  p.synthesize = [](std::uint32_t k, groth16::Witness) -> Result<groth16::Witness> {
    return testing::PipelineRig::demo_witness(500 + k);
  };
  const Result<PipelineOutcome> out = rig.run(p);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out.value().proofs.size(), 2u);
  EXPECT_TRUE(rig.fakes[0]->holds_srs(rig.demo->params));
  EXPECT_TRUE(rig.books.empty());
  // The big set's pages were never touched by a release.
  EXPECT_GT(rig.resident_h_pages(), 0u);
}

}  // namespace
}  // namespace cuzk::engine
