#include "engine/pipeline.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <system_error>

#include "engine/engine.hpp"
#include "engine/pipeline_state.hpp"
#include "engine/staged_prove.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------
// The pipeline

std::size_t staging_slots(const DeviceSet& devices) {
  // Per GPU: the instance on the device and the next one preparing. The CPU
  // back end's host step only records references (nothing to overlap), so
  // one: a second would only hold a second working set of the budget.
  return devices.has_gpu() ? 2 * devices.gpu_count() : 1;
}

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

using namespace pipeline_detail;

// The host copy of the set's bases for a back end about to read them
// (engine/host_srs.hpp): a user counted until the caller's HostSrsUse ends;
// read back from the set's file first when released (blocking a worker).
asio::awaitable<std::optional<Error>> use_host_copy(Ctx c, std::uint32_t k, DeviceBackend& backend) {
  HostSrsCopy* copy = c.plan.host_copy;
  const bool released = copy->released();
  if (released) c.stage(k, "parameters read back");
  const auto t0 = steady_clock::now();
  std::optional<Error> e = co_await runtime::run_on(c.deps.cpu, [copy] { return copy->acquire(); });
  if (e) {
    c.deps.log.error("parameters could not be read back", {{"srs", c.plan.srs_key}, {"error", e->message}});
  } else if (released) {
    if (c.plan.on_host_copy) c.plan.on_host_copy(0);
    c.deps.log.info(
        "parameters read back",
        {{"srs", c.plan.srs_key}, {"device", backend.name()}, {"bytes", copy->bases_bytes()}, {"ms", ms_since(t0)}});
  }
  co_return e;
}

// Once every GPU holds the set's bases and no back end reads the host copy,
// its pages go (a task of the pipeline).
void maybe_release_host_copy(Ctx c) {
  if (!host_copy_releasable(c.deps.devices, c.plan.host_copy, *c.plan.params)) return;
  c.tasks.spawn(release_host_copy(c.plan.host_copy, c.deps.cpu, c.plan.on_host_copy, c.deps.log, c.plan.srs_key));
}

