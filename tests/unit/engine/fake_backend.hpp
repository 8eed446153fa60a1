// A fake device back end for engine tests: the CPU prover behind the
// DeviceBackend interface, on its own one-thread runner like a GPU, with an
// injectable delay, corrupted proofs and failures, and a record of every
// prove() call (start/end times, for overlap assertions) and of every SRS
// upload a preload asks for (make_srs_resident).
//
// Staged proofs (engine/backend.hpp) behave like a GPU's: prepare() sleeps
// prepare_delay_ms on the caller's (host) thread and copies nothing; start()
// hands the "device" work (delay_ms, then the CPU prover) to the fake's own
// device thread and returns, and that thread calls `done`, as CUDA's
// callback thread would. Each step can be made to fail. Asked to check
// satisfaction, prepare() evaluates a, b, c with the check fused, as the GPU
// prover's prepare does (counted: evaluations()), and throws
// groth16::UnsatisfiedError.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/backend.hpp"
#include "groth16/prover.hpp"
#include "runtime/event_loop.hpp"
#include "unit/engine/fake_work.hpp"

namespace cuzk::engine::testing {

class FakeBackend final : public DeviceBackend {
 public:
  using Clock = std::chrono::steady_clock;
  struct Call {
    Clock::time_point start, end;
    std::size_t aux = 0;        // witness size, to tell circuits apart
    std::size_t instances = 0;  // witnesses in the call (a batch proves several)
    groth16::SatisfactionCheck check = groth16::SatisfactionCheck::kSkip;  // prepare(): what was asked
    bool reserved = false;  // prepare(): its staging was made ready by reserve_staging first
  };

  FakeBackend(std::string name, std::uint32_t ordinal, ThreadPool& math)
      : name_(std::move(name)), ordinal_(ordinal), math_(math), runner_(1) {}

  // Knobs, settable from the test thread at any time.
  std::atomic<int> delay_ms{0};              // sleep inside every prove
  std::atomic<int> corrupt_next{0};          // this many next proofs come back wrong (c := a)
  std::atomic<int> throw_next{0};            // this many next calls throw
  std::atomic<std::uint64_t> host_bytes{0};  // host_bytes_per_instance
  // Staged steps: host time of prepare(); failures of each step (prepare and
  // finish throw; the device step reports its failure through `done`;
  // throw_next above makes start() itself throw).
  std::atomic<int> prepare_delay_ms{0};
  std::atomic<int> prepare_throw_next{0};
  std::atomic<int> device_fail_next{0};
  std::atomic<int> finish_throw_next{0};
  // a, b, c evaluations prepare() ran (with the fused check).
  std::atomic<int> evaluations{0};
  // This many next finish() calls report an unsatisfied row 3, as a back
  // end whose check runs on the device would, with the results.
  std::atomic<int> finish_unsatisfied_next{0};

  std::string name() const override { return name_; }
  std::optional<std::uint32_t> ordinal() const override { return ordinal_; }
  // A card's critical lane (DeviceSet::lane), as set before the DeviceSet is made.
  std::atomic<bool> lane{false};
  bool critical_lane() const override { return lane.load(); }
  BackendMemory memory() const override { return {1ull << 30, 1ull << 29}; }
  bool keeps_srs_resident() const override { return true; }
  std::uint64_t srs_device_bytes(const groth16::Parameters& p) const override { return params_host_bytes(p); }
  std::uint64_t host_bytes_per_instance(const groth16::R1cs&) const override { return host_bytes; }
  runtime::WorkerPool& runner() override { return runner_; }
  std::atomic<int> srs_releases{0};  // release_resident_srs() calls
  void release_resident_srs() override {
    ++srs_releases;
    std::lock_guard lock(mu_);
    split_ = {};
    device_srs_.reset();
    device_srs_for_ = nullptr;
  }
  // With models_device_srs, the fake keeps a copy of the parameters it last
  // proved with as its "device memory" (read from the host copy on the first
  // use of a Parameters object, as a GPU uploads) and proves from that copy,
  // so proving with a set it holds reads nothing of the host copy, and one
  // it does not hold reads all of it (faulting when the engine released it:
  // engine/host_srs.hpp). holds_srs reports it.
  std::atomic<bool> models_device_srs{false};
  std::atomic<int> srs_uploads{0};
  bool holds_srs(const groth16::Parameters& params) const override {
    std::lock_guard lock(mu_);
    return models_device_srs.load() && device_srs_for_ == &params;
  }
  // make_srs_resident(): calls so far (a preload's uploads), and this many
  // next calls throw (a failed upload). It "uploads" as a device step does
  // (counted in srs_uploads with models_device_srs; holds_srs then reports
  // the set) and leaves the set resident.
  std::atomic<int> srs_preloads{0};
  std::atomic<int> preload_throw_next{0};
  bool make_srs_resident(const groth16::Parameters& params, const groth16::R1cs&) override {
    ++srs_preloads;
    if (take(preload_throw_next)) throw std::runtime_error("fake upload failure");
    device_params(params);
    note_resident(params);
    return true;
  }
  // The part of each SRS it keeps that lies in "pinned host memory" (as a GPU
  // back end's streamed SRS), reported by resident_srs_split after a prove
  // until release_resident_srs; the device part is srs_device_bytes.
  std::atomic<std::uint64_t> srs_pinned_bytes{0};
  ResidentSrsSplit resident_srs_split() const override {
    std::lock_guard lock(mu_);
    return split_;
  }
  // What abc_matrices_device_bytes reports (a GPU back end's R1CS matrices
  // kept on the device), as set: status only, nothing allocates it.
  std::atomic<std::uint64_t> r1cs_matrices_bytes{0};
  std::uint64_t abc_matrices_device_bytes() const override { return r1cs_matrices_bytes.load(); }
  // What msm_scratch_device_bytes / msm_scratch_limit_bytes report (a GPU
  // back end's MSM scratch arena and its limit), as set: status only.
  std::atomic<std::uint64_t> msm_scratch_bytes{0}, msm_scratch_limit{0};
  std::uint64_t msm_scratch_device_bytes() const override { return msm_scratch_bytes.load(); }
  std::uint64_t msm_scratch_limit_bytes() const override { return msm_scratch_limit.load(); }

