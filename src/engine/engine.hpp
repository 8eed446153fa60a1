// The job engine: admission, the priority queue, workers running the proof
// pipeline on the CPU pool, results, cancellation, status and metrics.
//
// Threading: every public method runs on the loop thread (the one running the
// executor passed in). Pipeline stages run on the WorkerPool through
// runtime::run_on; the only state they share with the loop is the job's
// atomic cancel flag.
//
// The pipeline of one job is a short list of stages, each a co_await:
//   params    (ParamStore: cached, read from disk, or development-generated)
//   synthesis (witness generation)
//   prove     (CPU Groth16 prover)
//   verify    (every proof is verified before it is returned)
// A PoRep C2 job (or a batch of them, one sector size) runs c1 (parse) ->
// params -> inputs -> the partition pipeline (engine/pipeline.hpp: synthesis,
// each partition proved on the first suitable GPU and verified) -> the batch
// verification of the job's partitions.
// Cancellation of a running job is cooperative: the flag is checked between
// stages, so a cancel takes effect within one stage.
//
// Shutdown: drain() stops admission, leaves queued jobs for the next start
// (with a journal; without one they are cancelled), lets running jobs finish
// for up to `drain_timeout`, then stops them (with a journal they run again
// at the next start), stops the workers and joins every coroutine the engine
// started.
#pragma once

#include <asio.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/backend.hpp"
#include "engine/host_srs.hpp"
#include "engine/param_store.hpp"
#include "engine/pipeline.hpp"
#include "engine/staged_prove.hpp"
#include "engine/policy.hpp"
#include "engine/types.hpp"
#include "engine/views.hpp"
#include "policy/clock.hpp"
#include "policy/srs_manager.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/log.hpp"
#include "runtime/loop_clock.hpp"
#include "runtime/notifier.hpp"
#include "runtime/signal.hpp"
#include "runtime/task_set.hpp"
#include "util/thread_pool.hpp"
#include "util/thread_pool_set.hpp"

