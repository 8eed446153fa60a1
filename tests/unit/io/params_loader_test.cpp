// ParamsLoader against the synchronous groth16::read_params / read_vk: the
// same Parameters on a generated file, and the same typed errors (kind and
// message, which names the vector and index) on truncated and bit-flipped
// files, for both back ends, O_DIRECT on/off and chunk sizes that split
// points, headers and the vk across reads.
#include "io/params_loader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "groth16/r1cs.hpp"
#include "groth16/setup.hpp"
#include "io/sequential_reader.hpp"
#include "unit/io/loop_thread.hpp"

namespace cuzk::io {
namespace {

namespace fs = std::filesystem;
using ff::Fr;
using groth16::Parameters;
using groth16::ParamsError;
using groth16::ParamsErrorKind;

// x_{i+1} = x_i^2 + k with k, y public, plus a c-only variable so that the a
// and b densities are partial (|b| < |a|).
groth16::R1cs chain_r1cs(int rounds) {
  std::mt19937_64 rng(5);
  const Fr k = Fr::random(rng), x0 = Fr::random(rng);
  Fr xv = x0;
  groth16::RecordingCs cs(groth16::RecordingCs::Values::kCollect);
  Fr y = xv;
  for (int i = 0; i < rounds; ++i) y = y * y + k;
  groth16::Variable kv = cs.alloc_input("k", k);
  groth16::Variable yv = cs.alloc_input("y", y);
  groth16::Variable x = cs.alloc("x0", xv);
  const groth16::Variable first = x;
  for (int i = 0; i < rounds; ++i) {
    Fr next = xv * xv + k;
    groth16::Variable nx = cs.alloc(groth16::Name("x", std::uint64_t(i + 1)), next);
    cs.enforce(groth16::Name("round", std::uint64_t(i)), groth16::LinearCombination(x), groth16::LinearCombination(x),
               groth16::LinearCombination(nx) - kv);
    x = nx;
    xv = next;
  }
  cs.enforce("out", groth16::LinearCombination(x), groth16::LinearCombination(groth16::Variable::one()),
             groth16::LinearCombination(yv));
  // t = 3 x0 occurs only in C: (3 x0) * 1 = t.
  groth16::Variable t = cs.alloc("t", Fr::from_u64(3) * x0);
  cs.enforce("t", groth16::LinearCombination(groth16::Term{first, Fr::from_u64(3)}),
             groth16::LinearCombination(groth16::Variable::one()), groth16::LinearCombination(t));
  return cs.finish();
}

std::vector<char> slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const fs::path& p, const std::vector<char>& b) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o.write(b.data(), std::streamsize(b.size()));
}

// Parameters of a ~300-constraint circuit (file ~150 KB), made once.
class ParamsLoaderTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pool_ = new ThreadPool(2);
    std::mt19937_64 rng(42);
    groth16::ToxicWaste tw{Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng), Fr::random(rng)};
    params_ = new Parameters(groth16::generate_parameters(chain_r1cs(300), tw, *pool_));
    dir_ = new fs::path(fs::temp_directory_path() / ("cuzk-io-loader-" + std::to_string(::getpid())));
    fs::create_directories(*dir_);
    groth16::write_params(*params_, *dir_ / "c.params");
    groth16::write_vk(params_->vk, *dir_ / "c.vk");
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete params_;
    delete pool_;
  }

  static ParamsLoaderOptions opts(BackendChoice b, DirectIo d, std::size_t chunk, std::size_t qd) {
    ParamsLoaderOptions o;
    o.source.backend = b;
    o.source.direct = d;
    o.source.queue_depth = qd;
    o.chunk_bytes = chunk;
    return o;
  }
  static std::vector<BackendChoice> backends() {
    std::vector<BackendChoice> v{BackendChoice::kThreadPool};
    if (probe_io_uring().usable) {
      v.push_back(BackendChoice::kIoUring);
    } else {
      std::cout << "[ io       ] io_uring NOT usable here: only the pread-pool fallback is tested\n";
    }
    return v;
  }

  // Runs f(read_params) and f(loader) and requires the same outcome: equal
  // Parameters, or ParamsErrors of the same kind and message.
  static void expect_same_outcome(const fs::path& p, const ParamsLoader& loader, const std::string& ctx) {
    std::optional<Parameters> want, got;
    std::optional<ParamsError> want_err, got_err;
    try {
      want = groth16::read_params(p, *pool_);
    } catch (const ParamsError& e) {
      want_err = e;
    }
    try {
      got = loader.load_params(p);
    } catch (const ParamsError& e) {
      got_err = e;
    }
    ASSERT_EQ(want.has_value(), got.has_value()) << ctx << ": read_params " << (want_err ? want_err->what() : "ok")
                                                 << " / loader " << (got_err ? got_err->what() : "ok");
    if (want) {
      EXPECT_TRUE(*want == *got) << ctx;
    } else {
      EXPECT_EQ(want_err->kind(), got_err->kind()) << ctx << ": " << want_err->what() << " / " << got_err->what();
      EXPECT_STREQ(want_err->what(), got_err->what()) << ctx;
    }
  }

  static ThreadPool* pool_;
  static Parameters* params_;
  static fs::path* dir_;
};
ThreadPool* ParamsLoaderTest::pool_ = nullptr;
Parameters* ParamsLoaderTest::params_ = nullptr;
fs::path* ParamsLoaderTest::dir_ = nullptr;

