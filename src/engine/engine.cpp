#include "engine/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <fstream>
#include <future>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>
#include <tuple>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "engine/engine_internal.hpp"
#include "engine/job_journal.hpp"
#include "engine/request_digest.hpp"
#include "groth16/proof.hpp"
#include "groth16/setup.hpp"
#include "groth16/prover.hpp"
#include "groth16/verifier.hpp"
#include "util/json_input.hpp"

namespace cuzk::engine {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

namespace {

// The verifier's public inputs of every partition of a C1, from public data
// only (replica_id, comm_d, comm_r, seed), never from the witness; a worker
// thread's call (porep_call's errors).
Result<std::vector<std::vector<ff::Fr>>> porep_partition_inputs(const fc::C1Output& c1) {
  return porep_call<std::vector<std::vector<ff::Fr>>>([&] {
    if (c1.vanilla_proofs.size() != c1.info().partitions) {
      throw fc::PorepC2Error(fc::PorepC2ErrorKind::kPartitionCount,
                             std::to_string(c1.vanilla_proofs.size()) + " partitions, " + std::string(c1.info().name) +
                                 " has " + std::to_string(c1.info().partitions));
    }
    return fc::porep_public_inputs(c1.registered_proof, c1.replica_id, c1.comm_d, c1.comm_r, c1.seed);
  });
}

}  // namespace

std::string porep_srs_id(fc::SealProof proof) {
  std::string_view name = fc::seal_proof_info(proof).name;  // "StackedDrg32GiBV1_1"
  constexpr std::string_view kPrefix = "StackedDrg";
  name.remove_prefix(kPrefix.size());
  return "porep-" + std::string(name.substr(0, name.rfind('V')));
}

namespace {

std::optional<fc::SealProof> porep_proof_for_srs_id(const std::string& id) {
  for (const fc::SealProofInfo& info : fc::seal_proofs()) {
    if (porep_srs_id(info.proof) == id) return info.proof;
  }
  return std::nullopt;
}

// The parameter set a C1 JSON names ("registered_proof": "StackedDrg32GiBV1_1"),
// read without parsing the document (the batch collector runs on the loop;
// a 32 GiB C1 is tens of MB: the key is searched first at the beginning,
// where our writer puts it, then from the end, where a serde struct with the
// field last puts it). nullopt: not found or unknown; the job then runs
// alone and its parse reports the error.
std::string unknown_set_message(const std::string& id) {
  return "unknown parameter set '" + id +
         "' (want demo-<log2 domain>, porep-<size>, window-post-<size>, winning-post-<size> or "
         "snap-deals-<size>, spelled exactly: demo-16, porep-32GiB, winning-post-32GiB)";
}

std::optional<std::string> porep_srs_of_c1(std::string_view json) {
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

}  // namespace

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

std::optional<std::string> porep_srs_of_c1_json(std::string_view c1_json) { return porep_srs_of_c1(c1_json); }

Engine::Engine(asio::any_io_executor loop, runtime::WorkerPool& cpu, ThreadPool& math, ParamStore& params,
               runtime::Logger& log, EngineConfig config)
    : loop_(loop),
      cpu_(cpu),
      math_(math),
      params_(params),
      log_(log),
      config_(config),
      started_at_(steady_clock::now()),
      queue_(config.admission),
      book_(config.result_ttl),
      work_available_(loop),
      critical_available_(loop),
      job_finished_(loop),
      stop_(loop),
      sets_(std::make_unique<ParamSets>(params.dir())),
      tasks_(loop) {
  if (config_.max_concurrent_jobs == 0) config_.max_concurrent_jobs = 1;
  memory_ = std::make_unique<MemoryGate>(loop_, config_.memory_budget_bytes != 0
                                                    ? config_.memory_budget_bytes
                                                    : std::numeric_limits<std::uint64_t>::max() / 2);
  devices_ = std::make_unique<DeviceSet>(loop_, std::make_shared<CpuBackend>(cpu_, math_),
                                         std::vector<std::shared_ptr<DeviceBackend>>{});
  stagings_ = std::make_unique<StagingPool>(loop_, staging_slots(*devices_));
  const policy::Clock* srs_clock = config_.srs_clock;
  if (!srs_clock) {
    own_srs_clock_ = std::make_unique<policy::SteadyClock>();
    srs_clock = own_srs_clock_.get();
  }
  policy::SrsConfig srs_config;
  srs_config.eviction_min_idle = config_.srs_min_idle;
  srs_ = std::make_unique<policy::SrsManager>(srs_config, memory_->budget(), *srs_clock);
  const std::size_t cores = std::max<std::size_t>(1, std::thread::hardware_concurrency());
  const std::size_t threads = config_.porep_synthesis_threads;
  synthesis_lanes_ = config_.porep_synthesis_lanes;
  if (synthesis_lanes_ == 0) {
    synthesis_lanes_ = threads > 1 ? std::max<std::size_t>(1, cores / threads) : std::max<std::size_t>(1, cores / 2);
  }
  const std::size_t lane_threads = synthesis_lanes_ * config_.max_concurrent_jobs;
  if (threads > 1) challenge_pools_ = std::make_unique<ThreadPoolSet>(lane_threads, threads);
  synthesis_ = std::make_unique<runtime::WorkerPool>(lane_threads);
  if (config_.critical_workers > 0)
    critical_synthesis_ = std::make_unique<runtime::WorkerPool>(config_.critical_workers);
  set_dev_params_generator({});
}

void Engine::set_gpu_backends(std::vector<std::shared_ptr<DeviceBackend>> gpus) {
  devices_ = std::make_unique<DeviceSet>(loop_, std::make_shared<CpuBackend>(cpu_, math_), std::move(gpus));
  stagings_ = std::make_unique<StagingPool>(loop_, staging_slots(*devices_));
}

void Engine::set_dev_params_generator(DevParamsGenerator generator) {
  dev_params_ = std::move(generator);
  const bool on_gpu = static_cast<bool>(dev_params_);
  porep_generator_ = [this, on_gpu](const groth16::R1cs& r1cs, ThreadPool& pool) {
    log_.warn("generating DEVELOPMENT parameters", {{"on", on_gpu ? "gpu" : "cpu"},
                                                   {"constraints", r1cs.num_constraints()},
                                                   {"aux", r1cs.num_aux()}});
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
        log_.info("development parameters", {{"percent", step * 5}, {"done", done}, {"total", total},
                                             {"elapsed_ms", ms_between(t0, steady_clock::now())}});
      }
    };
    groth16::Parameters p = dev_params_ ? dev_params_(r1cs, groth16::random_toxic_waste(), pool, progress)
                                        : groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), pool,
                                                                       progress);
    log_.info("development parameters generated",
              {{"on", on_gpu ? "gpu" : "cpu"}, {"ms", ms_between(t0, steady_clock::now())}});
    return p;
  };
}