namespace cuzk::engine {

struct EngineConfig {
  std::size_t max_concurrent_jobs = 1;  // worker coroutines (jobs in flight)
  // Further workers that take CRITICAL jobs only (WinningPoSt's default
  // priority), each with its own synthesis thread: a WinningPoSt never waits
  // for a worker held by a PoRep batch or for synthesis lanes busy with its
  // partitions, and its partition is served first by the memory budget and
  // the device queue (both by priority). 0: critical jobs wait for a worker.
  std::size_t critical_workers = 1;
  // A WinningPoSt that finds no GPU free (a long partition or an SRS upload
  // holds them) is also proved on a free critical lane (DeviceSet::lane),
  // else on the CPU; the first verified proof answers.
  bool winning_post_cpu_race = true;
  AdmissionPolicy admission;
  std::chrono::milliseconds result_ttl{std::chrono::minutes(10)};
  std::uint32_t max_demo_log_domain = 16;  // demo sizes 3..16 (2^16 constraints)
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
  // Durable job journal in this directory (engine/job_journal.hpp): accepted
  // jobs resume after a crash or restart, results stay awaitable for
  // result_ttl. Empty: jobs live in memory only.
  std::filesystem::path journal_dir;
  // Tests: JobJournalConfig::before_write (simulates a slow disk).
  std::function<void(std::string_view event)> journal_before_write;
  // Host-memory budget (bytes) for partition witnesses, prover working sets
  // and loaded parameters; 0: unlimited. The daemon resolves "auto".
  std::uint64_t memory_budget_bytes = 0;
  // Critical jobs (WinningPoSt) may take the budget this far past its total
  // (at most a 16th of it; policy::BudgetConfig): a WinningPoSt's working set
  // (~0.1 GB at 32 GiB) never waits for a PoRep or SnapDeals partition to be
  // proved (it waited ~1.7 s during a SnapDeals job on an H100).
  std::uint64_t memory_critical_overdraft_bytes = std::uint64_t{1} << 30;
  // PoRep C2 per-partition pipeline (engine/pipeline.hpp).
  // Threads that synthesize one partition's challenges in parallel, a pool
  // per lane that also runs the partition's checks; 0 or 1: each lane
  // synthesizes its partition sequentially (~10.5 s for 32 GiB on the H200
  // host). Sequential is the default because it costs the least CPU: with
  // 4-thread pools a 32 GiB partition took 6.4-11.7 s of wall time on 4
  // threads (~28 thread-s against 10.5 sequentially: the parts' merge and
  // fresh allocations), and on the 16-core H200 host the pipeline became
  // CPU-bound at ~5 s per partition (75-76 s for 10, bench/RESULTS.md).
  std::size_t porep_synthesis_threads = 1;
  // Partitions synthesized at once; 0: cores / synthesis threads (>= 1), or
  // cores / 2 when synthesis is sequential, and with GPUs at most two per
  // GPU plus two (Engine::pipeline_lanes).
  std::size_t porep_synthesis_lanes = 0;
  std::size_t porep_max_partitions_in_flight = 0;  // reserved and not yet proved; 0: lanes + 1
  bool porep_check_satisfaction = true;            // R1cs satisfaction check of each witness before proving
  // Parameter-set residency (policy::SrsManager, "SRS residency" in
  // engine.cpp). A set nobody uses for as long as reloading it would take
  // (its bytes at srs_reload_bytes_per_s; 0: no such rule), and at most
  // srs_min_idle, is evicted from host memory, least recently used first,
  // while the sets held exceed srs_max_host_bytes or host-memory requests
  // wait; UINT64_MAX: kept
  // until explicitly evicted or memory is short. Checked every
  // srs_sweep_period (on `clock`, below).
  std::chrono::milliseconds srs_min_idle{std::chrono::minutes(5)};
  std::uint64_t srs_reload_bytes_per_s = std::uint64_t{954} << 20;  // ~1.0 GB/s: one NVMe read
  std::uint64_t srs_max_host_bytes = UINT64_MAX;
  // The host copy of a large set's bases (>= 1 GiB, read from a file) is
  // released while every GPU holds them in device memory and read back from
  // the file when a back end needs them again (engine/host_srs.hpp): a warm
  // 32 GiB PoRep daemon holds 51 GB less. False: always kept (a host whose
  // GPUs alternate large sets would read them back at every switch).
  bool srs_release_host_copy = true;
  // The least bytes of bases a set read from a file needs for its host copy
  // to be released (HostSrsCopy::kMinBytes; tests lower it to release the
  // copies of 2 KiB sets).
  std::uint64_t srs_host_copy_min_bytes = HostSrsCopy::kMinBytes;
  std::chrono::milliseconds srs_sweep_period{std::chrono::seconds(5)};
  // The staging slots' page-locked buffers (a 32 GiB PoRep's: the 4.2 GB
  // witness, two slots per GPU) are kept this long once the engine is idle,
  // for the next job's first partitions, and given back at the first sweep
  // after it, or at once while host-memory requests wait. Pinning them again
  // took a lone warm job's partition 2.6 s and stalled the device step beside
  // it (its H stage 3.3 s against 0.33-0.40; H100 host, bench/RESULTS.md).
  // Idle stagings are outside the memory budget. 0: given back at once.
  std::chrono::milliseconds staging_keep_idle{std::chrono::minutes(2)};
  // The clock of every decision in time (await and drain deadlines, batch
  // windows, result expiry, SRS idle time and sweeps); tests inject a
  // runtime::ManualLoopClock. Null: a steady clock owned by the engine.
  runtime::LoopClock* clock = nullptr;
  // Batching of demo jobs of one size (they share parameters and R1cs): up to
  // batch_max_size queued jobs of the head's priority share ONE partition
  // pipeline (the SRS stays on the device; one member's host step overlaps
  // the previous member's device step). batch_max_wait 0: take only what is already queued, never
  // wait; otherwise wait up to that long for more while nothing else is
  // queued (a job the batch cannot take, e.g. of higher priority, flushes it
  // at once). CRITICAL jobs never wait.
  std::size_t batch_max_size = 4;  // 1: no batching
  std::chrono::milliseconds batch_max_wait{0};
  // Batching of PoRep C2 jobs of one sector size, by the same rules: up to
  // porep_batch_max_jobs share ONE partition pipeline (lanes, in-flight
  // bound, prover working sets), their partitions taken job by job, so the
  // GPUs never wait for the next job's first synthesis; each job is answered
  // as soon as its own partitions are proved. A batch holds its worker
  // until its last job's partitions are proved (more workers let a later,
  // more urgent job in meanwhile). 1: each job its own pipeline.
  std::size_t porep_batch_max_jobs = 2;
  std::chrono::milliseconds porep_batch_max_wait{0};
  // A PoRep job queued while a PoRep pipeline of its sector shape and
  // priority runs joins that pipeline (up to porep_batch_max_jobs members
  // unanswered at once; decide_join in policy.hpp): its partitions
  // synthesize in the lanes the running job's partitions leave, so the GPU
  // does not wait for its first wave. Without it, a job submitted just after
  // the worker took the previous one waited for that job's whole pipeline,
  // then left the GPU idle ~15 s while its first wave synthesized (32 GiB,
  // H200 host: 31.2 s of pipeline for 10 x 1.54 s of GPU work).
  bool porep_join_running_batch = true;
  // Batching of SnapDeals jobs of one sector size, by the rules of PoRep's:
  // up to snap_batch_max_jobs share ONE partition pipeline (a 32 GiB job is
  // 16 partitions of 81M constraints), so the GPUs do not idle while the
  // next job's first partitions synthesize; each job is answered as soon as
  // its own partitions are proved; a job queued while a batch of its set
  // and priority runs joins it (decide_join). 1: each job its own pipeline.
  std::size_t snap_batch_max_jobs = 2;
  std::chrono::milliseconds snap_batch_max_wait{0};
};

class JobJournal;

class Engine {
 public:
  Engine(asio::any_io_executor loop, runtime::WorkerPool& cpu, ThreadPool& math, ParamStore& params,
         runtime::Logger& log, EngineConfig config);
  // Must be drained first if it was started.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Before start(): the GPU back ends (jobs go to them when present; the CPU
  // back end always exists, for GPU-less hosts and for re-proving a GPU proof
  // that failed verification).
  void set_gpu_backends(std::vector<std::shared_ptr<DeviceBackend>> gpus);
  // Before start(): the generator of PoRep development parameters (a GPU
  // one); unset, the CPU's groth16::generate_parameters.
  void set_dev_params_generator(DevParamsGenerator generator);

