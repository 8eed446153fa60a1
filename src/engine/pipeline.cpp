#include "engine/pipeline.hpp"

#include <algorithm>
#include <deque>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

#include "engine/engine.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

double ms_since(steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(steady_clock::now() - t0).count();
}

// Cancellation and budget waits are polled at this period (a cancel of a
// job waiting for memory takes effect within it).
constexpr auto kPollPeriod = 100ms;

Error refusal_error(const policy::Refusal& r) {
  if (r.kind == policy::RefusalKind::kOverloaded) return Error{ErrorKind::kOverloaded, r.message()};
  return Error{ErrorKind::kInternal, r.message() + " (raise memory.total_budget)"};
}


// Names the partition in an error unless its message already does.
Error about_partition(std::uint32_t k, const Error& e) {
  if (e.message.find("partition " + std::to_string(k)) != std::string::npos) return e;
  return Error{e.kind, "partition " + std::to_string(k) + ": " + e.message};
}

}  // namespace

// ---------------------------------------------------------------------------
// MemoryGate

MemoryGate::MemoryGate(asio::any_io_executor loop, std::uint64_t total_bytes)
    : budget_(policy::BudgetConfig{total_bytes, 1024}), ready_(std::move(loop)) {
  // Called inside whichever loop-thread call freed memory: wake the waiters,
  // who claim (claim() polls, so a wake-up cannot be lost).
  budget_.set_ready_callback([this](policy::MemoryBudget::WaitId) { ready_.notify_all(); });
}

MemoryGate::~MemoryGate() = default;

asio::awaitable<Result<policy::Reservation>> MemoryGate::reserve(std::uint64_t bytes, Priority priority,
                                                                 const std::atomic<bool>& cancel) {
  if (permanent_bytes_ < budget_.total_bytes() && bytes > budget_.total_bytes() - permanent_bytes_) {
    co_return Error{ErrorKind::kInternal,
                    "memory budget: requested " + std::to_string(bytes) + " B, but only " +
                        std::to_string(budget_.total_bytes() - permanent_bytes_) + " B of the " +
                        std::to_string(budget_.total_bytes()) +
                        " B budget are not held by loaded parameters (raise memory.total_budget)"};
  }
  auto admission = budget_.reserve(bytes, priority);
  if (!admission) co_return refusal_error(admission.error());
  if (auto* r = std::get_if<policy::Reservation>(&admission.value())) co_return std::move(*r);
  const policy::MemoryBudget::WaitId id = std::get<policy::MemoryBudget::WaitId>(admission.value());
  for (;;) {
    auto claimed = budget_.claim(id);
    if (claimed) {
      if (!*claimed) co_return refusal_error(claimed->error());
      co_return std::move(claimed->value());
    }
    if (cancel) {
      budget_.cancel(id);
      co_return Error{ErrorKind::kCancelled, "cancelled while waiting for memory"};
    }
    co_await ready_.wait_until(steady_clock::now() + kPollPeriod);
  }
}

policy::Reservation MemoryGate::charge(std::uint64_t bytes) {
  auto r = budget_.try_reserve(0, Priority::kCritical);
  if (!r) return {};
  policy::Reservation out = std::move(r.value());
  out.settle(bytes);
  permanent_bytes_ += bytes;
  return out;
}

policy::Reservation MemoryGate::charge_evictable(std::uint64_t bytes) {
  auto r = budget_.try_reserve(0, Priority::kCritical);
  if (!r) return {};
  policy::Reservation out = std::move(r.value());
  out.settle(bytes);  // already allocated: charged at once, even past the total
  return out;
}

// ---------------------------------------------------------------------------
// DeviceSet

DeviceSet::Lock& DeviceSet::Lock::operator=(Lock&& o) noexcept {
  if (this != &o) {
    unlock();
    slot_ = std::exchange(o.slot_, nullptr);
  }
  return *this;
}

void DeviceSet::Lock::unlock() {
  if (!slot_) return;
  slot_->busy = false;
  slot_->freed.notify_one();
  slot_ = nullptr;
}

DeviceSet::DeviceSet(asio::any_io_executor loop, std::shared_ptr<DeviceBackend> cpu,
                     std::vector<std::shared_ptr<DeviceBackend>> gpus) {
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    gpus_.push_back(std::make_unique<Slot>(loop, std::move(gpus[i]), static_cast<std::uint32_t>(i)));
  }
  cpu_ = std::make_unique<Slot>(loop, std::move(cpu), static_cast<std::uint32_t>(gpus_.size()));
}

