// The proving pipeline of one job (or of a batch of jobs of one circuit),
// partition by partition, on the loop:
//
//   lanes (<= synthesis_lanes, on the synthesis pool)     per ready partition, a prove task:
//   reserve 1 x witness --> synthesize k --> check k -->  a prover working set --> prepare k
//   (written in place)                                      --> device wait (any GPU, by priority)
//                                                           --> prove k (that back end's thread)
//                                                           --> verify k (retry once elsewhere)
//                                                           --> free k's reservation
//                                                               (or keep it as a spare)
//
// so synthesis of partitions N+1.. overlaps the proving of partition N, the
// partitions of one job prove on every GPU worth using at once (DeviceSet,
// engine/dispatch.hpp), and the partitions in memory are bounded twice: by
// max_in_flight (synthesizing or waiting or proving) and by the host-memory
// budget (each partition holds a reservation sized from its real witness
// until it is proved). The prover's own host working set
// (DeviceSet::host_bytes_per_prove) is reserved once BEFORE any lane starts:
// reserved later it could wait forever behind the witnesses it is meant to
// consume. Proving on a second device at once needs a second working set:
// taken only if the budget has it now, given back after that proof is
// verified.
//
// A proved partition's witness memory is kept, with its reservation, as a
// spare for the next synthesis of the run (at most one per lane): a 32 GiB
// PoRep witness is 4.2 GB, and the kernel's clearing of that many fresh pages
// cost 2-8 s per partition on the dev VM. Once nothing is left to synthesize,
// spares go to the engine's KeptWitnesses (below) for the next run. A lane
// that would wait for memory gives every spare back first.
//
// Every proof is verified right after it is proved, while its witness is
// still in memory: a GPU proof that does not verify is proved again on the CPU
// back end (logged and counted); a GPU that throws (device out of memory...)
// hands the partition to another GPU when there is one; a CPU proof that does
// not verify, or a throw with no other GPU, fails the job as internal. A
// witness the prover's fused check finds unsatisfied (PartitionPlan::
// satisfaction) is the input's fault: the job fails as invalid input, with
// no retry anywhere.
//
// Also here: MemoryGate (the MemoryBudget awaited from coroutines) and
// DeviceSet (the back ends, their loop-side locks and wait queue, partition
// dispatch, placement and activity). Loop-thread only, like the engine.
#pragma once

#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/backend.hpp"
#include "engine/dispatch.hpp"
#include "engine/host_srs.hpp"
#include "engine/types.hpp"
#include "engine/views.hpp"
#include "groth16/verifier.hpp"
#include "policy/memory_budget.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/cancel_flag.hpp"
#include "runtime/log.hpp"
#include "runtime/notifier.hpp"

namespace cuzk::engine {

// policy::MemoryBudget on the loop, with waiting as a co_await.
class MemoryGate {
 public:
  // critical_overdraft_bytes: see policy::BudgetConfig.
  MemoryGate(asio::any_io_executor loop, std::uint64_t total_bytes, std::uint64_t critical_overdraft_bytes = 0);
  ~MemoryGate();  // every reservation must be gone
  MemoryGate(const MemoryGate&) = delete;
  MemoryGate& operator=(const MemoryGate&) = delete;

  // Waits, by priority, until `bytes` are reserved. Errors: kInternal when the
  // request exceeds the budget less what charge() holds for good (it could
  // only wait forever: a configuration error), kOverloaded when the wait
  // queue is full, kCancelled as soon as `cancel` is requested.
  asio::awaitable<Result<policy::Reservation>> reserve(std::uint64_t bytes, Priority priority,
                                                       const runtime::CancelFlag& cancel);
  // Charges memory that is already in use and stays (loaded parameters), at
  // once, even past the total. Empty (untracked) only when a CRITICAL waiter
  // is queued.
  policy::Reservation charge(std::uint64_t bytes);
  // Like charge() for memory that may be given back (an evictable parameter
  // set, engine.cpp "SRS residency"): not counted as held for good.
  policy::Reservation charge_evictable(std::uint64_t bytes);
  // Now or never (nullopt): for memory that only speeds things up (a second
  // prover working set when a job proves on two GPUs at once).
  std::optional<policy::Reservation> try_reserve(std::uint64_t bytes, Priority priority);
  policy::MemoryBudget& budget() { return budget_; }
  policy::BudgetStats stats() const { return budget_.stats(); }
  std::uint64_t total_bytes() const { return budget_.total_bytes(); }
  // Emitted whenever bytes go back to the budget (or it grows): a wait for
  // try_reserve() to succeed subscribes instead of polling.
  runtime::Signal::Subscription on_freed(std::function<void()> fn) { return freed_.subscribe(std::move(fn)); }