  // Recovers the journal's jobs first (throws JobJournalError when it cannot
  // be opened); call before submit().
  void start();

  // Admits a job, or returns the existing job for a repeated request id.
  // With a journal it waits (blocking the loop) for the durable record:
  // tests and in-process callers; the RPC server uses submit_durable.
  Result<JobView> submit(JobRequest request);
  // submit() whose journal write runs on the journal writer thread: the loop
  // keeps serving meanwhile, the job id is returned once the record is on
  // disk. The job id and request id are reserved on the loop first, so a
  // resubmit of the same request id while the write is in flight waits for
  // it and returns the same job; a failed write fails every such submit
  // (kInternal) and frees the request id. Without a journal: submit().
  asio::awaitable<Result<JobView>> submit_durable(JobRequest request);
  // Waits for the job's result; timeout 0 = no deadline. The error arm carries
  // the job's failure, kCancelled, kNotFound or kTimeout.
  asio::awaitable<Result<JobOutcome>> await(JobKey key, std::chrono::milliseconds timeout);
  Result<JobView> cancel(const JobKey& key);
  EngineStatus status() const;
  std::string metrics() const;  // Prometheus text exposition
  // Parameter sets by id: "demo-<log2 domain>" or "porep-<sector size>"
  // ("porep-2KiB" .. "porep-64GiB"). preload loads (or generates) the set,
  // makes its SRS resident on every GPU (then releasing the set's host copy
  // of the bases, engine/host_srs.hpp) and leaves it resident, idle from now
  // (srs_min_idle applies); a failed upload is logged and fails nothing
  // (ParamsInfo::gpus_holding counts the GPUs that hold it). evict drops the
  // host copy, its budget charge and any device copy; refused with
  // kOverloaded while a job holds the set (not deferred), kNotFound when not
  // resident.
  asio::awaitable<Result<ParamsInfo>> preload(std::string srs_id);
  Result<bool> evict(const std::string& srs_id);

