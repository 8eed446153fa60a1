// WindowPoSt, WinningPoSt and SnapDeals jobs: one job, or a batch of
// SnapDeals jobs of one sector size, their partitions through the partition
// pipeline (engine/pipeline.hpp) like PoRep's.
//
//   vanilla   prepare_filecoin_work on a CPU worker, per member: decode,
//             parse, the native check of every vanilla proof, public inputs
//   params    the set's shape and parameters (ParamSets: cached, read, or
//             development-generated), checked against the memory budget,
//             once for the batch
//   partition k of member m: synthesis (on `math_`, its slots or challenges
//             in parallel) -> checks (shape, public inputs) -> prove on the
//             first suitable device (by priority) -> verify
//   finish    member m answered as soon as its own partitions are proved
//
// A WinningPoSt is CRITICAL by default: it runs on a critical worker with its
// own synthesis thread (EngineConfig::critical_workers), and the memory budget
// and the device queue serve it before any PoRep partition.
#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;

namespace {

// prepare_filecoin_work of a request on a CPU worker. `input` is the job's,
// which outlives the call, as the pools do.
asio::awaitable<Result<FilecoinWork>> prepare_on(runtime::WorkerPool& cpu, ThreadPool& math, ProofKind kind,
                                                 const std::string* input) {
  co_return co_await runtime::run_on(cpu, [&math, kind, input]() -> Result<FilecoinWork> {
    try {
      return prepare_filecoin_work(kind, *input, math);
    } catch (const std::exception& e) {
      return Error{ErrorKind::kInternal, std::string("preparing the request: ") + e.what()};
    }
  });
}

}  // namespace

struct Engine::FilecoinMember {
  JobPtr job;
  Timings t;
  std::optional<FilecoinWork> work;
  steady_clock::time_point pipeline_started;
};

// A Filecoin batch whose pipeline runs: what its members' callbacks and the
// admission of SnapDeals joiners share. In run_filecoin_batch's frame, which
// outlives the pipeline.
struct Engine::FilecoinBatch {
  std::string set_id;
  Priority priority = Priority::kNormal;
  std::shared_ptr<const ParamSets::Ready> ready;
  std::deque<FilecoinMember>& members;  // joiners appended; a deque: callbacks keep pointing at theirs
  BatchRegistration& registration;
  std::vector<JobPtr>& after;  // proved alone once the batch ends (another parameter set)
  std::size_t initial_members = 1;
  bool counted = false;  // in batches_total_
};