DeviceSet::~DeviceSet() = default;

DeviceSet::Placement DeviceSet::place(const std::string& srs_key) {
  // The least loaded GPU, and the least loaded one holding the SRS.
  Slot* least = nullptr;
  Slot* resident = nullptr;
  for (auto& s : gpus_) {
    if (!least || s->jobs < least->jobs) least = s.get();
    if (s->resident_srs == srs_key && (!resident || s->jobs < resident->jobs)) resident = s.get();
  }
  if (!least) return Placement(cpu_.get());
  // Prefer the device holding the SRS (no upload: a 32 GiB SRS is 44 GiB)
  // unless another GPU has less queued: waiting behind a whole proof costs
  // more than one upload (measured on the H200: a 32 GiB partition proves in
  // ~3.9 s, the first on a device in ~15.8 s including its 44 GiB upload, and
  // a PoRep job queues 10 of them). Without this, a second GPU idled while
  // 21 demo jobs queued on the first (h200-x2, 2026-11-30).
  if (resident && resident->jobs <= least->jobs) return Placement(resident);
  return Placement(least);
}

asio::awaitable<DeviceSet::Lock> DeviceSet::lock(Slot& slot) {
  while (slot.busy) co_await slot.freed.wait();
  slot.busy = true;
  co_return Lock(&slot);
}

std::vector<DeviceWorkerView> DeviceSet::views() const {
  std::vector<DeviceWorkerView> out;
  auto add = [&out](const Slot& s) {
    DeviceWorkerView v;
    v.index = s.index;
    v.name = s.backend->name();
    if (auto o = s.backend->ordinal()) v.ordinal = static_cast<std::int32_t>(*o);
    v.job = s.job;
    v.partition = s.partition;
    v.stage = s.stage;
    v.jobs_placed = s.jobs;
    v.proofs_done = s.proofs_done;
    v.verify_failures = s.verify_failures;
    v.resident_srs = s.resident_srs;
    v.resident_srs_bytes = s.resident_srs_bytes;
    BackendMemory m = s.backend->memory();
    v.memory_total_bytes = m.total_bytes;
    v.memory_free_bytes = m.free_bytes;
    if (std::optional<ProverStage> ps = s.backend->prover_stage()) {
      v.prover_stage = ps->name;
      auto now = std::chrono::steady_clock::now();
      v.prover_stage_ms = now > ps->started ? static_cast<std::uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(now - ps->started).count()) : 0;
      v.prover_stream = ps->stream;
      v.prover_streams = ps->streams;
      v.prover_events = ps->events;
    }
    out.push_back(std::move(v));
  };
  for (const auto& s : gpus_) add(*s);
  add(*cpu_);
  return out;
}

// ---------------------------------------------------------------------------
// The pipeline

bool is_cancellation(const std::system_error& e) { return e.code() == asio::error::operation_aborted; }

std::uint64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream in(line.substr(6));
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

namespace {

struct Item {
  std::uint32_t k = 0;
  groth16::Witness witness;
  policy::Reservation reservation;  // the witness's bytes, until proved
  PartitionTiming timing;
  std::vector<ff::Fr> inputs;  // the verifier's, once proved
};

struct State {
  explicit State(asio::any_io_executor ex) : changed(std::move(ex)) {}
  std::uint32_t next = 0;     // next partition to synthesize
  std::size_t in_flight = 0;  // taken by a lane and not yet proved
  std::size_t peak_in_flight = 0;
  std::size_t lanes_alive = 0;
  std::deque<Item> ready;  // synthesized and checked, waiting for the device
  std::optional<Error> error;
  std::uint32_t proved = 0, cpu_retries = 0;
  std::vector<std::optional<groth16::Proof>> proofs;
  std::vector<std::vector<ff::Fr>> inputs;
  std::vector<PartitionTiming> timings;
  runtime::Notifier changed;  // anything above changed

