// Where the five SRS vectors of a ResidentSrs live: a prefix of each vector in
// device memory, the rest in a pinned host copy streamed to the device while
// the MSMs run (gpu/msm/base_stager.hpp). Pure host arithmetic, unit-tested
// without a device (tests/gpu/srs_placement_test.cpp).
//
// Fill order of the device budget: l, a, b_g1, b_g2, then h.
// Every byte kept on the device saves the same byte of PCIe traffic per proof
// whatever vector it belongs to (a streamed vector crosses PCIe once per proof,
// whole: the split path streams the zeros' bases too), so the order does not
// change the streamed bytes; it decides how much of the transfer hides behind
// compute. The witness vectors (l, a, b_g1, b_g2) meet Filecoin witnesses that
// are mostly 0 and 1: their split MSMs do no work for a zero and one mixed add
// for a one, so a streamed witness vector runs at PCIe speed with nothing to
// overlap. The H MSM's scalars are dense (W mixed adds per point: 12 at the
// 2^27 window c = 22), which leaves room to hide its 96 B per point behind
// the accumulation of the previous chunk. So h goes to the device last. Among
// the witness vectors the order only moves the one vector that ends up split
// across the tiers; b_g2 (192 B per point, G2 adds cost ~3x G1's) comes last.
//
// The 32 GiB PoRep partition: h 12.0 GiB, l 11.6, a 11.6, b_g1 3.0, b_g2 5.9
// (44.1 GiB in all).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>

namespace cuzk::gpu {

enum class SrsVector : std::uint8_t { kH, kL, kA, kBG1, kBG2 };
inline constexpr std::size_t kSrsVectors = 5;
inline constexpr std::array<SrsVector, kSrsVectors> kSrsDeviceFillOrder = {
    SrsVector::kL, SrsVector::kA, SrsVector::kBG1, SrsVector::kBG2, SrsVector::kH};
inline constexpr std::size_t kSrsG1PointBytes = 96;   // packed affine x, y
inline constexpr std::size_t kSrsG2PointBytes = 192;  // x.c0, x.c1, y.c0, y.c1

constexpr std::size_t srs_point_bytes(SrsVector v) {
  return v == SrsVector::kBG2 ? kSrsG2PointBytes : kSrsG1PointBytes;
}
constexpr const char* to_string(SrsVector v) {
  switch (v) {
    case SrsVector::kH:
      return "h";
    case SrsVector::kL:
      return "l";
    case SrsVector::kA:
      return "a";
    case SrsVector::kBG1:
      return "b_g1";
    case SrsVector::kBG2:
      return "b_g2";
  }
  return "?";
}

// Points per vector, indexed by SrsVector.
using SrsPoints = std::array<std::size_t, kSrsVectors>;

struct SrsVectorPlacement {
  std::size_t points = 0;
  std::size_t device_points = 0;  // the prefix [0, device_points) is on the device
  std::size_t point_bytes = 0;
  std::size_t device_bytes() const { return device_points * point_bytes; }
  std::size_t host_bytes() const { return (points - device_points) * point_bytes; }
  bool streamed() const { return device_points < points; }
};

struct SrsPlacement {
  std::array<SrsVectorPlacement, kSrsVectors> vectors{};