 private:
  policy::MemoryBudget budget_;
  runtime::Notifier ready_;
  runtime::Signal freed_;
  std::uint64_t permanent_bytes_ = 0;  // charged by charge(): never given back while the engine runs
};

// The back ends: GPUs (index 0..n-1 in the order given) and the CPU, the
// loop-side lock of each, and the queue of provers waiting for one. A waiter
// is either a partition (acquire(): any GPU, by the dispatch rule of
// engine/dispatch.hpp) or a holder of one given back end (lock(): a CPU
// retry, a device-SRS release). Whenever a device frees or a waiter comes,
// the waiters are offered the free devices in priority order (CRITICAL
// first, FIFO within a priority).
class DeviceSet {
 public:
  struct Slot {
    Slot(std::shared_ptr<DeviceBackend> b, std::uint32_t i) : backend(std::move(b)), index(i) {}
    std::shared_ptr<DeviceBackend> backend;
    std::uint32_t index;
    bool busy = false;         // a prove (or GPU setup, or an SRS release) holds the device
    std::uint64_t grants = 0;  // times granted: the holder's Lock carries the number of its grant
    std::string proving_srs;   // the SRS of the prove holding it ("" none): resident once it ends
    std::uint32_t jobs = 0;    // jobs with a partition proved here that are still running (load)
    // Activity, for status.
    std::optional<JobId> job;
    std::optional<std::uint32_t> partition;
    std::string stage = "idle";
    std::uint64_t proofs_done = 0;
    std::uint64_t verify_failures = 0;  // proofs that did not verify (then retried on the CPU)
    std::uint64_t prove_errors = 0;     // prove() threw (then retried on another GPU)
    // The SRS left on the device by the last prove (keeps_srs_resident back ends).
    std::string resident_srs;
    std::uint64_t resident_srs_bytes = 0;
    // Its page-locked host part, streamed to the device by every proof (the
    // back end's ResidentSrsSplit), and that part's evictable charge on the
    // MemoryGate, held while the SRS stays resident (note_resident_srs).
    std::uint64_t resident_srs_pinned_bytes = 0;
    policy::Reservation resident_srs_pinned_charge;
  };

  // The device lock: held across a prove; RAII. Unlocking offers the device
  // to the waiters.
  class Lock {
   public:
    Lock() = default;
    Lock(DeviceSet* set, Slot* s) : set_(set), slot_(s), grant_(s->grants) {}
    Lock(Lock&& o) noexcept : set_(o.set_), slot_(std::exchange(o.slot_, nullptr)), grant_(o.grant_) {}
    Lock& operator=(Lock&& o) noexcept;
    ~Lock() { unlock(); }
    void unlock();
    bool held() const { return slot_ != nullptr; }
    Slot& slot() const { return *slot_; }

   private:
    DeviceSet* set_ = nullptr;
    Slot* slot_ = nullptr;
    std::uint64_t grant_ = 0;  // unlock() aborts unless the slot is still held under this grant
  };

  // A job counted on a slot (Slot::jobs) while it runs there; RAII.
  class Placement {
   public:
    Placement() = default;
    explicit Placement(Slot* s) : slot_(s) { ++slot_->jobs; }
    Placement(Placement&& o) noexcept : slot_(std::exchange(o.slot_, nullptr)) {}
    Placement& operator=(Placement&&) = delete;
    ~Placement() {
      if (slot_) --slot_->jobs;
    }
    Slot& slot() const { return *slot_; }

   private:
    Slot* slot_ = nullptr;
  };