  void fail(Error e) {
    if (!error) error = std::move(e);
    changed.notify_all();
  }
};

struct Ctx {
  PipelineDeps& deps;
  const PartitionPlan& plan;
  const std::atomic<bool>& cancel;
  State& st;
  bool stopped() const { return cancel.load() || st.error.has_value(); }
  void stage(std::uint32_t k, std::string_view s) const {
    if (plan.on_stage) plan.on_stage(k, s);
  }
};

asio::awaitable<void> poll(State& st) { co_await st.changed.wait_until(steady_clock::now() + kPollPeriod); }

// One synthesis lane: takes the next partition while the in-flight bound and
// the budget allow, synthesizes and checks it, queues it for the prover.
asio::awaitable<void> lane(Ctx c) {
  State& st = c.st;
  const PartitionPlan& plan = c.plan;
  try {
    for (;;) {
      while (!c.stopped() && st.in_flight >= plan.max_in_flight && st.next < plan.partitions) co_await poll(st);
      if (c.stopped() || st.next >= plan.partitions) break;
      const std::uint32_t k = st.next++;
      ++st.in_flight;
      st.peak_in_flight = std::max(st.peak_in_flight, st.in_flight);
      // Not yet handed to the prover: every exit from here gives the slot back.
      struct Slot {
        State& st;
        bool handed = false;
        ~Slot() {
          if (!handed) {
            --st.in_flight;
            st.changed.notify_all();
          }
        }
      } slot{st};

      // Synthesis holds about twice the witness (the witness and the
      // circuit's transient values); once done, the witness alone.
      c.stage(k, "memory");
      Result<policy::Reservation> r = co_await c.deps.memory.reserve(2 * plan.witness_bytes, plan.priority, c.cancel);
      if (!r) {
        if (r.error().kind != ErrorKind::kCancelled)
          st.fail(about_partition(k, r.error()));
        break;
      }
      if (c.stopped()) break;
      Item item;
      item.k = k;
      item.timing.partition = k;
      c.stage(k, "synthesis");
      auto t0 = steady_clock::now();
      Result<groth16::Witness> w = co_await runtime::run_on(c.deps.synthesis, [&plan, k]() -> Result<groth16::Witness> {
        try {
          return plan.synthesize(k);
        } catch (const std::exception& e) {
          return Error{ErrorKind::kInternal, e.what()};
        }
      });
      item.timing.synthesis_ms = ms_since(t0);
      if (!w) {
        st.fail(about_partition(k, w.error()));
        break;
      }
      r.value().shrink_to(plan.witness_bytes);
      item.reservation = std::move(r.value());
      item.witness = std::move(w.value());
      if (c.stopped()) break;
      if (plan.check) {
        c.stage(k, "check");
        t0 = steady_clock::now();
        const groth16::Witness& wref = item.witness;
        std::optional<Error> bad =
            co_await runtime::run_on(c.deps.synthesis, [&plan, k, &wref]() -> std::optional<Error> {
              try {
                return plan.check(k, wref);
              } catch (const std::exception& e) {
                return Error{ErrorKind::kInternal, e.what()};
              }
            });
        item.timing.check_ms = ms_since(t0);
        if (bad) {
          st.fail(about_partition(k, *bad));
          break;
        }
        if (c.stopped()) break;
      }
      c.stage(k, "queued for device");
      st.ready.push_back(std::move(item));
      slot.handed = true;
      st.changed.notify_all();
    }
  } catch (const std::system_error& e) {
    --st.lanes_alive;
    st.changed.notify_all();
    if (is_cancellation(e)) throw;
    st.fail(Error{ErrorKind::kInternal, e.what()});
    co_return;
  } catch (const std::exception& e) {
    st.fail(Error{ErrorKind::kInternal, e.what()});
  }
  --st.lanes_alive;
  st.changed.notify_all();
}

// Proves item on `slot` and verifies the proof; nullopt (and `why`) when the
// back end threw (`threw` set) or the proof does not verify.
asio::awaitable<std::optional<groth16::Proof>> prove_on(Ctx c, DeviceSet::Slot& slot, Item& item, std::string& why,
                                                        bool& threw) {
  const PartitionPlan& plan = c.plan;
  PartitionTiming& t = item.timing;
  c.stage(item.k, "device wait");
  auto t0 = steady_clock::now();
  DeviceSet::Lock lock = co_await c.deps.devices.lock(slot);
  t.device_wait_ms += ms_since(t0);
  slot.job = plan.job;
  slot.partition = item.k;
  slot.stage = "prove";
  c.stage(item.k, slot.backend->ordinal() ? "prove (gpu)" : "prove (cpu)");
  struct Out {
    std::vector<groth16::Proof> proofs;
    ProveBreakdown breakdown;
    std::string error;
  };
  DeviceBackend& backend = *slot.backend;
  const groth16::Blinding blinding = groth16::random_blinding();
  const groth16::Witness& w = item.witness;
  t0 = steady_clock::now();
  Out out = co_await runtime::run_on(backend.runner(), [&backend, &plan, &w, &blinding] {
    Out o;
    try {
      o.proofs = backend.prove(*plan.params, *plan.r1cs, std::span(&w, 1), std::span(&blinding, 1), &o.breakdown);
    } catch (const std::exception& e) {
      o.error = e.what();
    }
    return o;
  });
  t.prove_ms = ms_since(t0);
  t.breakdown = out.breakdown;
  t.device = backend.name();
  slot.job.reset();
  slot.partition.reset();
  slot.stage = "idle";
  if (!out.error.empty() || out.proofs.size() != 1) {
    ++slot.prove_errors;
    threw = true;
    why =
        out.error.empty() ? "the back end returned " + std::to_string(out.proofs.size()) + " proofs for 1" : out.error;
    co_return std::nullopt;
  }
  if (backend.keeps_srs_resident()) {
    slot.resident_srs = plan.srs_key;
    slot.resident_srs_bytes = backend.srs_device_bytes(*plan.params);
  }
  lock.unlock();  // the next partition may use the device while this one verifies

  c.stage(item.k, "verify");
  t0 = steady_clock::now();
  const groth16::Proof& proof = out.proofs[0];
  if (plan.public_inputs.empty()) {
    item.inputs.assign(item.witness.inputs.begin() + (item.witness.inputs.empty() ? 0 : 1), item.witness.inputs.end());
  } else {
    item.inputs = plan.public_inputs.at(item.k);
  }
  const std::vector<ff::Fr>& inputs = item.inputs;
  groth16::VerifyResult v = co_await runtime::run_on(
      c.deps.cpu, [&plan, &proof, &inputs] { return groth16::verify(*plan.pvk, proof, inputs); });
  t.verify_ms += ms_since(t0);
  if (v != groth16::VerifyResult::kValid) {
    ++slot.verify_failures;
    why = "the proof does not verify (" + std::string(groth16::to_string(v)) + ")";
    co_return std::nullopt;
  }
  ++slot.proofs_done;
  co_return out.proofs[0];
}

asio::awaitable<void> prover(Ctx c, DeviceSet::Slot& slot) {
  State& st = c.st;
  const PartitionPlan& plan = c.plan;
  runtime::Logger& log = c.deps.log;
  try {
    while (st.proved < plan.partitions && !c.stopped()) {
      if (st.ready.empty()) {
        if (st.lanes_alive == 0) break;
        co_await poll(st);
        continue;
      }
      Item item = std::move(st.ready.front());
      st.ready.pop_front();
      std::string why;
      bool threw = false;
      std::optional<groth16::Proof> proof = co_await prove_on(c, slot, item, why, threw);
      if (!proof && !threw && &slot != &c.deps.devices.cpu() && !c.stopped()) {
        // A GPU proof that does not verify is a bug or a failing device; the
        // witness is still here, so prove once more on the CPU. (A device
        // that throws - out of memory, say - fails the job instead: proving a
        // 32 GiB partition on the CPU would take an hour unannounced.)
        log.warn("gpu proof failed, proving the partition again on the CPU",
                 {{"job", plan.job}, {"partition", item.k}, {"device", slot.backend->name()}, {"reason", why}});
        c.deps.devices.count_cpu_retry();
        ++st.cpu_retries;
        item.timing.retried_on_cpu = true;
        proof = co_await prove_on(c, c.deps.devices.cpu(), item, why, threw);
      }
      if (!proof) {
        if (!c.stopped()) {
          st.fail(Error{ErrorKind::kInternal, "partition " + std::to_string(item.k) + ": " + why});
        }
        break;
      }
      st.proofs[item.k] = *proof;
      st.inputs[item.k] = std::move(item.inputs);
      const PartitionTiming& t = item.timing;
      const ProveBreakdown& b = t.breakdown;
      log.info("partition proved", {{"job", plan.job},
                                    {"partition", item.k},
                                    {"partitions", plan.partitions},
                                    {"device", t.device},
                                    {"synthesis_ms", t.synthesis_ms},
                                    {"check_ms", t.check_ms},
                                    {"device_wait_ms", t.device_wait_ms},
                                    {"prove_ms", t.prove_ms},
                                    {"evaluate_ms", b.evaluate_ms},
                                    {"h_ms", b.h_ms},
                                    {"h_msm_ms", b.h_msm_ms},
                                    {"l_msm_ms", b.l_msm_ms},
                                    {"a_msm_ms", b.a_msm_ms},
                                    {"b_msm_ms", b.b_msm_ms},
                                    {"assemble_ms", b.assemble_ms},
                                    {"srs_uploaded", b.srs_uploaded ? 1 : 0},
                                    {"verify_ms", t.verify_ms},
                                    {"retried_on_cpu", t.retried_on_cpu ? 1 : 0},
                                    {"in_flight", st.in_flight},
                                    {"rss_bytes", resident_bytes()},
                                    {"peak_rss_bytes", peak_resident_bytes()}});
      st.timings.push_back(t);
      ++st.proved;
      --st.in_flight;
      item = Item{};  // the witness and its reservation go now, before waking the lanes
      st.changed.notify_all();
    }
  } catch (const std::system_error& e) {
    if (is_cancellation(e)) throw;
    st.fail(Error{ErrorKind::kInternal, e.what()});
  } catch (const std::exception& e) {
    st.fail(Error{ErrorKind::kInternal, e.what()});
  }
  st.changed.notify_all();
}

}  // namespace

