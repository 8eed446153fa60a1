// Helpers shared by the fuzz targets: an in-memory file for the parsers that
// read from a path, and a check that aborts (a libFuzzer crash) with a message.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace cuzk::fuzz {

// A property the harness asserts about the code under test (round trips,
// agreement of two decoders); a failure is a finding.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz property violated: %s\n", what);
    std::abort();
  }
}

// A memfd whose /proc/self/fd path stands in for a file: the file-reading
// parsers (read_params, read_zkey) see exactly the fuzz bytes, no disk I/O.
class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(::memfd_create(name, 0)) {
    require(fd_ >= 0, "memfd_create");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { ::close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  void write(std::span<const std::uint8_t> bytes) {
    require(::ftruncate(fd_, 0) == 0, "ftruncate");
    std::size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, off_t(done));
      require(n > 0, "pwrite");
      done += std::size_t(n);
    }
  }
  std::vector<std::uint8_t> read() const {
    std::vector<std::uint8_t> out(std::size_t(::lseek(fd_, 0, SEEK_END)));
    require(::pread(fd_, out.data(), out.size(), 0) == ssize_t(out.size()), "pread");
    return out;
  }

 private:
  int fd_;
  std::filesystem::path path_;
};

}  // namespace cuzk::fuzz
