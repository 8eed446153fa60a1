// The pipeline's shared resources: the host-memory gate (MemoryGate) and the
// devices with their priority queue (DeviceSet), declared in
// engine/pipeline.hpp.
#include <algorithm>
#include <limits>

#include "engine/engine.hpp"
#include "engine/pipeline.hpp"

namespace cuzk::engine {

namespace {

Error refusal_error(const policy::Refusal& r) {
  if (r.kind == policy::RefusalKind::kOverloaded) return Error{ErrorKind::kOverloaded, r.message()};
  return Error{ErrorKind::kInternal, r.message() + " (raise memory.total_budget)"};
}

}  // namespace

// ---------------------------------------------------------------------------
// MemoryGate

MemoryGate::MemoryGate(asio::any_io_executor loop, std::uint64_t total_bytes, std::uint64_t critical_overdraft_bytes)
    : budget_(policy::BudgetConfig{total_bytes, 1024, critical_overdraft_bytes}), ready_(std::move(loop)) {
  // Called inside whichever loop-thread call freed memory: wake the waiters,
  // who claim (claim() polls, so a wake-up cannot be lost).
  budget_.set_ready_callback([this](policy::MemoryBudget::WaitId) { ready_.notify_all(); });
  budget_.set_freed_callback([this] { freed_.emit(); });
}

MemoryGate::~MemoryGate() = default;

asio::awaitable<Result<policy::Reservation>> MemoryGate::reserve(std::uint64_t bytes, Priority priority,
                                                                 const runtime::CancelFlag& cancel) {
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
  // Woken by a grant (the ready callback) or by the cancel request, never by a timer.
  runtime::Signal::Subscription on_cancel = cancel.on_request([this] { ready_.notify_all(); });
  for (;;) {
    auto claimed = budget_.claim(id);
    if (claimed) {
      if (!*claimed) co_return refusal_error(claimed->error());
      co_return std::move(claimed->value());
    }
    if (cancel.requested()) {
      budget_.cancel(id);
      co_return Error{ErrorKind::kCancelled, "cancelled while waiting for memory"};
    }
    co_await ready_.wait();
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

std::optional<policy::Reservation> MemoryGate::try_reserve(std::uint64_t bytes, Priority priority) {
  auto r = budget_.try_reserve(bytes, priority);
  if (!r) return std::nullopt;
  return std::move(r.value());
}

// ---------------------------------------------------------------------------
// KeptWitnesses

bool KeptWitnesses::put(Entry& e) {
  if (entries_.size() >= max_count_ || e.storage.aux.capacity() == 0) return false;
  entries_.push_back(std::move(e));
  return true;
}

std::optional<KeptWitnesses::Entry> KeptWitnesses::take(std::uint64_t witness_bytes) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [witness_bytes](const Entry& e) { return e.witness_bytes == witness_bytes; });
  if (it == entries_.end()) return std::nullopt;
  Entry e = std::move(*it);
  entries_.erase(it);
  return e;
}

std::uint64_t KeptWitnesses::reserved_bytes() const {
  std::uint64_t bytes = 0;
  for (const Entry& e : entries_) bytes += e.reservation.bytes();
  return bytes;
}

// ---------------------------------------------------------------------------
// DeviceSet

DeviceSet::Lock& DeviceSet::Lock::operator=(Lock&& o) noexcept {
  if (this != &o) {
    unlock();
    set_ = o.set_;
    slot_ = std::exchange(o.slot_, nullptr);
    grant_ = o.grant_;
  }
  return *this;
}

void DeviceSet::Lock::unlock() {
  if (!slot_) return;
  if (!slot_->busy || slot_->grants != grant_) {
    // Two holders of one device: the second would queue work beside the
    // first's on the same prover (a GPU's staged enqueue aborts on it).
    std::fprintf(stderr, "cuzk: device %u unlocked by a lock of grant %llu (busy %d, grant %llu)\n", slot_->index,
                 static_cast<unsigned long long>(grant_), slot_->busy ? 1 : 0,
                 static_cast<unsigned long long>(slot_->grants));
    std::abort();
  }
  slot_->busy = false;
  slot_->proving_srs.clear();
  slot_ = nullptr;
  set_->dispatch();
  set_->changed_.emit();
}

DeviceSet::DeviceSet(asio::any_io_executor loop, std::shared_ptr<DeviceBackend> cpu,
                     std::vector<std::shared_ptr<DeviceBackend>> gpus)
    : granted_(loop) {
  std::vector<std::shared_ptr<DeviceBackend>> lanes;
  for (std::shared_ptr<DeviceBackend>& b : gpus) {
    if (b->critical_lane()) {
      lanes.push_back(std::move(b));
    } else {
      gpus_.push_back(std::make_unique<Slot>(std::move(b), static_cast<std::uint32_t>(gpus_.size())));
    }
  }
  cpu_ = std::make_unique<Slot>(std::move(cpu), static_cast<std::uint32_t>(gpus_.size()));
  for (std::shared_ptr<DeviceBackend>& b : lanes) {
    const auto index = static_cast<std::uint32_t>(gpus_.size() + 1 + lanes_.size());
    lanes_.push_back(std::make_unique<Slot>(std::move(b), index));
  }
}

DeviceSet::Slot* DeviceSet::free_lane() {
  for (const auto& s : lanes_) {
    if (s->busy) continue;
    const bool asked = std::any_of(waiters_.begin(), waiters_.end(),
                                   [&s](const Waiter& w) { return w.pinned == s.get() && !w.granted; });
    if (!asked) return s.get();
  }
  return nullptr;
}

DeviceSet::~DeviceSet() {
  if (!waiters_.empty()) {
    std::fprintf(stderr, "DeviceSet destroyed with %zu waiters\n", waiters_.size());
    std::abort();
  }
}

asio::awaitable<DeviceSet::Lock> DeviceSet::acquire(Request request) {
  Waiter w;
  w.priority = request.priority;
  w.request = std::move(request);
  co_return co_await wait_in_queue(std::move(w));
}

asio::awaitable<DeviceSet::Lock> DeviceSet::lock(Slot& slot, Priority priority) {
  Waiter w;
  w.priority = priority;
  w.pinned = &slot;
  co_return co_await wait_in_queue(std::move(w));
}

asio::awaitable<DeviceSet::Lock> DeviceSet::wait_in_queue(Waiter w) {
  w.seq = next_seq_++;
  // Service order: higher priority first, then arrival.
  auto pos = std::find_if(waiters_.begin(), waiters_.end(), [&w](const Waiter& o) { return o.priority < w.priority; });
  auto it = waiters_.insert(pos, std::move(w));
  // Leaves the queue on every exit; a device granted to a coroutine torn
  // down before it resumed (shutdown) is given back.
  struct Entry {
    DeviceSet& set;
    std::list<Waiter>::iterator it;
    bool taken = false;
    ~Entry() {
      Slot* granted = it->granted;
      set.waiters_.erase(it);
      if (granted && !taken) Lock(&set, granted);  // unlocks at once
    }
  } entry{*this, it};
  dispatch();
  while (!it->granted) co_await granted_.wait();
  entry.taken = true;
  co_return Lock(this, it->granted);
}

bool DeviceSet::would_grant_now(const Request& r) {
  for (const Waiter& o : waiters_)
    if (!o.granted && o.priority >= r.priority) return false;
  Waiter w;
  w.priority = r.priority;
  w.request = r;
  const Slot* s = choose_for(w);
  return s != nullptr && s != cpu_.get();
}

DeviceSet::Slot* DeviceSet::choose_for(const Waiter& w) {
  if (w.pinned) return w.pinned->busy ? nullptr : w.pinned;
  if (gpus_.empty()) return cpu_->busy ? nullptr : cpu_.get();
  const Request& r = w.request;
  std::vector<DispatchDevice> devices(gpus_.size());
  // The backlog of r's SRS: partitions proving on a holder, and each waiting
  // job's partitions not yet on a device (its live count, once per job).
  std::uint64_t backlog = 0;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    const Slot& s = *gpus_[i];
    DispatchDevice& d = devices[i];
    d.free = !s.busy && &s != r.exclude;
    d.holds_srs = s.resident_srs == r.srs_key || s.proving_srs == r.srs_key;
    d.holds_other_srs = !d.holds_srs && !s.resident_srs.empty();
    d.jobs = s.jobs;
    if (s.busy && s.proving_srs == r.srs_key) ++backlog;
  }
  std::vector<JobId> counted;
  for (const Waiter& o : waiters_) {
    if (o.pinned || o.granted || o.request.srs_key != r.srs_key) continue;
    if (std::find(counted.begin(), counted.end(), o.request.job) != counted.end()) continue;
    counted.push_back(o.request.job);
    backlog += o.request.undispatched ? *o.request.undispatched : 1;
  }
  const std::uint64_t srs_bytes = r.params ? gpus_.front()->backend->srs_device_bytes(*r.params) : 0;
  const DispatchCosts costs = estimates_[r.srs_key].costs(srs_bytes);
  std::optional<std::size_t> i = choose_gpu(devices, backlog, costs);
  return i ? gpus_[*i].get() : nullptr;
}