TEST_F(ParamsLoaderTest, SameParametersAsReadParams) {
  const fs::path pf = *dir_ / "c.params";
  ASSERT_EQ(groth16::read_params(pf, *pool_), *params_);
  ASSERT_NE(fs::file_size(pf) % 4096, 0u);  // the last O_DIRECT read crosses end of file
  for (BackendChoice b : backends()) {
    for (DirectIo d : {DirectIo::kAuto, DirectIo::kOff}) {
      // 4 KiB chunks split the vk (868 + 96 n_ic bytes is not a chunk) and
      // G1/G2 points across reads; 1 MiB holds the whole file in one read.
      for (std::size_t chunk : {std::size_t{4096}, std::size_t{12288}, std::size_t{1} << 20}) {
        for (std::size_t qd : {std::size_t{1}, std::size_t{8}}) {
          ParamsLoader loader(*pool_, opts(b, d, chunk, qd));
          LoadStats st;
          Parameters got = loader.load_params(pf, &st);
          EXPECT_TRUE(got == *params_) << to_string(st.backend) << " chunk " << chunk << " qd " << qd;
          EXPECT_EQ(st.file_bytes, fs::file_size(pf));
          EXPECT_EQ(st.chunks, (st.file_bytes + chunk - 1) / chunk);
          EXPECT_EQ(st.backend, b == BackendChoice::kIoUring ? Backend::kIoUring : Backend::kThreadPool);
          if (d == DirectIo::kOff) {
            EXPECT_FALSE(st.direct);
          }
        }
      }
    }
  }
}

TEST_F(ParamsLoaderTest, SubgroupCheckAllAndVkAndScan) {
  ParamsLoaderOptions o;
  o.check = groth16::SubgroupCheck::kAll;
  o.chunk_bytes = 8192;
  ParamsLoader loader(*pool_, o);
  EXPECT_TRUE(loader.load_params(*dir_ / "c.params") == *params_);
  EXPECT_TRUE(loader.load_vk(*dir_ / "c.vk") == groth16::read_vk(*dir_ / "c.vk"));
  EXPECT_TRUE(loader.load_vk(*dir_ / "c.vk") == params_->vk);
  ParamsLayout lay = loader.scan_params(*dir_ / "c.params");
  EXPECT_EQ(lay.n_ic, params_->vk.ic.size());
  EXPECT_EQ(lay.h, params_->h.size());
  EXPECT_EQ(lay.l, params_->l.size());
  EXPECT_EQ(lay.a, params_->a.size());
  EXPECT_EQ(lay.b_g1, params_->b_g1.size());
  EXPECT_EQ(lay.b_g2, params_->b_g2.size());
  // A .params file is not a .vk: same error as read_vk.
  try {
    loader.load_vk(*dir_ / "c.params");
    ADD_FAILURE();
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kTrailingBytes);
  }
  EXPECT_THROW(groth16::read_vk(*dir_ / "c.params"), ParamsError);
}

// Into existing vectors: the same points, the vectors' storage kept; a file
// with another vk or other lengths is a kShapeMismatch.
TEST_F(ParamsLoaderTest, LoadIntoFillsTheVectorsInPlaceAndRefusesAnotherShape) {
  ParamsLoaderOptions o;
  o.chunk_bytes = 12288;  // points split across reads
  ParamsLoader loader(*pool_, o);
  Parameters into = *params_;
  for (auto* v : {&into.h, &into.l, &into.a, &into.b_g1}) std::fill(v->begin(), v->end(), ec::G1Affine{});
  std::fill(into.b_g2.begin(), into.b_g2.end(), ec::G2Affine{});
  const ec::G1Affine* h_storage = into.h.data();
  loader.load_params_into(*dir_ / "c.params", into);
  EXPECT_TRUE(into == *params_);
  EXPECT_EQ(into.h.data(), h_storage);

  Parameters shorter = *params_;
  shorter.l.pop_back();
  try {
    loader.load_params_into(*dir_ / "c.params", shorter);
    ADD_FAILURE() << "a length mismatch was accepted";
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("l declares"), std::string::npos) << e.what();
  }
  Parameters other_vk = *params_;
  other_vk.vk.alpha_g1 = other_vk.vk.beta_g1;
  try {
    loader.load_params_into(*dir_ / "c.params", other_vk);
    ADD_FAILURE() << "another verifying key was accepted";
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kShapeMismatch);
    EXPECT_NE(std::string(e.what()).find("verifying key"), std::string::npos) << e.what();
  }
}