PipelineDeps Engine::pipeline_deps(Priority priority) {
  runtime::WorkerPool& synthesis =
      priority == Priority::kCritical && critical_synthesis_ ? *critical_synthesis_ : *synthesis_;
  return PipelineDeps{synthesis, cpu_, *devices_, *memory_, log_, stagings_.get()};
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
  const auto now = steady_clock::now();
  auto restore = [&](RecoveredJob& r) {
    book_.restore(r.id, r.request_id);
    auto job = std::make_shared<Job>(loop_);
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
    log_.info("job resumed", {{"job", job->id}, {"request_id", job->request_id},
                              {"kind", to_string(job->request.kind)}, {"priority", to_string(job->priority)},
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
                                                std::to_string(config_.max_demo_log_domain) +
                                                "], got " + std::to_string(request.demo_log_domain));
  }
  if (!request.request_id.empty()) {
    if (auto existing = book_.find(request.request_id)) {
      const JobPtr& job = jobs_.at(*existing);
      // A job restored without its input is compared by digest (hashing a
      // resubmitted C1 of tens of MB here costs tens of ms on the loop: only
      // for a request id reused across a restart).
      bool same = job->input_known  ? job->request.same_work(request)
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
  auto job = std::make_shared<Job>(loop_);
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
    failed = co_await runtime::run_on(*journal_writer_, [this, &job, priority] {
      return journal_->accepted(job->id, job->request, priority);
    });
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
  if (const JobId* p = std::get_if<JobId>(&key)) id = *p;
  else id = book_.find(std::get<std::string>(key));
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
    const auto now = steady_clock::now();
    auto deadline = steady_clock::time_point::max();
    if (timeout.count() > 0 && timeout < duration_cast<milliseconds>(steady_clock::time_point::max() - now))
      deadline = now + timeout;
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
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while queued"});
  } else if (job->state == JobState::kRunning && !job->cancel_requested) {
    job->cancel_requested = true;
    log_.info("job cancel requested", {{"job", job->id}, {"stage", job->stage}});
  }
  return view(*job);
}

void Engine::set_stage(Job& job, JobState state, std::string stage) {
  // The journal counts restarts that find a job running (a job that crashes the daemon is not retried forever).
  if (journal_ && job.state == JobState::kQueued && state == JobState::kRunning) journal_started(job.id);
  job.state = state;
  job.stage = std::move(stage);
  log_.debug("job stage", {{"job", job.id}, {"kind", to_string(job.request.kind)}, {"stage", job.stage},
                           {"ms", ms_between(job.submitted_at, steady_clock::now())}});
  emit(job);
}

void Engine::finish(Job& job, JobState state, std::optional<Error> error) {
  job.state = state;
  job.stage = std::string(to_string(state));
  job.error = std::move(error);
  auto now = steady_clock::now();
  book_.finished(job.id, now);
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
    log_.warn("deadline missed", {{"job", job.id}, {"kind", to_string(job.request.kind)},
                                  {"state", to_string(state)}, {"deadline_unix_ms", job.request.deadline_unix_ms}});
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
      log_.info("job done", {{"job", job.id}, {"kind", to_string(job.request.kind)}, {"ms", total_ms},
                             {"queue_ms", t.queue_ms}, {"params_ms", t.params_ms},
                             {"synthesis_ms", t.synthesis_ms}, {"prove_ms", t.prove_ms},
                             {"verify_ms", t.verify_ms}});
      break;
    }
    case JobState::kFailed:
      ++failed_total_;
      ++failed_by_error_[job.error ? job.error->kind : ErrorKind::kInternal];
      log_.warn("job failed", {{"job", job.id}, {"kind", to_string(job.request.kind)}, {"ms", total_ms},
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
      log_.info("job cancelled", {{"job", job.id}, {"ms", total_ms},
                                  {"reason", job.error ? job.error->message : ""}});
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
  log_.info("job left queued for the next start", {{"job", job.id}, {"request_id", job.request_id},
                                                   {"kind", to_string(job.request.kind)}});
  emit(job);
  job.done.notify_all();
  job_finished_.notify_all();
}

void Engine::emit(const Job& job) {
  if (subscribers_.empty()) return;
  JobEvent ev{job.id, job.request_id, job.state, job.stage, ms_between(job.submitted_at, steady_clock::now()),
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
    std::vector<JobPtr> batch{job};
    if (config_.batch_max_size > 1 && job->request.kind == ProofKind::kGroth16Demo)
      co_await collect_batch(batch, config_.batch_max_size, config_.batch_max_wait);
    if (config_.porep_batch_max_jobs > 1 && job->request.kind == ProofKind::kPoRepC2)
      co_await collect_batch(batch, config_.porep_batch_max_jobs, config_.porep_batch_max_wait);
    // A member cancelled while the batch collected was finished by cancel().
    std::erase_if(batch, [](const JobPtr& j) { return j->state != JobState::kQueued; });
    if (batch.size() == 1) {
      co_await run_job(batch.front());
    } else if (batch.size() > 1 && batch.front()->request.kind == ProofKind::kPoRepC2) {
      co_await run_porep_batch(std::move(batch));
    } else if (batch.size() > 1) {
      co_await run_demo_batch(std::move(batch));
    }
    workers_[index].job.reset();
    if (queue_.empty() && std::none_of(workers_.begin(), workers_.end(), [](const WorkerView& w) { return w.job; })) {
      co_await release_idle_stagings();
    }
  }
}

// The engine went idle. The staging pool's page-locked buffers (a 32 GiB
// PoRep staging is ~24 GB) are counted by the memory budget only while a job
// holds a working set, so they are given back now rather than kept
// uncounted; the next job pins again (7-9 s on its first partition, H200
// host: hidden behind the synthesis of the next partitions).
asio::awaitable<void> Engine::release_idle_stagings() {
  if (!stagings_) co_return;
  std::vector<std::unique_ptr<InstanceStaging>> idle = stagings_->take_idle();
  if (idle.empty()) co_return;
  co_await runtime::run_on(cpu_, [&idle] { idle.clear(); });  // cudaFreeHost off the loop
}

asio::awaitable<void> Engine::run_job(JobPtr job) {
  if (job->request.kind == ProofKind::kPoRepC2) {
    std::vector<JobPtr> alone{job};
    co_await run_porep_batch(std::move(alone));
    co_return;
  }
  if (job->request.kind != ProofKind::kGroth16Demo) {
    co_await run_filecoin_job(std::move(job));
    co_return;
  }
  job->started_at = steady_clock::now();
  Timings t;
  t.queue_ms = ms_between(job->submitted_at, job->started_at);
  const std::uint32_t log_domain = job->request.demo_log_domain;
  const std::uint64_t seed = job->request.demo_seed;
  auto stage_done = [](steady_clock::time_point& since) {
    auto now = steady_clock::now();
    std::uint64_t ms = ms_between(since, now);
    since = now;
    return ms;
  };
  // Between stages: a requested cancel ends the job here.
  auto cancelled = [&]() {
    if (!job->cancel_requested) return false;
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
    return true;
  };
  try {
    auto since = steady_clock::now();
    set_stage(*job, JobState::kRunning, "params");
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    ParamStore::Loaded loaded =
        co_await runtime::run_on(cpu_, [this, log_domain, &admit] { return params_.get_demo(log_domain, admit); });
    t.params_ms = stage_done(since);
    // Held until the job ends: the set cannot be evicted under it.
    policy::SrsLease srs_lease =
        lease_srs(loaded.params->circuit_id,
                  params_host_bytes(loaded.params->params) + loaded.params->r1cs.memory_bytes(), job->priority);
    if (cancelled()) co_return;

    // Synthesis, proving on the job's back end, verification (a GPU proof
    // that fails it is proved again on the CPU): the partition pipeline with
    // one partition.
    const CircuitParams& cp = *loaded.params;
    PartitionPlan plan;
    plan.job = job->id;
    plan.priority = job->priority;
    plan.srs_key = cp.circuit_id;
    plan.partitions = 1;
    plan.witness_bytes = witness_bytes(cp.r1cs);
    plan.synthesis_lanes = 1;
    plan.max_in_flight = 1;
    plan.params = &cp.params;
    plan.r1cs = &cp.r1cs;
    plan.pvk = &cp.pvk;
    plan.synthesize = [log_domain, seed](std::uint32_t) -> Result<groth16::Witness> {
      std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
      return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)));
    };
    Job& j = *job;
    plan.on_stage = [this, &j](std::uint32_t, std::string_view stage) {
      set_stage(j, JobState::kRunning, std::string(stage));
    };
    Result<PipelineOutcome> outcome =
        co_await run_partition_pipeline(pipeline_deps(job->priority), plan, job->cancel_requested);
    if (!outcome) {
      if (outcome.error().kind == ErrorKind::kCancelled || job->cancel_requested) {
        finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
      } else {
        finish(*job, JobState::kFailed, outcome.error());
      }
      co_return;
    }
    const PartitionTiming& pt = outcome.value().timings.at(0);
    t.synthesis_ms = static_cast<std::uint64_t>(pt.synthesis_ms);
    t.prove_ms = static_cast<std::uint64_t>(pt.device_wait_ms + pt.prove_ms);
    t.verify_ms = static_cast<std::uint64_t>(pt.verify_ms);
    const std::vector<groth16::Proof>& proofs = outcome.value().proofs;
    const std::vector<ff::Fr>& public_inputs = outcome.value().public_inputs.at(0);
    ProofOutput out;
    out.proof = groth16::encode_proofs(proofs);
    for (const ff::Fr& x : public_inputs) {
      std::array<std::uint8_t, 32> le{};
      x.to_bytes_le(le);
      out.public_inputs.push_back(le);
    }
    out.vk_bytes = cp.vk_bytes;
    t.total_ms = ms_between(job->submitted_at, steady_clock::now());
    out.timings = t;
    job->output = std::move(out);
    finish(*job, JobState::kDone, std::nullopt);
  } catch (const ParamsRefused& e) {
    finish(*job, JobState::kFailed, e.error());
  } catch (const std::exception& e) {
    if (finish_from_exception(*job, e)) throw;
  }
}