  // What a partition asks acquire() for.
  struct Request {
    JobId job = 0;
    Priority priority = Priority::kNormal;
    std::string srs_key;                          // its parameter set (residency)
    const groth16::Parameters* params = nullptr;  // for the upload estimate (may be null: none)
    // Live count of the job's (batch's) partitions not yet on a device, this
    // one included; owned by the caller, outlives the wait. Null: 1.
    const std::uint32_t* undispatched = nullptr;
    const Slot* exclude = nullptr;  // a GPU that just failed this partition
  };

  // Parameter sets a critical lane proves: bases of at most this many bytes
  // (a 32 GiB WinningPoSt's 0.24 GB, 2 KiB and demo sets).
  static constexpr std::uint64_t kLaneSrsMaxBytes = std::uint64_t{1} << 30;
  // Whether this set is one a lane proves (there are lanes, and its bases
  // are at most kLaneSrsMaxBytes).
  bool lanes_take(const groth16::Parameters& params) const {
    return !lanes_.empty() && params_host_bytes(params) <= kLaneSrsMaxBytes;
  }

  // `gpus` whose back end is a critical lane (DeviceBackend::critical_lane)
  // become lanes, the others the GPUs of the dispatch rule. Slot indices:
  // the GPUs, the CPU, then the lanes.
  DeviceSet(asio::any_io_executor loop, std::shared_ptr<DeviceBackend> cpu,
            std::vector<std::shared_ptr<DeviceBackend>> gpus);
  ~DeviceSet();  // no waiter may be left

  bool has_gpu() const { return !gpus_.empty(); }
  std::size_t gpu_count() const { return gpus_.size(); }
  Slot& gpu(std::size_t i) { return *gpus_.at(i); }
  Slot& cpu() { return *cpu_; }
  bool is_cpu(const Slot& s) const { return &s == cpu_.get(); }
  // The critical lanes: taken only by lock(), never by acquire()'s rule.
  std::size_t lane_count() const { return lanes_.size(); }
  Slot& lane(std::size_t i) { return *lanes_.at(i); }
  // A lane no prove holds and no waiter has asked for, or null.
  Slot* free_lane();
  // A device for one partition: a GPU by the dispatch rule (the CPU when
  // there is no GPU), waited for by priority.
  asio::awaitable<Lock> acquire(Request request);
  // That back end, waited for by priority.
  asio::awaitable<Lock> lock(Slot& slot, Priority priority = Priority::kNormal);
  // Whether acquire(r) would be granted a GPU at once: one is free for it by
  // the dispatch rule and no waiter of the same or a higher priority is ahead.
  bool would_grant_now(const Request& r);
  // A GPU prove of `srs_key` took `prove_ms` (uploading the SRS first or not):
  // refines the dispatch estimates.
  void record_prove(const std::string& srs_key, double prove_ms, bool uploaded);
  // Host bytes one prove needs besides the witness on the back end that needs
  // the most (GPUs when there are any): the pipeline's working-set unit.
  std::uint64_t host_bytes_per_prove(const groth16::R1cs& r1cs) const;

  std::vector<DeviceWorkerView> views() const;
  std::uint64_t cpu_retries() const { return cpu_retries_; }
  void count_cpu_retry() { ++cpu_retries_; }
  std::size_t waiters() const { return waiters_.size(); }
  // `fn` runs on the loop whenever a device is granted or given back.
  runtime::Signal::Subscription on_change(std::function<void()> fn) { return changed_.subscribe(std::move(fn)); }

 private:
  struct Waiter {
    Priority priority;
    std::uint64_t seq;
    Slot* pinned = nullptr;  // lock(): this back end only
    Request request;         // acquire()
    Slot* granted = nullptr;
  };
  // Offers the free devices to the waiters, in priority order.
  void dispatch();
  Slot* choose_for(const Waiter& w);
  void grant(Waiter& w, Slot* slot);
  asio::awaitable<Lock> wait_in_queue(Waiter w);

