// LoopRing and the FileSource back end on it: reads submitted from a worker
// thread run as coroutines on the loop thread and return the file's bytes,
// split and queued reads included; faults injected at the ring reach the
// reader as errno completions; reads after close() complete as cancelled.
#include "io/loop_ring.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <vector>

#include "io/buffer.hpp"
#include "io/file_source.hpp"
#include "unit/io/loop_thread.hpp"

namespace cuzk::io {
namespace {

namespace fs = std::filesystem;
using testing::LoopThread;

class LoopRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("cuzk-loop-ring-" + std::to_string(::getpid()) + ".bin");
    std::mt19937_64 rng(7);
    bytes_.resize((std::size_t{5} << 20) + 123);
    for (auto& b : bytes_) b = static_cast<char>(rng());
    std::ofstream(path_, std::ios::binary).write(bytes_.data(), std::streamsize(bytes_.size()));
  }
  void TearDown() override { fs::remove(path_); }

  // Reads the whole file in `piece`-byte requests through `src`, keeping the
  // queue full; returns the bytes and checks every completion.
  std::vector<char> read_all(FileSource& src, std::size_t piece) {
    AlignedHostAllocator alloc;
    const std::uint64_t size = src.size_bytes();
    const std::size_t n = std::size_t((size + piece - 1) / piece);
    std::vector<IoBuffer> bufs;
    for (std::size_t i = 0; i < n; ++i) bufs.emplace_back(alloc, piece, kDirectAlignmentBytes);
    std::vector<char> out(size);
    std::size_t next = 0, done = 0;
    auto on_done = [&](const ReadCompletion& c) {
      EXPECT_EQ(c.error, 0);
      const std::uint64_t off = c.tag * piece;
      EXPECT_EQ(c.bytes_read, std::min<std::uint64_t>(piece, size - off)) << "request " << c.tag;
      std::memcpy(out.data() + off, bufs[c.tag].data(), c.bytes_read);
      ++done;
    };
    while (done < n) {
      while (next < n && src.in_flight() < src.queue_depth()) {
        src.submit(ReadRequest{next * piece, piece, bufs[next].data(), next});
        ++next;
      }
      src.wait(1, on_done);
    }
    return out;
  }

  fs::path path_;
  std::vector<char> bytes_;
};

TEST_F(LoopRingTest, ReadsFromAWorkerThreadRunOnTheLoopAndReturnTheFile) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  LoopThread loop;
  for (DirectIo direct : {DirectIo::kOff, DirectIo::kAuto}) {
    FileSourceOptions o = loop.source(8, direct);
    o.max_op_bytes = 64 << 10;  // every 1 MiB request takes 16 ring ops, resumed on the loop
    auto src = open_file_source(path_, o);
    EXPECT_EQ(src->backend(), Backend::kLoopRing);
    const std::uint64_t before = loop.on_loop([&] { return loop.ring().reads_submitted(); });
    EXPECT_EQ(read_all(*src, std::size_t{1} << 20), bytes_);
    const std::uint64_t ops = loop.on_loop([&] { return loop.ring().reads_submitted(); }) - before;
    EXPECT_GE(ops, bytes_.size() / (64 << 10)) << "reads were not split into ring ops";
  }
}

TEST_F(LoopRingTest, MoreReadsThanRingEntriesWaitTheirTurn) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  LoopThread loop(/*ring_entries=*/2);
  auto src = open_file_source(path_, loop.source(/*queue_depth=*/32, DirectIo::kOff));
  EXPECT_EQ(read_all(*src, 64 << 10), bytes_);
  EXPECT_EQ(loop.on_loop([&] { return loop.ring().in_flight(); }), 0u);
}

TEST_F(LoopRingTest, AnInjectedErrorReachesTheReaderAsItsErrno) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  const std::uint64_t bad_offset = std::uint64_t{3} << 20;
  LoopThread loop(64, [bad_offset](int, std::uint64_t off, std::size_t len) {
    return off <= bad_offset && bad_offset < off + len ? -EIO : 0;
  });
  auto src = open_file_source(path_, loop.source(8, DirectIo::kOff));
  AlignedHostAllocator alloc;
  IoBuffer good(alloc, 1 << 20, kDirectAlignmentBytes), bad(alloc, 1 << 20, kDirectAlignmentBytes);
  src->submit(ReadRequest{0, 1 << 20, good.data(), 1});
  src->submit(ReadRequest{bad_offset, 1 << 20, bad.data(), 2});
  std::map<std::uint64_t, ReadCompletion> got;
  while (got.size() < 2) src->wait(1, [&](const ReadCompletion& c) { got[c.tag] = c; });
  EXPECT_EQ(got[1].error, 0);
  EXPECT_EQ(got[1].bytes_read, std::size_t{1} << 20);
  EXPECT_EQ(std::memcmp(good.data(), bytes_.data(), 1 << 20), 0);
  EXPECT_EQ(got[2].error, EIO);
}

TEST_F(LoopRingTest, ReadsAfterCloseCompleteAsCancelled) {
  if (testing::io_uring_refused()) GTEST_SKIP() << "io_uring refused by this kernel or sandbox";
  LoopThread loop;
  auto src = open_file_source(path_, loop.source(4, DirectIo::kOff));
  loop.close();
  AlignedHostAllocator alloc;
  IoBuffer buf(alloc, 4096, kDirectAlignmentBytes);
  src->submit(ReadRequest{0, 4096, buf.data(), 9});
  ReadCompletion got;
  EXPECT_EQ(src->wait(1, [&](const ReadCompletion& c) { got = c; }), 1u);
  EXPECT_EQ(got.tag, 9u);
  EXPECT_EQ(got.error, ECANCELED);
}

}  // namespace
}  // namespace cuzk::io
