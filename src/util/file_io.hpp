// Small POSIX file helpers shared by the two journals (policy/journal.cpp,
// engine/job_journal.cpp): whole writes that survive EINTR and short writes,
// and the directory fsync that makes a create or a rename durable (ext4 and
// xfs only persist a new directory entry once the directory itself is synced).
// Blocking; callers keep them off the event loop (journal writer thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace cuzk::util {

// Writes all n bytes (retrying short writes and EINTR); false with errno set
// on the first failing write.
bool write_all(int fd, const std::uint8_t* p, std::size_t n);
inline bool write_all(int fd, std::span<const std::uint8_t> bytes) { return write_all(fd, bytes.data(), bytes.size()); }

// fsync of a directory (an empty path means the current directory); false
// with errno set when it cannot be opened or synced.
bool fsync_dir(const std::filesystem::path& dir);

}  // namespace cuzk::util