  std::vector<std::unique_ptr<Slot>> gpus_;
  std::unique_ptr<Slot> cpu_;
  std::vector<std::unique_ptr<Slot>> lanes_;
  std::uint64_t cpu_retries_ = 0;
  std::list<Waiter> waiters_;  // service order
  std::uint64_t next_seq_ = 0;
  runtime::Notifier granted_;                           // a waiter was granted a device
  runtime::Signal changed_;                             // on_change()
  std::map<std::string, DispatchEstimates> estimates_;  // by SRS key
};

// Measured per partition (the structured timing log and the job's timings).
struct PartitionTiming {
  std::uint32_t partition = 0;
  std::string device;
  double synthesis_ms = 0, check_ms = 0, device_wait_ms = 0, prove_ms = 0, verify_ms = 0;
  // Waiting for the host-memory budget: the synthesis reservation, the
  // prover working set, and for a run's first partition the run's first
  // working set.
  double memory_wait_ms = 0;
  ProveBreakdown breakdown;
  bool retried_on_cpu = false;
};

struct PartitionPlan {
  JobId job = 0;
  Priority priority = Priority::kNormal;
  std::string srs_key;  // identifies the parameters (residency)
  std::uint32_t partitions = 1;
  std::uint64_t witness_bytes = 0;  // one partition's witness (host)
  std::size_t synthesis_lanes = 1;  // partitions synthesized at once
  std::size_t max_in_flight = 2;    // partitions reserved and not yet proved (>= lanes)
  const groth16::Parameters* params = nullptr;
  const groth16::R1cs* r1cs = nullptr;
  const groth16::PreparedVerifyingKey* pvk = nullptr;
  // The host copy of params' bases, released while every GPU holds them and
  // read back before a back end that does not (engine/host_srs.hpp); null:
  // always kept (small sets, sets not on disk, the CPU-only daemon).
  HostSrsCopy* host_copy = nullptr;
  // On the loop when the host copy changes: `released_bytes` given back to
  // the kernel (0: read back whole), for the memory budget's books.
  std::function<void(std::uint64_t released_bytes)> on_host_copy;
  // Per partition, ONE excluded, derived from public data (PoRep). Empty:
  // each proof is verified against its own witness's inputs (demo circuit).
  std::vector<std::vector<ff::Fr>> public_inputs;
  // On the synthesis pool: partition k's witness, or a typed error.
  // `storage` is a proved partition's witness whose memory may be reused
  // (its pages already faulted in), or empty.
  std::function<Result<groth16::Witness>(std::uint32_t k, groth16::Witness storage)> synthesize;
  // On the synthesis pool after synthesize: cheap checks (shape, inputs,
  // satisfaction); nullopt when fine. May be empty.
  std::function<std::optional<Error>(std::uint32_t k, const groth16::Witness& w)> check;
  // kCheck: the prover checks every constraint while it evaluates a, b, c
  // (DeviceBackend::prepare; one Fr multiplication per row instead of a
  // second pass over the R1cs in `check`). A witness that does not satisfy
  // the circuit fails its member as kInvalidInput "partition k: unsatisfied:
  // constraint r does not hold", with no retry on another back end.
  groth16::SatisfactionCheck satisfaction = groth16::SatisfactionCheck::kSkip;
  // A partition that finds no GPU free races the CPU: the CPU proves a copy
  // of it while it waits for a GPU, and the first verified proof answers
  // (WinningPoSt: a GPU held by a long partition or an SRS upload must not
  // cost a block). Both provers run to their end; the partition fails only
  // when both fail. Small circuits only: the copy's witness and the CPU's
  // working set are not reserved on the memory budget.
  bool race_on_cpu = false;
  // On the loop, at every stage change of a partition (job stage for status).
  std::function<void(std::uint32_t k, std::string_view stage)> on_stage;
};

struct PipelineOutcome {
  std::vector<groth16::Proof> proofs;              // partition order, each verified
  std::vector<std::vector<ff::Fr>> public_inputs;  // what each proof was verified against
  std::vector<PartitionTiming> timings;
  std::uint32_t cpu_retries = 0;
  std::size_t peak_in_flight = 0;
};

// After a prove on slot's keeps_srs_resident back end: srs_id is resident
// there, srs_device_bytes(params) on the device and the back end's reported
// pinned host part beside it; that part is charged to `memory` at once
// (memory already in use, so even past the total), evictably: evicting the
// set releases the device copy and clear_resident_srs gives it back.
void note_resident_srs(DeviceSet::Slot& slot, const std::string& srs_id, const groth16::Parameters& params,
                       MemoryGate& memory);
// The back end has released the resident SRS.
void clear_resident_srs(DeviceSet::Slot& slot);

// A set's host copy of its bases may go once every GPU holds them
// (DeviceBackend::holds_srs), and every critical lane too for a set of at
// most kLaneSrsMaxBytes; false without GPUs or when already released.
bool host_copy_releasable(DeviceSet& devices, const HostSrsCopy* copy, const groth16::Parameters& params);
// Releases `copy` on a `cpu` worker unless a back end reads it now (51 GB
// take a moment); `books(bytes)` and a log line when it went.
asio::awaitable<void> release_host_copy(HostSrsCopy* copy, runtime::WorkerPool& cpu,
                                        std::function<void(std::uint64_t)> books, runtime::Logger& log,
                                        std::string srs_id);

class StagingPool;  // engine/staged_prove.hpp
// Staging slots (and prover working sets) a pipeline uses at most: two per
// GPU (one instance on the device, the next preparing), one without GPUs.
std::size_t staging_slots(const DeviceSet& devices);

// Witness memory kept between runs, each buffer with its reservation (one
// witness of `witness_bytes`): a run's spares land here once it has nothing
// left to synthesize, and the next run of the same witness size synthesizes
// its first partitions into them instead of faulting fresh pages in (a lone
// warm 32 GiB PoRep job on an H100 host: its first five syntheses took
// 2.4-4.6 s on fresh memory, the later ones 1.5-2.0 s on reused). At most
// max_count; the engine gives them back with its idle stagings
// (EngineConfig::staging_keep_idle) or at once when a reservation waits.
// Loop thread only.
class KeptWitnesses {
 public:
  struct Entry {
    std::uint64_t witness_bytes = 0;
    groth16::Witness storage;
    policy::Reservation reservation;
  };
  explicit KeptWitnesses(std::size_t max_count) : max_count_(max_count) {}
  // Keeps `e` when there is room, else leaves it with the caller (to free).
  bool put(Entry& e);
  // One entry of that witness size, or nullopt.
  std::optional<Entry> take(std::uint64_t witness_bytes);
  std::vector<Entry> take_all() { return std::exchange(entries_, {}); }
  std::size_t size() const { return entries_.size(); }
  std::uint64_t reserved_bytes() const;

