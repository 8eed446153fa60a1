// Host staging buffers for file reads. The allocator is an interface so that
// the GPU code can hand in pinned (cudaHostAlloc'ed) memory: reads then land
// where the DMA engine can take them, with no extra copy.
#pragma once

#include <cstddef>
#include <utility>

namespace cuzk::io {

class BufferAllocator {
 public:
  virtual ~BufferAllocator() = default;
  // Returns `bytes` bytes aligned to `alignment_bytes` (a power of two), or
  // throws std::bad_alloc.
  virtual void* allocate(std::size_t bytes, std::size_t alignment_bytes) = 0;
  virtual void deallocate(void* p, std::size_t bytes) noexcept = 0;
};

// Pageable host memory from std::aligned_alloc (valid for O_DIRECT).
class AlignedHostAllocator final : public BufferAllocator {
 public:
  void* allocate(std::size_t bytes, std::size_t alignment_bytes) override;
  void deallocate(void* p, std::size_t bytes) noexcept override;
};

// One buffer, owned; returned to its allocator on destruction. The allocator
// is borrowed and must outlive the buffer.
class IoBuffer {
 public:
  IoBuffer() = default;
  IoBuffer(BufferAllocator& alloc, std::size_t bytes, std::size_t alignment_bytes)
      : alloc_(&alloc), data_(static_cast<std::byte*>(alloc.allocate(bytes, alignment_bytes))), size_(bytes) {}
  ~IoBuffer() { reset(); }
  IoBuffer(IoBuffer&& o) noexcept
      : alloc_(std::exchange(o.alloc_, nullptr)),
        data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)) {}
  IoBuffer& operator=(IoBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      alloc_ = std::exchange(o.alloc_, nullptr);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  IoBuffer(const IoBuffer&) = delete;
  IoBuffer& operator=(const IoBuffer&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void reset() {
    if (data_) alloc_->deallocate(data_, size_);
    data_ = nullptr;
    size_ = 0;
  }
  BufferAllocator* alloc_ = nullptr;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cuzk::io
