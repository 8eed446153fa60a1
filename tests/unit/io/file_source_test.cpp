// FileSource: both back ends (io_uring when this kernel/sandbox allows it,
// the pread pool always), buffered and O_DIRECT, against the bytes written.
#include "io/file_source.hpp"

#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "io/buffer.hpp"

namespace cuzk::io {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("cuzk-io-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = std::uint8_t(rng());
  return v;
}

void write_file(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream o(p, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

struct Mode {
  BackendChoice backend;
  DirectIo direct;
  std::size_t max_op_bytes;  // 0, or small to force split/resumed reads
};

std::string mode_name(const ::testing::TestParamInfo<Mode>& info) {
  const Mode& m = info.param;
  std::string s = m.backend == BackendChoice::kIoUring ? "uring" : "pool";
  s += m.direct == DirectIo::kOff ? "_buffered" : "_direct";
  if (m.max_op_bytes) s += "_op" + std::to_string(m.max_op_bytes);
  return s;
}

class FileSourceTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override {
    if (GetParam().backend == BackendChoice::kIoUring) {
      IoUringProbe probe = probe_io_uring();
      if (!probe.usable) {
        GTEST_SKIP() << "io_uring NOT usable here (" << probe.detail << "): only the pread-pool fallback was tested";
      }
    }
  }
  FileSourceOptions options(std::size_t qd) const {
    FileSourceOptions o;
    o.backend = GetParam().backend;
    o.direct = GetParam().direct;
    o.queue_depth = qd;
    o.pool_threads = 3;
    o.max_op_bytes = GetParam().max_op_bytes;
    return o;
  }
  TempDir dir;
  AlignedHostAllocator alloc;
};

// Reads a whole file in `chunk`-byte pieces with up to qd in flight, each
// length rounded up to the alignment so the last read crosses end of file.
std::vector<std::uint8_t> read_all(FileSource& src, BufferAllocator& alloc, std::size_t chunk, std::size_t qd) {
  const std::uint64_t size = src.size_bytes();
  const std::size_t a = src.alignment_bytes();
  const std::size_t len = (chunk + a - 1) / a * a;
  const std::uint64_t n = (size + len - 1) / len;
  std::vector<IoBuffer> bufs;
  for (std::size_t i = 0; i < qd; ++i) bufs.emplace_back(alloc, len, kDirectAlignmentBytes);
  std::vector<std::uint8_t> out(size);
  std::map<std::uint64_t, std::size_t> buf_of;  // chunk -> buffer
  std::vector<std::size_t> free_bufs;
  for (std::size_t i = 0; i < qd; ++i) free_bufs.push_back(i);
  std::uint64_t next = 0, done = 0;
  auto submit_more = [&] {
    while (next < n && !free_bufs.empty()) {
      std::size_t b = free_bufs.back();
      free_bufs.pop_back();
      buf_of[next] = b;
      src.submit({next * len, len, bufs[b].data(), next});
      ++next;
    }
  };
  submit_more();
  EXPECT_EQ(src.in_flight(), std::min<std::uint64_t>(n, qd));
  EXPECT_LE(src.in_flight(), src.queue_depth());
  while (done < n) {
    src.wait(1, [&](const ReadCompletion& c) {
      EXPECT_EQ(c.error, 0);
      std::uint64_t off = c.tag * len;
      // Full reads except the last, which ends at end of file.
      EXPECT_EQ(c.bytes_read, std::min<std::uint64_t>(len, size - off)) << "chunk " << c.tag;
      std::size_t b = buf_of.at(c.tag);
      std::memcpy(out.data() + off, bufs[b].data(), std::min<std::size_t>(c.bytes_read, size - off));
      free_bufs.push_back(b);
      ++done;
    });
    submit_more();
  }
  EXPECT_EQ(src.in_flight(), 0u);
  return out;
}

TEST_P(FileSourceTest, ReadsWholeFilesOfUnalignedSizes) {
  // Sizes around the 4 KiB block: below, at, just past, and a few MiB + odd.
  for (std::size_t size : {std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097},
                           std::size_t{3 * 4096 + 123}, std::size_t{(3u << 20) + 7}}) {
    auto bytes = random_bytes(size, size);
    fs::path p = dir.path / ("f" + std::to_string(size));
    write_file(p, bytes);
    auto src = open_file_source(p, options(8));
    if (GetParam().direct == DirectIo::kOff) {
      EXPECT_FALSE(src->direct());
    }
    EXPECT_EQ(src->size_bytes(), size);
    EXPECT_EQ(src->backend(), GetParam().backend == BackendChoice::kIoUring ? Backend::kIoUring : Backend::kThreadPool);
    for (std::size_t chunk : {std::size_t{4096}, std::size_t{64} << 10, std::size_t{1} << 20}) {
      EXPECT_EQ(read_all(*src, alloc, chunk, 8), bytes) << "size " << size << " chunk " << chunk;
    }
  }
}

TEST_P(FileSourceTest, EndOfFileAndPastEnd) {
  auto bytes = random_bytes(10000, 7);
  fs::path p = dir.path / "f";
  write_file(p, bytes);
  auto src = open_file_source(p, options(4));
  IoBuffer b0(alloc, 16384, kDirectAlignmentBytes), b1(alloc, 16384, kDirectAlignmentBytes),
      b2(alloc, 4096, kDirectAlignmentBytes);
  src->submit({8192, 16384, b0.data(), 1});  // crosses end of file: 1808 bytes
  src->submit({12288, 4096, b1.data(), 2});  // starts past end of file: 0 bytes
  src->submit({0, 0, b2.data(), 3});         // empty read
  std::map<std::uint64_t, ReadCompletion> got;
  std::size_t n = src->wait(3, [&](const ReadCompletion& c) { got[c.tag] = c; });
  EXPECT_EQ(n, 3u);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[1].bytes_read, 10000u - 8192u);
  EXPECT_EQ(got[1].error, 0);
  EXPECT_EQ(0, std::memcmp(b0.data(), bytes.data() + 8192, 10000 - 8192));
  EXPECT_EQ(got[2].bytes_read, 0u);
  EXPECT_EQ(got[3].bytes_read, 0u);
  // Nothing left: a wait returns at once.
  EXPECT_EQ(src->wait(5, [](const ReadCompletion&) { ADD_FAILURE(); }), 0u);
}