 private:
  std::size_t max_count_;
  std::vector<Entry> entries_;
};

struct PipelineDeps {
  runtime::WorkerPool& synthesis;  // lanes run here
  runtime::WorkerPool& cpu;        // verification, and the staged prove's host steps (prepare, finish)
  DeviceSet& devices;
  MemoryGate& memory;
  runtime::Logger& log;
  // Staging slots of the staged prove, shared by every run (their page-locked
  // buffers are kept for the next instance); null: a pool per run.
  StagingPool* stagings = nullptr;
  // Witness memory shared by every run (the engine's); null: none kept
  // beyond a run.
  KeptWitnesses* kept = nullptr;
};

// Runs the plan. Errors: the first partition's failure (synthesis, checks,
// budget, a proof invalid even on the CPU), or kCancelled once `cancel` is
// set (checked between stages; every reservation is given back on return).
asio::awaitable<Result<PipelineOutcome>> run_partition_pipeline(PipelineDeps deps, const PartitionPlan& plan,
                                                                const runtime::CancelFlag& cancel);

// A batch: several jobs of one circuit sharing ONE pipeline (lanes, the
// in-flight bound, the prover working sets), partitions taken member by
// member so that the GPUs never wait for a job's first synthesis. The plan's
// partitions are the members' in order (plan.partitions = their sum; its
// callbacks and public_inputs take that global index; plan.job is unused),
// except for members that bring their own callbacks (PlanMember::synthesize),
// as members that join the running pipeline do (BatchDoor). A member's
// failure or cancel ends that member alone, and it is answered as soon as
// nothing of it is in flight.
struct PlanMember {
  JobId job = 0;
  std::uint32_t partitions = 0;
  const runtime::CancelFlag* cancel = nullptr;  // the job's flag; outlives the run
  // Called once, on the loop, as soon as the member's result is known (its
  // last partition proved, or it failed or was cancelled and nothing of it
  // is in flight): the batch's first job need not wait for the others. May
  // be empty.
  std::function<void(const Result<PipelineOutcome>&)> on_done;
  // The member's own work, by ITS partition index i (0..partitions-1). When
  // `synthesize` is set the member uses these and none of the plan's
  // callbacks or public_inputs (empty public_inputs here: each proof is
  // verified against its witness's inputs; empty check, on_stage: none).
  // A member that joins a running pipeline (BatchDoor::add) must bring
  // them: the plan is fixed when the run starts.
  std::function<Result<groth16::Witness>(std::uint32_t i, groth16::Witness storage)> synthesize;
  std::function<std::optional<Error>(std::uint32_t i, const groth16::Witness& w)> check;
  std::vector<std::vector<ff::Fr>> public_inputs;
  std::function<void(std::uint32_t i, std::string_view stage)> on_stage;
};

// The intake of a running batch pipeline, for members that join it while it
// runs (a PoRep job queued while the previous one proves). Given to the
// run's `admit` task, valid until that task returns. Loop-thread only.
//
// The intake stays open while the pipeline could still use a joiner: some
// member is unanswered (its partitions synthesize or prove) or a joiner is
// being prepared (a Hold). Meanwhile idle lanes wait instead of ending, so a
// joiner's partitions get every lane the moment it is added. Once closed
// (nothing left that a joiner could overlap), the run ends.
class BatchDoor {
 public:
  // A joiner being prepared (its C1 parsed, its inputs derived): keeps the
  // intake open until it is added or given up. RAII.
  class Hold {
   public:
    explicit Hold(BatchDoor* door) : door_(door) {}
    Hold(Hold&& o) noexcept : door_(std::exchange(o.door_, nullptr)) {}
    Hold& operator=(Hold&&) = delete;
    ~Hold() {
      if (door_) door_->release_hold();
    }