// Proves item on the locked device and verifies the proof; nullopt (and
// `why`) when the back end threw (`threw` set) or the proof does not verify.
asio::awaitable<std::optional<groth16::Proof>> prove_on(Ctx c, DeviceSet::Lock lock, Item& item, std::string& why,
                                                        bool& threw) {
  const PartitionPlan& plan = c.plan;
  PartitionTiming& t = item.timing;
  DeviceSet::Slot& slot = lock.slot();
  auto t0 = steady_clock::now();
  slot.job = c.job_of(item.k);
  slot.partition = c.local(item.k);
  slot.stage = "prove";
  auto slot_idle = [&slot] {
    slot.job.reset();
    slot.partition.reset();
    slot.stage = "idle";
  };
  c.stage(item.k, slot.backend->ordinal() ? "prove (gpu)" : "prove (cpu)");
  DeviceBackend& backend = *slot.backend;
  // Normally prepared before the device wait (prove_item). Not for this kind
  // of back end (a retry on the CPU, or on another GPU after the device step
  // consumed it): prepared here, holding the device, in a staging of this
  // back end's own when the pooled one does not suit it.
  std::unique_ptr<InstanceStaging> own_staging;
  InstanceStaging* staging = item.prepared.lease.get();
  if (staging == nullptr || !backend.can_use(*staging)) {
    own_staging = backend.make_staging();
    staging = own_staging.get();
    item.prepared.by = nullptr;
  }
  if (item.prepared.by == nullptr) {
    item.prepared.blinding = groth16::random_blinding();
    std::optional<Error> e = co_await prepare_instance(c.deps.cpu, backend, *staging, *plan.params, *plan.r1cs,
                                                       item.witness, item.prepared.blinding, plan.satisfaction);
    if (e) {
      slot_idle();
      threw = true;
      why = e->message;
      if (e->kind == ErrorKind::kInvalidInput) item.input_fault = *e;
      co_return std::nullopt;
    }
  }
  item.prepared.by = nullptr;  // the device step consumes the staging
  // A back end that does not hold the set's bases reads their host copy in
  // its device step: read back from the file first when it was released.
  HostSrsUse host_use;
  if (plan.host_copy != nullptr && !backend.holds_srs(*plan.params)) {
    std::optional<Error> e = co_await use_host_copy(c, item.k, backend);
    if (e) {
      slot_idle();
      threw = true;
      why = e->message;
      co_return std::nullopt;
    }
    host_use = HostSrsUse(plan.host_copy);
  }
  // The device step: queued by the back end's thread, resumed here when the
  // device is done (no thread waits for it).
  t0 = steady_clock::now();
  std::optional<Error> device_error = co_await run_device_step(backend, *staging);
  t.prove_ms = ms_since(t0);
  host_use = HostSrsUse();  // the bases are on the device (or the CPU is done with them)
  t.device = backend.name();
  slot_idle();
  if (device_error) {
    threw = true;
    why = device_error->message;
    if (device_error->kind == ErrorKind::kInvalidInput) {
      item.input_fault = *device_error;  // the witness's fault, not the device's
    } else {
      ++slot.prove_errors;
    }
    co_return std::nullopt;
  }
  if (backend.keeps_srs_resident()) note_resident_srs(slot, plan.srs_key, *plan.params, c.deps.memory);
  lock.unlock();  // the next partition may use the device while this one finishes and verifies
  maybe_release_host_copy(c);

  t0 = steady_clock::now();
  Result<groth16::Proof> finished = co_await finish_instance(c.deps.cpu, backend, *staging, &t.breakdown);
  t.prove_ms += ms_since(t0);
  if (!finished) {
    threw = true;
    why = finished.error().message;
    // A back end may report its check with the results (a device-side check).
    if (finished.error().kind == ErrorKind::kInvalidInput) {
      item.input_fault = finished.error();
    } else {
      ++slot.prove_errors;
    }
    co_return std::nullopt;
  }
  item.prepared.lease.release();  // the next partition may prepare while this one verifies

  c.stage(item.k, "verify");
  t0 = steady_clock::now();
  const groth16::Proof& proof = finished.value();
  const Member& mb = c.st.members[c.st.member_of(item.k)];
  const std::vector<std::vector<ff::Fr>>& given = mb.own ? mb.public_inputs : plan.public_inputs;
  if (given.empty()) {
    item.inputs.assign(item.witness.inputs.begin() + (item.witness.inputs.empty() ? 0 : 1), item.witness.inputs.end());
  } else {
    item.inputs = given.at(mb.own ? item.k - mb.first : item.k);
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
  co_return finished.value();
}

// The back end whose stagings a run's partitions prepare in (GPU stagings
// suit every GPU; without a GPU, the CPU's).
DeviceBackend& staging_backend(DeviceSet& devices) {
  return devices.has_gpu() ? *devices.gpu(0).backend : *devices.cpu().backend;
}

// Beside the first partitions' synthesis: a staging slot made ready for the
// plan's shape, for the first partition to prepare. An idle engine gives its
// stagings back (Engine::release_idle_stagings), so a run's first prepare
// pinned its staging on the critical path: evaluate_ms 2281 against ~70
// once pinned, for a 32 GiB PoRep partition on an H100 host. Nothing when
// every slot is leased (another run's) or the back end has nothing to
// allocate; a failure here is left for that prepare to meet and report.
asio::awaitable<void> reserve_first_staging(Ctx c) {
  if (!c.deps.devices.has_gpu()) co_return;
  std::optional<StagingPool::Lease> lease = c.deps.stagings->try_acquire();
  if (!lease) co_return;
  DeviceBackend& backend = staging_backend(c.deps.devices);
  std::unique_ptr<InstanceStaging> retired;
  InstanceStaging& staging = lease->staging_for(backend, retired);
  const groth16::R1cs& r1cs = *c.plan.r1cs;
  c.st.reserving_staging = true;
  co_await runtime::run_on(c.deps.cpu, [&retired, &backend, &staging, &r1cs] {
    retired.reset();
    try {
      backend.reserve_staging(staging, r1cs);
    } catch (const std::exception&) {
      // prepare() allocates again and reports what failed, typed, for its partition.
    }
  });
  c.st.reserving_staging = false;
  c.st.first_staging = std::move(*lease);
  c.st.changed.notify_all();
}

// The staged prove's host step, before the device wait: a staging slot (the
// run's first, reserved, while there is one), then prepare() on the host pool.
asio::awaitable<std::optional<Error>> prepare_item(Ctx c, Item& item) {
  DeviceBackend& backend = staging_backend(c.deps.devices);
  if (!item.prepared.lease) {
    c.stage(item.k, "staging wait");
    while (c.st.reserving_staging) co_await changed(c.st);
    if (c.st.first_staging)
      item.prepared.lease = std::move(c.st.first_staging);
    else
      item.prepared.lease = co_await c.deps.stagings->acquire();
  }
  std::unique_ptr<InstanceStaging> retired;
  InstanceStaging& staging = item.prepared.lease.staging_for(backend, retired);
  if (retired) co_await runtime::run_on(c.deps.cpu, [&retired] { retired.reset(); });
  item.prepared.blinding = groth16::random_blinding();
  c.stage(item.k, "prepare");
  std::optional<Error> e = co_await prepare_instance(c.deps.cpu, backend, staging, *c.plan.params, *c.plan.r1cs,
                                                     item.witness, item.prepared.blinding, c.plan.satisfaction);
  if (!e) item.prepared.by = &backend;
  co_return e;
}

// A prover working set (one staging's host memory) for a partition about to
// prepare: a free one, else a new one if the budget has it now and fewer are
// held than staging_slots() (one on each device and one preparing), else the
// next one another prove of this pipeline gives back. Taken before the
// staging slot and the device, given back after verification: a task holding
// a device never waits for a working set or a slot, so there is no cycle.
// Nullopt when the partition's job stopped meanwhile.
asio::awaitable<std::optional<policy::Reservation>> take_work_set(Ctx c, std::uint32_t m) {
  State& st = c.st;
  const std::size_t most = staging_slots(c.deps.devices);
  for (;;) {
    if (!st.free_work_sets.empty()) {
      policy::Reservation r = std::move(st.free_work_sets.back());
      st.free_work_sets.pop_back();
      co_return r;
    }
    std::optional<policy::Reservation> r;
    if (st.work_sets_held < most)
      r = c.deps.memory.try_reserve(c.deps.devices.host_bytes_per_prove(*c.plan.r1cs), c.plan.priority);
    if (r) {
      ++st.work_sets_held;
      co_return r;
    }
    if (st.stopped(m)) co_return std::nullopt;
    co_await changed(st);
  }
}

void give_back_work_set(State& st, std::optional<policy::Reservation>& r) {
  if (!r) return;
  if (st.work_sets_held > 1) {
    --st.work_sets_held;  // an extra one: back to the budget now
  } else {
    st.free_work_sets.push_back(std::move(*r));
  }
  r.reset();
  st.changed.notify_all();
}

void log_proved(Ctx c, const Item& item) {
  const PartitionTiming& t = item.timing;
  const ProveBreakdown& b = t.breakdown;
  const Member& m = c.st.members[c.st.member_of(item.k)];
  c.deps.log.info("partition proved", {{"job", m.job},
                                       {"partition", t.partition},
                                       {"partitions", m.count},
                                       {"device", t.device},
                                       {"synthesis_ms", t.synthesis_ms},
                                       {"check_ms", t.check_ms},
                                       {"memory_wait_ms", t.memory_wait_ms},
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
                                       {"in_flight", c.st.in_flight},
                                       {"rss_bytes", resident_bytes()},
                                       {"peak_rss_bytes", peak_resident_bytes()}});
}

// Counts the member's job on each device it proves on, once.
void place_on(Ctx c, std::uint32_t m, DeviceSet::Slot& slot) {
  auto key = std::pair(c.st.members[m].job, slot.index);
  if (std::find(c.placed.begin(), c.placed.end(), key) != c.placed.end()) return;
  c.placed.push_back(key);
  c.placements.emplace_back(&slot);
}

// Stores a verified proof as the member's partition.
void record_proof(Ctx c, std::uint32_t m, Item& item, const groth16::Proof& proof) {
  Member& mb = c.st.members[m];
  mb.proofs[c.local(item.k)] = proof;
  mb.inputs[c.local(item.k)] = std::move(item.inputs);
  log_proved(c, item);
  mb.timings.push_back(item.timing);
  ++mb.proved;
}

// A partition raced on a GPU and on a second prover (PartitionPlan::race_on_cpu):
// leg 0 waits for a GPU by the dispatch rule; leg 1 takes a card's free
// critical lane (DeviceSet::lane: streams of the greatest priority beside the
// card's partition) or else the CPU. The partition's own item (its prepared
// staging and reservation; left where it is, since a staging may refer to
// its witness) goes to the leg likelier to answer first: the lane, else the
// GPU; the other leg proves a copy of the witness.
struct Race {
  Item copy;
  std::array<Item*, 2> legs{};
  bool dispatched = false;  // a leg got a device (the member's dispatch count)
  bool won = false;         // a leg's proof is recorded
  int running = 2;
  std::array<std::string, 2> why;
  std::array<bool, 2> threw{false, false};
};

// One leg: its device, then its prove unless the other leg has answered.
// `gpu`: leg 0's request; else leg 1 on `pinned`.
asio::awaitable<void> race_leg(Ctx c, std::uint32_t m, std::shared_ptr<Race> race,
                               std::optional<DeviceSet::Request> gpu, DeviceSet::Slot* pinned) {
  State& st = c.st;
  DeviceSet& devices = c.deps.devices;
  const std::size_t leg = gpu ? 0 : 1;
  Item& item = *race->legs[leg];
  std::string& why = race->why[leg];
  bool& threw = race->threw[leg];
  auto leave = [&] {
    --race->running;
    st.changed.notify_all();
  };
  try {
    const auto t0 = steady_clock::now();
    // Not `gpu ? co_await ... : co_await ...`: g++ 12 destroys the chosen
    // operand's result twice there, and this Lock's second destruction
    // unlocked the device under its next holder (two partitions then ran on
    // one GPU at once; DeviceSet::Lock::unlock now aborts on it).
    DeviceSet::Lock lock;
    if (gpu) {
      lock = co_await devices.acquire(*gpu);
    } else {
      lock = co_await devices.lock(*pinned, c.plan.priority);
    }
    item.timing.device_wait_ms += ms_since(t0);
    if (!race->dispatched) {
      race->dispatched = true;
      ++st.members[m].dispatched;
      st.recount_undispatched();
    }
    if (race->won || st.stopped(m)) {
      why = "the other prover answered first";
    } else {
      place_on(c, m, lock.slot());
      std::optional<groth16::Proof> proof = co_await prove_on(c, std::move(lock), item, why, threw);
      if (proof && !race->won && !st.stopped(m)) {
        race->won = true;
        record_proof(c, m, item, *proof);
        st.settle(m);  // answered now, while the other leg may still prove
      }
    }
  } catch (const std::system_error& e) {
    if (is_cancellation(e)) {
      leave();
      throw;
    }
    why = e.what();
    threw = true;
  } catch (const std::exception& e) {
    why = e.what();
    threw = true;
  }
  leave();
}

// No GPU is free for a racing partition: a critical lane or the CPU proves it
// too while it waits for a GPU (both legs are tasks of the run, waited for
// here). True when a leg's proof was recorded; else `why` names both legs'
// failures. `item` is handed back for done() (its reservation and witness).
asio::awaitable<bool> race_item(Ctx c, Item& item, DeviceSet::Request request, std::string& why) {
  State& st = c.st;
  DeviceSet& devices = c.deps.devices;
  const std::uint32_t m = st.member_of(item.k);
  DeviceSet::Slot* lane = devices.lanes_take(*c.plan.params) ? devices.free_lane() : nullptr;
  DeviceSet::Slot& second = lane != nullptr ? *lane : devices.cpu();
  const std::size_t own = lane != nullptr ? 1 : 0;  // the leg proving the partition's own item
  auto race = std::make_shared<Race>();
  race->copy.k = item.k;
  race->copy.timing = item.timing;
  race->copy.witness = item.witness;  // the other leg's own copy: small circuits only
  race->legs[own] = &item;            // outlives both legs: waited for below
  race->legs[1 - own] = &race->copy;
  c.deps.log.info(
      lane != nullptr ? "no GPU free: the critical lane races for the partition"
                      : "no GPU free: the CPU races for the partition",
      {{"job", st.members[m].job}, {"partition", item.timing.partition}, {"device", second.backend->name()}});
  c.tasks.spawn(race_leg(c, m, race, std::move(request), nullptr));
  c.tasks.spawn(race_leg(c, m, race, std::nullopt, &second));
  while (race->running > 0) co_await changed(st);
  if (race->won) co_return true;
  if (!item.input_fault) item.input_fault = race->copy.input_fault;
  why = "gpu: " + race->why[0] + "; " + (lane != nullptr ? "lane: " : "cpu: ") + race->why[1];
  co_return false;
}

// One partition from its working set to its stored, verified proof: the
// partitions holding working sets wait at the devices together, so the
// devices' queue orders them (and other jobs') by priority. A GPU proof that does not verify is proved again
// on the CPU (the witness is still here): a bug or a failing device. A GPU
// that throws (out of memory, a lost device) hands the partition to another
// GPU when there is one; with a single GPU the job fails instead - proving a
// 32 GiB partition on the CPU would take an hour unannounced.
asio::awaitable<void> prove_item(Ctx c, Item item) {
  State& st = c.st;
  const PartitionPlan& plan = c.plan;
  DeviceSet& devices = c.deps.devices;
  const std::uint32_t m = st.member_of(item.k);
  std::optional<policy::Reservation> work_set;
  auto place = [&c, m](DeviceSet::Slot& slot) { place_on(c, m, slot); };
  auto done = [&] {
    st.keep_spare(item.witness, item.reservation);
    item = Item{};  // the witness and its reservation go now, before waking the lanes
    give_back_work_set(st, work_set);
    st.release(m);
  };
  try {
    DeviceSet::Request request;
    request.job = st.members[m].job;
    request.priority = plan.priority;
    request.srs_key = plan.srs_key;
    request.params = plan.params;
    request.undispatched = &st.undispatched;
    // The staged prove's host step first (engine/staged_prove.hpp), holding
    // a working set and a staging slot but no device: this partition
    // prepares while another is on the device.
    const auto t_work = steady_clock::now();
    work_set = co_await take_work_set(c, m);
    item.timing.memory_wait_ms += ms_since(t_work);
    if (!work_set || st.stopped(m)) co_return done();
    if (std::optional<Error> e = co_await prepare_item(c, item)) {
      st.fail(m, Error{e->kind, "partition " + std::to_string(item.timing.partition) + ": " + e->message});
      co_return done();
    }
    if (st.stopped(m)) co_return done();
    c.stage(item.k, "device wait");
    if (plan.race_on_cpu && devices.has_gpu() && !devices.would_grant_now(request)) {
      std::string why;
      if (!co_await race_item(c, item, request, why) && !st.stopped(m)) {
        const ErrorKind kind = item.input_fault ? item.input_fault->kind : ErrorKind::kInternal;
        st.fail(m, Error{kind, "partition " + std::to_string(item.timing.partition) + ": " + why});
      }
      co_return done();
    }
    auto t0 = steady_clock::now();
    DeviceSet::Lock lock = co_await devices.acquire(request);
    ++st.members[m].dispatched;
    st.recount_undispatched();
    item.timing.device_wait_ms += ms_since(t0);
    if (st.stopped(m)) co_return done();
    DeviceSet::Slot* slot = &lock.slot();
    place(*slot);
    std::string why;
    bool threw = false;
    std::optional<groth16::Proof> proof = co_await prove_on(c, std::move(lock), item, why, threw);
    if (!threw && !devices.is_cpu(*slot))
      devices.record_prove(plan.srs_key, item.timing.prove_ms, item.timing.breakdown.srs_uploaded);
    if (!proof && !st.stopped(m) && !devices.is_cpu(*slot) && !item.input_fault) {
      if (threw && devices.gpu_count() > 1) {
        c.deps.log.warn("gpu prove failed, proving the partition on another GPU", {{"job", request.job},
                                                                                   {"partition", item.timing.partition},
                                                                                   {"device", slot->backend->name()},
                                                                                   {"reason", why}});
        // The working set stays held while waiting for the GPU: no device
        // holder waits for a working set (see take_work_set).
        request.exclude = slot;
        t0 = steady_clock::now();
        lock = co_await devices.acquire(request);
        item.timing.device_wait_ms += ms_since(t0);
        if (st.stopped(m)) co_return done();
        slot = &lock.slot();
        place(*slot);
        threw = false;
        proof = co_await prove_on(c, std::move(lock), item, why, threw);
      } else if (!threw) {
        c.deps.log.warn("gpu proof failed, proving the partition again on the CPU",
                        {{"job", request.job},
                         {"partition", item.timing.partition},
                         {"device", slot->backend->name()},
                         {"reason", why}});
        devices.count_cpu_retry();
        ++st.members[m].cpu_retries;
        item.timing.retried_on_cpu = true;
        t0 = steady_clock::now();
        lock = co_await devices.lock(devices.cpu(), plan.priority);
        item.timing.device_wait_ms += ms_since(t0);
        proof = co_await prove_on(c, std::move(lock), item, why, threw);
      }
    }
    if (!proof) {
      if (!st.stopped(m)) {
        const ErrorKind kind = item.input_fault ? item.input_fault->kind : ErrorKind::kInternal;
        st.fail(m, Error{kind, "partition " + std::to_string(item.timing.partition) + ": " + why});
      }
      co_return done();
    }
    record_proof(c, m, item, *proof);
    done();
  } catch (const std::system_error& e) {
    done();
    if (is_cancellation(e)) throw;
    st.fail(m, Error{ErrorKind::kInternal, e.what()});
  } catch (const std::exception& e) {
    done();
    st.fail(m, Error{ErrorKind::kInternal, e.what()});
  }
}

// Hands each ready partition, in order, to a prove task of its own.
asio::awaitable<void> dispatcher(Ctx c) {
  State& st = c.st;
  try {
    for (;;) {
      while (!st.ready.empty()) {
        Item item = std::move(st.ready.front());
        st.ready.pop_front();
        if (c.stopped(item.k)) {
          const std::uint32_t m = st.member_of(item.k);
          item = Item{};
          st.release(m);  // a member stopped meanwhile: dropped
          continue;
        }
        c.tasks.spawn(prove_item(c, std::move(item)));
      }
      if (st.lanes_alive == 0 || (st.all_stopped() && !st.more_may_come())) break;
      co_await changed(st);
    }
  } catch (const std::system_error& e) {
    if (is_cancellation(e)) throw;
    for (std::uint32_t m = 0; m < st.members.size(); ++m) st.fail(m, Error{ErrorKind::kInternal, e.what()});
  }
  st.changed.notify_all();
}

// The intake of one run (BatchDoor), over its State.
class Door final : public BatchDoor {
 public:
  explicit Door(State& st) : st_(st) {}
  bool open() const override { return st_.intake_open; }
  std::size_t unfinished() const override {
    std::size_t n = st_.joining;
    for (const Member& mb : st_.members) n += mb.result ? 0 : 1;
    return n;
  }
  bool add(PlanMember pm) override {
    if (!st_.intake_open || pm.partitions == 0 || !pm.cancel || !pm.synthesize) return false;
    if (!pm.public_inputs.empty() && pm.public_inputs.size() != pm.partitions) return false;
    st_.members.push_back(make_member(std::move(pm), st_.partitions, st_.changed));
    st_.partitions += st_.members.back().count;
    st_.recount_undispatched();
    st_.changed.notify_all();
    return true;
  }
  asio::awaitable<void> wait() override { co_await st_.changed.wait(); }
  void wake() override { st_.changed.notify_all(); }

 private:
  void take_hold() override { ++st_.joining; }
  void release_hold() override {
    --st_.joining;
    st_.changed.notify_all();
  }
  State& st_;
};

// The run's admit task: the caller's admitter, over the run's door.
asio::awaitable<void> admit_members(BatchAdmitter admit, Door& door) { co_await admit(door); }

}  // namespace

