// The staged proof of one instance (DeviceBackend::prepare / start / finish,
// engine/backend.hpp) as awaitables on the loop, and the bounded pool of
// stagings they fill.
//
//   lease = co_await pool.acquire();                 // a free staging slot (bounded)
//   co_await prepare_instance(host, backend, ...);   // host pool, no device lock
//   lock = co_await devices.acquire(...);            // the device
//   co_await run_device_step(backend, staging);      // queued on the device; resumed by
//   lock.unlock();                                   //   the back end's done callback
//   co_await finish_instance(host, backend, ...);    // host pool, device free
//
// so while one instance is on the device the next one prepares. No thread
// waits for the device: a GPU back end's done callback (CUDA's callback
// thread) posts the coroutine's resumption to the loop. Every step turns
// the back end's exception into a typed Error naming the step.
//
// Loop-thread only (the steps run elsewhere and resume on the loop).
#pragma once

#include <asio.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/backend.hpp"
#include "engine/types.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/notifier.hpp"

namespace cuzk::engine {

enum class ProveStep : std::uint8_t { kPrepare, kDevice, kFinish };
std::string_view to_string(ProveStep step);

// A fixed number of staging slots. A slot's staging stays for the next lease
// (a GPU staging is GiBs of page-locked memory that takes seconds to pin):
// the pool holds at most slots() stagings, whoever uses them, which is what
// the host-memory budget has to count (see the pipeline's working sets).
class StagingPool {
 public:
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), slot_(o.slot_) {}
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }
    explicit operator bool() const { return pool_ != nullptr; }
    // The slot's staging, remade by `backend` unless it can use the one there.
    // A staging it replaces is moved into `retired` for the caller to destroy
    // off the loop: a GPU staging frees GiBs of page-locked memory
    // (cudaFreeHost blocks for as long as it takes).
    InstanceStaging& staging_for(const DeviceBackend& backend, std::unique_ptr<InstanceStaging>& retired);
    // The slot's staging as it is (null before the first staging_for).
    InstanceStaging* get() const;
    void release();

   private:
    friend class StagingPool;
    Lease(StagingPool* pool, std::size_t slot) : pool_(pool), slot_(slot) {}
    StagingPool* pool_ = nullptr;
    std::size_t slot_ = 0;
  };

  StagingPool(asio::any_io_executor loop, std::size_t slots);
  ~StagingPool();  // every lease returned
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;

  // A free slot; waits (in no particular order) while all are leased.
  asio::awaitable<Lease> acquire();
  std::optional<Lease> try_acquire();
  std::size_t slots() const { return stagings_.size(); }
  std::size_t in_use() const { return in_use_; }
  // Moves out the stagings of the slots not leased (their slots make a new
  // one on the next lease). The caller destroys them off the loop: a GPU
  // staging frees GiBs of page-locked memory.
  std::vector<std::unique_ptr<InstanceStaging>> take_idle();

 private:
  std::vector<std::unique_ptr<InstanceStaging>> stagings_;
  std::vector<bool> leased_;
  std::size_t in_use_ = 0;
  runtime::Notifier freed_;
};

// Step 1 on `host`: backend.prepare(staging, ...). Null on success.
// A witness that does not satisfy the circuit (kCheck) fails any step as
// kInvalidInput "unsatisfied: constraint <row> does not hold": the input's
// fault, not the back end's.
asio::awaitable<std::optional<Error>> prepare_instance(
    runtime::WorkerPool& host, DeviceBackend& backend, InstanceStaging& staging, const groth16::Parameters& params,
    const groth16::R1cs& r1cs, const groth16::Witness& w, const groth16::Blinding& blinding,
    groth16::SatisfactionCheck check = groth16::SatisfactionCheck::kSkip);

// Step 2: backend.start(staging) on backend.runner(); the caller holds the
// device lock. Resumes on the caller's executor once the back end reports
// the device done with the staging. Not cancellable in flight, on purpose
// (the device reads and writes the staging until then); a cancellation
// requested meanwhile takes effect at the caller's next co_await.
asio::awaitable<std::optional<Error>> run_device_step(DeviceBackend& backend, InstanceStaging& staging);

// Step 3 on `host`: backend.finish(staging, breakdown).
asio::awaitable<Result<groth16::Proof>> finish_instance(runtime::WorkerPool& host, DeviceBackend& backend,
                                                        InstanceStaging& staging, ProveBreakdown* breakdown);

}  // namespace cuzk::engine