asio::awaitable<Result<PipelineOutcome>> run_partition_pipeline(PipelineDeps deps, const PartitionPlan& plan,
                                                                const std::atomic<bool>& cancel) {
  if (plan.partitions == 0 || !plan.params || !plan.r1cs || !plan.pvk || !plan.synthesize ||
      (!plan.public_inputs.empty() && plan.public_inputs.size() != plan.partitions)) {
    co_return Error{ErrorKind::kInternal, "partition pipeline: incomplete plan"};
  }
  DeviceSet::Placement placement = deps.devices.place(plan.srs_key);
  DeviceSet::Slot& slot = placement.slot();
  // The prover's host working set, once per job, before any witness (see top).
  Result<policy::Reservation> work =
      co_await deps.memory.reserve(slot.backend->host_bytes_per_instance(*plan.r1cs), plan.priority, cancel);
  if (!work) co_return work.error();

  auto ex = co_await asio::this_coro::executor;
  State st(ex);
  st.proofs.resize(plan.partitions);
  st.inputs.resize(plan.partitions);
  PartitionPlan bounded = plan;  // lanes never exceed the in-flight bound
  bounded.max_in_flight = std::max<std::size_t>(1, plan.max_in_flight);
  bounded.synthesis_lanes =
      std::clamp<std::size_t>(plan.synthesis_lanes, 1, std::min<std::size_t>(bounded.max_in_flight, plan.partitions));
  Ctx c{deps, bounded, cancel, st};
  {
    runtime::TaskSet tasks(ex);
    st.lanes_alive = bounded.synthesis_lanes;
    for (std::size_t i = 0; i < bounded.synthesis_lanes; ++i) tasks.spawn(lane(c));
    tasks.spawn(prover(c, slot));
    co_await tasks.join();
  }
  st.ready.clear();  // reservations of unproved partitions (cancel, failure)
  if (st.error) co_return *st.error;
  if (cancel) co_return Error{ErrorKind::kCancelled, "cancelled"};
  if (st.proved != plan.partitions) co_return Error{ErrorKind::kInternal, "partition pipeline ended early"};
  PipelineOutcome out;
  for (auto& p : st.proofs) out.proofs.push_back(*p);
  out.public_inputs = std::move(st.inputs);
  out.timings = std::move(st.timings);
  std::sort(out.timings.begin(), out.timings.end(),
            [](const PartitionTiming& a, const PartitionTiming& b) { return a.partition < b.partition; });
  out.cpu_retries = st.cpu_retries;
  out.peak_in_flight = st.peak_in_flight;
  co_return out;
}

}  // namespace cuzk::engine
