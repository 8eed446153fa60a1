#include "engine/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <future>
#include <limits>
#include <system_error>
#include <thread>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "engine/engine_internal.hpp"
#include "engine/job_journal.hpp"
#include "engine/request_digest.hpp"
#include "groth16/proof.hpp"
#include "groth16/setup.hpp"
#include "groth16/prover.hpp"
#include "util/json_input.hpp"

namespace cuzk::engine {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

// The parameter set a C1 JSON names ("registered_proof": "StackedDrg32GiBV1_1"),
// read without parsing the document (the batch collector runs on the loop;
// a 32 GiB C1 is tens of MB: the key is searched first at the beginning,
// where our writer puts it, then from the end, where a serde struct with the
// field last puts it). nullopt: not found or unknown; the job then runs
// alone and its parse reports the error.
std::optional<std::string> porep_srs_of_c1_json(std::string_view json) {
  constexpr std::string_view kKey = "\"registered_proof\"";
  std::size_t at = json.substr(0, 4096).find(kKey);
  if (at == std::string_view::npos) at = json.rfind(kKey);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + kKey.size();
  while (i < json.size() && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r')) ++i;
  if (i >= json.size() || json[i] != ':') return std::nullopt;
  const std::size_t open = json.find('"', i + 1);
  if (open == std::string_view::npos) return std::nullopt;
  const std::size_t close = json.find('"', open + 1);
  if (close == std::string_view::npos || close - open > 64) return std::nullopt;
  const std::string_view name = json.substr(open + 1, close - open - 1);
  for (const fc::SealProofInfo& info : fc::seal_proofs())
    if (info.name == name) return porep_srs_id(info.proof);
  return std::nullopt;
}

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

Engine::Engine(asio::any_io_executor loop, runtime::WorkerPool& cpu, ThreadPool& math, ParamStore& params,
               runtime::Logger& log, EngineConfig config)
    : own_clock_(config.clock ? nullptr : std::make_unique<runtime::SteadyLoopClock>()),
      clock_(config.clock ? config.clock : own_clock_.get()),
      policy_clock_(*clock_),
      loop_(loop),
      cpu_(cpu),
      math_(math),
      params_(params),
      log_(log),
      config_(config),
      started_at_(steady_clock::now()),
      queue_(config.admission),
      book_(config.result_ttl),
      work_available_(loop, clock_),
      critical_available_(loop, clock_),
      job_finished_(loop, clock_),
      stop_(loop, clock_),
      sets_(std::make_unique<ParamSets>(
          params.dir(),
          [&params](const std::filesystem::path& path, ThreadPool& pool) {
            return params.read_params_file(path, pool);
          },
          [&params](const std::filesystem::path& path, ThreadPool& pool, groth16::Parameters& into) {
            params.read_params_into(path, pool, into);
          },
          [&params](const std::filesystem::path& path) { return params.read_r1cs_file(path); }, math,
          config.srs_release_host_copy, config.srs_host_copy_min_bytes)),
      tasks_(loop) {
  if (config_.max_concurrent_jobs == 0) config_.max_concurrent_jobs = 1;
  memory_ = std::make_unique<MemoryGate>(
      loop_,
      config_.memory_budget_bytes != 0 ? config_.memory_budget_bytes : std::numeric_limits<std::uint64_t>::max() / 2,
      config_.memory_budget_bytes != 0
          ? std::min(config_.memory_critical_overdraft_bytes, config_.memory_budget_bytes / 16)
          : 0);
  devices_ = std::make_unique<DeviceSet>(loop_, std::make_shared<CpuBackend>(cpu_, math_),
                                         std::vector<std::shared_ptr<DeviceBackend>>{});
  make_stagings();
  policy::SrsConfig srs_config;
  srs_config.eviction_min_idle = config_.srs_min_idle;
  srs_config.reload_bytes_per_s = config_.srs_reload_bytes_per_s;
  srs_ = std::make_unique<policy::SrsManager>(srs_config, memory_->budget(), policy_clock_);
  const std::size_t cores = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  const std::size_t threads = config_.porep_synthesis_threads;
  synthesis_lanes_ = config_.porep_synthesis_lanes;
  if (synthesis_lanes_ == 0) {
    synthesis_lanes_ = threads > 1 ? std::max<std::size_t>(1, cores / threads) : std::max<std::size_t>(1, cores / 2);
  }
  const std::size_t lane_threads = synthesis_lanes_ * config_.max_concurrent_jobs;
  if (threads > 1) challenge_pools_ = std::make_unique<ThreadPoolSet>(lane_threads, threads);
  synthesis_ = std::make_unique<runtime::WorkerPool>(lane_threads);
  if (config_.critical_workers > 0) {
    critical_synthesis_ = std::make_unique<runtime::WorkerPool>(config_.critical_workers);
    critical_math_ = std::make_unique<ThreadPool>(math_.size());
  }
  set_dev_params_generator({});
}

std::size_t Engine::pipeline_lanes() const {
  return engine::pipeline_lanes(config_.porep_synthesis_lanes, synthesis_lanes_, devices_->gpu_count());
}

void Engine::set_gpu_backends(std::vector<std::shared_ptr<DeviceBackend>> gpus) {
  devices_ = std::make_unique<DeviceSet>(loop_, std::make_shared<CpuBackend>(cpu_, math_), std::move(gpus));
  make_stagings();
}

void Engine::make_stagings() {
  stagings_ = std::make_unique<StagingPool>(loop_, staging_slots(*devices_));
  critical_stagings_ = std::make_unique<StagingPool>(loop_, staging_slots(*devices_));
  // As many as a run keeps as spares: one per lane.
  kept_witnesses_ = std::make_unique<KeptWitnesses>(std::max<std::size_t>(1, synthesis_lanes_));
}

void Engine::set_dev_params_generator(DevParamsGenerator generator) {
  dev_params_ = std::move(generator);
  const bool on_gpu = static_cast<bool>(dev_params_);
  porep_generator_ = [this, on_gpu](const groth16::R1cs& r1cs, ThreadPool& pool) {
    log_.warn("generating DEVELOPMENT parameters",
              {{"on", on_gpu ? "gpu" : "cpu"}, {"constraints", r1cs.num_constraints()}, {"aux", r1cs.num_aux()}});
    auto t0 = steady_clock::now();
    // Progress in steps of 5% (the callback may run on any thread).
    auto last_step = std::make_shared<std::atomic<int>>(-1);
    SetupProgress progress = [this, last_step, t0](std::uint64_t done, std::uint64_t total) {
      if (total == 0) return;
      int step = static_cast<int>(done * 20 / total);
      int prev = last_step->load();
      while (step > prev && !last_step->compare_exchange_weak(prev, step)) {
      }
      if (step > prev) {
        log_.info("development parameters", {{"percent", step * 5},
                                             {"done", done},
                                             {"total", total},
                                             {"elapsed_ms", ms_between(t0, steady_clock::now())}});
      }
    };
    groth16::Parameters p = dev_params_
                                ? dev_params_(r1cs, groth16::random_toxic_waste(), pool, progress)
                                : groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool, progress);
    log_.info("development parameters generated",
              {{"on", on_gpu ? "gpu" : "cpu"}, {"ms", ms_between(t0, steady_clock::now())}});
    return p;
  };
}

PipelineDeps Engine::pipeline_deps(Priority priority) {
  // CRITICAL runs keep off the shared pools: synthesis, the staged prove's
  // host steps and verification on the critical thread, their own stagings.
  if (priority == Priority::kCritical && critical_synthesis_) {
    return PipelineDeps{*critical_synthesis_,    *critical_synthesis_, *devices_, *memory_, log_,
                        critical_stagings_.get()};
  }
  return PipelineDeps{*synthesis_, cpu_, *devices_, *memory_, log_, stagings_.get(), kept_witnesses_.get()};
}

namespace {

bool critical_pools_for(ProofKind kind, Priority priority) {
  return priority == Priority::kCritical && critical_pool_kind(kind);
}

}  // namespace

runtime::WorkerPool& Engine::prepare_pool(ProofKind kind, Priority priority) {
  return critical_pools_for(kind, priority) && critical_synthesis_ ? *critical_synthesis_ : cpu_;
}

ThreadPool& Engine::math_for(ProofKind kind, Priority priority) {
  return critical_pools_for(kind, priority) && critical_math_ ? *critical_math_ : math_;
}

Engine::~Engine() = default;

void Engine::start() {
  if (!config_.journal_dir.empty()) {
    journal_writer_ = std::make_unique<runtime::WorkerPool>(1);  // one thread: records stay in order
    restore_journaled_jobs();
  }
  const auto workers = static_cast<std::uint32_t>(config_.max_concurrent_jobs + config_.critical_workers);
  for (std::uint32_t i = 0; i < workers; ++i) {
    workers_.push_back(WorkerView{i, std::nullopt});
  }
  for (std::uint32_t i = 0; i < workers; ++i) tasks_.spawn(worker(i));
  tasks_.spawn(expiry_loop());
  tasks_.spawn(srs_sweep_loop());
  log_.info("engine started", {{"workers", config_.max_concurrent_jobs},
                               {"critical_workers", config_.critical_workers},
                               {"queue_capacity", config_.admission.capacity},
                               {"result_ttl_ms", config_.result_ttl.count()}});
}

// The previous run's jobs (engine/job_journal.hpp): finished ones stay
// awaitable until their TTL, counted from when they finished; unfinished ones
// queue again in their priority order under their ids; one whose input was
// lost fails alone.
void Engine::restore_journaled_jobs() {
  JobJournalConfig jc;
  jc.dir = config_.journal_dir;
  jc.result_ttl = config_.result_ttl;
  jc.before_write = config_.journal_before_write;
  JobJournal::Opened opened = JobJournal::open(jc, log_);
  journal_ = std::move(opened.journal);
  const auto now = clock_->now();
  auto restore = [&](RecoveredJob& r) {
    book_.restore(r.id, r.request_id);
    auto job = std::make_shared<Job>(loop_, clock_);
    job->id = r.id;
    job->request_id = book_.request_id(r.id);
    job->request = std::move(r.request);
    job->priority = r.priority;
    job->state = r.state;
    job->stage = std::string(to_string(r.state));
    job->input_digest = r.digest;
    job->submitted_at = now - r.since_accepted;
    job->output = std::move(r.output);
    jobs_.emplace(job->id, job);
    return job;
  };
  for (RecoveredJob& r : opened.recovery.finished) {
    JobPtr job = restore(r);
    job->input_known = false;
    job->error = std::move(r.error);
    book_.finished(job->id, now - r.since_finished);
  }
  for (RecoveredJob& r : opened.recovery.resume) {
    std::optional<Error> lost = std::move(r.error);
    JobPtr job = restore(r);
    if (lost) {
      job->input_known = false;
      finish(*job, JobState::kFailed, std::move(lost));
      continue;
    }
    queue_.restore(job->id, job->priority);
    log_.info("job resumed", {{"job", job->id},
                              {"request_id", job->request_id},
                              {"kind", to_string(job->request.kind)},
                              {"priority", to_string(job->priority)},
                              {"interrupted_runs", r.interrupted_runs}});
  }
  book_.skip_ids_below(opened.recovery.next_id);
}

std::optional<Result<JobView>> Engine::screen(const JobRequest& request, Priority& priority) {
  auto reject = [this](ErrorKind kind, std::string msg) -> Result<JobView> {
    ++rejected_total_[static_cast<std::size_t>(kind)];
    return Error{kind, std::move(msg)};
  };
  if (draining_) return reject(ErrorKind::kShuttingDown, "the daemon is shutting down");
  if (request.kind == ProofKind::kPoRepC2 && request.input.empty()) {
    return reject(ErrorKind::kInvalidInput, "PoRep C2 request without C1 output (vanillaProof is empty)");
  }
  if (request.kind == ProofKind::kWindowPost || request.kind == ProofKind::kWinningPost ||
      request.kind == ProofKind::kSnapDeals) {
    if (auto bad = screen_filecoin_request(request.kind, request.input))
      return reject(bad->kind, std::string(to_string(request.kind)) + ": " + bad->message);
  }
  if (request.kind == ProofKind::kGroth16Demo &&
      (request.demo_log_domain < kMinDemoLogDomain || request.demo_log_domain > config_.max_demo_log_domain)) {
    return reject(ErrorKind::kInvalidInput, "demo size (log2 of the domain) must be in [" +
                                                std::to_string(kMinDemoLogDomain) + ", " +
                                                std::to_string(config_.max_demo_log_domain) + "], got " +
                                                std::to_string(request.demo_log_domain));
  }
  if (!request.request_id.empty()) {
    if (auto existing = book_.find(request.request_id)) {
      const JobPtr& job = jobs_.at(*existing);
      // A job restored without its input is compared by digest (hashing a
      // resubmitted C1 of tens of MB here costs tens of ms on the loop: only
      // for a request id reused across a restart).
      bool same = job->input_known    ? job->request.same_work(request)
                  : job->input_digest ? *job->input_digest == request_digest(request)
                                      : job->request.kind == request.kind;
      if (!same) {
        return reject(ErrorKind::kInvalidInput,
                      "request id '" + request.request_id + "' was already used for a different request");
      }
      ++deduplicated_total_;
      JobView v = view(*job);
      v.deduplicated = true;
      return v;
    }
  }
  priority = request.priority.value_or(default_priority(request.kind));
  // Submissions whose accept record is still being written hold queue places.
  const std::size_t held = queue_.size() + accepting_;
  if (!queue_.policy().admits(priority, held)) {
    return reject(ErrorKind::kOverloaded, "queue full (" + std::to_string(held) + " queued, capacity " +
                                              std::to_string(queue_.policy().capacity) + "); retry later");
  }
  return std::nullopt;
}

Engine::JobPtr Engine::make_job(JobId id, JobRequest request, Priority priority) {
  auto job = std::make_shared<Job>(loop_, clock_);
  job->id = id;
  job->request_id = book_.request_id(id);
  job->request = std::move(request);
  job->priority = priority;
  job->submitted_at = steady_clock::now();
  jobs_.emplace(job->id, job);
  return job;
}

void Engine::enqueue(const JobPtr& job) {
  // restore, not push: screen() admitted it, and a durable job is queued even
  // if a reload shrank the capacity while its record was being written.
  queue_.restore(job->id, job->priority);
  ++submitted_total_;
  log_.info("job queued", {{"job", job->id},
                           {"request_id", job->request_id},
                           {"kind", to_string(job->request.kind)},
                           {"priority", to_string(job->priority)},
                           {"size", job->request.demo_log_domain}});
  emit(*job);
  work_available_.notify_one();
  if (job->priority == Priority::kCritical) critical_available_.notify_one();
  queue_changed_.emit();
}

Result<JobView> Engine::submit(JobRequest request) {
  Priority priority = Priority::kNormal;
  if (auto answer = screen(request, priority)) return std::move(*answer);
  // Durable before the client hears of the job. Blocking: the journal is
  // written by its writer thread alone (submit_durable does not block).
  if (journal_) {
    std::packaged_task<std::optional<Error>()> write(
        [&] { return journal_->accepted(book_.next_id(), request, priority); });
    std::future<std::optional<Error>> written = write.get_future();
    asio::post(journal_writer_->executor(), [&write] { write(); });
    if (auto failed = written.get()) {
      ++rejected_total_[static_cast<std::size_t>(failed->kind)];
      return *failed;
    }
  }
  JobBook::Lookup lookup = book_.register_request(request.request_id);
  JobPtr job = make_job(lookup.id, std::move(request), priority);
  enqueue(job);
  return view(*job);
}

asio::awaitable<Result<JobView>> Engine::submit_durable(JobRequest request) {
  if (!journal_) co_return submit(std::move(request));
  Priority priority = Priority::kNormal;
  if (auto answer = screen(request, priority)) {
    if (!*answer || !answer->value().deduplicated) co_return std::move(*answer);
    // A resubmit: answer once the first submission's record is durable.
    JobPtr job = jobs_.at(answer->value().id);
    while (job->accepting) co_await job->done.wait();
    if (job->accept_failed) co_return *job->error;
    JobView v = view(*job);
    v.deduplicated = true;
    co_return v;
  }
  // Reserve the id and the request id on the loop (a resubmit finds the job
  // and waits above), then write on the writer thread, then queue.
  JobBook::Lookup lookup = book_.register_request(request.request_id);
  JobPtr job = make_job(lookup.id, std::move(request), priority);
  job->accepting = true;
  job->stage = "accepting";
  ++accepting_;
  std::optional<Error> failed;
  try {
    // run_on does not resume us before the write returns: `job` stays valid
    // there, and the loop does not touch job->request meanwhile.
    failed = co_await runtime::run_on(
        *journal_writer_, [this, &job, priority] { return journal_->accepted(job->id, job->request, priority); });
  } catch (const std::exception& e) {
    failed = Error{ErrorKind::kInternal, std::string("cannot record the job durably: ") + e.what()};
  }
  --accepting_;
  job->accepting = false;
  job_finished_.notify_all();  // drain() waits for settled submissions
  if (failed) {
    // Never admitted: free the request id (a retry makes a new job).
    job->accept_failed = true;
    job->error = *failed;
    jobs_.erase(job->id);
    book_.forget(job->id);
    ++rejected_total_[static_cast<std::size_t>(failed->kind)];
    job->done.notify_all();
    co_return *failed;
  }
  if (is_finished(job->state)) {
    // Cancelled while its record was written; the writer records the end
    // after the acceptance (one thread, posting order).
    job->done.notify_all();
    co_return view(*job);
  }
  if (draining_) {
    // Like a job queued at the drain: its record stays, it runs at the next start.
    leave_queued(*job);
    co_return view(*job);
  }
  job->stage = "queued";
  enqueue(job);
  job->done.notify_all();
  co_return view(*job);
}

// Start and finish records go to the writer thread without waiting: the loop
// never blocks on an fdatasync. Order per job holds because one thread runs
// them in posting order (accepted, then started, then finished). Durability
// of a finish: the terminal record is synced before the job's input file is
// deleted (JobJournal::finished, one writer task), and before any submission
// accepted after it is acknowledged (FIFO). An awaiter may get the result
// before its record is on disk; a crash in that window leaves the job
// accepted in the journal and it runs again at the next start: time lost,
// nothing lost.
void Engine::journal_started(JobId id) {
  asio::post(journal_writer_->executor(), [journal = journal_.get(), id] { journal->started(id); });
}

void Engine::journal_finished(const Job& job) {
  asio::post(journal_writer_->executor(),
             [journal = journal_.get(), id = job.id, state = job.state, output = job.output, error = job.error] {
               journal->finished(id, state, output, error);
             });
}

Engine::JobPtr Engine::find(const JobKey& key) const {
  std::optional<JobId> id;
  if (const JobId* p = std::get_if<JobId>(&key))
    id = *p;
  else
    id = book_.find(std::get<std::string>(key));
  if (!id) return nullptr;
  auto it = jobs_.find(*id);
  return it == jobs_.end() ? nullptr : it->second;
}

JobView Engine::view(const Job& job) const {
  JobView v;
  v.id = job.id;
  v.request_id = job.request_id;
  v.kind = job.request.kind;
  v.priority = job.priority;
  v.state = job.state;
  v.stage = job.stage;
  if (auto pos = queue_.position(job.id)) v.queue_position = static_cast<std::uint32_t>(*pos);
  v.age_ms = ms_between(job.submitted_at, steady_clock::now());
  v.deadline_unix_ms = job.request.deadline_unix_ms;
  v.deadline_missed = job.deadline_missed || (!is_finished(job.state) && past_deadline(job.request));
  return v;
}

void Engine::reconfigure(AdmissionPolicy admission, std::uint32_t max_demo_log_domain) {
  queue_.set_policy(admission);
  config_.admission = admission;
  config_.max_demo_log_domain = max_demo_log_domain;
}

asio::awaitable<Result<JobOutcome>> Engine::await(JobKey key, milliseconds timeout) {
  JobPtr job = find(key);
  if (!job) co_return Error{ErrorKind::kNotFound, "no such job (unknown, or its result expired)"};
  if (!is_finished(job->state)) {
    // Saturating: now + a timeout of years (10^13 ms, INT64_MAX ms) would
    // overflow the clock's nanoseconds into the past and time out at once.
    // 0: no timeout.
    const auto deadline = timeout.count() > 0 ? clock_->after(timeout) : steady_clock::time_point::max();
    // Several wakeups are possible only if notified spuriously; loop on state.
    while (!is_finished(job->state) && !job->left_queued) {
      bool notified = co_await job->done.wait_until(deadline);
      if (!notified) break;
    }
  }
  if (job->left_queued && !is_finished(job->state)) co_return *job->error;
  if (!is_finished(job->state)) {
    co_return Error{ErrorKind::kTimeout, "job " + std::to_string(job->id) + " still " +
                                             std::string(to_string(job->state)) + " after " +
                                             std::to_string(timeout.count()) + " ms"};
  }
  if (job->state != JobState::kDone) co_return *job->error;
  co_return JobOutcome{view(*job), job->output};
}

Result<JobView> Engine::cancel(const JobKey& key) {
  JobPtr job = find(key);
  if (!job) return Error{ErrorKind::kNotFound, "no such job (unknown, or its result expired)"};
  if (job->state == JobState::kQueued) {
    queue_.remove(job->id);
    queue_changed_.emit();
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while queued"});
  } else if (job->state == JobState::kRunning && !job->cancel.requested()) {
    job->cancel.request();
    log_.info("job cancel requested", {{"job", job->id}, {"stage", job->stage}});
  }
  return view(*job);
}

void Engine::set_stage(Job& job, JobState state, std::string stage) {
  // The journal counts restarts that find a job running (a job that crashes the daemon is not retried forever).
  if (journal_ && job.state == JobState::kQueued && state == JobState::kRunning) journal_started(job.id);
  job.state = state;
  job.stage = std::move(stage);
  log_.debug("job stage", {{"job", job.id},
                           {"kind", to_string(job.request.kind)},
                           {"stage", job.stage},
                           {"ms", ms_between(job.submitted_at, steady_clock::now())}});
  emit(job);
}

void Engine::finish(Job& job, JobState state, std::optional<Error> error) {
  job.state = state;
  job.stage = std::string(to_string(state));
  job.error = std::move(error);
  const auto now = steady_clock::now();  // the job's wall time (below)
  const bool first_expiry = !book_.next_expiry();
  book_.finished(job.id, clock_->now());
  if (first_expiry) stop_.notify_all();  // the expiry loop sleeps without a deadline
  if (journal_) {
    // Kept for `await` after a restart. A job the shutdown stopped stays
    // accepted in the journal and runs again at the next start.
    bool by_shutdown = state == JobState::kCancelled && ((job.error && job.error->kind == ErrorKind::kShuttingDown) ||
                                                         stopped_by_shutdown_.count(job.id) != 0);
    if (!by_shutdown) journal_finished(job);
  }
  std::uint64_t total_ms = ms_between(job.submitted_at, now);
  if (state != JobState::kCancelled && past_deadline(job.request)) {
    job.deadline_missed = true;
    ++deadline_missed_by_kind_[job.request.kind];
    log_.warn("deadline missed", {{"job", job.id},
                                  {"kind", to_string(job.request.kind)},
                                  {"state", to_string(state)},
                                  {"deadline_unix_ms", job.request.deadline_unix_ms}});
  }
  switch (state) {
    case JobState::kDone: {
      ++completed_total_;
      ++done_by_kind_[job.request.kind];
      double s = static_cast<double>(total_ms) / 1000.0;
      latency_sum_s_ += s;
      for (std::size_t i = 0; i < kLatencyBucketsS.size(); ++i)
        if (s <= kLatencyBucketsS[i]) ++latency_buckets_[i];
      const Timings& t = job.output.timings;
      stage_sum_s_[0] += static_cast<double>(t.params_ms) / 1000.0;
      stage_sum_s_[1] += static_cast<double>(t.synthesis_ms) / 1000.0;
      stage_sum_s_[2] += static_cast<double>(t.prove_ms) / 1000.0;
      stage_sum_s_[3] += static_cast<double>(t.verify_ms) / 1000.0;
      log_.info("job done", {{"job", job.id},
                             {"kind", to_string(job.request.kind)},
                             {"ms", total_ms},
                             {"queue_ms", t.queue_ms},
                             {"params_ms", t.params_ms},
                             {"synthesis_ms", t.synthesis_ms},
                             {"prove_ms", t.prove_ms},
                             {"verify_ms", t.verify_ms}});
      break;
    }
    case JobState::kFailed:
      ++failed_total_;
      ++failed_by_error_[job.error ? job.error->kind : ErrorKind::kInternal];
      log_.warn("job failed", {{"job", job.id},
                               {"kind", to_string(job.request.kind)},
                               {"ms", total_ms},
                               {"error", job.error ? job.error->message : ""}});
      break;
    case JobState::kCancelled:
      if (journal_ && stopped_by_shutdown_.count(job.id) != 0) {
        // Not a cancellation: its accepted record stays, it runs again at the next start.
        log_.info("job stopped by the shutdown; it runs again at the next start",
                  {{"job", job.id}, {"ms", total_ms}, {"stage", job.stage}});
        break;
      }
      ++cancelled_total_;
      log_.info("job cancelled", {{"job", job.id}, {"ms", total_ms}, {"reason", job.error ? job.error->message : ""}});
      break;
    default:
      std::fprintf(stderr, "Engine::finish with unfinished state\n");
      std::abort();
  }
  emit(job);
  job.done.notify_all();
  job_finished_.notify_all();
}

void Engine::leave_queued(Job& job) {
  job.left_queued = true;
  job.stage = "left queued for the next start";
  job.error = Error{ErrorKind::kShuttingDown, "the daemon is stopping: job " + std::to_string(job.id) +
                                                  " stays queued in the journal and runs at the next start"};
  ++left_queued_total_;
  log_.info("job left queued for the next start",
            {{"job", job.id}, {"request_id", job.request_id}, {"kind", to_string(job.request.kind)}});
  emit(job);
  job.done.notify_all();
  job_finished_.notify_all();
}

void Engine::emit(const Job& job) {
  changed_.emit();
  if (subscribers_.empty()) return;
  JobEvent ev{job.id,   job.request_id, job.state, job.stage, ms_between(job.submitted_at, steady_clock::now()),
              job.error};
  // Copy: a subscriber may unsubscribe (itself) while being called.
  auto subs = subscribers_;
  for (auto& [token, fn] : subs) fn(ev);
}

std::uint64_t Engine::subscribe(Subscriber fn) {
  std::uint64_t token = next_subscriber_++;
  subscribers_.emplace(token, std::move(fn));
  return token;
}

void Engine::unsubscribe(std::uint64_t token) { subscribers_.erase(token); }

std::optional<JobId> Engine::next_job(bool critical_only) {
  if (critical_only && queue_.top_priority() != Priority::kCritical) return std::nullopt;
  return queue_.pop();
}

asio::awaitable<void> Engine::worker(std::uint32_t index) {
  const bool critical_only = index >= config_.max_concurrent_jobs;
  while (!stopping_) {
    std::optional<JobId> id = next_job(critical_only);
    if (!id) {
      co_await (critical_only ? critical_available_ : work_available_).wait();
      continue;
    }
    JobPtr job = jobs_.at(*id);
    workers_[index].job = job->id;  // before collecting: a drain waits for this worker
    stagings_idle_since_.reset();
    changed_.emit();
    std::vector<JobPtr> batch{job};
    if (config_.batch_max_size > 1 && job->request.kind == ProofKind::kGroth16Demo)
      co_await collect_batch(batch, config_.batch_max_size, config_.batch_max_wait);
    if (config_.porep_batch_max_jobs > 1 && job->request.kind == ProofKind::kPoRepC2)
      co_await collect_batch(batch, config_.porep_batch_max_jobs, config_.porep_batch_max_wait);
    if (config_.snap_batch_max_jobs > 1 && job->request.kind == ProofKind::kSnapDeals)
      co_await collect_batch(batch, config_.snap_batch_max_jobs, config_.snap_batch_max_wait);
    // A member cancelled while the batch collected was finished by cancel().
    std::erase_if(batch, [](const JobPtr& j) { return j->state != JobState::kQueued; });
    if (!batch.empty()) co_await run_batch(std::move(batch));
    workers_[index].job.reset();
    // drain() counts busy workers: a batch's pipeline may return well after
    // its last member finished (its reservations and tasks unwind first).
    job_finished_.notify_all();
    changed_.emit();
    if (queue_.empty() && std::none_of(workers_.begin(), workers_.end(), [](const WorkerView& w) { return w.job; })) {
      if (config_.staging_keep_idle.count() <= 0) {
        co_await release_idle_stagings();
      } else {
        stagings_idle_since_ = clock_->now();  // the sweep gives them back (sweep_idle_stagings)
      }
    }
  }
}

// One job, or a batch collected by the worker (jobs of one kind and set).
asio::awaitable<void> Engine::run_batch(std::vector<JobPtr> batch) {
  switch (batch.front()->request.kind) {
    case ProofKind::kGroth16Demo:
      co_await run_demo_batch(std::move(batch));
      break;
    default:
      co_await run_partitioned_batch(std::move(batch));
      break;
  }
}

// A job's pipeline threw: shutdown (asio's operation_aborted) records the job
// as cancelled and returns true (the caller rethrows to unwind); any other
// exception fails the job as internal.
bool Engine::finish_from_exception(Job& job, const std::exception& e) {
  const auto* sys = dynamic_cast<const std::system_error*>(&e);
  if (sys != nullptr && is_cancellation(*sys)) {
    finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "daemon shutting down"});
    return true;
  }
  finish(job, JobState::kFailed, Error{ErrorKind::kInternal, std::string(e.what())});
  return false;
}

