#include "engine/dispatch.hpp"

#include <algorithm>
#include <tuple>

namespace cuzk::engine {

bool cold_gpu_pays_off(std::uint64_t backlog, std::size_t holders, const DispatchCosts& costs) {
  if (holders == 0) return true;
  return static_cast<double>(backlog) * costs.prove_ms >=
         static_cast<double>(holders) * (costs.upload_ms + costs.prove_ms);
}

std::optional<std::size_t> choose_gpu(std::span<const DispatchDevice> gpus, std::uint64_t backlog,
                                      const DispatchCosts& costs) {
  std::optional<std::size_t> warm, cold;
  std::size_t holders = 0;
  // Smaller is better: (fewest jobs, lowest index) for holders; for cold GPUs,
  // one whose upload evicts nothing first.
  auto cold_rank = [&gpus](std::size_t i) { return std::tuple(gpus[i].holds_other_srs, gpus[i].jobs, i); };
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const DispatchDevice& d = gpus[i];
    if (d.holds_srs) ++holders;
    if (!d.free) continue;
    if (d.holds_srs) {
      if (!warm || d.jobs < gpus[*warm].jobs) warm = i;
    } else if (!cold || cold_rank(i) < cold_rank(*cold)) {
      cold = i;
    }
  }
  if (warm) return warm;
  if (cold && cold_gpu_pays_off(std::max<std::uint64_t>(backlog, 1), holders, costs)) return cold;
  return std::nullopt;
}

DispatchCosts DispatchEstimates::costs(std::uint64_t srs_device_bytes) const {
  DispatchCosts c;
  c.upload_ms = upload_ms_.value_or(static_cast<double>(srs_device_bytes) / kUploadBytesPerMs);
  c.prove_ms = prove_ms_.value_or(c.upload_ms);
  return c;
}

void DispatchEstimates::record(double prove_ms, bool uploaded) {
  if (!uploaded) {
    // A running average that follows changes (clocks, contention) within ~4 proves.
    prove_ms_ = prove_ms_ ? 0.75 * *prove_ms_ + 0.25 * prove_ms : prove_ms;
    return;
  }
  if (prove_ms_) upload_ms_ = std::max(0.0, prove_ms - *prove_ms_);
}

}  // namespace cuzk::engine
