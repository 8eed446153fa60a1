#include "io/buffer.hpp"

#include <cstdlib>
#include <new>

namespace cuzk::io {

void* AlignedHostAllocator::allocate(std::size_t bytes, std::size_t alignment_bytes) {
  // aligned_alloc wants the size to be a multiple of the alignment.
  std::size_t rounded = (bytes + alignment_bytes - 1) / alignment_bytes * alignment_bytes;
  void* p = std::aligned_alloc(alignment_bytes, rounded == 0 ? alignment_bytes : rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

void AlignedHostAllocator::deallocate(void* p, std::size_t) noexcept { std::free(p); }

}  // namespace cuzk::io