// One job of a PoRep batch, from its C1 to its pipeline member.
struct Engine::PorepMember {
  JobPtr job;
  Timings t;
  std::shared_ptr<const fc::C1Output> c1;
  std::vector<std::vector<ff::Fr>> inputs;  // per partition, ONE excluded (public data only)
  steady_clock::time_point pipeline_started;  // when its partitions entered the pipeline
};

// A PoRep batch whose pipeline runs: what its members' callbacks and the
// admission of joiners share. In run_porep_batch's frame, which outlives
// the pipeline.
struct Engine::PorepBatch {
  std::string srs_key;
  Priority priority = Priority::kNormal;
  std::shared_ptr<const ParamSets::Ready> ready;
  // The batch's members, joiners appended: a deque, so that the pipeline's
  // callbacks keep pointing at their member while others join.
  std::deque<PorepMember>& members;
  BatchRegistration& registration;
  std::vector<JobPtr>& after;  // proved alone once the batch ends (another sector shape)
  std::size_t initial_members = 1;
  bool counted = false;  // in batches_total_
};

// What finish_porep needs of one member (its task owns it).
struct Engine::PorepFinish {
  JobPtr job;
  std::shared_ptr<const ParamSets::Ready> ready;
  std::vector<std::vector<ff::Fr>> inputs;
  Result<PipelineOutcome> outcome;
  Timings t;
  steady_clock::time_point pipeline_started;
  std::size_t batch_size = 1;
};

// PoRep C2 for one job or a batch of jobs of one sector shape (collected by
// the worker, "Batches" below): each member's C1 parsed and its public
// inputs derived, the parameters loaded once, then ONE partition pipeline
// over every member's partitions in order (shared lanes, in-flight bound and
// prover working sets; partitions spread over the GPUs), each member
// finished - its proofs batch-verified - as soon as its own last partition
// is proved.
asio::awaitable<void> Engine::run_porep_batch(std::vector<JobPtr> batch) {
  using Member = PorepMember;
  std::deque<Member> members;  // stable once the pipeline runs (PorepBatch)
  std::vector<JobPtr> other_shape;  // a C1 of another size than the batch's: proved alone afterwards
  const auto started = steady_clock::now();
  for (JobPtr& j : batch) {
    j->started_at = started;
    Member m;
    m.job = j;
    m.t.queue_ms = ms_between(j->submitted_at, started);
    members.push_back(std::move(m));
  }
  // Registered for cancel_running() (the worker's view names the head only).
  BatchRegistration registration(batch_members_);
  if (members.size() > 1) {
    ++batches_total_;
    batched_jobs_total_ += members.size();
    for (const Member& m : members) registration.add(m.job->id);
  }
  auto stage_all = [this, &members](const std::string& stage) {
    for (Member& m : members) set_stage(*m.job, JobState::kRunning, stage);
  };
  // Members finished along the way (cancelled, failed) leave the batch.
  auto prune = [this, &members] {
    for (Member& m : members) {
      if (m.job->cancel_requested && !is_finished(m.job->state))
        finish(*m.job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + m.job->stage});
    }
    std::erase_if(members, [](const Member& m) { return is_finished(m.job->state); });
    return members.empty();
  };
  auto fail_all = [this, &members](const Error& e) {
    for (Member& m : members)
      if (!is_finished(m.job->state)) finish(*m.job, JobState::kFailed, e);
    members.clear();
  };
  try {
    stage_all("c1");
    for (Member& m : members) {
      auto t0 = steady_clock::now();
      // The closures given to run_on capture plain references only: gcc 12
      // destroys such a closure temporary twice inside a co_await, so a
      // captured shared_ptr would lose a reference each time (a use-after-free
      // of the job under ASan). This frame outlives every closure (run_on).
      const std::string& c1_json = m.job->request.input;
      Result<std::shared_ptr<const fc::C1Output>> c1 = co_await runtime::run_on(cpu_, [&c1_json] {
        return porep_call<std::shared_ptr<const fc::C1Output>>(
            [&] { return std::make_shared<const fc::C1Output>(fc::parse_c1(c1_json)); });
      });
      m.t.synthesis_ms = ms_between(t0, steady_clock::now());  // parsing; partition synthesis is in the pipeline
      if (!c1) {
        finish(*m.job, JobState::kFailed, c1.error());
        continue;
      }
      m.c1 = std::move(c1.value());
    }
    if (prune()) co_return;
    // One parameter set: the first member's sector shape.
    const fc::SealProof proof = members.front().c1->registered_proof;
    const std::string srs_key = porep_srs_id(proof);
    for (Member& m : members)
      if (porep_srs_id(m.c1->registered_proof) != srs_key) other_shape.push_back(m.job);
    std::erase_if(members, [&srs_key](const Member& m) { return porep_srs_id(m.c1->registered_proof) != srs_key; });

    // Development parameters are generated on first use: on a GPU when the
    // daemon has one (a 32 GiB setup takes hours on the CPU), with progress
    // in the log.
    stage_all("params");
    auto since = steady_clock::now();
    const fc::ParamsGenerator& generate = porep_generator_;
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    Result<std::shared_ptr<const ParamSets::Ready>> ready =
        co_await runtime::run_on(cpu_, [this, proof, &generate, &admit] {
          return porep_call<std::shared_ptr<const ParamSets::Ready>>(
              [&] { return sets_->get(proof, math_, generate, admit); });
        });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    if (!ready) {
      fail_all(ready.error());
    } else if (!prune()) {
      const ParamSets::Ready& r = *ready.value();
      // Held until the batch ends. Charged: the parameters and the R1cs (the
      // compiled shape itself stays cached in PorepC2 after an eviction).
      policy::SrsLease srs_lease =
          lease_srs(srs_key, params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes(), members.front().job->priority);

      // The verifier's public inputs, from public data only (replica_id,
      // comm_d, comm_r, seed), never from the witness.
      stage_all("inputs");
      for (Member& m : members) {
        const fc::C1Output& c1_out = *m.c1;
        Result<std::vector<std::vector<ff::Fr>>> inputs =
            co_await runtime::run_on(cpu_, [&c1_out] { return porep_partition_inputs(c1_out); });
        if (!inputs) {
          finish(*m.job, JobState::kFailed, inputs.error());
          continue;
        }
        m.inputs = std::move(inputs.value());
      }
      if (!prune()) {
        // Per partition: synthesis on the synthesis pool (bounded by lanes,
        // the in-flight bound and the memory budget), checks, proving on the
        // GPUs as soon as a partition is ready, verification of each proof.
        // Each member brings its own callbacks (porep_plan_member), as a
        // joiner does.
        PartitionPlan plan;
        plan.job = members.front().job->id;
        plan.priority = members.front().job->priority;
        plan.srs_key = srs_key;
        plan.witness_bytes = witness_bytes(*r.r1cs);
        plan.synthesis_lanes = synthesis_lanes_;
        plan.max_in_flight = config_.porep_max_partitions_in_flight != 0 ? config_.porep_max_partitions_in_flight
                                                                          : synthesis_lanes_ + 1;
        plan.params = &r.loaded.params;
        plan.r1cs = r.r1cs.get();
        plan.pvk = &r.pvk;
        plan.satisfaction = config_.porep_check_satisfaction ? groth16::SatisfactionCheck::kCheck
                                                             : groth16::SatisfactionCheck::kSkip;
        PorepBatch running{srs_key, plan.priority, ready.value(), members, registration, other_shape,
                           members.size(), members.size() > 1};
        const auto pipeline_started = steady_clock::now();
        std::vector<PlanMember> plan_members;
        plan.partitions = 0;
        for (Member& m : members) {
          m.pipeline_started = pipeline_started;
          plan_members.push_back(porep_plan_member(m, running));
          plan.partitions += plan_members.back().partitions;
        }
        if (members.size() > 1)
          log_.info("porep batch", {{"jobs", members.size()}, {"srs", srs_key}, {"partitions", plan.partitions}});
        stage_all("prove");
        // A PoRep job of this shape and priority queued meanwhile joins the
        // run (admit_porep_joiners) so the GPUs do not wait for its first wave.
        BatchAdmitter admit;
        if (config_.porep_join_running_batch && config_.porep_batch_max_jobs > 1) {
          admit = [this, &running](BatchDoor& door) { return admit_porep_joiners(&running, &door); };
        }
        // Each member is finished by its on_done (a task of its own).
        co_await run_batch_pipeline(pipeline_deps(), plan, std::move(plan_members), std::move(admit));
        members.clear();
      }
    }
  } catch (const std::exception& e) {
    bool shutdown = false;
    for (Member& m : members)  // a member answered by the pipeline has given its job to its finish
      if (m.job && !is_finished(m.job->state)) shutdown = finish_from_exception(*m.job, e) || shutdown;
    for (JobPtr& j : other_shape)
      if (!is_finished(j->state)) shutdown = finish_from_exception(*j, e) || shutdown;
    if (shutdown) throw;
    co_return;
  }
  for (JobPtr& j : other_shape) {
    std::vector<JobPtr> alone{j};
    co_await run_porep_batch(std::move(alone));
  }
}