void DeviceSet::grant(Waiter& w, Slot* slot) {
  slot->busy = true;
  ++slot->grants;
  // A GPU proving a set counts as holding it from now on (its upload is under way).
  if (!w.pinned && slot != cpu_.get()) slot->proving_srs = w.request.srs_key;
  w.granted = slot;
}

void DeviceSet::dispatch() {
  bool any = false;
  for (Waiter& w : waiters_) {
    if (w.granted) continue;
    if (Slot* s = choose_for(w)) {
      grant(w, s);
      any = true;
    }
  }
  if (any) {
    granted_.notify_all();
    changed_.emit();
  }
}

void DeviceSet::record_prove(const std::string& srs_key, double prove_ms, bool uploaded) {
  estimates_[srs_key].record(prove_ms, uploaded);
}

void note_resident_srs(DeviceSet::Slot& slot, const std::string& srs_id, const groth16::Parameters& params,
                       MemoryGate& memory) {
  const std::uint64_t pinned_bytes = slot.backend->resident_srs_split().pinned_host_bytes;
  const bool same = slot.resident_srs == srs_id && slot.resident_srs_pinned_bytes == pinned_bytes;
  slot.resident_srs = srs_id;
  slot.resident_srs_bytes = slot.backend->srs_device_bytes(params);
  if (same) return;  // the charge of this very copy stands
  // A replaced SRS: the back end freed the old pinned part before pinning
  // this one, so the old charge goes first.
  slot.resident_srs_pinned_charge.release();
  slot.resident_srs_pinned_bytes = pinned_bytes;
  if (pinned_bytes != 0) slot.resident_srs_pinned_charge = memory.charge_evictable(pinned_bytes);
}