  const SrsVectorPlacement& operator[](SrsVector v) const { return vectors[std::size_t(v)]; }
  std::size_t device_bytes() const {
    std::size_t b = 0;
    for (const auto& v : vectors) b += v.device_bytes();
    return b;
  }
  // Pinned host bytes: what each proof streams over PCIe.
  std::size_t host_bytes() const {
    std::size_t b = 0;
    for (const auto& v : vectors) b += v.host_bytes();
    return b;
  }
  bool all_on_device() const { return host_bytes() == 0; }
};

inline std::size_t srs_bytes(const SrsPoints& points) {
  std::size_t b = 0;
  for (std::size_t i = 0; i < kSrsVectors; ++i) b += points[i] * srs_point_bytes(SrsVector(i));
  return b;
}

// Whole points of each vector on the device, in kSrsDeviceFillOrder, while
// device_budget_bytes lasts; a vector that does not fit whole gets the prefix
// that does, and the vectors after it none (one vector at most is split).
inline SrsPlacement place_srs(const SrsPoints& points, std::size_t device_budget_bytes) {
  SrsPlacement p;
  for (std::size_t i = 0; i < kSrsVectors; ++i) {
    p.vectors[i].points = points[i];
    p.vectors[i].point_bytes = srs_point_bytes(SrsVector(i));
  }
  std::size_t left = device_budget_bytes;
  for (SrsVector v : kSrsDeviceFillOrder) {
    SrsVectorPlacement& e = p.vectors[std::size_t(v)];
    e.device_points = std::min(e.points, left / e.point_bytes);
    left -= e.device_bytes();
    if (e.streamed()) left = 0;  // the next vectors stay whole on the host
  }
  return p;
}

// The witness MSMs' point counts (the SRS's l, a and b_g1 / b_g2 lengths).
struct WitnessMsmPoints {
  std::size_t l = 0, a = 0, b = 0;
};

// Device memory a proof needs besides the SRS, an upper bound for a domain of
// m and the witness MSMs' sizes:
//   H stage: a, b, c on the device and the lean NTT passes' out-of-place
//     vector (their bit reversal fused into the last pass), 4 m Fr (32 B);
//     h_vectors = 2 for the two-vector stage the prover falls back to;
//   H MSM: its m scalars plus the MSM scratch;
//   witness MSMs: the three splits' device arrays, held together and kept
//     at their high-water marks across proofs (a split keeps a 4 B index per
//     one and 4 + 32 B per tail entry, its tail at most half the points; an
//     unsplit MSM 32 B per scalar in the same scalar array: so after an
//     all-ones proof, a half-tail one and an unsplit one, 4 + 2 + 32 = 38 B
//     per point), the largest tail's gathered
//     bases (a split tail is at most half its points; B's are G2), the MSM
//     scratch and the split pass's two staging chunks of G2 points;
// plus, in every phase, the Device's NTT tables for the domain, which stay
// resident: the twiddles (m / 2 + 1 Fr, 2 GiB at m = 2^27: w^0 .. w^(m/2)) and the coset tables
// (4 pairs of ~2^(log m / 2) Fr: a few MiB; counted as m / 64 Fr, at least 4096).
inline std::size_t prover_working_bytes(std::size_t m, const WitnessMsmPoints& w, std::size_t msm_scratch_bytes,
                                        std::size_t split_staging_bytes, std::size_t h_vectors = 4) {
  const std::size_t h_stage = h_vectors * m * 32;
  const std::size_t h_msm = m * 32 + msm_scratch_bytes;
  const std::size_t gathered = std::max(std::max(w.l, w.a) / 2 * kSrsG1PointBytes, w.b / 2 * kSrsG2PointBytes);
  const std::size_t witness = (w.l + w.a + w.b) * 38 + gathered + msm_scratch_bytes + split_staging_bytes;
  const std::size_t ntt_tables = (m / 2 + 1) * 32 + std::max<std::size_t>(m / 64, 4096) * 32;
  return std::max({h_stage, h_msm, witness}) + ntt_tables;
}

// The device budget of an SRS of srs_total_bytes. requested_bytes is the
// caller's bound (kSrsDeviceBudgetAuto: none); free_bytes the device's free
// memory less its reserve; working_bytes what the proofs need beside the SRS.
// Auto: all of the SRS when it fits beside the working set, else what is left
// beside it (an H200 holds the whole 32 GiB PoRep SRS: 44.1 + ~20 GiB of 139).
// A request is honoured up to the free memory (the working set is then the
// requester's business: benches force small budgets).
inline constexpr std::size_t kSrsDeviceBudgetAuto = std::numeric_limits<std::size_t>::max();
inline std::size_t srs_device_budget(std::size_t srs_total_bytes, std::size_t requested_bytes, std::size_t free_bytes,
                                     std::size_t working_bytes) {
  if (requested_bytes != kSrsDeviceBudgetAuto) return std::min(requested_bytes, free_bytes);
  const std::size_t beside_work = free_bytes > working_bytes ? free_bytes - working_bytes : 0;
  return std::min(srs_total_bytes, beside_work);
}

}  // namespace cuzk::gpu
