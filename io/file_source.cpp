#include "io/file_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "io/backends.hpp"
#include "io/buffer.hpp"

namespace cuzk::io {

std::string_view to_string(IoErrorKind kind) {
  switch (kind) {
    case IoErrorKind::kOpen:
      return "open";
    case IoErrorKind::kUnsupported:
      return "unsupported";
    case IoErrorKind::kRead:
      return "read";
  }
  return "unknown";
}

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::kIoUring:
      return "io_uring";
    case Backend::kThreadPool:
      return "pread-pool";
    case Backend::kLoopRing:
      return "io_uring on the event loop";
  }
  return "unknown";
}

IoError::IoError(IoErrorKind kind, int err, const std::string& what)
    : std::runtime_error(std::string(to_string(kind)) + ": " + what), kind_(kind), errno_(err) {}

namespace {

std::string errno_text(int err) { return std::string(std::strerror(err)); }

// O_DIRECT is refused at open by some file systems (EINVAL: tmpfs before
// Linux 6.6, some FUSE) and by others only at the first read, so probe both.
UniqueFd open_direct(const std::filesystem::path& path, int* err) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT));
  if (!fd.valid()) {
    *err = errno;
    return fd;
  }
  AlignedHostAllocator alloc;
  IoBuffer probe(alloc, kDirectAlignmentBytes, kDirectAlignmentBytes);
  ssize_t r;
  do {
    r = ::pread(fd.get(), probe.data(), kDirectAlignmentBytes, 0);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {
    *err = errno;
    return UniqueFd();
  }
  *err = 0;
  return fd;
}

}  // namespace

std::unique_ptr<FileSource> open_file_source(const std::filesystem::path& path, const FileSourceOptions& opts) {
  if (opts.queue_depth == 0) std::abort();  // a source that can never read is a caller bug
  UniqueFd fd;
  bool direct = false;
  if (opts.direct != DirectIo::kOff) {
    int err = 0;
    fd = open_direct(path, &err);
    direct = fd.valid();
    if (!direct) {
      if (err == ENOENT || err == EACCES || err == EISDIR || err == ENOTDIR) {
        throw IoError(IoErrorKind::kOpen, err, "cannot open " + path.string() + ": " + errno_text(err));
      }
      if (opts.direct == DirectIo::kRequire) {
        throw IoError(IoErrorKind::kUnsupported, err, "O_DIRECT refused for " + path.string() + ": " + errno_text(err));
      }
    }
  }
  if (!fd.valid()) {
    fd = UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) {
      int err = errno;
      throw IoError(IoErrorKind::kOpen, err, "cannot open " + path.string() + ": " + errno_text(err));
    }
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    int err = errno;
    throw IoError(IoErrorKind::kOpen, err, "cannot stat " + path.string() + ": " + errno_text(err));
  }
  if (!S_ISREG(st.st_mode)) {
    throw IoError(IoErrorKind::kOpen, EINVAL, path.string() + " is not a regular file");
  }
  const auto size_bytes = std::uint64_t(st.st_size);
  if (!direct) {
    // Buffered sequential reads: ask for aggressive read-ahead.
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  }

  if (opts.loop && opts.backend != BackendChoice::kThreadPool) {
    return detail::make_loop_source(*opts.loop, std::move(fd), direct, size_bytes, opts);
  }
  switch (opts.backend) {
    case BackendChoice::kThreadPool:
      return detail::make_thread_source(std::move(fd), direct, size_bytes, opts);
    case BackendChoice::kIoUring:
      return detail::make_uring_source(std::move(fd), direct, size_bytes, opts);
    case BackendChoice::kAuto:
      break;
  }
  // Ring setup is the probe: a refused io_uring_setup (seccomp, sysctl,
  // RLIMIT_MEMLOCK on old kernels) leaves fd untouched, so fall back.
  int fd_copy = ::dup(fd.get());
  if (fd_copy >= 0) {
    try {
      auto src = detail::make_uring_source(UniqueFd(fd_copy), direct, size_bytes, opts);
      return src;
    } catch (const IoError& e) {
      if (e.kind() != IoErrorKind::kUnsupported) throw;
    }
  }
  return detail::make_thread_source(std::move(fd), direct, size_bytes, opts);
}

}  // namespace cuzk::io