TEST_F(ParamsLoaderTest, ProgressIsMonotoneAndEndsAtFileSize) {
  ParamsLoaderOptions o;
  o.chunk_bytes = 16384;
  o.source.queue_depth = 4;
  std::vector<LoadProgress> seen;
  o.progress = [&](const LoadProgress& p) { seen.push_back(p); };
  ParamsLoader loader(*pool_, o);
  loader.load_params(*dir_ / "c.params");
  const std::uint64_t size = fs::file_size(*dir_ / "c.params");
  ASSERT_EQ(seen.size(), (size + 16383) / 16384);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].file_bytes, size);
    EXPECT_GE(seen[i].read_bytes, seen[i].decoded_bytes);
    if (i > 0) {
      EXPECT_GT(seen[i].decoded_bytes, seen[i - 1].decoded_bytes);
      EXPECT_GE(seen[i].read_bytes, seen[i - 1].read_bytes);
    }
  }
  EXPECT_EQ(seen.back().decoded_bytes, size);
  EXPECT_EQ(seen.back().read_bytes, size);
}

// Truncation at every structural boundary (and around it), compared with
// read_params, kind and message.
TEST_F(ParamsLoaderTest, TruncatedFilesGiveTheSameErrors) {
  const auto full = slurp(*dir_ / "c.params");
  const std::size_t vk = groth16::vk_file_bytes(params_->vk.ic.size());
  std::vector<std::size_t> cuts{0, 1, 100, 867, 868, 869, vk - 1, vk, vk + 2, vk + 4, vk + 4 + 50};
  std::size_t off = vk;
  const std::size_t lens[5] = {params_->h.size(), params_->l.size(), params_->a.size(), params_->b_g1.size(),
                               params_->b_g2.size()};
  for (int v = 0; v < 5; ++v) {
    std::size_t body = lens[v] * (v == 4 ? 192 : 96);
    for (std::size_t c : {off, off + 3, off + 4, off + 4 + body / 2, off + 4 + body - 1}) cuts.push_back(c);
    off += 4 + body;
  }
  ASSERT_EQ(off, full.size());
  cuts.push_back(full.size() - 1);
  const fs::path bad = *dir_ / "trunc.params";
  for (BackendChoice b : backends()) {
    ParamsLoader loader(*pool_, opts(b, DirectIo::kAuto, 4096, 8));
    for (std::size_t c : cuts) {
      spit(bad, std::vector<char>(full.begin(), full.begin() + std::ptrdiff_t(c)));
      expect_same_outcome(bad, loader, "cut at " + std::to_string(c));
      try {
        loader.load_params(bad);
        ADD_FAILURE() << "accepted a file cut at " << c;
      } catch (const ParamsError& e) {
        EXPECT_EQ(e.kind(), ParamsErrorKind::kTruncated) << e.what();
      }
    }
  }
}

TEST_F(ParamsLoaderTest, TrailingBytesUpToABlockBoundary) {
  auto bytes = slurp(*dir_ / "c.params");
  // Pad to a multiple of 4096 (no partial O_DIRECT block) and to one past it.
  bytes.resize((bytes.size() + 4095) / 4096 * 4096, 0);
  const fs::path bad = *dir_ / "trail.params";
  for (int extra : {0, 1}) {
    auto b2 = bytes;
    b2.resize(b2.size() + std::size_t(extra), 0);
    spit(bad, b2);
    ParamsLoader loader(*pool_, opts(BackendChoice::kAuto, DirectIo::kAuto, 4096, 4));
    expect_same_outcome(bad, loader, "padded");
    try {
      loader.load_params(bad);
      ADD_FAILURE();
    } catch (const ParamsError& e) {
      EXPECT_EQ(e.kind(), ParamsErrorKind::kTrailingBytes) << e.what();
    }
  }
}