  using Subscriber = std::function<void(const JobEvent&)>;
  std::uint64_t subscribe(Subscriber fn);
  void unsubscribe(std::uint64_t token);
  // `fn` runs on the loop after anything status() shows may have changed: a
  // job event, a worker going idle, a parameter set evicted or released from
  // a device, an SRS sweep. For watchers that would otherwise poll status().
  runtime::Signal::Subscription on_change(std::function<void()> fn) { return changed_.subscribe(std::move(fn)); }

  asio::awaitable<void> drain();
  bool draining() const { return draining_; }
  // Requests cancellation of every running job (operator's second SIGTERM
  // during a drain); each stops at its next stage boundary.
  void cancel_running();
  // SIGHUP reload (daemon.cpp): new admission limits and demo size bound for
  // the submissions that follow. Precondition: reserved_for_urgent < capacity.
  void reconfigure(AdmissionPolicy admission, std::uint32_t max_demo_log_domain);

 private:
  struct Job;
  using JobPtr = std::shared_ptr<Job>;

  // Workers 0..max_concurrent_jobs-1 take any job; the critical_workers
  // after them take CRITICAL jobs only.
  asio::awaitable<void> worker(std::uint32_t index);
  std::optional<JobId> next_job(bool critical_only);
  asio::awaitable<void> run_batch(std::vector<JobPtr> batch);
  // Demo jobs (engine_demo.cpp): one job, or a batch of one domain size, each
  // a one-partition member of ONE partition pipeline, answered once proved.
  asio::awaitable<void> run_demo_batch(std::vector<JobPtr> batch);
  struct DemoMember;
  PlanMember demo_plan_member(DemoMember& m, const CircuitParams& cp);
  void finish_demo(DemoMember& m, const std::vector<std::uint8_t>& vk_bytes, const Result<PipelineOutcome>& outcome);
  // PoRep C2, WindowPoSt, WinningPoSt, SnapDeals (engine_partitioned.cpp):
  // one job, or a batch of jobs of one parameter set; each request prepared
  // (engine/filecoin_work.hpp), the parameter set loaded once, every
  // member's partitions through ONE partition pipeline, each proof
  // verified, each member answered (finish_partitioned) once its own
  // partitions are proved.
  asio::awaitable<void> run_partitioned_batch(std::vector<JobPtr> batch);
  struct PartitionedMember;
  struct PartitionedBatch;
  struct PartitionedFinish;
  // opens_run: the member whose partition 0 the run synthesizes first, while
  // the GPUs wait for it (on the math pool, see the definition).
  PlanMember partitioned_plan_member(PartitionedMember& m, PartitionedBatch& b, bool opens_run);
  asio::awaitable<void> finish_partitioned(std::shared_ptr<PartitionedFinish> f);
  // Jobs of the batch's set queued while it runs join it (PoRep with
  // porep_join_running_batch, up to porep_batch_max_jobs members unanswered;
  // SnapDeals up to snap_batch_max_jobs); batch_joiners_max is that bound
  // for a kind (1: none join).
  std::size_t batch_joiners_max(ProofKind kind) const;
  asio::awaitable<void> admit_partitioned_joiners(PartitionedBatch* batch, BatchDoor* door);
  asio::awaitable<void> join_partitioned(PartitionedBatch* batch, BatchDoor* door, BatchDoor::Hold hold, JobPtr job);
  // A batch's jobs marked started now, one member each (`job`, its queue
  // time in `t`) appended to `members` (engine_internal.hpp).
  template <class Members>
  static void start_members(std::vector<JobPtr>& batch, Members& members);
  // A joiner of a running batch (join_partitioned; engine_internal.hpp):
  // its member, started now and registered for cancel_running(); then, once
  // its own stages are done, appended to the batch's members with its
  // partitions added to the pipeline by `plan` (PlanMember from the member),
  // or proved alone after the batch when the intake closed meanwhile (false).
  template <class Member, class Batch>
  static Member start_joiner(Batch& batch, const JobPtr& job);
  template <class Member, class Batch, class Plan>
  bool add_joiner(Batch& batch, BatchDoor& door, Member m, Plan plan);
  // A partitioned batch's members (engine_internal.hpp): registered
  // for cancel_running() and counted as a batch when there are several;
  // every member's stage set; members cancelled meanwhile finished, then
  // every finished member dropped (true when none is left); every member
  // not yet finished failed with `e`.
  class BatchRegistration;
  template <class Members>
  void register_batch(Members& members, BatchRegistration& registration);
  template <class Members>
  void stage_members(Members& members, const std::string& stage);
  template <class Members>
  bool prune_members(Members& members);
  template <class Members>
  void fail_members(Members& members, const Error& e);
  // Batching (engine_batch.cpp): adds queued jobs that can share the
  // head's pipeline (demo, PoRep, SnapDeals) to `batch`, up to `max_size`
  // jobs, waiting up to `max_wait` while nothing else is queued.
  bool batchable_with(Job& head, Job& other);
  const std::string& batch_key_of(Job& j);
  // A running batch's intake (engine_batch.cpp): queue heads that
  // decide_join admits, each handed to `join`.
  using JoinFn = std::function<asio::awaitable<void>(BatchDoor::Hold hold, JobPtr job)>;
  asio::awaitable<void> admit_joiners(RunningBatch shape, BatchDoor* door, JoinFn join);
  void count_joiner(bool& counted, std::size_t initial_members);
  asio::awaitable<void> collect_batch(std::vector<JobPtr>& batch, std::size_t max_size,
                                      std::chrono::milliseconds max_wait);
  asio::awaitable<void> expiry_loop();
  // SRS residency (engine_srs.cpp): registers parameter set `srs_id` of
  // `host_bytes` (already in memory) and holds it for one job; performs the
  // evictions the manager decides (apply_srs_actions).
  // Inactive (untracked, logged) if the manager refuses.
  policy::SrsLease lease_srs(const std::string& srs_id, std::uint64_t host_bytes, Priority priority);
  // PartitionPlan::on_host_copy for a set charged `host_bytes`: the set's
  // charge follows its host copy's releases and read-backs (loop thread).
  std::function<void(std::uint64_t)> host_copy_books(const std::string& srs_id, std::uint64_t host_bytes);
  // The memory-budget check of a parameter set before it is loaded (a job's
  // when `proving`, else a preload's); empty without a budget.
  ParamsAdmit params_admit(bool proving);
  void apply_srs_actions(const std::vector<policy::SrsAction>& actions);
  void sweep_idle_srs();  // LRU eviction of sets idle long enough (SrsManager)
  asio::awaitable<void> release_idle_stagings();
  // Gives the kept witnesses back (their memory and reservations).
  asio::awaitable<void> release_kept_witnesses();
  // The sweep's part (srs_sweep_loop): idle stagings kept past
  // staging_keep_idle, or while memory requests wait, are given back.
  asio::awaitable<void> sweep_idle_stagings();
  asio::awaitable<void> release_device_srs(DeviceSet::Slot& slot, std::string srs_id);
  // Preload (engine_srs.cpp): the loaded set's SRS made resident on every GPU
  // that does not hold it, one task per device; the GPUs that hold it then.
  struct Preload;
  asio::awaitable<std::uint32_t> make_resident_on_gpus(std::shared_ptr<Preload> p);
  // Upload tasks (upload_on_device, one per device) for the back ends that
  // do not hold p's set: the workers when `workers`, and the critical lanes
  // when they take the set.
  void spawn_uploads(const std::shared_ptr<Preload>& p, bool workers);
  // After a racing job (a WinningPoSt) of a set small enough for the
  // critical lanes: upload tasks for the lanes that do not hold it yet, so a
  // lane's first race proves without uploading (engine_srs.cpp).
  // `keep` holds params and r1cs alive until the uploads end.
  void warm_critical_lanes(std::shared_ptr<const void> keep, const groth16::Parameters& params,
                           const groth16::R1cs& r1cs, const std::string& srs_id);
  asio::awaitable<void> upload_on_device(std::vector<DeviceSet::Slot*> slots, std::shared_ptr<Preload> p);
  // The set's host copy released once every GPU holds it.
  asio::awaitable<void> release_held_host_copy(std::shared_ptr<Preload> p);
  asio::awaitable<void> srs_sweep_loop();
  JobPtr find(const JobKey& key) const;
  JobView view(const Job& job) const;
  void set_stage(Job& job, JobState state, std::string stage);
  void finish(Job& job, JobState state, std::optional<Error> error);
  // drain() with a journal: a queued job is not cancelled but left for the
  // next start (its accepted record stays); awaiters get kShuttingDown.
  void leave_queued(Job& job);
  bool finish_from_exception(Job& job, const std::exception& e);  // true: rethrow (shutdown)
  // A batch member's pipeline failed or was cancelled: its job finished
  // accordingly (true), or the outcome holds its proofs (false).
  bool finish_unproved(Job& job, const Result<PipelineOutcome>& outcome);
  void restore_journaled_jobs();  // start(): jobs of the previous run
  // submit()'s checks: a rejection or a deduplicated answer, or nullopt with
  // `priority` set when the request is to be admitted as a new job.
  std::optional<Result<JobView>> screen(const JobRequest& request, Priority& priority);
  JobPtr make_job(JobId id, JobRequest request, Priority priority);
  void enqueue(const JobPtr& job);  // a new (durable) job enters the queue
  // The journal's start/finish records, posted to journal_writer_ in order.
  void journal_started(JobId id);
  void journal_finished(const Job& job);
  void emit(const Job& job);
  std::uint64_t now_ms_since(std::chrono::steady_clock::time_point t) const;

