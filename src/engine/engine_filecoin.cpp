// WindowPoSt, WinningPoSt and SnapDeals jobs: one job, its partitions through
// the partition pipeline (engine/pipeline.hpp) like PoRep's.
//
//   vanilla   prepare_filecoin_work on a CPU worker: decode, parse, the
//             native check of every vanilla proof, public inputs
//   params    the set's shape and parameters (ParamSets: cached, read, or
//             development-generated), checked against the memory budget
//   partition k: synthesis (on `math_`, its slots or challenges in
//             parallel) -> checks (shape, public inputs) -> prove on the
//             first suitable device (by priority) -> verify
//
// A WinningPoSt is CRITICAL by default: it runs on a critical worker with its
// own synthesis thread (EngineConfig::critical_workers), and the memory budget
// and the device queue serve it before any PoRep partition.
#include <algorithm>
#include <string>
#include <utility>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::steady_clock;

asio::awaitable<void> Engine::run_filecoin_job(JobPtr job) {
  job->started_at = steady_clock::now();
  Timings t;
  t.queue_ms = ms_between(job->submitted_at, job->started_at);
  auto cancelled = [&]() {
    if (!job->cancel_requested) return false;
    finish(*job, JobState::kCancelled, Error{ErrorKind::kCancelled, "cancelled while " + job->stage});
    return true;
  };
  try {
    auto since = steady_clock::now();
    set_stage(*job, JobState::kRunning, "vanilla");
    // Plain references in the closures (see run_porep_batch): this frame
    // outlives every run_on.
    const ProofKind kind = job->request.kind;
    const std::string& input = job->request.input;
    ThreadPool& math = math_;
    Result<FilecoinWork> prepared = co_await runtime::run_on(cpu_, [kind, &input, &math]() -> Result<FilecoinWork> {
      try {
        return prepare_filecoin_work(kind, input, math);
      } catch (const std::exception& e) {
        return Error{ErrorKind::kInternal, std::string("preparing the request: ") + e.what()};
      }
    });
    t.synthesis_ms = ms_between(since, steady_clock::now());  // parse and check; partition synthesis is below
    if (!prepared) {
      finish(*job, JobState::kFailed, prepared.error());
      co_return;
    }
    if (cancelled()) co_return;
    const FilecoinWork& work = prepared.value();

    since = steady_clock::now();
    set_stage(*job, JobState::kRunning, "params");
    const fc::ParamsGenerator& generate = porep_generator_;
    const ParamsAdmit admit = params_admit(/*proving=*/true);
    const CircuitSetSpec& spec = work.set;
    Result<std::shared_ptr<const ParamSets::Ready>> ready =
        co_await runtime::run_on(cpu_, [this, &spec, &generate, &admit] {
          return porep_call<std::shared_ptr<const ParamSets::Ready>>(
              [&] { return sets_->get(spec, math_, generate, admit); });
        });
    t.params_ms = ms_between(since, steady_clock::now());
    if (!ready) {
      finish(*job, JobState::kFailed, ready.error());
      co_return;
    }
    const ParamSets::Ready& r = *ready.value();
    // Held until the job ends: the set cannot be evicted under it.
    policy::SrsLease srs_lease =
        lease_srs(spec.id, params_host_bytes(r.loaded.params) + r.r1cs->memory_bytes(), job->priority);
    if (cancelled()) co_return;

    PartitionPlan plan;
    plan.job = job->id;
    plan.priority = job->priority;
    plan.srs_key = spec.id;
    plan.partitions = work.partitions;
    plan.witness_bytes = witness_bytes(*r.r1cs);
    plan.synthesis_lanes = std::min<std::size_t>(synthesis_lanes_, work.partitions);
    plan.max_in_flight = std::min<std::size_t>(plan.synthesis_lanes + 1, work.partitions);
    plan.params = &r.loaded.params;
    plan.r1cs = r.r1cs.get();
    plan.pvk = &r.pvk;
    plan.public_inputs = work.public_inputs;
    plan.satisfaction =
        config_.porep_check_satisfaction ? groth16::SatisfactionCheck::kCheck : groth16::SatisfactionCheck::kSkip;
    // One partition (PoSt) synthesizes its slots in parallel on math_: a
    // deadline-bound proof is worth the threads. Several (SnapDeals)
    // synthesize in lanes, each sequential unless challenge pools exist.
    const bool parallel_synthesis = work.partitions == 1;
    const groth16::WitnessShape shape{r.r1cs->num_inputs(), r.r1cs->num_aux()};
    plan.synthesize = [this, &work, parallel_synthesis, shape](std::uint32_t k) {
      return porep_call<groth16::Witness>([&] {
        if (parallel_synthesis) return work.synthesize(k, &math_, shape);
        if (!challenge_pools_) return work.synthesize(k, nullptr, shape);
        const ThreadPoolSet::Lease lease = challenge_pools_->acquire();
        return work.synthesize(k, &lease.pool(), shape);
      });
    };
    plan.check = [this, &r, &work](std::uint32_t k, const groth16::Witness& w) -> std::optional<Error> {
      Result<bool> ok = porep_call<bool>([&] {
        fc::check_partition_witness(*r.r1cs, w, work.public_inputs.at(k), k, math_, /*check_satisfaction=*/false);
        return true;
      });
      if (!ok) return ok.error();
      return std::nullopt;
    };
    Job& j = *job;
    plan.on_stage = [this, &j](std::uint32_t k, std::string_view stage) {
      set_stage(j, JobState::kRunning, "partition " + std::to_string(k) + ": " + std::string(stage));
    };
    const auto pipeline_started = steady_clock::now();
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
    const PipelineOutcome& o = outcome.value();
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
    out.vk_bytes = r.vk_bytes;
    t.total_ms = ms_between(job->submitted_at, steady_clock::now());
    out.timings = t;
    log_.info("filecoin proof", {{"job", job->id},
                                 {"kind", to_string(kind)},
                                 {"what", work.description},
                                 {"partitions", o.proofs.size()},
                                 {"wall_ms", ms_between(job->started_at, steady_clock::now())},
                                 {"params_ms", t.params_ms},
                                 {"pipeline_ms", ms_between(pipeline_started, steady_clock::now())},
                                 {"synthesis_ms_sum", synthesis_ms},
                                 {"prove_ms_sum", prove_ms},
                                 {"verify_ms_sum", verify_ms},
                                 {"cpu_retries", o.cpu_retries},
                                 {"rss_bytes", resident_bytes()}});
    job->output = std::move(out);
    finish(*job, JobState::kDone, std::nullopt);
  } catch (const ParamsRefused& e) {
    finish(*job, JobState::kFailed, e.error());
  } catch (const std::exception& e) {
    if (finish_from_exception(*job, e)) throw;
  }
}

}  // namespace cuzk::engine