// A PoRep member's part of the pipeline: its own synthesis, checks, public
// inputs and stages by its partition index, and its finish (a task of its
// own, as soon as its partitions are proved). The callbacks point at `m`
// and `b`, which outlive the pipeline (run_porep_batch's frame).
PlanMember Engine::porep_plan_member(PorepMember& m, PorepBatch& b) {
  PlanMember pm;
  pm.job = m.job->id;
  pm.partitions = static_cast<std::uint32_t>(m.inputs.size());
  pm.cancel = &m.job->cancel_requested;
  pm.public_inputs = m.inputs;
  const fc::C1Output* c1 = m.c1.get();
  pm.synthesize = [this, c1](std::uint32_t i) {
    return porep_call<groth16::Witness>([&] {
      if (!challenge_pools_) return fc::synthesize_partition(*c1, i);
      // One pool per lane thread: never waits.
      const ThreadPoolSet::Lease lease = challenge_pools_->acquire();
      return fc::synthesize_partition(*c1, i, &lease.pool());
    });
  };
  // porep_check_satisfaction: every constraint is checked by the prover,
  // fused into its evaluation of a, b, c (one Fr multiplication per row). As
  // a separate pass here it cost ~15 thread-s per 32 GiB partition (H200
  // host, 16 cores), as much as the evaluation itself, on a CPU-bound
  // pipeline. The lane keeps the cheap checks (shape, public inputs).
  const ParamSets::Ready* r = b.ready.get();
  const std::vector<std::vector<ff::Fr>>* inputs = &m.inputs;
  pm.check = [this, r, inputs](std::uint32_t i, const groth16::Witness& w) -> std::optional<Error> {
    Result<bool> ok = porep_call<bool>([&] {
      fc::check_partition_witness(*r->r1cs, w, inputs->at(i), i, math_, /*check_satisfaction=*/false);
      return true;
    });
    if (!ok) return ok.error();
    return std::nullopt;
  };
  Job* job = m.job.get();
  pm.on_stage = [this, job](std::uint32_t i, std::string_view stage) {
    set_stage(*job, JobState::kRunning, "partition " + std::to_string(i) + ": " + std::string(stage));
  };
  PorepMember* member = &m;
  PorepBatch* batch = &b;
  // Nothing of the member is synthesized after this (it is answered once
  // nothing of it is in flight): its C1 and job go with it, so a batch that
  // keeps admitting joiners holds only its live members' (a 32 GiB C1 is
  // large).
  pm.on_done = [this, member, batch](const Result<PipelineOutcome>& out) {
    auto f = std::make_shared<PorepFinish>(PorepFinish{std::move(member->job), batch->ready,
                                                        std::move(member->inputs), out, member->t,
                                                        member->pipeline_started, batch->members.size()});
    member->c1.reset();
    // The worker running the batch names a member still proving (status,
    // drain), not one already answered.
    for (WorkerView& w : workers_) {
      if (w.job != f->job->id) continue;
      for (const PorepMember& other : batch->members) {
        if (other.job && !is_finished(other.job->state)) {
          w.job = other.job->id;
          break;
        }
      }
    }
    if (!tasks_.spawn(finish_porep(f))) {
      finish(*f->job, JobState::kCancelled, Error{ErrorKind::kShuttingDown, "daemon shutting down"});
    }
  };
  return pm;
}

// Joiners of a running PoRep batch (EngineConfig::porep_join_running_batch):
// while the pipeline's intake is open, the job at the head of the queue
// joins when decide_join (policy.hpp) says so. Polled: a submit wakes an
// idle worker, not this (a worker that is idle takes the job itself).
asio::awaitable<void> Engine::admit_porep_joiners(PorepBatch* batch, BatchDoor* door) {
  constexpr std::chrono::milliseconds kJoinPoll{50};
  while (door->open() && !draining_ && !stopping_) {
    std::optional<QueueHead> head;
    JobPtr next;
    if (std::optional<JobId> id = queue_.front()) {
      next = jobs_.at(*id);
      if (next->request.kind == ProofKind::kPoRepC2 && !next->porep_srs)
        next->porep_srs = porep_srs_of_c1(next->request.input).value_or("");
      head = QueueHead{next->request.kind, next->priority,
                       next->porep_srs ? std::string_view(*next->porep_srs) : std::string_view()};
    }
    const RunningBatch running{batch->srs_key, batch->priority, door->unfinished(), config_.porep_batch_max_jobs};
    const JoinDecision decision = decide_join(running, head);
    if (decision == JoinDecision::kClose) {
      log_.info("porep batch closed to joiners", {{"srs", batch->srs_key}, {"waiting_job", next->id},
                                                  {"waiting_priority", std::string(to_string(next->priority))}});
      co_return;
    }
    if (decision == JoinDecision::kWait) {
      co_await door->wait(kJoinPoll);
      continue;
    }
    queue_.remove(next->id);
    co_await join_porep(batch, door, door->hold(), std::move(next));
  }
}

// A joiner's c1 and inputs stages (as run_porep_batch's, the parameters
// already loaded), then its partitions after the batch's. `hold` keeps the
// pipeline's intake open meanwhile.
asio::awaitable<void> Engine::join_porep(PorepBatch* batch, BatchDoor* door, BatchDoor::Hold hold, JobPtr job) {
  (void)hold;  // held until this returns
  const auto started = steady_clock::now();
  job->started_at = started;
  PorepMember m;
  m.job = job;
  m.t.queue_ms = ms_between(job->submitted_at, started);
  batch->registration.add(job->id);  // cancel_running()
  try {
    set_stage(*job, JobState::kRunning, "c1");
    const std::string& c1_json = job->request.input;  // plain references: see run_porep_batch
    Result<std::shared_ptr<const fc::C1Output>> c1 = co_await runtime::run_on(cpu_, [&c1_json] {
      return porep_call<std::shared_ptr<const fc::C1Output>>(
          [&] { return std::make_shared<const fc::C1Output>(fc::parse_c1(c1_json)); });
    });
    m.t.synthesis_ms = ms_between(started, steady_clock::now());
    if (!c1) {
      finish(*job, JobState::kFailed, c1.error());
      co_return;
    }
    m.c1 = std::move(c1.value());
    if (porep_srs_id(m.c1->registered_proof) != batch->srs_key) {
      batch->after.push_back(job);  // its C1's key said otherwise: proved alone after the batch
      co_return;
    }
    set_stage(*job, JobState::kRunning, "inputs");
    const fc::C1Output& c1_out = *m.c1;
    Result<std::vector<std::vector<ff::Fr>>> inputs =
        co_await runtime::run_on(cpu_, [&c1_out] { return porep_partition_inputs(c1_out); });
    if (!inputs) {
      finish(*job, JobState::kFailed, inputs.error());
      co_return;
    }
    m.inputs = std::move(inputs.value());
    if (job->cancel_requested) {
      finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
      co_return;
    }
  } catch (const std::exception& e) {
    if (finish_from_exception(*job, e)) throw;
    co_return;
  }
  m.pipeline_started = steady_clock::now();
  batch->members.push_back(std::move(m));
  PorepMember& member = batch->members.back();
  set_stage(*job, JobState::kRunning, "prove");
  if (!door->add(porep_plan_member(member, *batch))) {
    batch->after.push_back(job);  // the intake closed meanwhile: proved alone after the batch
    co_return;
  }
  // Counted as a batch once it has two members, each joiner as a batched job.
  if (!batch->counted) {
    ++batches_total_;
    batched_jobs_total_ += batch->initial_members;
    batch->counted = true;
  }
  ++batched_jobs_total_;
  log_.info("porep job joined a running batch", {{"job", job->id}, {"srs", batch->srs_key},
                                                 {"queue_ms", member.t.queue_ms},
                                                 {"unfinished", door->unfinished()}});
}