  // The SRS manager's policy::Clock, read from the loop clock.
  class PolicyClock final : public policy::Clock {
   public:
    explicit PolicyClock(const runtime::LoopClock& c) : c_(c) {}
    policy::Millis now() const override {
      return std::chrono::duration_cast<policy::Millis>(c_.now().time_since_epoch());
    }

   private:
    const runtime::LoopClock& c_;
  };

  std::unique_ptr<runtime::SteadyLoopClock> own_clock_;
  runtime::LoopClock* clock_;  // config_.clock or own_clock_
  PolicyClock policy_clock_;
  asio::any_io_executor loop_;
  runtime::WorkerPool& cpu_;
  ThreadPool& math_;
  ParamStore& params_;
  runtime::Logger& log_;
  EngineConfig config_;
  std::chrono::steady_clock::time_point started_at_;

  JobQueue queue_;
  JobBook book_;
  std::map<JobId, JobPtr> jobs_;
  std::vector<WorkerView> workers_;
  runtime::Notifier work_available_;      // workers park here
  runtime::Notifier critical_available_;  // critical-only workers park here
  runtime::Notifier job_finished_;        // drain waits here
  runtime::Notifier stop_;                // the expiry and SRS sweep loops park here
  // The queue got a job, lost one to a cancel, or the engine began to drain
  // or stop: batch collectors and joiner admission re-decide on it.
  runtime::Signal queue_changed_;
  runtime::Signal changed_;  // on_change()
  std::map<std::uint64_t, Subscriber> subscribers_;
  std::uint64_t next_subscriber_ = 1;
  bool draining_ = false;
  bool stopping_ = false;
  std::unique_ptr<JobJournal> journal_;  // null: no journal_dir
  // The one thread that writes journal_ (after start()), in posting order:
  // accept before start before finish of a job. Declared after journal_:
  // destroyed (joined, its queue run) first. Bounded by admission: at most
  // capacity + accepting_ + workers jobs have records queued, <= 3 each.
  std::unique_ptr<runtime::WorkerPool> journal_writer_;
  std::size_t accepting_ = 0;            // submissions whose accept record is being written (count against capacity)
  std::set<JobId> stopped_by_shutdown_;  // cancelled by the drain, not a client: resumed after a restart
  std::set<JobId> batch_members_;        // running in a batch besides its worker's head job (cancel_running)
  // A batch's entries in batch_members_, erased when the batch coroutine ends
  // (however it ends).
  class BatchRegistration {
   public:
    explicit BatchRegistration(std::set<JobId>& set) : set_(set) {}
    BatchRegistration(const BatchRegistration&) = delete;
    BatchRegistration& operator=(const BatchRegistration&) = delete;
    ~BatchRegistration() {
      for (JobId id : ids_) set_.erase(id);
    }
    void add(JobId id) {
      set_.insert(id);
      ids_.push_back(id);
    }

