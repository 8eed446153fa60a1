// Parameter-set residency of the engine: budget admission of a set from its
// circuit's shape, SRS leases and evictions (policy::SrsManager decides, the
// engine performs), preload (host memory and every GPU) and evict.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

std::string unknown_set_message(const std::string& id) {
  return "unknown parameter set '" + id +
         "' (want demo-<log2 domain>, porep-<size>, window-post-<size>, winning-post-<size> or "
         "snap-deals-<size>, spelled exactly: demo-16, porep-32GiB, winning-post-32GiB)";
}

}  // namespace

// SRS residency
//
// Every parameter set a job or a preload loads is registered with srs_ under
// its id ("demo-<n>", "porep-<sector size>") and its real host size; a job
// holds a lease on it until it ends. The manager decides evictions, the
// engine performs them: a host ("pinned") eviction drops the in-memory copy
// (ParamStore / ParamSets; jobs still holding it keep theirs) together with
// any copy a back end keeps on its device, and gives the budget charge back.
// Loading stays what the engine did before: the set is loaded first (on the
// worker pool), then registered and charged as already allocated.

// A parameter set is checked against the memory budget from its circuit's
// shape, before it is read or generated: one that can never fit (with, for a
// job, one prover working set and a partition's synthesis, 2 witnesses, see
// engine/pipeline.hpp) is refused as invalid_input - the request cannot be
// served under this daemon's configuration, so retrying is pointless (as for
// a demo size above engine.max_demo_log_domain); `overloaded` would invite
// retries and `internal` blames the daemon. Sets that fit but not beside what
// is loaded now are admitted: idle sets are evicted for them (SRS residency).
// Called on a worker thread: it reads only what is fixed once the engine has
// started (the budget's total, the back ends).
ParamsAdmit Engine::params_admit(bool proving) {
  if (config_.memory_budget_bytes == 0) return {};
  const std::uint64_t total = config_.memory_budget_bytes;
  const DeviceSet* devices = devices_.get();
  return [total, devices, proving](const groth16::R1cs& r1cs) -> std::optional<Error> {
    const std::uint64_t set_bytes = expected_params_host_bytes(r1cs) + r1cs.memory_bytes();
    const std::uint64_t work_bytes = proving ? devices->host_bytes_per_prove(r1cs) + witness_bytes(r1cs) : 0;
    if (set_bytes + work_bytes <= total) return std::nullopt;
    return Error{ErrorKind::kInvalidInput,
                 "the parameter set needs " + std::to_string(set_bytes) + " B" +
                     (proving ? " and proving it " + std::to_string(work_bytes) + " B more" : std::string()) +
                     ", above the whole memory budget of " + std::to_string(total) +
                     " B: it can never fit (raise memory.total_budget)"};
  };
}

policy::SrsLease Engine::lease_srs(const std::string& srs_id, std::uint64_t host_bytes, Priority priority) {
  const policy::SrsKey key{srs_id, policy::SrsKind::kGroth16Params};
  std::optional<policy::Reservation> prepaid;
  if (srs_->residency(key, std::nullopt) == policy::Residency::kAbsent) {
    srs_->register_srs(key, policy::SrsSizes{host_bytes, 0});
    // Already in memory: charged at once, even past the total.
    prepaid = memory_->charge_evictable(host_bytes);
  }
  auto acquired = srs_->acquire(key, std::nullopt, priority, std::move(prepaid));
  if (!acquired) {
    // Only when the prepaid charge was refused (critical requests queued):
    // the job goes on with its copy, untracked, as before residency existed.
    log_.warn("parameter set not tracked", {{"srs", srs_id}, {"error", acquired.error().message}});
    return {};
  }
  for (const policy::SrsAction& a : acquired->actions) {
    // The load already happened (the caller holds the loaded copy).
    if (a.op == policy::SrsAction::Op::kLoadPinned) srs_->loaded(a.key, std::nullopt);
  }
  apply_srs_actions(acquired->actions);
  return std::move(acquired->lease);
}

