#include "util/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <gtest/gtest.h>

namespace cuzk::util {
namespace {

std::filesystem::path temp_dir() {
  auto d = std::filesystem::temp_directory_path() / ("cuzk_file_io_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

TEST(FileIo, WriteAllWritesEveryByteInOrder) {
  const auto dir = temp_dir();
  const auto path = dir / "data";
  std::vector<std::uint8_t> bytes(3 * 1024 * 1024 + 17);  // several write() calls' worth on a pipe-sized buffer
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 131 + 7);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(write_all(fd, bytes));
  ::close(fd);
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(back, bytes);
  std::filesystem::remove_all(dir);
}

TEST(FileIo, WriteAllFailsOnAReadOnlyDescriptor) {
  const auto dir = temp_dir();
  const auto path = dir / "ro";
  { std::ofstream(path) << "x"; }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const std::uint8_t b = 1;
  EXPECT_FALSE(write_all(fd, &b, 1));
  EXPECT_EQ(errno, EBADF);
  ::close(fd);
  std::filesystem::remove_all(dir);
}

TEST(FileIo, FsyncDirSucceedsOnADirectoryAndFailsOnAMissingOne) {
  const auto dir = temp_dir();
  EXPECT_TRUE(fsync_dir(dir));
  EXPECT_FALSE(fsync_dir(dir / "missing"));
  EXPECT_EQ(errno, ENOENT);
  { std::ofstream(dir / "file") << "x"; }
  EXPECT_FALSE(fsync_dir(dir / "file"));  // not a directory
  EXPECT_EQ(errno, ENOTDIR);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cuzk::util