   private:
    std::set<JobId>& set_;
    std::vector<JobId> ids_;
  };
  std::uint64_t batches_total_ = 0, batched_jobs_total_ = 0;  // batches of >= 2 jobs, and their jobs

  // Counters for metrics (monotonic).
  std::uint64_t submitted_total_ = 0, deduplicated_total_ = 0;
  std::array<std::uint64_t, 8> rejected_total_{};  // by ErrorKind
  std::uint64_t completed_total_ = 0, failed_total_ = 0, cancelled_total_ = 0;
  std::map<ProofKind, std::uint64_t> done_by_kind_;             // cuzk_proofs_total
  std::map<ErrorKind, std::uint64_t> failed_by_error_;          // cuzk_job_failures_total
  std::uint64_t left_queued_total_ = 0;                         // queued jobs the drain left for the next start
  std::map<ProofKind, std::uint64_t> deadline_missed_by_kind_;  // cuzk_deadline_missed_total
  // Job latency histogram (submit to finish, done jobs), seconds.
  static constexpr std::array<double, 10> kLatencyBucketsS = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  std::array<std::uint64_t, kLatencyBucketsS.size()> latency_buckets_{};
  double latency_sum_s_ = 0;
  std::array<double, 4> stage_sum_s_{};  // params, synthesis, prove, verify