std::function<void(std::uint64_t)> Engine::host_copy_books(const std::string& srs_id, std::uint64_t host_bytes) {
  return [this, key = policy::SrsKey{srs_id, policy::SrsKind::kGroth16Params}, host_bytes](std::uint64_t released) {
    srs_->resize_pinned(key, host_bytes - std::min(released, host_bytes));
  };
}

void Engine::apply_srs_actions(const std::vector<policy::SrsAction>& actions) {
  for (const policy::SrsAction& a : actions) {
    if (a.op != policy::SrsAction::Op::kEvictPinned) continue;  // loads: done by the caller
    const std::string& id = a.key.path;
    bool dropped = parse_demo_circuit_id(id) ? params_.evict(id) : sets_->drop(id);
    // Device copies uploaded from it go too (the manager has no device
    // capacity configured: the back end decides what stays there).
    for (std::size_t i = 0; i < devices_->gpu_count(); ++i) {
      DeviceSet::Slot& slot = devices_->gpu(i);
      if (slot.resident_srs == id) tasks_.spawn(release_device_srs(slot, id));
    }
    for (std::size_t i = 0; i < devices_->lane_count(); ++i) {
      DeviceSet::Slot& slot = devices_->lane(i);
      if (slot.resident_srs == id) tasks_.spawn(release_device_srs(slot, id));
    }
    log_.info("parameters evicted", {{"srs", id}, {"bytes", a.bytes}, {"dropped", dropped}});
  }
  changed_.emit();
}

asio::awaitable<void> Engine::release_device_srs(DeviceSet::Slot& slot, std::string srs_id) {
  DeviceSet::Lock lock = co_await devices_->lock(slot);
  if (slot.resident_srs != srs_id) co_return;  // replaced meanwhile
  DeviceBackend& backend = *slot.backend;
  co_await runtime::run_on(backend.runner(), [&backend] {
    backend.release_resident_srs();
    return true;
  });
  clear_resident_srs(slot);  // its pinned host part's charge too
  changed_.emit();
}

void Engine::sweep_idle_srs() {
  std::vector<policy::SrsEntryView> idle;
  for (policy::SrsEntryView& v : srs_->entries()) {
    if (v.evictable) idle.push_back(std::move(v));
  }
  // Least recently used first.
  std::sort(idle.begin(), idle.end(),
            [](const auto& a, const auto& b) { return std::tie(b.idle_ms, a.key) < std::tie(a.idle_ms, b.key); });
  for (const policy::SrsEntryView& v : idle) {
    // Host-memory requests waiting: idle sets give way to them.
    const bool pressure = memory_->budget().waiting() > 0;
    if (!pressure && srs_->pinned_bytes() <= config_.srs_max_host_bytes) break;
    auto actions = srs_->evict(v.key);
    if (actions) apply_srs_actions(*actions);
  }
}

asio::awaitable<void> Engine::srs_sweep_loop() {
  while (!stopping_) {
    sweep_idle_srs();
    co_await sweep_idle_stagings();
    changed_.emit();
    co_await stop_.wait_until(clock_->after(config_.srs_sweep_period));
  }
}

// Idle host buffers: stagings and kept witness memory

asio::awaitable<void> Engine::sweep_idle_stagings() {
  const bool pressure = memory_->budget().waiting() > 0;
  if (pressure && kept_witnesses_->size() != 0) co_await release_kept_witnesses();
  if (!stagings_idle_since_) co_return;
  if (!pressure && clock_->now() - *stagings_idle_since_ < config_.staging_keep_idle) co_return;
  stagings_idle_since_.reset();
  co_await release_idle_stagings();
}

