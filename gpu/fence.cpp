// Fence: armed with cudaLaunchHostFunc, passed on CUDA's callback thread.
#include "gpu/fence.hpp"

#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "gpu/cuda_rt.hpp"

namespace cuzk::gpu {

struct Fence::State {
  std::mutex mu;
  std::condition_variable cv;
  bool passed = false;                         // guarded by mu
  std::vector<std::function<void()>> on_done;  // guarded by mu; run once, when passed
  std::shared_ptr<FenceCounter> counter;       // may be null

  // On CUDA's callback thread. The counter drops before the callbacks run, so
  // whoever they resume sees this fence no longer in flight.
  void pass() {
    std::vector<std::function<void()>> run;
    {
      std::lock_guard lock(mu);
      passed = true;
      run.swap(on_done);
    }
    cv.notify_all();
    if (counter) counter->passed();
    for (auto& fn : run) fn();
  }
};

bool Fence::ready() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mu);
  return state_->passed;
}

void Fence::wait() const {
  if (!state_) return;
  std::unique_lock lock(state_->mu);
  state_->cv.wait(lock, [this] { return state_->passed; });
}

void Fence::on_done(std::function<void()> fn) const {
  if (state_) {
    std::unique_lock lock(state_->mu);
    if (!state_->passed) {
      state_->on_done.push_back(std::move(fn));
      return;
    }
  }
  fn();
}

namespace detail {
namespace {

void CUDART_CB run_host_callback(void* arg) {
  std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(arg));
  (*fn)();
}

}  // namespace

void launch_host_callback(cudaStream_t stream, std::function<void()> fn) {
  auto owned = std::make_unique<std::function<void()>>(std::move(fn));
  CUZK_CUDA_CHECK(cudaLaunchHostFunc(stream, &run_host_callback, owned.get()));
  (void)owned.release();  // run_host_callback deletes it
}

Fence enqueue_fence(cudaStream_t stream, std::shared_ptr<FenceCounter> counter) {
  auto state = std::make_shared<Fence::State>();
  state->counter = std::move(counter);
  if (state->counter) state->counter->armed();
  launch_host_callback(stream, [state] { state->pass(); });
  return Fence(std::move(state));
}

}  // namespace detail
}  // namespace cuzk::gpu
