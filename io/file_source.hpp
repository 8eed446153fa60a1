// FileSource: asynchronous positional reads of one file into caller buffers,
// with many reads in flight and a bounded queue depth. Two back ends sit
// behind the interface, chosen when the file is opened:
//   - io_uring (liburing, one ring per source): the kernel runs the reads
//     while the caller does other work; syscalls are batched at wait().
//   - a small pool of threads doing pread(2): for sandboxes whose seccomp
//     policy refuses io_uring_setup (Docker >= 25 default, gVisor) or hosts
//     with kernel.io_uring_disabled set. Probed, not assumed.
// O_DIRECT is used when the file system accepts it (probed with one read):
// multi-GiB parameter files then bypass the page cache and land in the
// caller's (possibly pinned) buffers without a kernel copy.
//
//   - the daemon's event loop (FileSourceOptions::loop, io/loop_ring.hpp):
//     each read is a coroutine on the loop awaiting its CQE from the loop's
//     ring; the consuming thread only takes finished reads from a queue.
//
// Raw liburing rather than asio::random_access_file (CPP-STACK.md §1): asio
// makes one io_uring_enter per read and always sets up a 16384-entry ring
// (~1.5 MiB); here a ring is sized to the queue depth and all reads queued
// between two waits go to the kernel in one io_uring_enter. Offline tools
// (no event loop) use a ring of their own per source.
//
// Threading: a FileSource is driven by one thread (submit and wait from the
// same thread; never the loop's thread for the loop back end). Completion
// callbacks run on that thread, inside wait().
// Reads are completed in full: short reads are resumed internally, so a
// completion reports fewer bytes than asked only when the file ended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cuzk::io {

enum class IoErrorKind : std::uint8_t {
  kOpen,         // open/stat failed (missing file, permissions)
  kUnsupported,  // a required feature (io_uring, O_DIRECT) is refused here
  kRead,         // a read failed (errno) or the file ended early (sequential readers)
};
// (A failed read is reported in its ReadCompletion, with the errno.)
std::string_view to_string(IoErrorKind kind);

class IoError : public std::runtime_error {
 public:
  IoError(IoErrorKind kind, int err, const std::string& what);
  IoErrorKind kind() const { return kind_; }
  int errno_value() const { return errno_; }

 private:
  IoErrorKind kind_;
  int errno_;
};

enum class Backend : std::uint8_t { kIoUring, kThreadPool, kLoopRing };
std::string_view to_string(Backend b);

enum class BackendChoice : std::uint8_t {
  kAuto,        // io_uring when the probe succeeds, else the thread pool
  kIoUring,     // io_uring or IoError(kUnsupported)
  kThreadPool,  // always the pread pool
};

enum class DirectIo : std::uint8_t {
  kAuto,     // O_DIRECT when the file system accepts it, else buffered
  kOff,      // buffered (page cache)
  kRequire,  // O_DIRECT or IoError(kUnsupported)
};

class LoopRing;

struct FileSourceOptions {
  BackendChoice backend = BackendChoice::kAuto;
  // The daemon's ring on its event loop: when set (and backend is not
  // kThreadPool), reads are coroutines on that loop. Borrowed.
  LoopRing* loop = nullptr;
  DirectIo direct = DirectIo::kAuto;
  std::size_t queue_depth = 16;  // reads in flight at most
  std::size_t pool_threads = 4;  // pread threads of the fallback back end
  // Largest single read syscall / io_uring op in bytes; longer requests are
  // split and resumed like short reads. 0: the kernel's per-call limit.
  // Tests set it small to exercise the resume path.
  std::size_t max_op_bytes = 0;
};

// O_DIRECT alignment used for buffer addresses, offsets and lengths. 4096
// covers both 512 B and 4 KiB logical block sizes.
inline constexpr std::size_t kDirectAlignmentBytes = 4096;

struct ReadRequest {
  std::uint64_t offset_bytes = 0;
  std::size_t length_bytes = 0;
  std::byte* dst = nullptr;  // length_bytes of room, borrowed until completed
  std::uint64_t tag = 0;     // returned in the completion
};

struct ReadCompletion {
  std::uint64_t tag = 0;
  std::size_t bytes_read = 0;  // < length only at end of file
  int error = 0;               // errno of a failed read, 0 on success
};

using CompletionFn = std::function<void(const ReadCompletion&)>;

class FileSource {
 public:
  // Abandons the reads not yet delivered, and returns only once nothing
  // writes into their buffers any more (their contents are unspecified).
  virtual ~FileSource() = default;
  virtual Backend backend() const = 0;
  bool direct() const { return direct_; }
  // Alignment required of dst, offset and length (1 when buffered).
  std::size_t alignment_bytes() const { return direct_ ? kDirectAlignmentBytes : 1; }
  std::uint64_t size_bytes() const { return size_bytes_; }
  std::size_t queue_depth() const { return queue_depth_; }
  // Submitted and not yet delivered through wait().
  virtual std::size_t in_flight() const = 0;

  // Queues one read. Precondition (aborts otherwise): in_flight() <
  // queue_depth(), and alignment as above. May be called from a callback.
  virtual void submit(const ReadRequest& req) = 0;
  // Delivers completions to on_done until at least min_completions have been
  // delivered (clamped to in_flight()); 0 polls without blocking. Returns
  // the number delivered.
  virtual std::size_t wait(std::size_t min_completions, const CompletionFn& on_done) = 0;

 protected:
  FileSource(bool direct, std::uint64_t size_bytes, std::size_t queue_depth)
      : direct_(direct), size_bytes_(size_bytes), queue_depth_(queue_depth) {}

 private:
  bool direct_;
  std::uint64_t size_bytes_;
  std::size_t queue_depth_;
};

std::unique_ptr<FileSource> open_file_source(const std::filesystem::path& path, const FileSourceOptions& opts = {});

// Whether io_uring can be used by this process (ring setup and IORING_OP_READ
// both work). Call once at start-up to log it; open_file_source probes by
// itself under BackendChoice::kAuto.
struct IoUringProbe {
  bool usable = false;
  int error = 0;       // errno of the failing step
  std::string detail;  // human-readable reason
};
IoUringProbe probe_io_uring();

}  // namespace cuzk::io
