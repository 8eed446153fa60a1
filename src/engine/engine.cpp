#include "engine/engine.hpp"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <mutex>
#include <sstream>
#include <system_error>
#include <thread>

#include "circuits/demo.hpp"
#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "engine/job_journal.hpp"
#include "groth16/proof.hpp"
#include "groth16/setup.hpp"
#include "groth16/prover.hpp"
#include "groth16/verifier.hpp"

namespace cuzk::engine {

using std::chrono::duration_cast;
using std::chrono::milliseconds;
using std::chrono::steady_clock;

struct Engine::Job {
  Job(asio::any_io_executor ex) : done(std::move(ex)) {}
  JobId id = 0;
  std::string request_id;
  JobRequest request;
  Priority priority = Priority::kNormal;
  JobState state = JobState::kQueued;
  std::string stage = "queued";
  steady_clock::time_point submitted_at, started_at;
  std::atomic<bool> cancel_requested{false};  // written on the loop, read on the pool
  std::optional<Error> error;
  ProofOutput output;
  runtime::Notifier done;  // awaiters park here
};

namespace {

std::uint64_t ms_between(steady_clock::time_point a, steady_clock::time_point b) {
  return b > a ? static_cast<std::uint64_t>(duration_cast<milliseconds>(b - a).count()) : 0;
}

bool is_cancellation(const std::system_error& e) { return e.code() == asio::error::operation_aborted; }

namespace fc = circuits::filecoin;

// A C2 failure caused by the C1 content is the caller's (do not retry); one
// caused by parameters or our own prover is internal.
ErrorKind porep_error_kind(fc::PorepC2ErrorKind k) {
  switch (k) {
    case fc::PorepC2ErrorKind::kPartitionCount:
    case fc::PorepC2ErrorKind::kInputMismatch:
    case fc::PorepC2ErrorKind::kUnsatisfied:
    case fc::PorepC2ErrorKind::kSynthesis:
      return ErrorKind::kInvalidInput;
    case fc::PorepC2ErrorKind::kShapeMismatch:
    case fc::PorepC2ErrorKind::kInvalidProof:
    case fc::PorepC2ErrorKind::kWrongVk:
    case fc::PorepC2ErrorKind::kParams:
      return ErrorKind::kInternal;
  }
  return ErrorKind::kInternal;
}

// Runs f (on a worker thread), turning the C2 library's typed exceptions into
// engine errors there: a job's co_awaits then throw only for cancellation.
template <class T, class F>
Result<T> porep_call(F&& f) {
  try {
    return f();
  } catch (const fc::C1Error& e) {
    return Error{ErrorKind::kInvalidInput, std::string("C1 output: ") + e.what()};
  } catch (const fc::PorepC2Error& e) {
    return Error{porep_error_kind(e.kind()), e.what()};
  } catch (const std::exception& e) {
    return Error{ErrorKind::kInternal, e.what()};
  }
}

}  // namespace

// Shapes and parameters of PoRep C2, per sector shape. Loads block (files of
// GBs, or a development setup of minutes), so they run on the worker pool;
// the mutex makes concurrent jobs of one size wait for a single load.
struct Engine::PorepState {
  explicit PorepState(std::filesystem::path params_dir) : dir(params_dir), shapes(std::move(params_dir)) {}

  struct Ready {
    std::shared_ptr<const groth16::R1cs> r1cs;
    fc::LoadedParams loaded;
    groth16::PreparedVerifyingKey pvk;
    std::vector<std::uint8_t> vk_bytes;  // bellperson .vk encoding
  };

  std::shared_ptr<const Ready> get(fc::SealProof proof, ThreadPool& pool, const fc::ParamsGenerator& generate) {
    std::string key = fc::official_param_names(proof).params;  // V1 and V1_1 share parameters
    std::lock_guard lock(mu);
    if (auto it = ready.find(key); it != ready.end()) return it->second;
    std::filesystem::create_directories(dir);
    auto r = std::make_shared<Ready>();
    r->r1cs = shapes.compiled_shape(proof);
    r->loaded = fc::ensure_dev_params(proof, dir, *r->r1cs, pool, generate);
    r->pvk = groth16::prepare_verifying_key(r->loaded.params.vk);
    r->vk_bytes = groth16::encode_vk(r->loaded.params.vk);  // the .vk file's bytes, also when not persisted
    ready.emplace(key, r);
    return r;
  }