  // Host-memory budget, the back ends, and the synthesis pool of the
  // partition pipeline. memory_ before everything holding reservations.
  std::unique_ptr<MemoryGate> memory_;
  std::unique_ptr<DeviceSet> devices_;
  // Staging slots of the staged prove (staging_slots(*devices_)), shared by
  // every job: their page-locked buffers stay for the next instance.
  std::unique_ptr<StagingPool> stagings_;
  // The same for CRITICAL PoSt and SnapDeals runs (pinned only when used): a
  // WinningPoSt submitted into a warm SnapDeals job on an H100 waited ~1.7 s
  // in the shared pool for a slot the SnapDeals partitions held.
  std::unique_ptr<StagingPool> critical_stagings_;
  // Witness memory kept from one run of the shared pools to the next
  // (engine/pipeline.hpp), given back with the idle stagings or at once when
  // a reservation waits. Declared after memory_: entries hold reservations.
  std::unique_ptr<KeptWitnesses> kept_witnesses_;
  // Since when the engine is idle with its stagings kept (staging_keep_idle);
  // reset when a worker takes a job. Loop thread.
  std::optional<runtime::LoopClock::time_point> stagings_idle_since_;
  // One small pool per synthesis lane thread for a partition's challenges
  // (null: sequential synthesis). Declared before synthesis_: the lanes
  // running there use it until synthesis_ is joined.
  std::unique_ptr<ThreadPoolSet> challenge_pools_;
  std::unique_ptr<runtime::WorkerPool> synthesis_;
  // Synthesis of CRITICAL jobs' partitions (one thread per critical worker):
  // never queued behind the lanes of a PoRep batch.
  std::unique_ptr<runtime::WorkerPool> critical_synthesis_;
  // The data-parallel pool of CRITICAL PoSt and SnapDeals work (parse checks,
  // a partition's parallel synthesis), as many threads as math_: math_ runs
  // one parallel_for at a time, and under 4 warm PoRep jobs (their stagings
  // copied on math_) a WinningPoSt's synthesis took 720 ms against 41 ms alone
  // (H100 host). Idle but for those jobs; they then share the cores with the
  // rest instead of queueing behind it.
  std::unique_ptr<ThreadPool> critical_math_;
  DevParamsGenerator dev_params_;
  // What PoRep's ensure_dev_params calls: dev_params_ (or the CPU setup) with
  // fresh toxic waste and progress logging.
  std::function<groth16::Parameters(const groth16::R1cs&, ThreadPool&)> porep_generator_;
  std::size_t synthesis_lanes_ = 1;  // the synthesis pool's lanes per worker
  // Lanes of a Filecoin partition pipeline (PoRep, PoSt, SnapDeals):
  // engine::pipeline_lanes (policy.hpp) for the GPUs there are.
  std::size_t pipeline_lanes() const;
  // Residency of every parameter set the engine loads (demo "demo-<n>",
  // PoRep "porep-<sector size>"). The policy's "pinned" tier is the engine's
  // in-memory copy (ParamStore / ParamSets; ordinary pageable memory today),
  // charged to memory_ while resident. No device capacity is given to the
  // manager: the device copy follows the back end (DeviceSet) and is dropped
  // with the host copy. After memory_ (it holds reservations on it).
  std::unique_ptr<policy::SrsManager> srs_;
  // Where a request is prepared (parsed and checked): a CRITICAL PoSt or
  // SnapDeals request on the critical pool, every other on the shared CPU
  // pool, whose threads also stage and verify the running jobs' partitions
  // (a WinningPoSt submitted into 4 warm PoRep jobs on an H100 host took
  // ~850 ms to be prepared there, ~1 ms alone).
  runtime::WorkerPool& prepare_pool(ProofKind kind, Priority priority);
  // The data-parallel pool for such a job: critical_math_, else math_.
  ThreadPool& math_for(ProofKind kind, Priority priority);
  PipelineDeps pipeline_deps(Priority priority = Priority::kNormal);
  // stagings_ and critical_stagings_ for the back ends there are.
  void make_stagings();

  // Filecoin circuits (PoRep C2, PoSt, SnapDeals): compiled partition
  // shapes and parameters per set id, loaded (or dev-generated) on first use
  // under params_.dir() (engine_internal.hpp).
  struct ParamSets;
  std::unique_ptr<ParamSets> sets_;

  runtime::TaskSet tasks_;  // last: destroyed first, after every coroutine has joined
};

// Process resident set size in bytes (from /proc/self/statm), 0 if unknown.
std::uint64_t resident_bytes();

// The PoRep parameter set ("porep-32GiB") a C1 JSON's "registered_proof"
// names, read without parsing the document (the batch collector's key);
// nullopt when absent or unknown.
std::optional<std::string> porep_srs_of_c1_json(std::string_view c1_json);

}  // namespace cuzk::engine