asio::awaitable<void> Engine::run_filecoin_batch(std::vector<JobPtr> batch) {
  using Member = FilecoinMember;
  std::deque<Member> members;     // stable: the pipeline's callbacks point at their member
  std::vector<JobPtr> other_set;  // a request of another parameter set: proved alone afterwards
  start_members(batch, members);
  BatchRegistration registration(batch_members_);  // cancel_running(): the worker's view names the head only
  register_batch(members, registration);
  try {
    stage_members(members, "vanilla");
    for (Member& m : members) {
      const auto since = steady_clock::now();
      Result<FilecoinWork> prepared = co_await prepare_on(cpu_, math_, m.job->request.kind, &m.job->request.input);
      m.t.synthesis_ms = ms_between(since, steady_clock::now());  // parse and check; partition synthesis is below
      if (!prepared) {
        finish(*m.job, JobState::kFailed, prepared.error());
        continue;
      }
      m.work = std::move(prepared.value());
    }
    if (prune_members(members)) co_return;
    // One parameter set: the first member's.
    const CircuitSetSpec spec = members.front().work->set;
    for (Member& m : members)
      if (m.work->set.id != spec.id) other_set.push_back(m.job);
    std::erase_if(members, [&spec](const Member& m) { return m.work->set.id != spec.id; });

    stage_members(members, "params");
    const auto since = steady_clock::now();
    const fc::ParamsGenerator& generate = porep_generator_;
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    Result<std::shared_ptr<const ParamSets::Ready>> ready =
        co_await runtime::run_on(cpu_, [this, &spec, &generate, &admit] {
          return porep_call<std::shared_ptr<const ParamSets::Ready>>(
              [&] { return sets_->get(spec, math_, generate, admit); });
        });
    const std::uint64_t params_ms = ms_between(since, steady_clock::now());
    for (Member& m : members) m.t.params_ms = params_ms;
    if (!ready) {
      fail_members(members, ready.error());
    } else if (!prune_members(members)) {
      const ParamSets::Ready& r = *ready.value();
      const Priority priority = members.front().job->priority;
      // Held until the batch ends: the set cannot be evicted under it.
      const std::uint64_t set_bytes = params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes();
      policy::SrsLease srs_lease = lease_srs(spec.id, set_bytes, priority);

      PartitionPlan plan;
      plan.job = members.front().job->id;
      plan.priority = priority;
      plan.srs_key = spec.id;
      plan.partitions = 0;
      for (const Member& m : members) plan.partitions += m.work->partitions;
      plan.witness_bytes = witness_bytes(*r.r1cs);
      // A WinningPoSt that finds every GPU busy is proved on the CPU too,
      // the first proof answering (PartitionPlan::race_on_cpu).
      plan.race_on_cpu = config_.winning_post_cpu_race && members.front().job->request.kind == ProofKind::kWinningPost;
      plan.synthesis_lanes = std::min<std::size_t>(pipeline_lanes(), plan.partitions);
      plan.max_in_flight = std::min<std::size_t>(plan.synthesis_lanes + 1, plan.partitions);
      plan.params = &r.loaded.params;
      plan.host_copy = r.host_copy.get();
      plan.on_host_copy = host_copy_books(spec.id, set_bytes);
      plan.r1cs = r.r1cs.get();
      plan.pvk = &r.pvk;
      plan.satisfaction =
          config_.porep_check_satisfaction ? groth16::SatisfactionCheck::kCheck : groth16::SatisfactionCheck::kSkip;
      FilecoinBatch fb{spec.id,      priority,  ready.value(),  members,
                       registration, other_set, members.size(), batch.size() > 1};
      const auto pipeline_started = steady_clock::now();
      std::vector<PlanMember> plan_members;
      for (Member& m : members) {
        m.pipeline_started = pipeline_started;
        plan_members.push_back(filecoin_plan_member(m, fb));
      }
      if (members.size() > 1)
        log_.info("filecoin batch", {{"jobs", members.size()}, {"set", spec.id}, {"partitions", plan.partitions}});
      stage_members(members, "prove");
      // SnapDeals jobs of this set queued while it proves join it, so the
      // GPUs do not wait for the next job's first partitions.
      BatchAdmitter admit_joiners;
      if (members.front().job->request.kind == ProofKind::kSnapDeals && config_.snap_batch_max_jobs > 1)
        admit_joiners = [this, &fb](BatchDoor& door) { return admit_snap_joiners(&fb, &door); };
      co_await run_batch_pipeline(pipeline_deps(priority), plan, std::move(plan_members), std::move(admit_joiners));
      members.clear();
    }
  } catch (const ParamsRefused& e) {
    fail_members(members, e.error());
  } catch (const std::exception& e) {
    bool shutdown = false;
    for (Member& m : members)
      if (m.job && !is_finished(m.job->state)) shutdown = finish_from_exception(*m.job, e) || shutdown;
    for (JobPtr& j : other_set)
      if (!is_finished(j->state)) shutdown = finish_from_exception(*j, e) || shutdown;
    if (shutdown) throw;
    co_return;
  }
  for (JobPtr& j : other_set) {
    std::vector<JobPtr> alone{j};
    co_await run_filecoin_batch(std::move(alone));
  }
}

// A member's part of the pipeline: its synthesis, checks and stages by its
// partition index, and its finish as soon as its own partitions are proved.
// The callbacks point at `m` and `r`, which outlive the pipeline
// (run_filecoin_batch's frame).
PlanMember Engine::filecoin_plan_member(FilecoinMember& m, const FilecoinBatch& b) {
  const ParamSets::Ready& r = *b.ready;
  const groth16::WitnessShape shape{r.r1cs->num_inputs(), r.r1cs->num_aux()};
  const FilecoinWork* work = &*m.work;
  PlanMember pm;
  pm.job = m.job->id;
  pm.partitions = work->partitions;
  pm.cancel = &m.job->cancel;
  pm.public_inputs = work->public_inputs;
  // One partition (PoSt) synthesizes its slots in parallel on math_: a
  // deadline-bound proof is worth the threads. Several (SnapDeals)
  // synthesize in lanes, each sequential unless challenge pools exist.
  const bool parallel_synthesis = work->partitions == 1;
  pm.synthesize = [this, work, parallel_synthesis, shape](std::uint32_t k, groth16::Witness storage) {
    return porep_call<groth16::Witness>([&] {
      if (parallel_synthesis) return work->synthesize(k, &math_, shape, std::move(storage));
      if (!challenge_pools_) return work->synthesize(k, nullptr, shape, std::move(storage));
      const ThreadPoolSet::Lease lease = challenge_pools_->acquire();
      return work->synthesize(k, &lease.pool(), shape, std::move(storage));
    });
  };
  const groth16::R1cs* r1cs = r.r1cs.get();
  pm.check = [this, r1cs, work](std::uint32_t k, const groth16::Witness& w) -> std::optional<Error> {
    Result<bool> ok = porep_call<bool>([&] {
      fc::check_partition_witness(*r1cs, w, work->public_inputs.at(k), k, math_, /*check_satisfaction=*/false);
      return true;
    });
    if (!ok) return ok.error();
    return std::nullopt;
  };
  Job* job = m.job.get();
  pm.on_stage = [this, job](std::uint32_t k, std::string_view stage) {
    set_stage(*job, JobState::kRunning, "partition " + std::to_string(k) + ": " + std::string(stage));
  };
  FilecoinMember* member = &m;
  const std::vector<std::uint8_t>* vk_bytes = &r.vk_bytes;
  pm.on_done = [this, member, vk_bytes](const Result<PipelineOutcome>& out) {
    finish_filecoin(*member, *vk_bytes, out);
  };
  return pm;
}