// The engine went idle staging_keep_idle ago (or at once, see EngineConfig).
// The staging pool's page-locked buffers (a 32 GiB PoRep staging: its 4.2 GB
// witness) are counted by the memory budget only while a job holds a working
// set, so they are not kept uncounted for long; the next job pins again.
asio::awaitable<void> Engine::release_kept_witnesses() {
  std::vector<KeptWitnesses::Entry> kept = kept_witnesses_->take_all();
  if (kept.empty()) co_return;
  std::uint64_t bytes = 0;
  const std::size_t count = kept.size();
  std::vector<groth16::Witness> storage;
  for (KeptWitnesses::Entry& e : kept) {
    bytes += e.reservation.bytes();
    storage.push_back(std::move(e.storage));
  }
  // The pages go off the loop (GBs of munmap), then their reservations here.
  co_await runtime::run_on(cpu_, [&storage] { storage.clear(); });
  kept.clear();
  log_.info("kept witness memory released", {{"bytes", bytes}, {"witnesses", count}});
  changed_.emit();
}

asio::awaitable<void> Engine::release_idle_stagings() {
  co_await release_kept_witnesses();
  if (!stagings_) co_return;
  std::vector<std::unique_ptr<InstanceStaging>> idle = stagings_->take_idle();
  for (std::unique_ptr<InstanceStaging>& s : critical_stagings_->take_idle()) idle.push_back(std::move(s));
  if (idle.empty()) co_return;
  co_await runtime::run_on(cpu_, [&idle] { idle.clear(); });  // cudaFreeHost off the loop
  changed_.emit();
}

// Preload
//
// A preload leaves the set ready to prove: loaded into host memory, then its
// SRS made resident on every GPU that does not hold it yet, as the first
// partition of its first job would (DeviceBackend::make_srs_resident under
// the device lock), then its host copy of the bases released once every GPU
// holds them, as after that partition (release_host_copy, engine/pipeline.hpp).
// Measured with a 32 GiB PoRep set: after a restart and a preload that only
// loaded the set, the daemon held 58.8 GB and a 4-job run then peaked at
// 106 GB RSS (the 51 GB host copy plus 9 partitions' witnesses synthesized
// before the first upload ended), against 55.6 GB for a daemon that had
// already proved once.
//
// Demo sets too: "ready to prove" means the same for every set, and their SRS
// is small (2^16 constraints by default: milliseconds of upload). They have
// no host copy to release (ParamStore keeps them whole).
//
// A failed upload fails nothing: the set is loaded on the host, which is
// what the preload promised before GPUs were part of it, and the set's first
// job on that GPU uploads it as it always did (a failure there is retried on
// another device). An error would tell the client the set is not loaded and
// invite a retry; the reply counts the GPUs that hold it and the log says
// why the others do not.

// The preload's set, shared by the preload and its upload tasks (a task
// outlives a cancelled preload and keeps the set alive).
struct Engine::Preload {
  explicit Preload(asio::any_io_executor loop) : ended(std::move(loop)) {}
  std::string srs_id;
  std::uint64_t host_bytes = 0;      // the set's budget charge (lease_srs)
  std::shared_ptr<const void> keep;  // the loaded set (ParamStore's or ParamSets' entry)
  const groth16::Parameters* params = nullptr;
  const groth16::R1cs* r1cs = nullptr;
  HostSrsCopy* host_copy = nullptr;  // ParamSets::Ready::host_copy; null: kept whole
  std::size_t uploads = 0;           // device tasks not yet ended
  runtime::Notifier ended;           // one ended
};

void Engine::spawn_uploads(const std::shared_ptr<Preload>& p, bool workers) {
  // One task per device, its back ends (sharing the device's memory) one
  // after the other: two uploads sized from one device's free memory at once
  // could both place the whole SRS. Devices in parallel: each has its own
  // link. A set the critical lanes take goes up there too (after the
  // device's workers), so that a lane's first proof of it uploads nothing.
  std::map<std::uint32_t, std::vector<DeviceSet::Slot*>> by_device;
  auto add = [&by_device, &p](DeviceSet::Slot& slot) {
    if (slot.backend->holds_srs(*p->params)) return;
    by_device[slot.backend->ordinal().value_or(slot.index)].push_back(&slot);
  };
  if (workers) {
    for (std::size_t i = 0; i < devices_->gpu_count(); ++i) add(devices_->gpu(i));
  }
  if (devices_->lanes_take(*p->params)) {
    for (std::size_t i = 0; i < devices_->lane_count(); ++i) add(devices_->lane(i));
  }
  for (auto& entry : by_device) {
    ++p->uploads;
    if (!tasks_.spawn(upload_on_device(std::move(entry.second), p))) --p->uploads;  // stopping
  }
}

