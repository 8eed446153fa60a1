// RAII owners for CUDA resources and the one check macro.
//
// CUZK_CUDA_CHECK(call) aborts with the call's text, file, line and CUDA's
// message: a failing CUDA call here is either a bug or a sticky context error
// after which nothing on the device can be trusted, so the process stops (the
// daemon is restarted by systemd). The one recoverable failure, running out of
// device memory, is caught before it happens in device_alloc() and reported
// as gpu::Error{kOutOfDeviceMemory}.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>

#include "gpu/error.hpp"
#include "gpu/fence.hpp"

namespace cuzk::gpu::detail {

[[noreturn]] inline void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
  std::fprintf(stderr, "cuzk: CUDA call failed: %s\n  at %s:%d\n  error %d (%s): %s\n", call, file, line,
               static_cast<int>(err), cudaGetErrorName(err), cudaGetErrorString(err));
  std::abort();
}

}  // namespace cuzk::gpu::detail

#define CUZK_CUDA_CHECK(call)                                                                           \
  do {                                                                                                  \
    const cudaError_t cuzk_err_ = (call);                                                               \
    if (cuzk_err_ != cudaSuccess) ::cuzk::gpu::detail::cuda_fail(cuzk_err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations immediately.
#define CUZK_CUDA_CHECK_LAUNCH() CUZK_CUDA_CHECK(cudaGetLastError())

namespace cuzk::gpu::detail {

// Bytes kept free for the CUDA context, kernels' local memory and CUB scratch
// that is allocated without this check.
inline constexpr std::size_t kDeviceMemoryReserveBytes = std::size_t{256} << 20;

// Allocates `bytes` of device memory or throws Error{kOutOfDeviceMemory}.
inline void* device_alloc(std::size_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUZK_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (bytes + kDeviceMemoryReserveBytes > free_bytes) {
    throw Error(ErrorKind::kOutOfDeviceMemory, std::string("device allocation for ") + what + " needs " +
                                                   std::to_string(bytes >> 20) + " MiB, " +
                                                   std::to_string(free_bytes >> 20) + " MiB free");
  }
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();  // not sticky: clear it
    throw Error(ErrorKind::kOutOfDeviceMemory,
                std::string("cudaMalloc for ") + what + " of " + std::to_string(bytes >> 20) + " MiB failed");
  }
  CUZK_CUDA_CHECK(err);
  return p;
}

// Owns `count` elements of T in device memory (uninitialized).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t count, const char* what)
      : ptr_(static_cast<T*>(device_alloc(count * sizeof(T), what))), count_(count) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() {
    if (ptr_ != nullptr) CUZK_CUDA_CHECK(cudaFree(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Owns `count` elements of T in page-locked host memory.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t count) : count_(count) {
    if (count > 0) CUZK_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { reset(); }

  void reset() {
    if (ptr_ != nullptr) CUZK_CUDA_CHECK(cudaFreeHost(ptr_));
    ptr_ = nullptr;
    count_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

class Stream {
 public:
  Stream() { CUZK_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  // highest: the device's greatest stream priority, whose pending thread
  // blocks the scheduler starts before those of lower-priority streams (a
  // kernel already running keeps its blocks: no preemption).
  explicit Stream(bool highest) {
    int least = 0, greatest = 0;
    CUZK_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CUZK_CUDA_CHECK(cudaStreamCreateWithPriority(&s_, cudaStreamNonBlocking, highest ? greatest : least));
  }
  ~Stream() {
    if (s_ != nullptr) CUZK_CUDA_CHECK(cudaStreamDestroy(s_));
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { CUZK_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { CUZK_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_ != nullptr) CUZK_CUDA_CHECK(cudaEventDestroy(e_));
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) { CUZK_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void sync() const { CUZK_CUDA_CHECK(cudaEventSynchronize(e_)); }

 private:
  cudaEvent_t e_ = nullptr;
};

// Sets the current device for this thread for the guard's lifetime.
class DeviceGuard {
 public:
  explicit DeviceGuard(int ordinal) {
    CUZK_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != ordinal) CUZK_CUDA_CHECK(cudaSetDevice(ordinal));
  }
  ~DeviceGuard() { (void)cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

inline unsigned grid_for(std::size_t n, unsigned block) { return static_cast<unsigned>((n + block - 1) / block); }

// The largest local memory (thread stack, bytes per thread) of the kernels,
// for reserving device memory for their stacks before planning scratch.
inline std::size_t max_local_bytes(std::initializer_list<const void*> kernels) {
  std::size_t bytes = 0;
  for (const void* k : kernels) {
    cudaFuncAttributes attr{};
    CUZK_CUDA_CHECK(cudaFuncGetAttributes(&attr, k));
    bytes = bytes > attr.localSizeBytes ? bytes : attr.localSizeBytes;
  }
  return bytes;
}

// Queues fn() on the stream (cudaLaunchHostFunc): CUDA's callback thread runs
// it once the stream's earlier work is done, and the stream's later work
// waits for it to return. fn must not call CUDA and must not throw.
void launch_host_callback(cudaStream_t stream, std::function<void()> fn);
// A fence passed when the stream gets here; counted in `counter` (may be
// null) while in flight. Defined in gpu/fence.cpp.
Fence enqueue_fence(cudaStream_t stream, std::shared_ptr<FenceCounter> counter);

}  // namespace cuzk::gpu::detail
