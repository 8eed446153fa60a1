// The engine's status snapshot (EngineStatus) and its Prometheus text
// exposition, both read on the event loop from the job table and counters.
#include <sstream>
#include <string>

#include "engine/engine_internal.hpp"

namespace cuzk::engine {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

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
  s.loading_params = params_.loading();
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
  s.memory.kept_witness_bytes = kept_witnesses_->reserved_bytes();
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
  for (ErrorKind k :
       {ErrorKind::kInvalidInput, ErrorKind::kOverloaded, ErrorKind::kUnimplemented, ErrorKind::kShuttingDown})
    o << "cuzk_jobs_rejected_total{reason=\"" << to_string(k) << "\"} " << rejected_total_[static_cast<std::size_t>(k)]
      << '\n';
  family("cuzk_jobs_finished_total", "counter", "Jobs finished, by outcome.");
  o << "cuzk_jobs_finished_total{outcome=\"done\"} " << completed_total_ << '\n';
  o << "cuzk_jobs_finished_total{outcome=\"failed\"} " << failed_total_ << '\n';
  o << "cuzk_jobs_finished_total{outcome=\"cancelled\"} " << cancelled_total_ << '\n';
  family("cuzk_proofs_total", "counter", "Jobs finished with a proof, by proof kind.");
  for (ProofKind k : {ProofKind::kGroth16Demo, ProofKind::kPoRepC2, ProofKind::kWindowPost, ProofKind::kWinningPost,
                      ProofKind::kSnapDeals}) {
    auto it = done_by_kind_.find(k);
    o << "cuzk_proofs_total{kind=\"" << to_string(k) << "\"} " << (it == done_by_kind_.end() ? 0 : it->second) << '\n';
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
  family("cuzk_batches_total", "counter", "Batches of several jobs of one circuit: one partition pipeline.");
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

}  // namespace cuzk::engine
