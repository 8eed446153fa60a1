// The partition pipeline's run state (engine/pipeline.cpp and its synthesis
// lanes, engine/pipeline_lane.cpp, only): a partition in flight (Item), a
// job of the run (Member), the run's shared state (State: members, counters,
// spares, the change notifier) and the context every coroutine of the run
// gets (Ctx). Loop-thread only.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/pipeline.hpp"
#include "engine/staged_prove.hpp"
#include "runtime/task_set.hpp"

namespace cuzk::engine::pipeline_detail {

// Names the partition in an error unless its message already does.
inline Error about_partition(std::uint32_t k, const Error& e) {
  if (e.message.find("partition " + std::to_string(k)) != std::string::npos) return e;
  return Error{e.kind, "partition " + std::to_string(k) + ": " + e.message};
}

// The staged prove's host step (prepare_item), done before the device wait.
struct Prepared {
  StagingPool::Lease lease;           // a staging slot, until the partition is proved (or dropped)
  const DeviceBackend* by = nullptr;  // the back end whose prepare() filled it; null: not prepared
  groth16::Blinding blinding;
};

struct Item {
  std::uint32_t k = 0;  // the plan's (global) partition index
  groth16::Witness witness;
  policy::Reservation reservation;  // the witness's bytes, until proved
  PartitionTiming timing;           // partition: the member's own index
  std::vector<ff::Fr> inputs;       // the verifier's, once proved
  Prepared prepared;
  // A back end's step found the witness at fault (the prover's satisfaction
  // check, kInvalidInput): the partition fails as such, never retried.
  std::optional<Error> input_fault;
};

// One job of the pipeline (a lone job is a batch of one).
struct Member {
  JobId job = 0;
  std::uint32_t first = 0, count = 0;  // its partitions: [first, first + count) of the plan
  const runtime::CancelFlag* cancel = nullptr;
  runtime::Signal::Subscription on_cancel;  // wakes the run's waiters
  std::optional<Error> error;
  std::uint32_t dispatched = 0, proved = 0, cpu_retries = 0;
  std::uint32_t in_flight = 0;  // taken by a lane and not yet proved or dropped
  std::vector<PartitionTiming> timings;
  std::function<void(const Result<PipelineOutcome>&)> on_done;
  std::optional<Result<PipelineOutcome>> result;  // once known
  // PlanMember's own work (`own`: synthesize set), by the member's index;
  // otherwise the plan's, by the plan's index.
  bool own = false;
  std::function<Result<groth16::Witness>(std::uint32_t, groth16::Witness)> synthesize;
  std::function<std::optional<Error>(std::uint32_t, const groth16::Witness&)> check;
  std::vector<std::vector<ff::Fr>> public_inputs;
  std::function<void(std::uint32_t, std::string_view)> on_stage;
  std::vector<std::optional<groth16::Proof>> proofs;  // by the member's index
  std::vector<std::vector<ff::Fr>> inputs;
};

inline Member make_member(PlanMember pm, std::uint32_t first, runtime::Notifier& changed) {
  Member m;
  m.job = pm.job;
  m.first = first;
  m.count = pm.partitions;
  m.cancel = pm.cancel;
  m.on_cancel = pm.cancel->on_request([&changed] { changed.notify_all(); });
  m.on_done = std::move(pm.on_done);
  m.own = static_cast<bool>(pm.synthesize);
  m.synthesize = std::move(pm.synthesize);
  m.check = std::move(pm.check);
  m.public_inputs = std::move(pm.public_inputs);
  m.on_stage = std::move(pm.on_stage);
  m.proofs.resize(m.count);
  m.inputs.resize(m.count);
  return m;
}

struct State {
  explicit State(asio::any_io_executor ex) : changed(std::move(ex)) {}
  // A deque: members join while the run goes on (BatchDoor::add), and the
  // lanes hand references to a member's own callbacks to the synthesis pool.
  std::deque<Member> members;
  std::uint32_t partitions = 0;  // of every member so far (the plan's, then the joiners')
  std::uint32_t next = 0;        // next partition to synthesize
  bool intake_open = false;      // members may still join (run_batch_pipeline's `admit`)
  std::size_t joining = 0;       // joiners held open (BatchDoor::Hold)
  std::size_t in_flight = 0;     // taken by a lane and not yet proved (or dropped)
  std::size_t peak_in_flight = 0;
  std::size_t lanes_alive = 0;
  std::deque<Item> ready;  // synthesized and checked, not yet handed to a prove task
  // Prover host working sets (DeviceSet::host_bytes_per_prove each): one
  // reserved for the whole run, more taken without waiting while partitions
  // prove on several devices at once, each given back when its prove ends.
  std::vector<policy::Reservation> free_work_sets;
  std::size_t work_sets_held = 0;
  // Partitions of live members not yet on a device (DeviceSet::Request::undispatched).
  std::uint32_t undispatched = 0;
  // Proved partitions' witness memory, each with its reservation (one
  // witness), for the next syntheses (see the header); at most max_spares,
  // none while a lane waits for memory.
  struct Spare {
    groth16::Witness storage;
    policy::Reservation reservation;
  };
  std::vector<Spare> spares;
  std::size_t max_spares = 0;
  KeptWitnesses* kept = nullptr;    // PipelineDeps::kept: spares outlive the run there
  std::uint64_t witness_bytes = 0;  // the plan's, the kept entries' key
  std::size_t memory_waits = 0;     // lanes waiting for their reservation
  double start_memory_wait_ms = 0;  // the run's first working set (the first partition reports it)
  // The run's first staging slot, made ready for the plan's shape
  // (DeviceBackend::reserve_staging) while the first partitions synthesize;
  // the first partition to prepare takes it (reserve_first_staging).
  StagingPool::Lease first_staging;
  bool reserving_staging = false;
  runtime::Notifier changed;  // anything above changed

