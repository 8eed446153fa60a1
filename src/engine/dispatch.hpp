// Which GPU a ready partition takes: the pure rule behind DeviceSet::acquire
// (engine/pipeline.hpp). Every partition of a job is dispatched on its own,
// so one PoRep job's 10 partitions spread over every GPU that is worth using
// instead of queueing on the one its job was placed on.
//
// The rule, for one partition whose parameter set (SRS) is `S`:
//   1. a free GPU holding S (resident, or being uploaded by a running prove):
//      no upload; the one with the fewest jobs, then the lowest index;
//   2. no GPU holds S at all: any free GPU (the upload is unavoidable);
//   3. otherwise a free GPU without S only when it pays off: it delivers its
//      first proof after upload + prove, while the H holders would clear the
//      backlog B (the partitions of S proving on a holder, plus those of each
//      job waiting here not yet on a device - still synthesizing included -
//      this one among them) in about B x prove / H. Taken when
//         B x prove_ms >= H x (upload_ms + prove_ms).
//      32 GiB PoRep on an H200 (bench/RESULTS.md): upload of the 44.1 GiB SRS
//      ~12-15 s, prove ~1.1 s, so a cold GPU is taken when each holder has
//      >= ~15 partitions to go: a lone 10-partition job stays on its holder
//      (B = 10: 11 s < 16.1 s), a batch of two such jobs uses 2 (B = 20:
//      22 s >= 16.1 s, two holders 22 < 32.2), of three up to 3 (33 >= 32.2).
//      Demo circuits (a 2^18 SRS uploads in ~0.1 s, proves in ~0.3 s) spread
//      as soon as a holder has a second proof queued. Among cold GPUs, one holding no
//      other set first (an upload there evicts nothing), then the fewest jobs;
//   4. else wait: a holder frees within one prove.
// Priorities are applied by the caller: waiters are offered the free devices
// in priority order (CRITICAL first), FIFO within a priority.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace cuzk::engine {

struct DispatchDevice {
  bool free = false;             // no prove holds it (and it is not excluded for this partition)
  bool holds_srs = false;        // the partition's SRS is resident there or being uploaded there
  bool holds_other_srs = false;  // another parameter set is resident (an upload replaces it)
  std::uint32_t jobs = 0;        // jobs running there (a tie-break)
};

struct DispatchCosts {
  double prove_ms = 0;   // one partition with the SRS resident
  double upload_ms = 0;  // the SRS's upload to a GPU that lacks it
};

// Whether a GPU without the SRS should take a partition now (rule 3).
bool cold_gpu_pays_off(std::uint64_t backlog, std::size_t holders, const DispatchCosts& costs);

// The index of the GPU the partition takes now, or nullopt to wait.
// `backlog` >= 1: see rule 3.
std::optional<std::size_t> choose_gpu(std::span<const DispatchDevice> gpus, std::uint64_t backlog,
                                      const DispatchCosts& costs);

// Estimates the rule runs on: the steady prove time of a parameter set
// (an average of its GPU proofs without an upload) and its upload time
// (measured: a prove that uploaded, less the steady time). Until measured:
// the upload from the set's device bytes at kUploadBytesPerMs, and a prove as
// long as the upload (neutral: then a cold GPU is taken when each holder has
// >= 2 partitions to go).
class DispatchEstimates {
 public:
  // 44.1 GiB uploaded in ~12 s from pageable memory (H200, PCIe 5): ~3.9 GB/s;
  // a little slower assumed.
  static constexpr double kUploadBytesPerMs = 3.0e6;

  DispatchCosts costs(std::uint64_t srs_device_bytes) const;
  // A GPU prove of this set finished: `prove_ms` wall, `uploaded` whether it
  // uploaded the SRS first.
  void record(double prove_ms, bool uploaded);

 private:
  std::optional<double> prove_ms_;   // running average, steady proves
  std::optional<double> upload_ms_;  // the last measured upload
};

}  // namespace cuzk::engine