asio::awaitable<void> Engine::admit_snap_joiners(FilecoinBatch* batch, BatchDoor* door) {
  const RunningBatch shape{batch->set_id, batch->priority, 0, config_.snap_batch_max_jobs, ProofKind::kSnapDeals};
  co_await admit_joiners(shape, door, [this, batch, door](BatchDoor::Hold hold, JobPtr job) {
    return join_snap(batch, door, std::move(hold), std::move(job));
  });
}

// A joiner's vanilla stage (as run_filecoin_batch's, the parameters already
// loaded), then its partitions after the batch's. `hold` keeps the
// pipeline's intake open meanwhile.
asio::awaitable<void> Engine::join_snap(FilecoinBatch* batch, BatchDoor* door, BatchDoor::Hold hold, JobPtr job) {
  (void)hold;  // held until this returns
  FilecoinMember m = start_joiner<FilecoinMember>(*batch, job);
  const auto started = job->started_at;
  try {
    set_stage(*job, JobState::kRunning, "vanilla");
    Result<FilecoinWork> prepared = co_await prepare_on(cpu_, math_, job->request.kind, &job->request.input);
    m.t.synthesis_ms = ms_between(started, steady_clock::now());
    if (!prepared) {
      finish(*job, JobState::kFailed, prepared.error());
      co_return;
    }
    m.work = std::move(prepared.value());
    if (m.work->set.id != batch->set_id) {
      batch->after.push_back(job);  // its vanilla proofs said another set: proved alone after the batch
      co_return;
    }
    if (job->cancel.requested()) {
      finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
      co_return;
    }
  } catch (const std::exception& e) {
    if (finish_from_exception(*job, e)) throw;
    co_return;
  }
  const std::uint64_t queue_ms = m.t.queue_ms;
  if (!add_joiner(*batch, *door, std::move(m),
                  [this, batch](FilecoinMember& fm) { return filecoin_plan_member(fm, *batch); }))
    co_return;
  log_.info("snap deals job joined a running batch",
            {{"job", job->id}, {"set", batch->set_id}, {"queue_ms", queue_ms}, {"unfinished", door->unfinished()}});
}

// A member's end, on the loop, from its pipeline result: every partition
// proof was verified by the pipeline against the public inputs derived from
// public data (FilecoinWork::public_inputs).
void Engine::finish_filecoin(FilecoinMember& m, const std::vector<std::uint8_t>& vk_bytes,
                             const Result<PipelineOutcome>& outcome) {
  Job& job = *m.job;
  if (is_finished(job.state)) return;
  if (finish_unproved(job, outcome)) {
    m.work.reset();
    return;
  }
  const PipelineOutcome& o = outcome.value();
  ProofOutput out = pipeline_output(o, vk_bytes, m.t, job.submitted_at);
  const Timings& t = out.timings;
  log_.info("filecoin proof", {{"job", job.id},
                               {"kind", to_string(job.request.kind)},
                               {"what", m.work->description},
                               {"partitions", o.proofs.size()},
                               {"wall_ms", ms_between(job.started_at, steady_clock::now())},
                               {"params_ms", t.params_ms},
                               {"pipeline_ms", ms_between(m.pipeline_started, steady_clock::now())},
                               {"synthesis_ms_sum", t.synthesis_ms - m.t.synthesis_ms},
                               {"prove_ms_sum", t.prove_ms},
                               {"verify_ms_sum", t.verify_ms},
                               {"cpu_retries", o.cpu_retries},
                               {"rss_bytes", resident_bytes()}});
  // The parsed request (a 32 GiB SnapDeals job's challenges and paths) goes
  // now, not when the batch ends.
  m.work.reset();
  job.output = std::move(out);
  finish(job, JobState::kDone, std::nullopt);
}

}  // namespace cuzk::engine