// A PoRep member's end, from its pipeline result: all its partitions
// verified together, as a verifier sees them (prove_c2's final check).
asio::awaitable<void> Engine::finish_porep(std::shared_ptr<PorepFinish> f) {
  Job& job = *f->job;
  // The batch's own error path may have finished it (shutdown) meanwhile.
  if (is_finished(job.state)) co_return;
  try {
    if (!f->outcome) {
      if (f->outcome.error().kind == ErrorKind::kCancelled || job.cancel_requested) {
        finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
      } else {
        finish(job, JobState::kFailed, f->outcome.error());
      }
      co_return;
    }
    Timings t = f->t;
    auto since = steady_clock::now();
    t.prove_ms = ms_between(f->pipeline_started, since);
    const PipelineOutcome& outcome = f->outcome.value();
    double synthesis_ms = 0, prove_ms = 0, verify_ms = 0;
    for (const PartitionTiming& pt : outcome.timings) {
      synthesis_ms += pt.synthesis_ms;
      prove_ms += pt.prove_ms;
      verify_ms += pt.verify_ms;
    }
    set_stage(job, JobState::kRunning, "verify");
    const ParamSets::Ready& r = *f->ready;
    const std::vector<std::vector<ff::Fr>>& all_inputs = f->inputs;
    const std::vector<std::uint8_t> proof_bytes = groth16::encode_proofs(outcome.proofs);
    std::string detail;
    groth16::VerifyResult verdict = co_await runtime::run_on(cpu_, [&r, &proof_bytes, &all_inputs, &detail] {
      return fc::verify_porep_proof(r.pvk, proof_bytes, all_inputs, &detail);
    });
    t.verify_ms = ms_between(since, steady_clock::now());
    if (is_finished(job.state)) co_return;
    if (job.cancel_requested) {
      finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
      co_return;
    }
    if (verdict != groth16::VerifyResult::kValid) {
      finish(job, JobState::kFailed,
             Error{ErrorKind::kInternal, "the partition proofs do not batch-verify (" + detail + ")"});
      co_return;
    }
    log_.info("porep c2 proved", {{"job", job.id},
                                  {"partitions", outcome.proofs.size()},
                                  {"batch", f->batch_size},
                                  {"wall_ms", ms_between(job.started_at, steady_clock::now())},
                                  {"params_ms", t.params_ms},
                                  {"pipeline_ms", t.prove_ms},
                                  {"synthesis_ms_sum", synthesis_ms},
                                  {"prove_ms_sum", prove_ms},
                                  {"verify_ms_sum", verify_ms},
                                  {"batch_verify_ms", t.verify_ms},
                                  {"cpu_retries", outcome.cpu_retries},
                                  {"peak_in_flight", outcome.peak_in_flight},
                                  {"peak_reserved_bytes", memory_->stats().peak_reserved_bytes},
                                  {"rss_bytes", resident_bytes()},
                                  {"peak_rss_bytes", peak_resident_bytes()}});
    ProofOutput out;
    out.proof = proof_bytes;
    out.vk_bytes = r.vk_bytes;
    t.total_ms = ms_between(job.submitted_at, steady_clock::now());
    out.timings = t;
    job.output = std::move(out);
    finish(job, JobState::kDone, std::nullopt);
  } catch (const std::exception& e) {
    if (finish_from_exception(job, e)) throw;
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

asio::awaitable<void> Engine::expiry_loop() {
  using namespace std::chrono_literals;
  while (!stopping_) {
    for (JobId id : book_.expire(steady_clock::now())) jobs_.erase(id);
    auto next = book_.next_expiry().value_or(steady_clock::time_point::max());
    // Re-check at least every second: jobs finishing meanwhile add earlier expiries.
    co_await stop_.wait_until(std::min(next, steady_clock::now() + 1s));
  }
}

// ---------------------------------------------------------------------------
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
    const std::uint64_t work_bytes = proving ? devices->host_bytes_per_prove(r1cs) + 2 * witness_bytes(r1cs) : 0;
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
    log_.info("parameters evicted", {{"srs", id}, {"bytes", a.bytes}, {"dropped", dropped}});
  }
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
}

void Engine::sweep_idle_srs() {
  const std::uint64_t min_idle_ms = static_cast<std::uint64_t>(config_.srs_min_idle.count());
  std::vector<policy::SrsEntryView> idle;
  for (policy::SrsEntryView& v : srs_->entries()) {
    if (v.pinned == policy::Residency::kResident && v.pinned_refs == 0 && v.idle_ms >= min_idle_ms)
      idle.push_back(std::move(v));
  }
  // Least recently used first.
  std::sort(idle.begin(), idle.end(), [](const auto& a, const auto& b) {
    return std::tie(b.idle_ms, a.key) < std::tie(a.idle_ms, b.key);
  });
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
    co_await stop_.wait_until(steady_clock::now() + config_.srs_sweep_period);
  }
}

