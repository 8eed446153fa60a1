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
// A PoRep C2 job runs c1 (parse) -> params -> prove (synthesis, proving and
// the batch verification of all partitions, inside prove_c2).
// Cancellation of a running job is cooperative: the flag is checked between
// stages, so a cancel takes effect within one stage.
//
// Shutdown: drain() stops admission, cancels queued jobs, lets running jobs
// finish for up to `drain_timeout`, then cancels them, stops the workers and
// joins every coroutine the engine started.
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
#include <vector>

#include "engine/backend.hpp"
#include "engine/param_store.hpp"
#include "engine/pipeline.hpp"
#include "engine/policy.hpp"
#include "engine/types.hpp"
#include "engine/views.hpp"
#include "runtime/event_loop.hpp"
#include "runtime/log.hpp"
#include "runtime/notifier.hpp"
#include "runtime/task_set.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

struct EngineConfig {
  std::size_t max_concurrent_jobs = 1;  // worker coroutines (jobs in flight)
  AdmissionPolicy admission;
  std::chrono::milliseconds result_ttl{std::chrono::minutes(10)};
  std::uint32_t max_demo_log_domain = 16;  // demo sizes 3..16 (2^16 constraints)
  std::chrono::milliseconds drain_timeout{std::chrono::seconds(30)};
  // Durable job journal in this directory (engine/job_journal.hpp): accepted
  // jobs resume after a crash or restart, results stay awaitable for
  // result_ttl. Empty: jobs live in memory only.
  std::filesystem::path journal_dir;
  // Host-memory budget (bytes) for partition witnesses, prover working sets
  // and loaded parameters; 0: unlimited. The daemon resolves "auto".
  std::uint64_t memory_budget_bytes = 0;
  // PoRep C2 per-partition pipeline (engine/pipeline.hpp).
  std::size_t porep_synthesis_lanes = 0;           // partitions synthesized at once; 0: cores / 2 (>= 1)
  std::size_t porep_max_partitions_in_flight = 0;  // reserved and not yet proved; 0: lanes + 1
  bool porep_check_satisfaction = true;            // R1cs satisfaction check of each witness before proving
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
  Result<JobView> submit(JobRequest request);
  // Waits for the job's result; timeout 0 = no deadline. The error arm carries
  // the job's failure, kCancelled, kNotFound or kTimeout.
  asio::awaitable<Result<JobOutcome>> await(JobKey key, std::chrono::milliseconds timeout);
  Result<JobView> cancel(const JobKey& key);
  EngineStatus status() const;
  std::string metrics() const;  // Prometheus text exposition
  asio::awaitable<Result<ParamsInfo>> preload(std::string circuit_id);
  Result<bool> evict(const std::string& circuit_id);

  using Subscriber = std::function<void(const JobEvent&)>;
  std::uint64_t subscribe(Subscriber fn);
  void unsubscribe(std::uint64_t token);

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

  asio::awaitable<void> worker(std::uint32_t index);
  asio::awaitable<void> run_job(JobPtr job);
  asio::awaitable<void> run_porep_c2(JobPtr job);  // the kPoRepC2 pipeline
  asio::awaitable<void> expiry_loop();
  JobPtr find(const JobKey& key) const;
  JobView view(const Job& job) const;
  void set_stage(Job& job, JobState state, std::string stage);
  void finish(Job& job, JobState state, std::optional<Error> error);
  void restore_journaled_jobs();  // start(): jobs of the previous run
  void emit(const Job& job);
  std::uint64_t now_ms_since(std::chrono::steady_clock::time_point t) const;

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
  runtime::Notifier work_available_;  // workers park here
  runtime::Notifier job_finished_;    // drain waits here
  runtime::Notifier stop_;            // expiry loop parks here
  std::map<std::uint64_t, Subscriber> subscribers_;
  std::uint64_t next_subscriber_ = 1;
  bool draining_ = false;
  bool stopping_ = false;
  std::unique_ptr<JobJournal> journal_;  // null: no journal_dir
  std::set<JobId> stopped_by_shutdown_;   // cancelled by the drain, not a client: resumed after a restart

  // Counters for metrics (monotonic).
  std::uint64_t submitted_total_ = 0, deduplicated_total_ = 0;
  std::array<std::uint64_t, 8> rejected_total_{};  // by ErrorKind
  std::uint64_t completed_total_ = 0, failed_total_ = 0, cancelled_total_ = 0;
  // Job latency histogram (submit to finish, done jobs), seconds.
  static constexpr std::array<double, 10> kLatencyBucketsS = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  std::array<std::uint64_t, kLatencyBucketsS.size()> latency_buckets_{};
  double latency_sum_s_ = 0;
  std::array<double, 4> stage_sum_s_{};  // params, synthesis, prove, verify

  // Host-memory budget, the back ends, and the synthesis pool of the
  // partition pipeline. memory_ before everything holding reservations.
  std::unique_ptr<MemoryGate> memory_;
  std::unique_ptr<DeviceSet> devices_;
  std::unique_ptr<runtime::WorkerPool> synthesis_;
  DevParamsGenerator dev_params_;
  // What PoRep's ensure_dev_params calls: dev_params_ (or the CPU setup) with
  // fresh toxic waste and progress logging.
  std::function<groth16::Parameters(const groth16::R1cs&, ThreadPool&)> porep_generator_;
  std::size_t synthesis_lanes_ = 1;
  std::map<std::string, policy::Reservation> srs_charges_;  // loaded parameters, by SRS key
  std::map<std::string, std::uint64_t> srs_host_bytes_;     // same keys, for status
  PipelineDeps pipeline_deps();

  // PoRep C2: compiled partition shapes and parameters per sector size,
  // loaded (or dev-generated) on first use under params_.dir().
  struct PorepState;
  std::unique_ptr<PorepState> porep_;

  runtime::TaskSet tasks_;  // last: destroyed first, after every coroutine has joined
};

// Process resident set size in bytes (from /proc/self/statm), 0 if unknown.
std::uint64_t resident_bytes();

}  // namespace cuzk::engine