   private:
    BatchDoor* door_;
  };

  virtual bool open() const = 0;
  // Members not yet answered, plus joiners held (being prepared).
  virtual std::size_t unfinished() const = 0;
  Hold hold() {
    take_hold();
    return Hold(this);
  }
  // Appends m (which must have its own synthesize, a cancel flag and at
  // least one partition) after every partition queued so far, at the plan's
  // priority, within the same in-flight bound, memory budget and working
  // sets. False when the intake is closed or m is malformed: m is not run.
  virtual bool add(PlanMember m) = 0;
  // Until the pipeline's state changes (a partition taken or proved, a
  // member answered, the intake closed) or wake() is called.
  virtual asio::awaitable<void> wait() = 0;
  // Wakes wait() (something outside the run changed: the job queue).
  virtual void wake() = 0;

 protected:
  ~BatchDoor() = default;
  virtual void take_hold() = 0;
  virtual void release_hold() = 0;
};

// Runs on the pipeline's task set from its start: adds members through the
// door while it is open, and returns once it is closed (within `wait`'s
// timeout) or it wants no more. Never throws but for cancellation.
using BatchAdmitter = std::function<asio::awaitable<void>(BatchDoor& door)>;

// One result per member, in order (its proofs, inputs and timings by its own
// partition index); the initial members first, then the joined ones in the
// order they were added. `admit`: members may join while it runs (empty:
// none).
asio::awaitable<std::vector<Result<PipelineOutcome>>> run_batch_pipeline(PipelineDeps deps, const PartitionPlan& plan,
                                                                         std::vector<PlanMember> members,
                                                                         BatchAdmitter admit = {});

// Peak resident set size of the process (VmHWM), bytes; 0 if unknown.
std::uint64_t peak_resident_bytes();

// Whether an exception is asio's operation_aborted: the engine's coroutines
// are being torn down (shutdown), not a failure of the work.
bool is_cancellation(const std::system_error& e);

}  // namespace cuzk::engine