  std::filesystem::path dir;
  fc::PorepC2 shapes;
  std::mutex mu;  // guards ready; held across a load
  std::map<std::string, std::shared_ptr<const Ready>> ready;
};

std::uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

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
      job_finished_(loop),
      stop_(loop),
      porep_(std::make_unique<PorepState>(params.dir())),
      tasks_(loop) {
  if (config_.max_concurrent_jobs == 0) config_.max_concurrent_jobs = 1;
  memory_ = std::make_unique<MemoryGate>(loop_, config_.memory_budget_bytes != 0
                                                    ? config_.memory_budget_bytes
                                                    : std::numeric_limits<std::uint64_t>::max() / 2);
  devices_ = std::make_unique<DeviceSet>(loop_, std::make_shared<CpuBackend>(cpu_, math_),
                                         std::vector<std::shared_ptr<DeviceBackend>>{});
  synthesis_lanes_ = config_.porep_synthesis_lanes;
  if (synthesis_lanes_ == 0) synthesis_lanes_ = std::max<std::size_t>(1, std::thread::hardware_concurrency() / 2);
  synthesis_ = std::make_unique<runtime::WorkerPool>(synthesis_lanes_ * config_.max_concurrent_jobs);
  set_dev_params_generator({});
}

void Engine::set_gpu_backends(std::vector<std::shared_ptr<DeviceBackend>> gpus) {
  devices_ = std::make_unique<DeviceSet>(loop_, std::make_shared<CpuBackend>(cpu_, math_), std::move(gpus));
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

PipelineDeps Engine::pipeline_deps() { return PipelineDeps{*synthesis_, cpu_, *devices_, *memory_, log_}; }

Engine::~Engine() = default;

void Engine::start() {
  if (!config_.journal_dir.empty()) restore_journaled_jobs();
  for (std::uint32_t i = 0; i < config_.max_concurrent_jobs; ++i) {
    workers_.push_back(WorkerView{i, std::nullopt});
  }
  for (std::uint32_t i = 0; i < config_.max_concurrent_jobs; ++i) tasks_.spawn(worker(i));
  tasks_.spawn(expiry_loop());
  log_.info("engine started", {{"workers", config_.max_concurrent_jobs},
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
    job->submitted_at = now - r.since_accepted;
    job->output = std::move(r.output);
    jobs_.emplace(job->id, job);
    return job;
  };
  for (RecoveredJob& r : opened.recovery.finished) {
    JobPtr job = restore(r);
    job->error = std::move(r.error);
    book_.finished(job->id, now - r.since_finished);
  }
  for (RecoveredJob& r : opened.recovery.resume) {
    std::optional<Error> lost = std::move(r.error);
    JobPtr job = restore(r);
    if (lost) {
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

Result<JobView> Engine::submit(JobRequest request) {
  auto reject = [this](ErrorKind kind, std::string msg) -> Result<JobView> {
    ++rejected_total_[static_cast<std::size_t>(kind)];
    return Error{kind, std::move(msg)};
  };
  if (draining_) return reject(ErrorKind::kShuttingDown, "the daemon is shutting down");
  if (request.kind != ProofKind::kGroth16Demo && request.kind != ProofKind::kPoRepC2) {
    return reject(ErrorKind::kUnimplemented,
                  std::string("proof kind ") + std::string(to_string(request.kind)) + " is not implemented yet");
  }
  if (request.kind == ProofKind::kPoRepC2 && request.c1_json.empty()) {
    return reject(ErrorKind::kInvalidInput, "PoRep C2 request without C1 output (vanillaProof is empty)");
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
      // A finished job recovered from the journal has no input left to compare.
      bool same = job->request.same_work(request) ||
                  (journal_ && !journal_->input_kept(job->id) && job->request.kind == request.kind);
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
  Priority priority = request.priority.value_or(default_priority(request.kind));
  if (!queue_.policy().admits(priority, queue_.size())) {
    return reject(ErrorKind::kOverloaded, "queue full (" + std::to_string(queue_.size()) + " queued, capacity " +
                                              std::to_string(queue_.policy().capacity) + "); retry later");
  }
  // Durable before the client hears of the job.
  if (journal_) {
    if (auto failed = journal_->accepted(book_.next_id(), request, priority))
      return reject(failed->kind, failed->message);
  }
  JobBook::Lookup lookup = book_.register_request(request.request_id);
  auto job = std::make_shared<Job>(loop_);
  job->id = lookup.id;
  job->request_id = book_.request_id(lookup.id);
  job->request = std::move(request);
  job->priority = priority;
  job->submitted_at = steady_clock::now();
  bool admitted = queue_.push(job->id, priority);
  if (!admitted) {
    std::fprintf(stderr, "Engine::submit: admission disagreed with the queue\n");
    std::abort();
  }
  jobs_.emplace(job->id, job);
  ++submitted_total_;
  log_.info("job queued", {{"job", job->id},
                           {"request_id", job->request_id},
                           {"kind", to_string(job->request.kind)},
                           {"priority", to_string(priority)},
                           {"size", job->request.demo_log_domain}});
  emit(*job);
  work_available_.notify_one();
  return view(*job);
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
    auto deadline = timeout.count() > 0 ? steady_clock::now() + timeout : steady_clock::time_point::max();
    // Several wakeups are possible only if notified spuriously; loop on state.
    while (!is_finished(job->state)) {
      bool notified = co_await job->done.wait_until(deadline);
      if (!notified) break;
    }
  }
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
  if (journal_ && job.state == JobState::kQueued && state == JobState::kRunning) journal_->started(job.id);
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
    if (!by_shutdown) journal_->finished(job.id, state, job.output, job.error);
  }
  std::uint64_t total_ms = ms_between(job.submitted_at, now);
  switch (state) {
    case JobState::kDone: {
      ++completed_total_;
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
      log_.warn("job failed", {{"job", job.id}, {"kind", to_string(job.request.kind)}, {"ms", total_ms},
                               {"error", job.error ? job.error->message : ""}});
      break;
    case JobState::kCancelled:
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

asio::awaitable<void> Engine::worker(std::uint32_t index) {
  while (!stopping_) {
    std::optional<JobId> id = queue_.pop();
    if (!id) {
      co_await work_available_.wait();
      continue;
    }
    JobPtr job = jobs_.at(*id);
    workers_[index].job = job->id;
    co_await run_job(job);
    workers_[index].job.reset();
  }
}

asio::awaitable<void> Engine::run_job(JobPtr job) {
  if (job->request.kind == ProofKind::kPoRepC2) {
    co_await run_porep_c2(job);
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
    ParamStore::Loaded loaded =
        co_await runtime::run_on(cpu_, [this, log_domain] { return params_.get_demo(log_domain); });
    t.params_ms = stage_done(since);
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
    Result<PipelineOutcome> outcome = co_await run_partition_pipeline(pipeline_deps(), plan, job->cancel_requested);
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
  } catch (const std::system_error& e) {
    if (!is_cancellation(e)) {
      finish(*job, JobState::kFailed, Error{ErrorKind::kInternal, e.what()});
      co_return;
    }
    // The engine's coroutines are being torn down: record, then unwind.
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "daemon shutting down"});
    throw;
  } catch (const std::exception& e) {
    finish(*job, JobState::kFailed, Error{ErrorKind::kInternal, std::string(e.what())});
  }
}

asio::awaitable<void> Engine::run_porep_c2(JobPtr job) {
  job->started_at = steady_clock::now();
  Timings t;
  t.queue_ms = ms_between(job->submitted_at, job->started_at);
  auto stage_done = [](steady_clock::time_point& since) {
    auto now = steady_clock::now();
    std::uint64_t ms = ms_between(since, now);
    since = now;
    return ms;
  };
  auto cancelled = [&]() {
    if (!job->cancel_requested) return false;
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
    return true;
  };
  auto failed = [&](const Error& e) {
    finish(*job, JobState::kFailed, e);
  };
  try {
    auto since = steady_clock::now();
    set_stage(*job, JobState::kRunning, "c1");
    // The closures given to run_on capture plain references only: gcc 12
    // destroys such a closure temporary twice inside a co_await, so a
    // captured shared_ptr would lose a reference each time (a use-after-free
    // of the job under ASan). This frame outlives every closure (run_on).
    const std::string& c1_json = job->request.c1_json;
    Result<std::shared_ptr<const fc::C1Output>> c1 = co_await runtime::run_on(cpu_, [&c1_json] {
      return porep_call<std::shared_ptr<const fc::C1Output>>(
          [&] { return std::make_shared<const fc::C1Output>(fc::parse_c1(c1_json)); });
    });
    t.synthesis_ms = stage_done(since);  // parsing; partition synthesis is inside prove_c2
    if (!c1) co_return failed(c1.error());
    if (cancelled()) co_return;

    set_stage(*job, JobState::kRunning, "params");
    const fc::SealProof proof = c1.value()->registered_proof;
    // Development parameters are generated on first use: on a GPU when the
    // daemon has one (a 32 GiB setup takes hours on the CPU), with progress
    // in the log.
    const fc::ParamsGenerator& generate = porep_generator_;
    Result<std::shared_ptr<const PorepState::Ready>> ready = co_await runtime::run_on(cpu_, [this, proof, &generate] {
      return porep_call<std::shared_ptr<const PorepState::Ready>>(
          [&] { return porep_->get(proof, math_, generate); });
    });
    t.params_ms = stage_done(since);
    if (!ready) co_return failed(ready.error());
    if (cancelled()) co_return;

    const PorepState::Ready& r = *ready.value();
    const std::string srs_key = r.loaded.params_path.string();
    if (!srs_charges_.count(srs_key)) {
      // The parameters and the R1cs stay in memory: charge them to the budget
      // (already allocated, so at once, even past the total).
      const std::uint64_t bytes = params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes();
      srs_charges_.emplace(srs_key, memory_->charge(bytes));
      srs_host_bytes_[srs_key] = bytes;
    }

    // The verifier's public inputs, from public data only (replica_id,
    // comm_d, comm_r, seed), never from the witness.
    set_stage(*job, JobState::kRunning, "inputs");
    const fc::C1Output& c1_out = *c1.value();
    Result<std::vector<std::vector<ff::Fr>>> inputs = co_await runtime::run_on(cpu_, [&c1_out] {
      return porep_call<std::vector<std::vector<ff::Fr>>>([&] {
        if (c1_out.vanilla_proofs.size() != c1_out.info().partitions) {
          throw fc::PorepC2Error(fc::PorepC2ErrorKind::kPartitionCount,
                                 std::to_string(c1_out.vanilla_proofs.size()) + " partitions, " +
                                     std::string(c1_out.info().name) + " has " +
                                     std::to_string(c1_out.info().partitions));
        }
        return fc::porep_public_inputs(c1_out.registered_proof, c1_out.replica_id, c1_out.comm_d, c1_out.comm_r,
                                       c1_out.seed);
      });
    });
    if (!inputs) co_return failed(inputs.error());
    if (cancelled()) co_return;

    // Per partition: synthesis on the synthesis pool (bounded by lanes, the
    // in-flight bound and the memory budget), checks, proving on the job's
    // back end as soon as a partition is ready, verification of each proof.
    PartitionPlan plan;
    plan.job = job->id;
    plan.priority = job->priority;
    plan.srs_key = srs_key;
    plan.partitions = static_cast<std::uint32_t>(inputs.value().size());
    plan.witness_bytes = witness_bytes(*r.r1cs);
    plan.synthesis_lanes = synthesis_lanes_;
    plan.max_in_flight = config_.porep_max_partitions_in_flight != 0 ? config_.porep_max_partitions_in_flight
                                                                      : synthesis_lanes_ + 1;
    plan.params = &r.loaded.params;
    plan.r1cs = r.r1cs.get();
    plan.pvk = &r.pvk;
    plan.public_inputs = inputs.value();
    plan.synthesize = [&c1_out](std::uint32_t k) {
      return porep_call<groth16::Witness>([&] { return fc::synthesize_partition(c1_out, k); });
    };
    const bool satisfaction = config_.porep_check_satisfaction;
    const std::vector<std::vector<ff::Fr>>& all_inputs = inputs.value();
    plan.check = [this, &r, &all_inputs, satisfaction](std::uint32_t k,
                                                       const groth16::Witness& w) -> std::optional<Error> {
      Result<bool> ok = porep_call<bool>([&] {
        fc::check_partition_witness(*r.r1cs, w, all_inputs.at(k), k, math_, satisfaction);
        return true;
      });
      if (!ok) return ok.error();
      return std::nullopt;
    };
    Job& j = *job;
    plan.on_stage = [this, &j](std::uint32_t k, std::string_view stage) {
      set_stage(j, JobState::kRunning, "partition " + std::to_string(k) + ": " + std::string(stage));
    };
    set_stage(*job, JobState::kRunning, "prove");
    Result<PipelineOutcome> outcome = co_await run_partition_pipeline(pipeline_deps(), plan, job->cancel_requested);
    if (!outcome) {
      if (outcome.error().kind == ErrorKind::kCancelled || job->cancel_requested) {
        finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
        co_return;
      }
      co_return failed(outcome.error());
    }
    t.prove_ms = stage_done(since);
    double synthesis_ms = 0, prove_ms = 0, verify_ms = 0;
    for (const PartitionTiming& pt : outcome.value().timings) {
      synthesis_ms += pt.synthesis_ms;
      prove_ms += pt.prove_ms;
      verify_ms += pt.verify_ms;
    }

    // All partitions together, as a verifier sees them (prove_c2's final check).
    set_stage(*job, JobState::kRunning, "verify");
    const std::vector<std::uint8_t> proof_bytes = groth16::encode_proofs(outcome.value().proofs);
    std::string detail;
    groth16::VerifyResult verdict = co_await runtime::run_on(cpu_, [&r, &proof_bytes, &all_inputs, &detail] {
      return fc::verify_porep_proof(r.pvk, proof_bytes, all_inputs, &detail);
    });
    t.verify_ms = stage_done(since);
    if (verdict != groth16::VerifyResult::kValid) {
      co_return failed(Error{ErrorKind::kInternal, "the partition proofs do not batch-verify (" + detail + ")"});
    }
    log_.info("porep c2 proved", {{"job", job->id},
                                  {"partitions", plan.partitions},
                                  {"wall_ms", ms_between(job->started_at, steady_clock::now())},
                                  {"params_ms", t.params_ms},
                                  {"pipeline_ms", t.prove_ms},
                                  {"synthesis_ms_sum", synthesis_ms},
                                  {"prove_ms_sum", prove_ms},
                                  {"verify_ms_sum", verify_ms},
                                  {"batch_verify_ms", t.verify_ms},
                                  {"cpu_retries", outcome.value().cpu_retries},
                                  {"peak_in_flight", outcome.value().peak_in_flight},
                                  {"peak_reserved_bytes", memory_->stats().peak_reserved_bytes},
                                  {"rss_bytes", resident_bytes()},
                                  {"peak_rss_bytes", peak_resident_bytes()}});
    Result<std::vector<std::uint8_t>> bytes = proof_bytes;
    ProofOutput out;
    out.proof = std::move(bytes.value());
    out.vk_bytes = ready.value()->vk_bytes;
    t.total_ms = ms_between(job->submitted_at, steady_clock::now());
    out.timings = t;
    job->output = std::move(out);
    finish(*job, JobState::kDone, std::nullopt);
  } catch (const std::system_error& e) {
    if (!is_cancellation(e)) {
      finish(*job, JobState::kFailed, Error{ErrorKind::kInternal, e.what()});
      co_return;
    }
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "daemon shutting down"});
    throw;
  } catch (const std::exception& e) {
    finish(*job, JobState::kFailed, Error{ErrorKind::kInternal, std::string(e.what())});
  }
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

asio::awaitable<Result<ParamsInfo>> Engine::preload(std::string circuit_id) {
  auto log_domain = parse_demo_circuit_id(circuit_id);
  if (!log_domain)
    co_return Error{ErrorKind::kInvalidInput, "unknown circuit id '" + circuit_id + "' (want demo-<log2 domain>)"};
  if (*log_domain > config_.max_demo_log_domain)
    co_return Error{ErrorKind::kInvalidInput, "demo size above engine.max_demo_log_domain"};
  auto t0 = steady_clock::now();
  try {
    ParamStore::Loaded l = co_await runtime::run_on(cpu_, [this, k = *log_domain] { return params_.get_demo(k); });
    co_return ParamsInfo{l.already_loaded, ms_between(t0, steady_clock::now())};
  } catch (const std::system_error& e) {
    if (is_cancellation(e)) throw;
    co_return Error{ErrorKind::kInternal, e.what()};
  } catch (const std::exception& e) {
    co_return Error{ErrorKind::kInternal, e.what()};
  }
}

Result<bool> Engine::evict(const std::string& circuit_id) {
  if (!parse_demo_circuit_id(circuit_id))
    return Error{ErrorKind::kInvalidInput, "unknown circuit id '" + circuit_id + "' (want demo-<log2 domain>)"};
  bool evicted = params_.evict(circuit_id);
  if (!evicted) return Error{ErrorKind::kNotFound, circuit_id + " is not loaded"};
  log_.info("parameters evicted", {{"circuit", circuit_id}});
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
  for (const ParamsEntry& p : s.loaded_params) s.srs.push_back(SrsResidencyView{p.circuit_id, "host", -1, p.bytes});
  for (const auto& [key, bytes] : srs_host_bytes_) s.srs.push_back(SrsResidencyView{key, "host", -1, bytes});
  for (const DeviceWorkerView& d : s.devices) {
    if (!d.resident_srs.empty()) {
      s.srs.push_back(
          SrsResidencyView{d.resident_srs, "device", static_cast<std::int32_t>(d.index), d.resident_srs_bytes});
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
  family("cuzk_srs_resident_bytes", "gauge", "Bytes of parameters (SRS) resident, by tier.");
  std::uint64_t host_srs = 0, device_srs = 0;
  for (const SrsResidencyView& r : s.srs) (r.tier == "device" ? device_srs : host_srs) += r.bytes;
  o << "cuzk_srs_resident_bytes{tier=\"host\"} " << host_srs << '\n';
  o << "cuzk_srs_resident_bytes{tier=\"device\"} " << device_srs << '\n';
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
}

asio::awaitable<void> Engine::drain() {
  if (draining_) co_return;
  draining_ = true;
  log_.info("engine draining", {{"queued", queue_.size()}, {"drain_timeout_ms", config_.drain_timeout.count()}});
  while (auto id = queue_.pop()) {
    finish(*jobs_.at(*id), JobState::kCancelled,
           Error{ErrorKind::kShuttingDown, "daemon shutting down before the job started"});
  }
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
  stop_.notify_all();
  co_await tasks_.join();
  log_.info("engine drained", {{"completed_total", completed_total_}, {"failed_total", failed_total_},
                               {"cancelled_total", cancelled_total_}});
}

}  // namespace cuzk::engine