bool Engine::finish_unproved(Job& job, const Result<PipelineOutcome>& outcome) {
  if (outcome) return false;
  if (outcome.error().kind == ErrorKind::kCancelled || job.cancel.requested()) {
    finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
  } else {
    finish(job, JobState::kFailed, outcome.error());
  }
  return true;
}

ProofOutput pipeline_output(const PipelineOutcome& o, const std::vector<std::uint8_t>& vk_bytes, Timings t,
                            steady_clock::time_point submitted_at) {
  double synthesis_ms = 0, prove_ms = 0, verify_ms = 0;
  for (const PartitionTiming& pt : o.timings) {
    synthesis_ms += pt.synthesis_ms;
    prove_ms += pt.device_wait_ms + pt.prove_ms;
    verify_ms += pt.verify_ms;
  }
  t.synthesis_ms += static_cast<std::uint64_t>(synthesis_ms);
  t.prove_ms = static_cast<std::uint64_t>(prove_ms);
  t.verify_ms = static_cast<std::uint64_t>(verify_ms);
  ProofOutput out;
  out.proof = groth16::encode_proofs(o.proofs);
  for (const std::vector<ff::Fr>& inputs : o.public_inputs) {
    for (const ff::Fr& x : inputs) {
      std::array<std::uint8_t, 32> le{};
      x.to_bytes_le(le);
      out.public_inputs.push_back(le);
    }
  }
  out.vk_bytes = vk_bytes;
  t.total_ms = ms_between(submitted_at, steady_clock::now());
  out.timings = t;
  return out;
}

