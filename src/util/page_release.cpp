#include "util/page_release.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cerrno>

namespace cuzk {

namespace {

std::uintptr_t page_bytes() {
  static const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "page_release: %s failed: %s\n", what, std::strerror(errno));
  std::abort();
}

}  // namespace

ReleasedPages ReleasedPages::release(const void* data, std::size_t bytes) {
  const std::uintptr_t page = page_bytes();
  const auto start = reinterpret_cast<std::uintptr_t>(data);
  const std::uintptr_t begin = (start + page - 1) & ~(page - 1);
  const std::uintptr_t end = (start + bytes) & ~(page - 1);
  if (data == nullptr || end <= begin) return {};
  auto* p = reinterpret_cast<void*>(begin);
  const std::size_t n = end - begin;
  if (madvise(p, n, MADV_DONTNEED) != 0) die("madvise(MADV_DONTNEED)");
  if (mprotect(p, n, PROT_NONE) != 0) die("mprotect(PROT_NONE)");
  return ReleasedPages(begin, n);
}

ReleasedPages& ReleasedPages::operator=(ReleasedPages&& o) noexcept {
  if (this != &o) {
    restore();
    begin_ = o.begin_;
    bytes_ = o.bytes_;
    o.bytes_ = 0;
  }
  return *this;
}

void ReleasedPages::restore() {
  if (bytes_ == 0) return;
  if (mprotect(reinterpret_cast<void*>(begin_), bytes_, PROT_READ | PROT_WRITE) != 0)
    die("mprotect(PROT_READ|PROT_WRITE)");
  bytes_ = 0;
}

}  // namespace cuzk