asio::awaitable<Result<ParamsInfo>> Engine::preload(std::string srs_id) {
  const auto log_domain = parse_demo_circuit_id(srs_id);
  const auto porep = porep_proof_for_srs_id(srs_id);
  const auto spec = circuit_set_spec(srs_id);
  if (!log_domain && !porep && !spec) co_return Error{ErrorKind::kInvalidInput, unknown_set_message(srs_id)};
  if (log_domain && *log_domain > config_.max_demo_log_domain)
    co_return Error{ErrorKind::kInvalidInput, "demo size above engine.max_demo_log_domain"};
  const bool already =
      srs_->residency(policy::SrsKey{srs_id, policy::SrsKind::kGroth16Params}, std::nullopt) ==
      policy::Residency::kResident;
  auto t0 = steady_clock::now();
  const ParamsAdmit admit = params_admit(/*proving=*/false);
  try {
    std::uint64_t host_bytes = 0;
    // Kept until the lease below is taken (an eviction meanwhile only drops the cache's reference).
    std::shared_ptr<const void> keep;
    if (log_domain) {
      ParamStore::Loaded l =
          co_await runtime::run_on(cpu_, [this, k = *log_domain, &admit] { return params_.get_demo(k, admit); });
      host_bytes = params_host_bytes(l.params->params) + l.params->r1cs.memory_bytes();
      keep = l.params;
    } else {
      const fc::ParamsGenerator& generate = porep_generator_;
      const std::optional<fc::SealProof>& proof = porep;
      const std::optional<CircuitSetSpec>& set = spec;
      Result<std::shared_ptr<const ParamSets::Ready>> ready =
          co_await runtime::run_on(cpu_, [this, &proof, &set, &generate, &admit] {
            return porep_call<std::shared_ptr<const ParamSets::Ready>>([&] {
              return proof ? sets_->get(*proof, math_, generate, admit) : sets_->get(*set, math_, generate, admit);
            });
          });
      if (!ready) co_return ready.error();
      host_bytes = params_host_bytes(ready.value()->loaded.params) + ready.value()->r1cs->memory_bytes();
      keep = ready.value();
    }
    // Resident without a holder: idle from now (evictable after srs_min_idle).
    lease_srs(srs_id, host_bytes, Priority::kNormal);  // the lease ends here
    co_return ParamsInfo{already, ms_between(t0, steady_clock::now())};
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
  if (!parse_demo_circuit_id(srs_id) && !porep_proof_for_srs_id(srs_id) && !circuit_set_spec(srs_id))
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

EngineStatus Engine::status() const {
  EngineStatus s;
  s.uptime_ms = ms_between(started_at_, steady_clock::now());
  s.draining = draining_;
  for (int p = 0; p < kNumPriorities; ++p)
    s.queued[static_cast<std::size_t>(p)] = static_cast<std::uint32_t>(queue_.size(static_cast<Priority>(p)));
  s.queue_capacity = static_cast<std::uint32_t>(queue_.policy().capacity);
  for (const auto& [id, job] : jobs_) s.jobs.push_back(view(*job));
  s.workers = workers_;
  s.loaded_params = params_.loaded();
  s.resident_bytes = resident_bytes();
  s.completed_total = completed_total_;
  s.failed_total = failed_total_;
  s.cancelled_total = cancelled_total_;
  s.devices = devices_->views();
  s.cpu_retries_total = devices_->cpu_retries();
  // Tier "host" is the policy's pinned tier (the engine's in-memory copy).
  for (const policy::SrsEntryView& e : srs_->entries()) {
    if (e.pinned == policy::Residency::kResident)
      s.srs.push_back(SrsResidencyView{e.key.path, "host", -1, e.sizes.pinned_bytes});
  }
  for (const DeviceWorkerView& d : s.devices) {
    if (!d.resident_srs.empty()) {
      s.srs.push_back(
          SrsResidencyView{d.resident_srs, "device", static_cast<std::int32_t>(d.index), d.resident_srs_bytes});
    }
  }
  // Tier "pinned": the part of a device's resident SRS its budget could not
  // hold, kept in page-locked host memory and streamed by every proof (not
  // the policy's pinned tier above).
  for (std::size_t i = 0; i < devices_->gpu_count(); ++i) {
    const DeviceSet::Slot& slot = devices_->gpu(i);
    if (!slot.resident_srs.empty() && slot.resident_srs_pinned_bytes != 0) {
      s.srs.push_back(SrsResidencyView{slot.resident_srs, "pinned", static_cast<std::int32_t>(slot.index),
                                       slot.resident_srs_pinned_bytes});
    }
  }
  policy::BudgetStats b = memory_->stats();
  s.memory.total_bytes = config_.memory_budget_bytes != 0 ? b.total_bytes : 0;  // 0: unlimited
  s.memory.reserved_bytes = b.reserved_bytes;
  s.memory.available_bytes = config_.memory_budget_bytes != 0 ? b.available_bytes : 0;
  s.memory.peak_reserved_bytes = b.peak_reserved_bytes;
  for (std::size_t p = 0; p < b.waiting.size(); ++p) {
    s.memory.waiting += b.waiting[p];
    s.memory.waiting_bytes += b.waiting_bytes[p];
  }
  return s;
}

std::string Engine::metrics() const {
  std::ostringstream o;
  auto family = [&o](const char* name, const char* type, const char* help) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
  };
  EngineStatus s = status();
  family("cuzk_uptime_seconds", "gauge", "Seconds since the engine started.");
  o << "cuzk_uptime_seconds " << static_cast<double>(s.uptime_ms) / 1000.0 << '\n';
  family("cuzk_queue_depth", "gauge", "Jobs waiting in the queue, by priority.");
  for (int p = 0; p < kNumPriorities; ++p)
    o << "cuzk_queue_depth{priority=\"" << to_string(static_cast<Priority>(p)) << "\"} "
      << s.queued[static_cast<std::size_t>(p)] << '\n';
  family("cuzk_queue_capacity", "gauge", "Queue bound; submissions beyond it are refused as overloaded.");
  o << "cuzk_queue_capacity " << s.queue_capacity << '\n';
  std::size_t running = 0;
  for (const WorkerView& w : s.workers) running += w.job ? 1 : 0;
  family("cuzk_running_jobs", "gauge", "Jobs currently in the proving pipeline.");
  o << "cuzk_running_jobs " << running << '\n';
  family("cuzk_workers", "gauge", "Pipeline workers (jobs proved concurrently).");
  o << "cuzk_workers " << s.workers.size() << '\n';
  family("cuzk_jobs_submitted_total", "counter", "Jobs admitted.");
  o << "cuzk_jobs_submitted_total " << submitted_total_ << '\n';
  family("cuzk_jobs_deduplicated_total", "counter", "Submissions answered with an existing job (same request id).");
  o << "cuzk_jobs_deduplicated_total " << deduplicated_total_ << '\n';
  family("cuzk_jobs_rejected_total", "counter", "Submissions refused, by error kind.");
  for (ErrorKind k : {ErrorKind::kInvalidInput, ErrorKind::kOverloaded, ErrorKind::kUnimplemented,
                      ErrorKind::kShuttingDown})
    o << "cuzk_jobs_rejected_total{reason=\"" << to_string(k) << "\"} "
      << rejected_total_[static_cast<std::size_t>(k)] << '\n';
  family("cuzk_jobs_finished_total", "counter", "Jobs finished, by outcome.");
  o << "cuzk_jobs_finished_total{outcome=\"done\"} " << completed_total_ << '\n';
  o << "cuzk_jobs_finished_total{outcome=\"failed\"} " << failed_total_ << '\n';
  o << "cuzk_jobs_finished_total{outcome=\"cancelled\"} " << cancelled_total_ << '\n';
  family("cuzk_proofs_total", "counter", "Jobs finished with a proof, by proof kind.");
  for (ProofKind k : {ProofKind::kGroth16Demo, ProofKind::kPoRepC2, ProofKind::kWindowPost, ProofKind::kWinningPost,
                      ProofKind::kSnapDeals}) {
    auto it = done_by_kind_.find(k);
    o << "cuzk_proofs_total{kind=\"" << to_string(k) << "\"} " << (it == done_by_kind_.end() ? 0 : it->second)
      << '\n';
  }
  family("cuzk_deadline_missed_total", "counter",
         "Jobs that ended (done or failed) after their request's deadline, by proof kind.");
  for (ProofKind k : {ProofKind::kGroth16Demo, ProofKind::kPoRepC2, ProofKind::kWindowPost, ProofKind::kWinningPost,
                      ProofKind::kSnapDeals}) {
    auto it = deadline_missed_by_kind_.find(k);
    o << "cuzk_deadline_missed_total{kind=\"" << to_string(k) << "\"} "
      << (it == deadline_missed_by_kind_.end() ? 0 : it->second) << '\n';
  }
  family("cuzk_job_failures_total", "counter", "Jobs that failed after admission, by error kind.");
  for (ErrorKind k : {ErrorKind::kInvalidInput, ErrorKind::kNotFound, ErrorKind::kInternal, ErrorKind::kTimeout}) {
    auto it = failed_by_error_.find(k);
    o << "cuzk_job_failures_total{kind=\"" << to_string(k) << "\"} " << (it == failed_by_error_.end() ? 0 : it->second)
      << '\n';
  }
  for (const auto& [k, n] : failed_by_error_) {  // any other kind, once it happened
    if (k != ErrorKind::kInvalidInput && k != ErrorKind::kNotFound && k != ErrorKind::kInternal &&
        k != ErrorKind::kTimeout)
      o << "cuzk_job_failures_total{kind=\"" << to_string(k) << "\"} " << n << '\n';
  }
  family("cuzk_job_duration_seconds", "histogram", "Submit-to-result latency of successful jobs.");
  for (std::size_t i = 0; i < kLatencyBucketsS.size(); ++i)
    o << "cuzk_job_duration_seconds_bucket{le=\"" << kLatencyBucketsS[i] << "\"} " << latency_buckets_[i] << '\n';
  o << "cuzk_job_duration_seconds_bucket{le=\"+Inf\"} " << completed_total_ << '\n';
  o << "cuzk_job_duration_seconds_sum " << latency_sum_s_ << '\n';
  o << "cuzk_job_duration_seconds_count " << completed_total_ << '\n';
  family("cuzk_stage_seconds_total", "counter", "Time spent per pipeline stage by successful jobs.");
  const char* stages[] = {"params", "synthesis", "prove", "verify"};
  for (std::size_t i = 0; i < 4; ++i)
    o << "cuzk_stage_seconds_total{stage=\"" << stages[i] << "\"} " << stage_sum_s_[i] << '\n';
  std::uint64_t params_bytes = 0;
  for (const auto& e : s.loaded_params) params_bytes += e.bytes;
  family("cuzk_params_loaded_bytes", "gauge", "Bytes of Groth16 parameter files held in memory.");
  o << "cuzk_params_loaded_bytes " << params_bytes << '\n';
  family("cuzk_process_resident_bytes", "gauge", "Resident set size of the daemon.");
  o << "cuzk_process_resident_bytes " << s.resident_bytes << '\n';
  family("cuzk_device_proofs_total", "counter", "Proofs made and verified, by back end.");
  for (const DeviceWorkerView& d : s.devices)
    o << "cuzk_device_proofs_total{device=\"" << d.name << "\"} " << d.proofs_done << '\n';
  family("cuzk_device_verify_failures_total", "counter", "Proofs of a back end that failed verification.");
  for (const DeviceWorkerView& d : s.devices)
    o << "cuzk_device_verify_failures_total{device=\"" << d.name << "\"} " << d.verify_failures << '\n';
  family("cuzk_device_busy", "gauge", "1 while the back end proves.");
  for (const DeviceWorkerView& d : s.devices)
    o << "cuzk_device_busy{device=\"" << d.name << "\"} " << (d.job ? 1 : 0) << '\n';
  family("cuzk_gpu_cpu_retries_total", "counter",
         "GPU proofs that failed verification and were proved again on the CPU.");
  o << "cuzk_gpu_cpu_retries_total " << s.cpu_retries_total << '\n';
  family("cuzk_batches_total", "counter",
         "Batches of several jobs of one circuit: one prover call (demo) or one partition pipeline (PoRep).");
  o << "cuzk_batches_total " << batches_total_ << '\n';
  family("cuzk_batched_jobs_total", "counter", "Jobs proved as members of a batch.");
  o << "cuzk_batched_jobs_total " << batched_jobs_total_ << '\n';
  family("cuzk_srs_resident_bytes", "gauge",
         "Bytes of parameters (SRS) resident, by tier (pinned: a device SRS's page-locked host part).");
  std::uint64_t host_srs = 0, device_srs = 0, pinned_srs = 0;
  for (const SrsResidencyView& r : s.srs)
    (r.tier == "device" ? device_srs : r.tier == "pinned" ? pinned_srs : host_srs) += r.bytes;
  o << "cuzk_srs_resident_bytes{tier=\"host\"} " << host_srs << '\n';
  o << "cuzk_srs_resident_bytes{tier=\"device\"} " << device_srs << '\n';
  o << "cuzk_srs_resident_bytes{tier=\"pinned\"} " << pinned_srs << '\n';
  // Per back end, not a tier of the SRS gauge above: the matrices are the
  // circuit's, not parameters, and take device memory beside the SRS.
  family("cuzk_device_r1cs_matrices_bytes", "gauge",
         "Device bytes of R1CS matrices kept resident for evaluating a, b, c on the device, by back end.");
  for (const DeviceWorkerView& d : s.devices)
    o << "cuzk_device_r1cs_matrices_bytes{device=\"" << d.name << "\"} " << d.r1cs_matrices_bytes << '\n';
  // The MSM scratch arena grows on demand and is kept between proofs: after
  // the SRS the largest device consumer (~54 of 58.2 GiB on an H200 after a
  // 32 GiB PoRep); the limit shows how far it may still grow.
  family("cuzk_device_msm_scratch_bytes", "gauge", "Device bytes the MSM scratch arena holds now, by back end.");
  for (const DeviceWorkerView& d : s.devices)
    o << "cuzk_device_msm_scratch_bytes{device=\"" << d.name << "\"} " << d.msm_scratch_bytes << '\n';
  family("cuzk_device_msm_scratch_limit_bytes", "gauge",
         "Device bytes the MSM scratch arena may grow to, by back end (0: the CPU).");
  for (const DeviceWorkerView& d : s.devices)
    o << "cuzk_device_msm_scratch_limit_bytes{device=\"" << d.name << "\"} " << d.msm_scratch_limit_bytes << '\n';
  family("cuzk_memory_budget_bytes", "gauge",
         "Host-memory budget: total (0 unlimited), reserved, peak reserved, waiting.");
  o << "cuzk_memory_budget_bytes{kind=\"total\"} " << s.memory.total_bytes << '\n';
  o << "cuzk_memory_budget_bytes{kind=\"reserved\"} " << s.memory.reserved_bytes << '\n';
  o << "cuzk_memory_budget_bytes{kind=\"peak_reserved\"} " << s.memory.peak_reserved_bytes << '\n';
  o << "cuzk_memory_budget_bytes{kind=\"waiting\"} " << s.memory.waiting_bytes << '\n';
  family("cuzk_memory_budget_waiters", "gauge", "Requests waiting for host memory.");
  o << "cuzk_memory_budget_waiters " << s.memory.waiting << '\n';
  return o.str();
}

void Engine::cancel_running() {
  for (const WorkerView& w : workers_) {
    if (!w.job) continue;
    jobs_.at(*w.job)->cancel_requested = true;
    stopped_by_shutdown_.insert(*w.job);
  }
  for (JobId id : batch_members_) {
    jobs_.at(id)->cancel_requested = true;
    stopped_by_shutdown_.insert(id);
  }
}

asio::awaitable<void> Engine::drain() {
  if (draining_) co_return;
  draining_ = true;
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
  auto deadline = steady_clock::now() + config_.drain_timeout;
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
  co_await tasks_.join();
  // The journal's last records (the finishes above) on disk before we report drained.
  if (journal_writer_) co_await runtime::run_on(*journal_writer_, [] {});
  log_.info("engine drained", {{"completed_total", completed_total_}, {"failed_total", failed_total_},
                               {"cancelled_total", cancelled_total_}, {"left_queued", left_queued_total_}});
}

// ---------------------------------------------------------------------------
// Batches: demo jobs of one size share parameters and R1cs, so their witnesses
// go through ONE prover call (one pass over the SRS per MSM for all of them;
// on a GPU the SRS upload and the launches amortize). Each member still gets
// its own verified proof, its own timings and its own outcome.

bool Engine::batchable_with(Job& head, Job& other) {
  if (head.request.kind != other.request.kind) return false;
  switch (head.request.kind) {
    case ProofKind::kGroth16Demo:
      return other.request.demo_log_domain == head.request.demo_log_domain;
    case ProofKind::kPoRepC2: {
      for (Job* j : {&head, &other})
        if (!j->porep_srs) j->porep_srs = porep_srs_of_c1(j->request.input).value_or("");
      return !head.porep_srs->empty() && *other.porep_srs == *head.porep_srs;
    }
    default:
      return false;
  }
}

asio::awaitable<void> Engine::collect_batch(std::vector<JobPtr>& batch, std::size_t max_size,
                                            std::chrono::milliseconds max_wait) {
  const JobPtr head = batch.front();
  auto take = [this, &batch, &head, max_size] {
    if (batch.size() >= max_size) return;
    auto fits = [this, &head](JobId id) { return batchable_with(*head, *jobs_.at(id)); };
    for (JobId id : queue_.take_matching(head->priority, max_size - batch.size(), fits))
      batch.push_back(jobs_.at(id));
  };
  take();
  // A CRITICAL job (a deadline) never waits for company.
  if (max_wait.count() <= 0 || head->priority == Priority::kCritical) co_return;
  const auto deadline = steady_clock::now() + max_wait;
  // Waits only while nothing else is queued: a job this batch cannot take (a
  // higher priority, another circuit) flushes it, so the wait never holds
  // other work, and a more urgent job runs right after this batch (or on
  // another idle worker, woken here).
  while (batch.size() < max_size && queue_.empty() && !draining_ && !stopping_) {
    const auto now = steady_clock::now();
    if (now >= deadline) break;
    // Polled: submit() wakes one worker, which need not be this one.
    co_await work_available_.wait_until(std::min(deadline, now + std::chrono::milliseconds(5)));
    take();
  }
  // What is left may have consumed the wake-up meant for an idle worker.
  if (!queue_.empty()) work_available_.notify_one();
}

asio::awaitable<void> Engine::run_demo_batch(std::vector<JobPtr> batch) {
  struct Member {
    JobPtr job;
    Timings t;
    std::optional<groth16::Proof> proof;
    std::vector<ff::Fr> inputs;  // ONE excluded, what the proof was verified against
  };
  std::vector<Member> members;
  const auto started = steady_clock::now();
  for (JobPtr& j : batch) {
    j->started_at = started;
    Member m;
    m.job = j;
    m.t.queue_ms = ms_between(j->submitted_at, started);
    members.push_back(std::move(m));
  }
  // Registered for cancel_running() (the worker's view names the head only).
  BatchRegistration registration(batch_members_);
  for (const Member& m : members) registration.add(m.job->id);
  auto stage_all = [this, &members](const std::string& stage) {
    for (Member& m : members) set_stage(*m.job, JobState::kRunning, stage);
  };
  // Members finished along the way (cancelled, failed) leave the batch.
  auto prune = [&members] {
    std::erase_if(members, [](const Member& m) { return is_finished(m.job->state); });
    return members.empty();
  };
  auto drop_cancelled = [this, &members, &prune] {
    for (Member& m : members) {
      if (m.job->cancel_requested && !is_finished(m.job->state))
        finish(*m.job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + m.job->stage});
    }
    return prune();
  };
  auto fail_all = [this, &members](const Error& e) {
    for (Member& m : members)
      if (!is_finished(m.job->state)) finish(*m.job, JobState::kFailed, e);
    members.clear();
  };
  const std::uint32_t log_domain = members.front().job->request.demo_log_domain;
  const Priority priority = members.front().job->priority;
  try {
    auto since = steady_clock::now();
    stage_all("params");
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    ParamStore::Loaded loaded =
        co_await runtime::run_on(cpu_, [this, log_domain, &admit] { return params_.get_demo(log_domain, admit); });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    // Held until the batch ends (SRS residency): not evicted under it.
    policy::SrsLease srs_lease = lease_srs(
        loaded.params->circuit_id, params_host_bytes(loaded.params->params) + loaded.params->r1cs.memory_bytes(),
        priority);
    if (drop_cancelled()) co_return;
    const CircuitParams& cp = *loaded.params;

    // Host memory of the whole batch at once: every witness and the prover's
    // per-instance working set (held until the batch is proved).
    const std::uint64_t per_member_bytes = witness_bytes(cp.r1cs) + devices_->host_bytes_per_prove(cp.r1cs);
    stage_all("memory");
    const std::atomic<bool> not_cancelled{false};  // members' cancels are handled at stage boundaries
    Result<policy::Reservation> memory =
        co_await memory_->reserve(per_member_bytes * members.size(), priority, not_cancelled);
    if (!memory) {
      fail_all(memory.error());
      co_return;
    }
    if (drop_cancelled()) co_return;

    std::vector<groth16::Witness> witnesses;
    for (Member& m : members) {
      set_stage(*m.job, JobState::kRunning, "synthesis");
      auto t0 = steady_clock::now();
      const std::uint64_t seed = m.job->request.demo_seed;
      Result<groth16::Witness> w =
          co_await runtime::run_on(*synthesis_, [log_domain, seed]() -> Result<groth16::Witness> {
            try {
              std::size_t rounds = circuits::DemoCircuit::rounds_for_log_domain(log_domain);
              return groth16::generate_witness(circuits::DemoCircuit(rounds, ff::Fr::from_u64(seed)));
            } catch (const std::exception& e) {
              return Error{ErrorKind::kInternal, e.what()};
            }
          });
      m.t.synthesis_ms = ms_between(t0, steady_clock::now());
      if (!w) {
        finish(*m.job, JobState::kFailed, w.error());
        continue;
      }
      witnesses.push_back(std::move(w.value()));
    }
    prune();  // members[i] <-> witnesses[i] from here on
    if (members.empty()) co_return;

    // Cancels requested from here on take effect after the prover call (the
    // witnesses are already part of it).
    // Staging slots before the device (a device holder must never wait for
    // one): the second, for overlapping the instances' host and device
    // steps, only when free now.
    stage_all("staging wait");
    StagingPool::Lease first_staging = co_await stagings_->acquire();
    std::optional<StagingPool::Lease> second_staging;
    if (members.size() > 1) second_staging = stagings_->try_acquire();
    stage_all("device wait");
    auto t0 = steady_clock::now();
    // One prover call: a single "partition" for the dispatch rule.
    DeviceSet::Request request;
    request.job = members.front().job->id;
    request.priority = priority;
    request.srs_key = cp.circuit_id;
    request.params = &cp.params;
    DeviceSet::Lock lock = co_await devices_->acquire(request);
    DeviceSet::Slot& slot = lock.slot();
    DeviceSet::Placement placement(&slot);
    DeviceBackend& backend = *slot.backend;
    const std::string n = std::to_string(members.size());
    slot.job = members.front().job->id;
    slot.partition.reset();
    slot.stage = "prove (batch of " + n + ")";
    stage_all(std::string(backend.ordinal() ? "prove (gpu" : "prove (cpu") + ", batch of " + n + ")");
    std::vector<groth16::Blinding> blindings;
    for (std::size_t i = 0; i < witnesses.size(); ++i) blindings.push_back(groth16::random_blinding());
    struct Out {
      std::vector<groth16::Proof> proofs;
      std::string error;
    };
    // The members one after the other, each in three steps (the host step
    // of the next overlapping the device step of this one; no thread waits
    // for the device): engine/staged_prove.hpp.
    Out out;
    {
      Result<std::vector<groth16::Proof>> proved =
          co_await prove_instances(cpu_, backend, first_staging, second_staging ? &*second_staging : nullptr,
                                   cp.params, cp.r1cs, witnesses, blindings);
      if (proved) {
        out.proofs = std::move(proved.value());
      } else {
        out.error = proved.error().message;
      }
    }
    first_staging.release();
    second_staging.reset();
    const std::uint64_t prove_ms = ms_between(t0, steady_clock::now());  // device wait included, as for one job
    slot.job.reset();
    slot.stage = "idle";
    if (!out.error.empty() || out.proofs.size() != witnesses.size()) {
      ++slot.prove_errors;
      fail_all(Error{ErrorKind::kInternal,
                     "batch of " + n + ": " +
                         (out.error.empty() ? "the back end returned " + std::to_string(out.proofs.size()) + " proofs"
                                            : out.error)});
      co_return;
    }
    if (backend.keeps_srs_resident()) note_resident_srs(slot, cp.circuit_id, cp.params, *memory_);
    lock.unlock();
    ++batches_total_;
    batched_jobs_total_ += members.size();
    log_.info("batch proved", {{"jobs", members.size()}, {"device", backend.name()}, {"prove_ms", prove_ms}});

    // Every proof verified on its own; a GPU proof that does not verify is
    // proved again, alone, on the CPU (as in the partition pipeline).
    stage_all("verify");
    for (std::size_t i = 0; i < members.size(); ++i) {
      Member& m = members[i];
      m.t.prove_ms = prove_ms;
      const groth16::Witness& w = witnesses[i];
      m.inputs.assign(w.inputs.begin() + (w.inputs.empty() ? 0 : 1), w.inputs.end());
      const std::vector<ff::Fr>& inputs = m.inputs;
      auto tv = steady_clock::now();
      const groth16::Proof& proof = out.proofs[i];
      groth16::VerifyResult v =
          co_await runtime::run_on(cpu_, [&cp, &proof, &inputs] { return groth16::verify(cp.pvk, proof, inputs); });
      if (v == groth16::VerifyResult::kValid) {
        m.proof = proof;
        ++slot.proofs_done;
      } else {
        ++slot.verify_failures;
        DeviceSet::Slot& cpu_slot = devices_->cpu();
        if (&slot != &cpu_slot) {
          log_.warn("gpu proof of a batch member failed, proving it again on the CPU",
                    {{"job", m.job->id}, {"device", backend.name()}, {"reason", groth16::to_string(v)}});
          devices_->count_cpu_retry();
          DeviceSet::Lock cpu_lock = co_await devices_->lock(cpu_slot);
          DeviceBackend& cpu_backend = *cpu_slot.backend;
          const groth16::Blinding blinding = groth16::random_blinding();
          Out retry = co_await runtime::run_on(cpu_backend.runner(), [&cpu_backend, &cp, &w, &blinding] {
            Out o;
            try {
              o.proofs = cpu_backend.prove(cp.params, cp.r1cs, std::span(&w, 1), std::span(&blinding, 1), nullptr);
            } catch (const std::exception& e) {
              o.error = e.what();
            }
            return o;
          });
          cpu_lock.unlock();
          if (retry.error.empty() && retry.proofs.size() == 1) {
            const groth16::Proof& again = retry.proofs[0];
            v = co_await runtime::run_on(cpu_,
                                         [&cp, &again, &inputs] { return groth16::verify(cp.pvk, again, inputs); });
            if (v == groth16::VerifyResult::kValid) {
              m.proof = again;
              ++cpu_slot.proofs_done;
            } else {
              ++cpu_slot.verify_failures;
            }
          }
        }
      }
      m.t.verify_ms = ms_between(tv, steady_clock::now());
    }

    for (Member& m : members) {
      Job& job = *m.job;
      if (job.cancel_requested) {
        finish(job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job.stage});
        continue;
      }
      if (!m.proof) {
        finish(job, JobState::kFailed, Error{ErrorKind::kInternal, "the proof does not verify (batch of " + n + ")"});
        continue;
      }
      ProofOutput o;
      o.proof = groth16::encode_proofs(std::span(&*m.proof, 1));
      for (const ff::Fr& x : m.inputs) {
        std::array<std::uint8_t, 32> le{};
        x.to_bytes_le(le);
        o.public_inputs.push_back(le);
      }
      o.vk_bytes = cp.vk_bytes;
      m.t.total_ms = ms_between(job.submitted_at, steady_clock::now());
      o.timings = m.t;
      job.output = std::move(o);
      finish(job, JobState::kDone, std::nullopt);
    }
    members.clear();
  } catch (const std::system_error& e) {
    if (!is_cancellation(e)) {
      fail_all(Error{ErrorKind::kInternal, e.what()});
      co_return;
    }
    // The engine's coroutines are being torn down: record, then unwind.
    for (Member& m : members)
      if (!is_finished(m.job->state))
        finish(*m.job, JobState::kCancelled, Error{ErrorKind::kCancelled, "daemon shutting down"});
    throw;
  } catch (const ParamsRefused& e) {
    fail_all(e.error());
  } catch (const std::exception& e) {
    fail_all(Error{ErrorKind::kInternal, std::string(e.what())});
  }
}

}  // namespace cuzk::engine
