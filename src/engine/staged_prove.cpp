#include "engine/staged_prove.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <tuple>
#include <utility>

namespace cuzk::engine {

std::string_view to_string(ProveStep step) {
  switch (step) {
    case ProveStep::kPrepare:
      return "prepare";
    case ProveStep::kDevice:
      return "device";
    case ProveStep::kFinish:
      return "finish";
  }
  return "?";
}

namespace {

// A failed step: internal (the engine checked the request before proving; a
// back end that fails is a bug, bad parameters or a device that cannot hold
// the work), with the step and the back end's message. Except a witness
// that does not satisfy the circuit (the prover's fused check): the input's
// fault, whatever the step, as the engine's own check reports it.
Error step_error(ProveStep step, std::exception_ptr e) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(std::move(e));
  } catch (const groth16::UnsatisfiedError& x) {
    return Error{ErrorKind::kInvalidInput, std::string("unsatisfied: ") + x.what()};
  } catch (const std::exception& x) {
    what = x.what();
  } catch (...) {
  }
  return Error{ErrorKind::kInternal, std::string(to_string(step)) + ": " + what};
}

}  // namespace

// ---- StagingPool -------------------------------------------------------------

StagingPool::StagingPool(asio::any_io_executor loop, std::size_t slots)
    : stagings_(slots == 0 ? 1 : slots), leased_(stagings_.size(), false), freed_(std::move(loop)) {}

StagingPool::~StagingPool() {
  if (in_use_ != 0) {
    std::fprintf(stderr, "StagingPool destroyed with %zu leases out\n", in_use_);
    std::abort();
  }
}

StagingPool::Lease& StagingPool::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    release();
    pool_ = std::exchange(o.pool_, nullptr);
    slot_ = o.slot_;
  }
  return *this;
}

void StagingPool::Lease::release() {
  if (!pool_) return;
  pool_->leased_[slot_] = false;
  --pool_->in_use_;
  pool_->freed_.notify_one();
  pool_ = nullptr;
}

InstanceStaging& StagingPool::Lease::staging_for(const DeviceBackend& backend,
                                                 std::unique_ptr<InstanceStaging>& retired) {
  if (!pool_) std::abort();
  std::unique_ptr<InstanceStaging>& s = pool_->stagings_[slot_];
  if (!s || !backend.can_use(*s)) {
    // make_staging() allocates nothing yet (stagings grow in prepare), so the
    // old one's memory is gone before the new one takes any once the caller
    // has destroyed `retired`.
    retired = std::move(s);
    s = backend.make_staging();
  }
  return *s;
}

std::vector<std::unique_ptr<InstanceStaging>> StagingPool::take_idle() {
  std::vector<std::unique_ptr<InstanceStaging>> out;
  for (std::size_t i = 0; i < stagings_.size(); ++i) {
    if (!leased_[i] && stagings_[i]) out.push_back(std::move(stagings_[i]));
  }
  return out;
}

InstanceStaging* StagingPool::Lease::get() const { return pool_ ? pool_->stagings_[slot_].get() : nullptr; }

std::optional<StagingPool::Lease> StagingPool::try_acquire() {
  for (std::size_t i = 0; i < leased_.size(); ++i) {
    if (!leased_[i]) {
      leased_[i] = true;
      ++in_use_;
      return Lease(this, i);
    }
  }
  return std::nullopt;
}

asio::awaitable<StagingPool::Lease> StagingPool::acquire() {
  for (;;) {
    if (std::optional<Lease> l = try_acquire()) co_return std::move(*l);
    co_await freed_.wait();
  }
}

// ---- The steps -------------------------------------------------------------

asio::awaitable<std::optional<Error>> prepare_instance(runtime::WorkerPool& host, DeviceBackend& backend,
                                                       InstanceStaging& staging, const groth16::Parameters& params,
                                                       const groth16::R1cs& r1cs, const groth16::Witness& w,
                                                       const groth16::Blinding& blinding,
                                                       groth16::SatisfactionCheck check) {
  std::exception_ptr error = co_await runtime::run_on(host, [&]() -> std::exception_ptr {
    try {
      backend.prepare(staging, params, r1cs, w, blinding, check);
      return nullptr;
    } catch (...) {
      return std::current_exception();
    }
  });
  if (error) co_return step_error(ProveStep::kPrepare, std::move(error));
  co_return std::nullopt;
}

asio::awaitable<std::optional<Error>> run_device_step(DeviceBackend& backend, InstanceStaging& staging) {
  std::exception_ptr error;
  auto loop = co_await asio::this_coro::executor;
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [&](auto handler) {
        using Handler = decltype(handler);
        // Resumes the coroutine on the loop exactly once, from whichever
        // thread reports the device step over (the runner when start()
        // throws, CUDA's callback thread for a GPU's fence). The work guard
        // keeps the loop running meanwhile.
        struct Resume {
          Resume(Handler h, asio::any_io_executor ex)
              : handler(std::move(h)), loop(ex), guard(asio::make_work_guard(ex)) {}
          Handler handler;
          asio::any_io_executor loop;
          asio::executor_work_guard<asio::any_io_executor> guard;
          std::atomic<bool> done{false};
          void operator()() {
            if (done.exchange(true)) std::abort();  // a back end reported twice
            auto ex = asio::get_associated_executor(handler, loop);
            asio::post(ex, std::move(handler));
            guard.reset();
          }
        };
        auto resume = std::make_shared<Resume>(std::move(handler), loop);
        asio::post(backend.runner().executor(), [&backend, &staging, &error, resume] {
          try {
            // `error` is written before the post that resumes the coroutine,
            // which reads it after: the post orders the two.
            backend.start(staging, [&error, resume](std::exception_ptr e) {
              error = std::move(e);
              (*resume)();
            });
          } catch (...) {
            error = std::current_exception();
            (*resume)();
          }
        });
      },
      asio::use_awaitable);
  if (error) co_return step_error(ProveStep::kDevice, std::move(error));
  co_return std::nullopt;
}

asio::awaitable<Result<groth16::Proof>> finish_instance(runtime::WorkerPool& host, DeviceBackend& backend,
                                                        InstanceStaging& staging, ProveBreakdown* breakdown) {
  struct Out {
    std::optional<groth16::Proof> proof;
    std::exception_ptr error;
  };
  Out out = co_await runtime::run_on(host, [&]() -> Out {
    Out o;
    try {
      o.proof = backend.finish(staging, breakdown);
    } catch (...) {
      o.error = std::current_exception();
    }
    return o;
  });
  if (out.error) co_return step_error(ProveStep::kFinish, std::move(out.error));
  co_return std::move(*out.proof);
}

}  // namespace cuzk::engine