  std::vector<groth16::Proof> prove(const groth16::Parameters& params, const groth16::R1cs& r1cs,
                                    std::span<const groth16::Witness> witnesses,
                                    std::span<const groth16::Blinding> blinding, ProveBreakdown* breakdown) override {
    Call call;
    call.start = Clock::now();
    call.aux = witnesses.empty() ? 0 : witnesses[0].aux.size();
    call.instances = witnesses.size();
    if (int d = delay_ms.load()) simulate_work(std::chrono::milliseconds(d));
    if (take(throw_next)) {
      record(call);
      throw std::runtime_error("fake device failure");
    }
    groth16::CpuProver prover(math_);
    std::vector<groth16::Proof> proofs = prover.prove(device_params(params), r1cs, witnesses, blinding);
    note_resident(params);
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

  // While held, device steps wait until release() (a GPU busy with a long
  // partition or an SRS upload, for as long as a test needs).
  void hold() {
    std::lock_guard lock(hold_mu_);
    held_ = true;
  }
  void release() {
    {
      std::lock_guard lock(hold_mu_);
      held_ = false;
    }
    hold_cv_.notify_all();
  }

  // ---- Staged steps ----
  struct Staging final : InstanceStaging {
    explicit Staging(std::shared_ptr<std::atomic<int>> live) : live_count(std::move(live)) { ++*live_count; }
    ~Staging() override { --*live_count; }
    std::shared_ptr<std::atomic<int>> live_count;  // the back end's live_stagings
    const groth16::Parameters* params = nullptr;
    const groth16::R1cs* r1cs = nullptr;
    const groth16::Witness* witness = nullptr;
    groth16::Blinding blinding;
    std::optional<groth16::Proof> proof;
    const groth16::R1cs* reserved_for = nullptr;  // reserve_staging's shape
  };
  std::unique_ptr<InstanceStaging> make_staging() const override {
    ++*stagings_made;
    return std::make_unique<Staging>(live_stagings);
  }
  // Stagings of this back end alive now (an idle engine gives them back), and made so far.
  std::shared_ptr<std::atomic<int>> live_stagings = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<std::size_t>> stagings_made = std::make_shared<std::atomic<std::size_t>>(0);
  bool can_use(const InstanceStaging& s) const override { return dynamic_cast<const Staging*>(&s) != nullptr; }

  // reserve_staging(): calls so far, and the host time each takes (a GPU pins).
  std::atomic<int> reserves{0};
  std::atomic<int> reserve_delay_ms{0};
  void reserve_staging(InstanceStaging& staging, const groth16::R1cs& r1cs) override {
    ++reserves;
    if (int d = reserve_delay_ms.load()) simulate_work(std::chrono::milliseconds(d));
    dynamic_cast<Staging&>(staging).reserved_for = &r1cs;
  }

  void prepare(InstanceStaging& staging, const groth16::Parameters& params, const groth16::R1cs& r1cs,
               const groth16::Witness& w, const groth16::Blinding& blinding,
               groth16::SatisfactionCheck check) override {
    Call call;
    call.start = Clock::now();
    call.reserved = dynamic_cast<Staging&>(staging).reserved_for == &r1cs;
    call.aux = w.aux.size();
    call.instances = 1;
    call.check = check;
    if (check == groth16::SatisfactionCheck::kCheck) {
      // The GPU prover's host step: a, b, c into the staging, checked on the way.
      const std::size_t m = groth16::domain_size(r1cs);
      std::vector<ff::Fr> a(m), b(m), c(m);
      ++evaluations;
      if (std::optional<std::size_t> row = groth16::evaluate_checked_into(r1cs, w.inputs, w.aux, a, b, c, math_)) {
        call.end = Clock::now();
        std::lock_guard lock(mu_);
        prepares_.push_back(call);
        throw groth16::UnsatisfiedError(*row);
      }
    }
    {
      std::lock_guard lock(mu_);
      ++staged_;  // prepared and not yet finished
      staged_max_ = std::max(staged_max_, staged_);
    }
    if (int d = prepare_delay_ms.load()) simulate_work(std::chrono::milliseconds(d));
    auto& s = dynamic_cast<Staging&>(staging);
    s.params = &params;
    s.r1cs = &r1cs;
    s.witness = &w;
    s.blinding = blinding;
    s.proof.reset();
    call.end = Clock::now();
    std::lock_guard lock(mu_);
    prepares_.push_back(call);
    if (take(prepare_throw_next)) {
      --staged_;
      throw std::runtime_error("fake prepare failure");
    }
  }

  void start(InstanceStaging& staging, std::function<void(std::exception_ptr)> done) override {
    auto& s = dynamic_cast<Staging&>(staging);
    if (take(throw_next)) {
      release_staged();
      throw std::runtime_error("fake device failure");
    }
    asio::post(device_.executor(), [this, &s, done = std::move(done)] {
      Call call;
      call.start = Clock::now();
      call.aux = s.witness->aux.size();
      call.instances = 1;
      {
        std::unique_lock lock(hold_mu_);
        hold_cv_.wait(lock, [this] { return !held_; });
      }
      if (int d = delay_ms.load()) simulate_work(std::chrono::milliseconds(d));
      std::exception_ptr error;
      if (take(device_fail_next)) {
        error = std::make_exception_ptr(std::runtime_error("fake device step failure"));
        release_staged();
      } else {
        groth16::CpuProver prover(math_);
        std::vector<groth16::Proof> proofs =
            prover.prove(device_params(*s.params), *s.r1cs, std::span(s.witness, 1), std::span(&s.blinding, 1));
        note_resident(*s.params);
        if (take(corrupt_next)) proofs[0].c = proofs[0].a;
        s.proof = proofs[0];
      }
      record(call);
      done(error);  // from this "device" thread, as a CUDA callback would
    });
  }

  groth16::Proof finish(InstanceStaging& staging, ProveBreakdown* breakdown) override {
    auto& s = dynamic_cast<Staging&>(staging);
    release_staged();
    if (take(finish_throw_next)) throw std::runtime_error("fake finish failure");
    if (take(finish_unsatisfied_next)) throw groth16::UnsatisfiedError(3);
    if (!s.proof) throw std::runtime_error("fake: finish before the device step");
    if (breakdown) *breakdown = ProveBreakdown{};
    return *s.proof;
  }

  std::vector<Call> prepares() const {
    std::lock_guard lock(mu_);
    return prepares_;
  }
  // The most instances prepared and not yet finished at once.
  int staged_max() const {
    std::lock_guard lock(mu_);
    return staged_max_;
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
  // What the "device" proves with (models_device_srs: its own copy, taken
  // from the host copy when `params` is not the set it holds).
  const groth16::Parameters& device_params(const groth16::Parameters& params) {
    if (!models_device_srs.load()) return params;
    std::lock_guard lock(mu_);
    if (device_srs_for_ != &params) {
      device_srs_ = std::make_unique<groth16::Parameters>(params);  // the "upload"
      device_srs_for_ = &params;
      ++srs_uploads;
    }
    return *device_srs_;
  }
  // The SRS of `params` stays "resident" (as a GPU's cache_srs keeps it).
  void note_resident(const groth16::Parameters& params) {
    const ResidentSrsSplit split{srs_device_bytes(params), srs_pinned_bytes.load()};
    std::lock_guard lock(mu_);
    split_ = split;
  }
  void release_staged() {
    std::lock_guard lock(mu_);
    --staged_;
  }

  std::string name_;
  std::uint32_t ordinal_;
  ThreadPool& math_;
  runtime::WorkerPool runner_;
  mutable std::mutex mu_;
  std::mutex hold_mu_;
  std::condition_variable hold_cv_;
  bool held_ = false;
  std::vector<Call> calls_;
  std::optional<ProverStage> stage_report_;
  ResidentSrsSplit split_;                               // guarded by mu_
  std::unique_ptr<groth16::Parameters> device_srs_;      // guarded by mu_ (models_device_srs)
  const groth16::Parameters* device_srs_for_ = nullptr;  // guarded by mu_
  std::vector<Call> prepares_;
  int staged_ = 0, staged_max_ = 0;
  runtime::WorkerPool device_{1};  // the "device"; last: joined first
};

}  // namespace cuzk::engine::testing