// Single bit flips all over the file (vk points, lengths, every vector):
// the same outcome as read_params, kind and message (vector and index).
TEST_F(ParamsLoaderTest, BitFlipsGiveTheSameErrors) {
  const auto full = slurp(*dir_ / "c.params");
  const std::size_t vk = groth16::vk_file_bytes(params_->vk.ic.size());
  std::vector<std::size_t> where{0, 50, 100, 200, 500, 700, 864, 866, 867, 900, vk, vk + 3, vk + 10};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 40; ++i) where.push_back(std::size_t(rng() % full.size()));
  const fs::path bad = *dir_ / "flip.params";
  int rejected = 0;
  for (BackendChoice b : backends()) {
    ParamsLoader small(*pool_, opts(b, DirectIo::kAuto, 4096, 8));
    ParamsLoader large(*pool_, opts(b, DirectIo::kOff, 1 << 20, 2));
    for (std::size_t w : where) {
      for (std::uint8_t bit : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
        auto f = full;
        f[w] = char(std::uint8_t(f[w]) ^ bit);
        spit(bad, f);
        std::string ctx = "flip " + std::to_string(bit) + " at " + std::to_string(w);
        expect_same_outcome(bad, small, ctx);
        expect_same_outcome(bad, large, ctx);
        try {
          small.load_params(bad);
        } catch (const ParamsError&) {
          ++rejected;
        }
      }
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST_F(ParamsLoaderTest, InfinityInAVectorIsRejected) {
  auto f = slurp(*dir_ / "c.params");
  const std::size_t vk = groth16::vk_file_bytes(params_->vk.ic.size());
  // l[7] := the point at infinity (flag 0x40, every other bit zero).
  std::size_t at = vk + 4 + params_->h.size() * 96 + 4 + 7 * 96;
  std::fill(f.begin() + std::ptrdiff_t(at), f.begin() + std::ptrdiff_t(at + 96), 0);
  f[at] = 0x40;
  const fs::path bad = *dir_ / "inf.params";
  spit(bad, f);
  ParamsLoader loader(*pool_, opts(BackendChoice::kAuto, DirectIo::kAuto, 4096, 8));
  expect_same_outcome(bad, loader, "l[7] infinity");
  try {
    loader.load_params(bad);
    ADD_FAILURE();
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kPointAtInfinity);
    EXPECT_NE(std::string(e.what()).find("l[7]"), std::string::npos) << e.what();
  }
}

TEST_F(ParamsLoaderTest, HugeDeclaredLengthIsATypedErrorNotAnAllocation) {
  auto f = slurp(*dir_ / "c.params");
  const std::size_t vk = groth16::vk_file_bytes(params_->vk.ic.size());
  for (std::size_t at : {std::size_t{864}, vk}) {  // n_ic, |h|
    auto g = f;
    g[at] = char(0xff);
    g[at + 1] = char(0xff);
    spit(*dir_ / "huge.params", g);
    ParamsLoader loader(*pool_, {});
    expect_same_outcome(*dir_ / "huge.params", loader, "huge length at " + std::to_string(at));
    EXPECT_THROW(loader.load_params(*dir_ / "huge.params"), ParamsError);
  }
}

TEST_F(ParamsLoaderTest, MissingFileIsAnIoError) {
  ParamsLoader loader(*pool_, {});
  try {
    loader.load_params(*dir_ / "nope.params");
    ADD_FAILURE();
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kIo);
  }
}

// The allocator hook (for pinned buffers): every staging buffer comes from
// it, aligned, and goes back to it, also when the load fails midway.
class CountingAllocator final : public BufferAllocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment) override {
    ++allocs;
    live_bytes += bytes;
    void* p = inner.allocate(bytes, alignment);
    if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0) misaligned = true;
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept override {
    ++frees;
    live_bytes -= bytes;
    inner.deallocate(p, bytes);
  }
  AlignedHostAllocator inner;
  int allocs = 0, frees = 0;
  std::size_t live_bytes = 0;
  bool misaligned = false;
};

TEST_F(ParamsLoaderTest, BuffersComeFromTheInjectedAllocator) {
  CountingAllocator alloc;
  ParamsLoaderOptions o;
  o.allocator = &alloc;
  o.chunk_bytes = 8192;
  o.source.queue_depth = 6;
  ParamsLoader loader(*pool_, o);
  EXPECT_TRUE(loader.load_params(*dir_ / "c.params") == *params_);
  EXPECT_EQ(alloc.allocs, 6);  // one buffer per read in flight
  EXPECT_EQ(alloc.frees, 6);
  EXPECT_EQ(alloc.live_bytes, 0u);
  EXPECT_FALSE(alloc.misaligned);
  // A failure early in the file, with later reads in flight.
  auto f = slurp(*dir_ / "c.params");
  f[groth16::vk_file_bytes(params_->vk.ic.size()) + 4 + 10] ^= 1;
  spit(*dir_ / "early.params", f);
  EXPECT_THROW(loader.load_params(*dir_ / "early.params"), ParamsError);
  EXPECT_EQ(alloc.allocs, alloc.frees);
  EXPECT_EQ(alloc.live_bytes, 0u);
}