asio::awaitable<void> Engine::expiry_loop() {
  using namespace std::chrono_literals;
  while (!stopping_) {
    for (JobId id : book_.expire(clock_->now())) jobs_.erase(id);
    // A job finishing later expires later (one retention for all), so only
    // the first expiry after none needs a wake-up (finish()).
    co_await stop_.wait_until(book_.next_expiry().value_or(steady_clock::time_point::max()));
  }
}

void Engine::cancel_running() {
  for (const WorkerView& w : workers_) {
    if (!w.job) continue;
    jobs_.at(*w.job)->cancel.request();
    stopped_by_shutdown_.insert(*w.job);
  }
  for (JobId id : batch_members_) {
    jobs_.at(id)->cancel.request();
    stopped_by_shutdown_.insert(id);
  }
}

asio::awaitable<void> Engine::drain() {
  if (draining_) co_return;
  draining_ = true;
  queue_changed_.emit();
  log_.info("engine draining", {{"queued", queue_.size()}, {"drain_timeout_ms", config_.drain_timeout.count()}});
  while (auto id = queue_.pop()) {
    if (journal_) {
      leave_queued(*jobs_.at(*id));
    } else {
      finish(*jobs_.at(*id), JobState::kCancelled,
             Error{ErrorKind::kShuttingDown, "daemon shutting down before the job started"});
    }
  }
  // Submissions whose record is being written settle first (each is then
  // left queued like a queued job, and runs at the next start).
  while (accepting_ > 0) co_await job_finished_.wait();
  auto running = [this] {
    std::size_t n = 0;
    for (const WorkerView& w : workers_) n += w.job ? 1 : 0;
    return n;
  };
  const auto deadline = clock_->after(config_.drain_timeout);
  // No co_await inside `&&`: gcc 12 evaluated the awaited operand even when
  // the left one was false (a 30 s drain with nothing running).
  while (running() > 0) {
    bool notified = co_await job_finished_.wait_until(deadline);
    if (!notified) break;
  }
  if (running() > 0) {
    log_.warn("drain timeout: cancelling running jobs", {{"running", running()}});
    cancel_running();
    // Cooperative: each stops at its next stage boundary (bounded by one stage).
    while (running() > 0) co_await job_finished_.wait();
  }
  stopping_ = true;
  tasks_.close();
  work_available_.notify_all();
  critical_available_.notify_all();
  stop_.notify_all();
  queue_changed_.emit();
  co_await tasks_.join();
  // The journal's last records (the finishes above) on disk before we report drained.
  if (journal_writer_) co_await runtime::run_on(*journal_writer_, [] {});
  log_.info("engine drained", {{"completed_total", completed_total_},
                               {"failed_total", failed_total_},
                               {"cancelled_total", cancelled_total_},
                               {"left_queued", left_queued_total_}});
}

}  // namespace cuzk::engine