bool host_copy_releasable(DeviceSet& devices, const HostSrsCopy* copy, const groth16::Parameters& params) {
  if (copy == nullptr || copy->released() || !devices.has_gpu()) return false;
  for (std::size_t i = 0; i < devices.gpu_count(); ++i) {
    if (!devices.gpu(i).backend->holds_srs(params)) return false;
  }
  // A set the critical lanes prove: they upload it from this copy too
  // (a race, Engine::warm_critical_lanes).
  if (devices.lanes_take(params)) {
    for (std::size_t i = 0; i < devices.lane_count(); ++i) {
      if (!devices.lane(i).backend->holds_srs(params)) return false;
    }
  }
  return true;
}

asio::awaitable<void> release_host_copy(HostSrsCopy* copy, runtime::WorkerPool& cpu,
                                        std::function<void(std::uint64_t)> books, runtime::Logger& log,
                                        std::string srs_id) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t bytes = co_await runtime::run_on(cpu, [copy] { return copy->release_if_unused(); });
  if (bytes == 0) co_return;
  if (books) books(bytes);
  log.info("host copy of parameters released (held by every GPU)",
           {{"srs", srs_id},
            {"bytes", bytes},
            {"ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()}});
}

void clear_resident_srs(DeviceSet::Slot& slot) {
  slot.resident_srs.clear();
  slot.resident_srs_bytes = 0;
  slot.resident_srs_pinned_bytes = 0;
  slot.resident_srs_pinned_charge.release();
}

std::uint64_t DeviceSet::host_bytes_per_prove(const groth16::R1cs& r1cs) const {
  std::uint64_t bytes = 0;
  for (const auto& s : gpus_) bytes = std::max(bytes, s->backend->host_bytes_per_instance(r1cs));
  return gpus_.empty() ? cpu_->backend->host_bytes_per_instance(r1cs) : bytes;
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
    v.r1cs_matrices_bytes = s.backend->abc_matrices_device_bytes();
    v.msm_scratch_bytes = s.backend->msm_scratch_device_bytes();
    v.msm_scratch_limit_bytes = s.backend->msm_scratch_limit_bytes();
    BackendMemory m = s.backend->memory();
    v.memory_total_bytes = m.total_bytes;
    v.memory_free_bytes = m.free_bytes;
    if (std::optional<ProverStage> ps = s.backend->prover_stage()) {
      v.prover_stage = ps->name;
      auto now = std::chrono::steady_clock::now();
      v.prover_stage_ms = now > ps->started
                              ? static_cast<std::uint64_t>(
                                    std::chrono::duration_cast<std::chrono::milliseconds>(now - ps->started).count())
                              : 0;
      v.prover_stream = ps->stream;
      v.prover_streams = ps->streams;
      v.prover_events = ps->events;
    }
    out.push_back(std::move(v));
  };
  for (const auto& s : gpus_) add(*s);
  add(*cpu_);
  for (const auto& s : lanes_) add(*s);
  return out;
}

}  // namespace cuzk::engine