asio::awaitable<std::uint32_t> Engine::make_resident_on_gpus(std::shared_ptr<Preload> p) {
  spawn_uploads(p, /*workers=*/true);
  while (p->uploads > 0) co_await p->ended.wait();
  std::uint32_t holding = 0;
  for (std::size_t i = 0; i < devices_->gpu_count(); ++i) {
    if (devices_->gpu(i).backend->holds_srs(*p->params)) ++holding;
  }
  co_return holding;
}

void Engine::warm_critical_lanes(std::shared_ptr<const void> keep, const groth16::Parameters& params,
                                 const groth16::R1cs& r1cs, const std::string& srs_id) {
  // host_copy_releasable keeps such a set's host copy until its lanes hold it.
  if (!devices_->lanes_take(params)) return;
  auto p = std::make_shared<Preload>(loop_);
  p->srs_id = srs_id;
  p->params = &params;
  p->r1cs = &r1cs;
  p->keep = std::move(keep);  // the set outlives the uploads (an eviction meanwhile)
  spawn_uploads(p, /*workers=*/false);
}

asio::awaitable<void> Engine::upload_on_device(std::vector<DeviceSet::Slot*> slots, std::shared_ptr<Preload> p) {
  struct Ended {  // also when cancelled
    Preload& p;
    ~Ended() {
      --p.uploads;
      p.ended.notify_all();
    }
  } ended{*p};
  for (DeviceSet::Slot* slot : slots) {
    DeviceSet::Lock lock = co_await devices_->lock(*slot);
    DeviceBackend& backend = *slot->backend;
    if (backend.holds_srs(*p->params)) continue;  // a job of the set uploaded it meanwhile
    struct Stage {                                // for status while the device uploads
      DeviceSet::Slot& slot;
      explicit Stage(DeviceSet::Slot& s) : slot(s) { slot.stage = "srs upload"; }
      ~Stage() { slot.stage = "idle"; }
    } stage{*slot};
    const auto t0 = steady_clock::now();
    const Result<bool> kept = co_await runtime::run_on(backend.runner(), [&backend, &set = *p]() -> Result<bool> {
      try {
        return backend.make_srs_resident(*set.params, *set.r1cs);
      } catch (const std::exception& e) {
        return Error{ErrorKind::kInternal, e.what()};
      }
    });
    if (!kept.ok()) {
      log_.warn("parameters not made resident on device (its first job of the set uploads them)",
                {{"srs", p->srs_id}, {"device", backend.name()}, {"error", kept.error().message}});
      continue;
    }
    if (!kept.value()) continue;  // the back end keeps nothing
    note_resident_srs(*slot, p->srs_id, *p->params, *memory_);
    log_.info("parameters resident on device", {{"srs", p->srs_id},
                                                {"device", backend.name()},
                                                {"bytes", slot->resident_srs_bytes},
                                                {"ms", ms_between(t0, steady_clock::now())}});
    changed_.emit();
  }
}

asio::awaitable<void> Engine::release_held_host_copy(std::shared_ptr<Preload> p) {
  if (!host_copy_releasable(*devices_, p->host_copy, *p->params)) co_return;
  co_await release_host_copy(p->host_copy, cpu_, host_copy_books(p->srs_id, p->host_bytes), log_, p->srs_id);
  changed_.emit();
}

