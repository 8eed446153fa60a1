// Constructors of the two FileSource back ends. Internal to io/.
#pragma once

#include <memory>

#include "io/file_source.hpp"
#include "io/unique_fd.hpp"

namespace cuzk::io::detail {

std::unique_ptr<FileSource> make_uring_source(UniqueFd fd, bool direct, std::uint64_t size_bytes,
                                              const FileSourceOptions& opts);
std::unique_ptr<FileSource> make_loop_source(LoopRing& ring, UniqueFd fd, bool direct, std::uint64_t size_bytes,
                                             const FileSourceOptions& opts);
std::unique_ptr<FileSource> make_thread_source(UniqueFd fd, bool direct, std::uint64_t size_bytes,
                                               const FileSourceOptions& opts);

}  // namespace cuzk::io::detail