TEST_P(FileSourceTest, PollDoesNotBlockAndDestructorStopsAllWrites) {
  auto bytes = random_bytes(1 << 20, 9);
  fs::path p = dir.path / "f";
  write_file(p, bytes);
  std::vector<IoBuffer> bufs;
  for (int i = 0; i < 8; ++i) bufs.emplace_back(alloc, 1 << 17, kDirectAlignmentBytes);
  {
    auto src = open_file_source(p, options(8));
    for (int i = 0; i < 8; ++i) src->submit({std::uint64_t(i) << 17, 1 << 17, bufs[i].data(), std::uint64_t(i)});
    std::size_t polled = src->wait(0, [](const ReadCompletion&) {});
    EXPECT_LE(polled, 8u);
    EXPECT_EQ(src->in_flight(), 8u - polled);
    // Destroyed with reads in flight.
  }
  // Nothing writes into the buffers once the source is gone: the reads it
  // did not deliver were finished or abandoned inside the destructor.
  for (auto& b : bufs) std::memset(b.data(), 0xA5, b.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  for (auto& b : bufs) {
    EXPECT_TRUE(std::all_of(b.data(), b.data() + b.size(), [](std::byte x) { return x == std::byte{0xA5}; }));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, FileSourceTest,
                         ::testing::Values(Mode{BackendChoice::kIoUring, DirectIo::kOff, 0},
                                           Mode{BackendChoice::kIoUring, DirectIo::kAuto, 0},
                                           Mode{BackendChoice::kIoUring, DirectIo::kOff, 1000},
                                           Mode{BackendChoice::kIoUring, DirectIo::kAuto, 8192},
                                           Mode{BackendChoice::kThreadPool, DirectIo::kOff, 0},
                                           Mode{BackendChoice::kThreadPool, DirectIo::kAuto, 0},
                                           Mode{BackendChoice::kThreadPool, DirectIo::kOff, 1000},
                                           Mode{BackendChoice::kThreadPool, DirectIo::kAuto, 8192}),
                         mode_name);

TEST(FileSource, ProbeAndAutoChoice) {
  IoUringProbe probe = probe_io_uring();
  std::cout << "[ io       ] io_uring probe: " << (probe.usable ? "usable" : "NOT usable") << " (" << probe.detail
            << ")\n";
  TempDir dir;
  fs::path p = dir.path / "f";
  write_file(p, random_bytes(5000, 1));
  auto src = open_file_source(p, {});
  EXPECT_EQ(src->backend(), probe.usable ? Backend::kIoUring : Backend::kThreadPool);
  std::cout << "[ io       ] auto: " << to_string(src->backend()) << ", O_DIRECT "
            << (src->direct() ? "on" : "off (refused by the file system)") << "\n";
}

TEST(FileSource, DirectRequiredOnThisFileSystemOrTypedError) {
  TempDir dir;
  fs::path p = dir.path / "f";
  write_file(p, random_bytes(5000, 1));
  FileSourceOptions o;
  o.direct = DirectIo::kRequire;
  try {
    auto src = open_file_source(p, o);
    EXPECT_TRUE(src->direct());
    EXPECT_EQ(src->alignment_bytes(), kDirectAlignmentBytes);
  } catch (const IoError& e) {
    EXPECT_EQ(e.kind(), IoErrorKind::kUnsupported) << e.what();
    std::cout << "[ io       ] O_DIRECT refused here: " << e.what() << "\n";
  }
  o.direct = DirectIo::kOff;
  auto src = open_file_source(p, o);
  EXPECT_FALSE(src->direct());
  EXPECT_EQ(src->alignment_bytes(), 1u);
}

TEST(FileSource, MissingFileAndDirectoryAreOpenErrors) {
  TempDir dir;
  for (auto direct : {DirectIo::kAuto, DirectIo::kOff}) {
    FileSourceOptions o;
    o.direct = direct;
    try {
      open_file_source(dir.path / "missing", o);
      ADD_FAILURE() << "opened a missing file";
    } catch (const IoError& e) {
      EXPECT_EQ(e.kind(), IoErrorKind::kOpen);
      EXPECT_EQ(e.errno_value(), ENOENT);
    }
    o.direct = DirectIo::kOff;
    EXPECT_THROW(open_file_source(dir.path, o), IoError);
  }
}

TEST(FileSource, QueueDepthIsEnforced) {
  TempDir dir;
  fs::path p = dir.path / "f";
  write_file(p, random_bytes(8192, 1));
  FileSourceOptions o;
  o.queue_depth = 2;
  o.direct = DirectIo::kOff;
  AlignedHostAllocator alloc;
  IoBuffer b(alloc, 8192, 4096);
  EXPECT_DEATH(
      {
        auto src = open_file_source(p, o);
        for (int i = 0; i < 3; ++i) src->submit({0, 4096, b.data(), 0});
      },
      "");
}

#if defined(__x86_64__)
// Makes io_uring_setup fail with ENOSYS for this process, as Docker >= 25's
// default seccomp profile does. Irreversible, so only in a forked child.
bool refuse_io_uring_setup() {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// The sandbox case: io_uring refused. The probe says so, kAuto falls back to
// the pread pool and still reads correctly, kIoUring is a typed error.
TEST(FileSourceDeathTest, FallsBackWhenSeccompRefusesIoUring) {
  TempDir dir;
  fs::path p = dir.path / "f";
  auto bytes = random_bytes(100000, 3);
  write_file(p, bytes);
  EXPECT_EXIT(
      {
        auto fail = [](const char* what) {
          std::fprintf(stderr, "FAILED: %s\n", what);
          std::_Exit(1);
        };
        if (!refuse_io_uring_setup()) fail("cannot install the seccomp filter");
        IoUringProbe probe = probe_io_uring();
        // ENOSYS from our filter (an outer sandbox filter may answer first).
        if (probe.usable || probe.error == 0) fail("probe did not report the refusal");
        auto src = open_file_source(p, {});
        if (src->backend() != Backend::kThreadPool) fail("kAuto did not fall back");
        AlignedHostAllocator alloc;
        if (read_all(*src, alloc, 8192, 4) != bytes) fail("fallback read wrong bytes");
        try {
          FileSourceOptions o;
          o.backend = BackendChoice::kIoUring;
          open_file_source(p, o);
          fail("kIoUring opened under seccomp");
        } catch (const IoError& e) {
          if (e.kind() != IoErrorKind::kUnsupported) fail("wrong error kind");
        }
        std::fprintf(stderr, "fallback ok\n");
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "fallback ok");
}
#endif

}  // namespace
}  // namespace cuzk::io
