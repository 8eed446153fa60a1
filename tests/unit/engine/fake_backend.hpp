// A fake device back end for engine tests: the CPU prover behind the
// DeviceBackend interface, on its own one-thread runner like a GPU, with an
// injectable delay, corrupted proofs and failures, and a record of every
// prove() call (start/end times, for overlap assertions).
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/backend.hpp"
#include "groth16/prover.hpp"

namespace cuzk::engine::testing {

class FakeBackend final : public DeviceBackend {
 public:
  using Clock = std::chrono::steady_clock;
  struct Call {
    Clock::time_point start, end;
    std::size_t aux = 0;  // witness size, to tell circuits apart
    std::size_t instances = 0;  // witnesses in the call (a batch proves several)
  };

  FakeBackend(std::string name, std::uint32_t ordinal, ThreadPool& math)
      : name_(std::move(name)), ordinal_(ordinal), math_(math), runner_(1) {}

  // Knobs, settable from the test thread at any time.
  std::atomic<int> delay_ms{0};         // sleep inside every prove
  std::atomic<int> corrupt_next{0};     // this many next proofs come back wrong (c := a)
  std::atomic<int> throw_next{0};       // this many next calls throw
  std::atomic<std::uint64_t> host_bytes{0};  // host_bytes_per_instance

  std::string name() const override { return name_; }
  std::optional<std::uint32_t> ordinal() const override { return ordinal_; }
  BackendMemory memory() const override { return {1ull << 30, 1ull << 29}; }
  bool keeps_srs_resident() const override { return true; }
  std::uint64_t srs_device_bytes(const groth16::Parameters& p) const override { return params_host_bytes(p); }
  std::uint64_t host_bytes_per_instance(const groth16::R1cs&) const override { return host_bytes; }
  runtime::WorkerPool& runner() override { return runner_; }
  std::atomic<int> srs_releases{0};  // release_resident_srs() calls
  void release_resident_srs() override { ++srs_releases; }

  std::vector<groth16::Proof> prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding, ProveBreakdown* breakdown) override {
    Call call;
    call.start = Clock::now();
    call.aux = witnesses.empty() ? 0 : witnesses[0].aux.size();
    call.instances = witnesses.size();
    if (int d = delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
    if (take(throw_next)) {
      record(call);
      throw std::runtime_error("fake device failure");
    }
    groth16::CpuProver prover(math_);
    std::vector<groth16::Proof> proofs = prover.prove(params, r1cs, witnesses, blinding);
    if (!proofs.empty() && take(corrupt_next)) proofs[0].c = proofs[0].a;
    if (breakdown) *breakdown = ProveBreakdown{};
    record(call);
    return proofs;
  }

  // What prover_stage() reports (a GPU back end forwards its prover's stage observer).
  void set_stage_report(std::optional<ProverStage> s) {
    std::lock_guard lock(mu_);
    stage_report_ = std::move(s);
  }
  std::optional<ProverStage> prover_stage() const override {
    std::lock_guard lock(mu_);
    return stage_report_;
  }

  std::vector<Call> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  static bool take(std::atomic<int>& n) {
    int v = n.load();
    while (v > 0 && !n.compare_exchange_weak(v, v - 1)) {
    }
    return v > 0;
  }
  void record(Call call) {
    call.end = Clock::now();
    std::lock_guard lock(mu_);
    calls_.push_back(call);
  }

  std::string name_;
  std::uint32_t ordinal_;
  ThreadPool& math_;
  runtime::WorkerPool runner_;
  mutable std::mutex mu_;
  std::vector<Call> calls_;
  std::optional<ProverStage> stage_report_;
};

}  // namespace cuzk::engine::testing