asio::awaitable<Result<ParamsInfo>> Engine::preload(std::string srs_id) {
  const auto log_domain = parse_demo_circuit_id(srs_id);
  const auto spec = circuit_set_spec(srs_id);
  if (!log_domain && !spec) co_return Error{ErrorKind::kInvalidInput, unknown_set_message(srs_id)};
  if (log_domain && *log_domain > config_.max_demo_log_domain)
    co_return Error{ErrorKind::kInvalidInput, "demo size above engine.max_demo_log_domain"};
  const bool already = srs_->residency(policy::SrsKey{srs_id, policy::SrsKind::kGroth16Params}, std::nullopt) ==
                       policy::Residency::kResident;
  auto t0 = steady_clock::now();
  const ParamsAdmit admit = params_admit(/*proving=*/false);
  auto p = std::make_shared<Preload>(loop_);
  p->srs_id = srs_id;
  try {
    bool generated = false;
    if (log_domain) {
      ParamStore::Loaded l =
          co_await runtime::run_on(cpu_, [this, k = *log_domain, &admit] { return params_.get_demo(k, admit); });
      p->host_bytes = params_host_bytes(l.params->params) + l.params->r1cs.memory_bytes();
      p->params = &l.params->params;
      p->r1cs = &l.params->r1cs;
      generated = l.generated && !l.already_loaded;
      p->keep = l.params;
    } else {
      const fc::ParamsGenerator& generate = porep_generator_;
      const CircuitSetSpec& set = *spec;
      Result<std::shared_ptr<const ParamSets::Ready>> ready =
          co_await runtime::run_on(cpu_, [this, &set, &generate, &admit] {
            return porep_call<std::shared_ptr<const ParamSets::Ready>>(
                [&] { return sets_->get(set, math_, generate, admit); });
          });
      if (!ready) co_return ready.error();
      const ParamSets::Ready& r = *ready.value();
      p->host_bytes = params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes();
      p->params = &r.loaded.params;
      p->r1cs = r.r1cs.get();
      p->host_copy = r.host_copy.get();
      // ParamSets keeps how the set came (a set still cached from an earlier
      // generation was not generated by this call).
      generated = !already && r.loaded.origin == fc::ParamsOrigin::kDevelopmentGenerated;
      p->keep = ready.value();
    }
    // Held while the GPUs upload (the set is not evicted under them), then
    // resident without a holder: idle from now (evictable after srs_min_idle).
    policy::SrsLease lease = lease_srs(srs_id, p->host_bytes, Priority::kNormal);
    ParamsInfo info{already, ms_between(t0, steady_clock::now()), generated};
    info.gpus = static_cast<std::uint32_t>(devices_->gpu_count());
    info.gpus_holding = co_await make_resident_on_gpus(p);
    co_await release_held_host_copy(p);
    co_return info;
  } catch (const ParamsRefused& e) {
    co_return e.error();
  } catch (const std::system_error& e) {
    if (is_cancellation(e)) throw;
    co_return Error{ErrorKind::kInternal, e.what()};
  } catch (const std::exception& e) {
    co_return Error{ErrorKind::kInternal, e.what()};
  }
}

// Refused while a job holds the set: kOverloaded ("retry later"; the
// engine's error kinds have no "busy"), never deferred.
Result<bool> Engine::evict(const std::string& srs_id) {
  if (!parse_demo_circuit_id(srs_id) && !circuit_set_spec(srs_id))
    return Error{ErrorKind::kInvalidInput, unknown_set_message(srs_id)};
  auto actions = srs_->evict(policy::SrsKey{srs_id, policy::SrsKind::kGroth16Params});
  if (!actions) {
    switch (actions.error().kind) {
      case policy::SrsErrorKind::kBusy:
        return Error{ErrorKind::kOverloaded, srs_id + " is in use by a running job; retry later"};
      case policy::SrsErrorKind::kNotFound:
        return Error{ErrorKind::kNotFound, srs_id + " is not loaded"};
      default:
        return Error{ErrorKind::kInternal, actions.error().message};
    }
  }
  apply_srs_actions(*actions);
  return true;
}

}  // namespace cuzk::engine