asio::awaitable<std::vector<Result<PipelineOutcome>>> run_batch_pipeline(PipelineDeps deps, const PartitionPlan& plan,
                                                                         std::vector<PlanMember> members,
                                                                         BatchAdmitter admit) {
  std::uint32_t total = 0;
  bool plan_synthesizes = true;  // every member without its own synthesize has the plan's
  for (const PlanMember& m : members) {
    total += m.partitions;
    if (!m.synthesize && !plan.synthesize) plan_synthesizes = false;
    if (m.synthesize && !m.public_inputs.empty() && m.public_inputs.size() != m.partitions) plan_synthesizes = false;
  }
  // The same failure for every member (reported too).
  auto all = [&members](const Error& e) {
    std::vector<Result<PipelineOutcome>> out(members.size(), e);
    for (const PlanMember& m : members)
      if (m.on_done) m.on_done(out.front());
    return out;
  };
  if (members.empty() || total != plan.partitions || plan.partitions == 0 || !plan.params || !plan.r1cs || !plan.pvk ||
      !plan_synthesizes || (!plan.public_inputs.empty() && plan.public_inputs.size() != plan.partitions)) {
    co_return all(Error{ErrorKind::kInternal, "partition pipeline: incomplete plan"});
  }
  auto ex = co_await asio::this_coro::executor;
  // Staging slots: the engine's, or this run's own.
  std::optional<StagingPool> own_stagings;
  if (!deps.stagings) deps.stagings = &own_stagings.emplace(ex, staging_slots(deps.devices));
  State st(ex);
  runtime::Signal::Subscription on_freed = deps.memory.on_freed([&st] { st.changed.notify_all(); });
  for (const PlanMember& pm : members)
    if (pm.partitions == 0 || !pm.cancel)
      co_return all(Error{ErrorKind::kInternal, "partition pipeline: empty member"});
  // One prover working set before any witness (see the top of the header).
  // A lone job's cancel ends this wait; a batch's members wait together.
  const runtime::CancelFlag never;
  const auto t_work = steady_clock::now();
  Result<policy::Reservation> work = co_await deps.memory.reserve(
      deps.devices.host_bytes_per_prove(*plan.r1cs), plan.priority, members.size() == 1 ? *members[0].cancel : never);
  if (!work) co_return all(work.error());
  st.start_memory_wait_ms = ms_since(t_work);
  for (PlanMember& pm : members) {
    st.members.push_back(make_member(std::move(pm), st.partitions, st.changed));
    st.partitions += st.members.back().count;
  }
  st.recount_undispatched();
  st.free_work_sets.push_back(std::move(work.value()));
  st.work_sets_held = 1;
  PartitionPlan bounded = plan;  // lanes never exceed the in-flight bound
  bounded.max_in_flight = std::max<std::size_t>(1, plan.max_in_flight);
  // With joiners possible, as many lanes as the bound allows: a joiner's
  // partitions come after the plan's.
  bounded.synthesis_lanes = std::clamp<std::size_t>(
      plan.synthesis_lanes, 1,
      admit ? bounded.max_in_flight : std::min<std::size_t>(bounded.max_in_flight, plan.partitions));
  std::list<DeviceSet::Placement> placements;  // released when the run ends
  std::vector<std::pair<JobId, std::uint32_t>> placed;
  Door door(st);
  {
    runtime::TaskSet tasks(ex);
    Ctx c{deps, bounded, st, tasks, placements, placed};
    st.lanes_alive = bounded.synthesis_lanes;
    st.max_spares = bounded.synthesis_lanes;
    st.kept = deps.kept;
    st.witness_bytes = plan.witness_bytes;
    st.intake_open = static_cast<bool>(admit);
    tasks.spawn(reserve_first_staging(c));
    for (std::size_t i = 0; i < bounded.synthesis_lanes; ++i) tasks.spawn(lane(c));
    tasks.spawn(dispatcher(c));
    if (admit) tasks.spawn(admit_members(std::move(admit), door));
    co_await tasks.join();
  }
  st.ready.clear();  // reservations of unproved partitions (cancel, failure)
  st.shelve_spares();
  std::vector<Result<PipelineOutcome>> out;
  for (std::uint32_t m = 0; m < st.members.size(); ++m) {
    if (!st.members[m].result) {
      // Ended with work left (the pipeline was torn down): as the flags say.
      st.members[m].in_flight = 0;
      if (!st.stopped(m)) st.members[m].error = Error{ErrorKind::kInternal, "partition pipeline ended early"};
      st.settle(m);
    }
    out.push_back(*st.members[m].result);
  }
  co_return out;
}

asio::awaitable<Result<PipelineOutcome>> run_partition_pipeline(PipelineDeps deps, const PartitionPlan& plan,
                                                                const runtime::CancelFlag& cancel) {
  std::vector<PlanMember> one(1);
  one[0].job = plan.job;
  one[0].partitions = plan.partitions;
  one[0].cancel = &cancel;
  std::vector<Result<PipelineOutcome>> out = co_await run_batch_pipeline(deps, plan, std::move(one));
  co_return std::move(out.front());
}

}  // namespace cuzk::engine