// The daemon's reads: the same loader with its reads as coroutines on an event
// loop (io/loop_ring.hpp), and the R1CS cache file through the same reads.
TEST_F(ParamsLoaderTest, ReadsOnTheEventLoopGiveTheSameParametersAndErrors) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  auto f = slurp(*dir_ / "c.params");
  f[groth16::vk_file_bytes(params_->vk.ic.size()) + 4 + 96 * 7 + 10] ^= 1;  // h[7]
  spit(*dir_ / "flip.params", f);
  testing::LoopThread loop;
  for (std::size_t chunk : {std::size_t{4096}, std::size_t{12288}, std::size_t{1} << 20}) {
    ParamsLoaderOptions o;
    o.source = loop.source(4);
    o.chunk_bytes = chunk;
    ParamsLoader loader(*pool_, o);
    LoadStats stats;
    EXPECT_TRUE(loader.load_params(*dir_ / "c.params", &stats) == *params_) << chunk;
    EXPECT_EQ(stats.backend, Backend::kLoopRing);
    expect_same_outcome(*dir_ / "flip.params", loader, "bit flip, chunk " + std::to_string(chunk));
  }
}

TEST_F(ParamsLoaderTest, AReadErrorOnTheLoopFailsTheLoadAsIo) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  const std::uint64_t bad = 40960;  // inside the h vector
  testing::LoopThread loop(
      16, [bad](int, std::uint64_t off, std::size_t len) { return off <= bad && bad < off + len ? -EIO : 0; });
  ParamsLoaderOptions o;
  o.source = loop.source(4, DirectIo::kOff);
  o.chunk_bytes = 8192;
  try {
    ParamsLoader(*pool_, o).load_params(*dir_ / "c.params");
    ADD_FAILURE() << "an injected EIO was not reported";
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kIo);
    EXPECT_NE(std::string(e.what()).find("offset 40960"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(std::strerror(EIO)), std::string::npos) << e.what();
  }
}

TEST_F(ParamsLoaderTest, R1csThroughTheLoopEqualsTheStdioRead) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  const fs::path path = *dir_ / "c.r1cs";
  groth16::save_r1cs(chain_r1cs(300), path);
  testing::LoopThread loop;
  for (DirectIo direct : {DirectIo::kOff, DirectIo::kAuto}) {
    LoadProgress last;
    LoadStats stats;
    groth16::R1cs got = load_r1cs(
        path, loop.source(4, direct), [&](const LoadProgress& p) { last = p; }, &stats);
    EXPECT_TRUE(got == groth16::load_r1cs(path));
    EXPECT_EQ(stats.backend, Backend::kLoopRing);
    EXPECT_EQ(last.decoded_bytes, fs::file_size(path));
  }
  // A flipped payload byte is the checksum error of the stdio reader.
  auto f = slurp(path);
  f[f.size() / 2] ^= 4;
  spit(*dir_ / "bad.r1cs", f);
  try {
    load_r1cs(*dir_ / "bad.r1cs", loop.source(4));
    ADD_FAILURE() << "a corrupt r1cs loaded";
  } catch (const groth16::R1csError& e) {
    EXPECT_EQ(e.kind(), groth16::R1csErrorKind::kChecksum) << e.what();
  }
}

TEST_F(ParamsLoaderTest, AReadErrorInAnR1csFileIsAnIoError) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  const fs::path path = *dir_ / "eio.r1cs";
  groth16::save_r1cs(chain_r1cs(3000), path);
  ASSERT_GT(fs::file_size(path), std::uint64_t{3} << 12);
  testing::LoopThread loop(16, [](int, std::uint64_t off, std::size_t) { return off >= 8192 ? -EIO : 0; });
  FileSourceOptions o = loop.source(2, DirectIo::kOff);
  try {
    SequentialReader reader(path, o, 4096);
    groth16::load_r1cs(reader, path.string());
    ADD_FAILURE() << "an injected EIO was not reported";
  } catch (const groth16::R1csError& e) {
    EXPECT_EQ(e.kind(), groth16::R1csErrorKind::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find("offset 8192"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cuzk::io