  std::uint32_t member_of(std::uint32_t k) const {
    std::uint32_t m = 0;
    while (k >= members[m].first + members[m].count) ++m;
    return m;
  }
  bool stopped(std::uint32_t m) const { return members[m].error.has_value() || members[m].cancel->requested(); }
  bool all_stopped() const {
    for (std::uint32_t m = 0; m < members.size(); ++m)
      if (!stopped(m)) return false;
    return true;
  }
  // Whether a member may still join and be overlapped: the intake is open
  // and a joiner is being prepared or some member is not answered yet.
  bool more_may_come() const {
    if (!intake_open) return false;
    if (joining > 0) return true;
    for (const Member& mb : members)
      if (!mb.result) return true;
    return false;
  }
  void close_intake() {
    if (!intake_open) return;
    intake_open = false;
    changed.notify_all();
  }
  // Answers the stopped members with nothing in flight now rather than when
  // the run ends: a run that members join may go on long after.
  void settle_stopped() {
    for (std::uint32_t m = 0; m < members.size(); ++m)
      if (stopped(m) && members[m].in_flight == 0) settle(m);
  }
  void recount_undispatched() {
    undispatched = 0;
    for (std::uint32_t m = 0; m < members.size(); ++m)
      if (!stopped(m)) undispatched += members[m].count - members[m].dispatched;
  }
  // Keeps a proved partition's witness memory for a later synthesis of the
  // run, or of a later run once nothing is left here (kept), or lets it go
  // (enough kept, or a lane waiting).
  void keep_spare(groth16::Witness& w, policy::Reservation& r) {
    if (memory_waits > 0 || w.aux.capacity() == 0) return;
    if (next >= partitions) {
      if (kept != nullptr) {
        KeptWitnesses::Entry e{witness_bytes, std::move(w), std::move(r)};
        kept->put(e);  // else freed here
      }
      return;
    }
    if (spares.size() >= max_spares) return;
    spares.push_back({std::move(w), std::move(r)});
  }
  // Nothing left to synthesize: the spares go to the engine's kept
  // witnesses (as many as it takes; the rest are freed).
  void shelve_spares() {
    for (Spare& s : spares) {
      if (kept == nullptr) break;
      KeptWitnesses::Entry e{witness_bytes, std::move(s.storage), std::move(s.reservation)};
      kept->put(e);
    }
    spares.clear();
  }
  void fail(std::uint32_t m, Error e) {
    if (!members[m].error) members[m].error = std::move(e);
    recount_undispatched();
    changed.notify_all();
    settle(m);
  }
  // A partition of member m left the pipeline (proved or dropped).
  void release(std::uint32_t m) {
    --in_flight;
    --members[m].in_flight;
    changed.notify_all();
    settle(m);
  }
  // Records (and reports) member m's result once it is known.
  void settle(std::uint32_t m) {
    Member& mb = members[m];
    if (mb.result) return;
    if (mb.proved == mb.count) {
      PipelineOutcome o;
      for (std::uint32_t i = 0; i < mb.count; ++i) {
        o.proofs.push_back(*mb.proofs[i]);
        o.public_inputs.push_back(std::move(mb.inputs[i]));
      }
      o.timings = std::move(mb.timings);
      std::sort(o.timings.begin(), o.timings.end(),
                [](const PartitionTiming& a, const PartitionTiming& b) { return a.partition < b.partition; });
      o.cpu_retries = mb.cpu_retries;
      o.peak_in_flight = peak_in_flight;
      mb.result.emplace(std::move(o));
    } else if (stopped(m) && mb.in_flight == 0) {
      mb.result.emplace(mb.error ? *mb.error : Error{ErrorKind::kCancelled, "cancelled"});
    } else {
      return;
    }
    // Its callbacks are not called again: what they hold goes now (a run
    // that members join may go on long after).
    mb.synthesize = nullptr;
    mb.check = nullptr;
    mb.public_inputs.clear();
    if (mb.on_done) mb.on_done(*mb.result);
    mb.on_done = nullptr;
  }
};

struct Ctx {
  PipelineDeps& deps;
  const PartitionPlan& plan;
  State& st;
  runtime::TaskSet& tasks;                               // lanes, the dispatcher, the prove tasks
  std::list<DeviceSet::Placement>& placements;           // each member's job on each device it proved on
  std::vector<std::pair<JobId, std::uint32_t>>& placed;  // (job, slot index) of placements
  bool stopped(std::uint32_t k) const { return st.stopped(st.member_of(k)); }
  JobId job_of(std::uint32_t k) const { return st.members[st.member_of(k)].job; }
  std::uint32_t local(std::uint32_t k) const { return k - st.members[st.member_of(k)].first; }
  void stage(std::uint32_t k, std::string_view s) const {
    const Member& mb = st.members[st.member_of(k)];
    if (mb.own) {
      if (mb.on_stage) mb.on_stage(k - mb.first, s);
    } else if (plan.on_stage) {
      plan.on_stage(k, s);
    }
  }
  void fail(std::uint32_t k, const Error& e) const { st.fail(st.member_of(k), about_partition(local(k), e)); }
};

// Milliseconds since t0, for a partition's stage timings.
inline double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Every change a waiter of the run may be waiting for notifies st.changed:
// the run's own steps, a member's cancel request and memory given back to
// the budget (both subscribed for the run). No waiter polls.
inline asio::awaitable<void> changed(State& st) { co_await st.changed.wait(); }

// One synthesis lane of a run (engine/pipeline_lane.cpp): takes the next
// partition of a live member while the in-flight bound and the budget allow,
// synthesizes and checks it on the synthesis pool, and queues it in st.ready
// for the dispatcher. run_batch_pipeline spawns `synthesis_lanes` of them.
asio::awaitable<void> lane(Ctx c);

}  // namespace cuzk::engine::pipeline_detail
