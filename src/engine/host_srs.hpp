// The host copy of a large parameter set's SRS bases (h, l, a, b_g1, b_g2),
// given back to the kernel while every GPU holds the bases in device memory
// and read back from the set's .params file when a back end needs them again
// (a GPU that lost them, a CPU retry).
//
// Why: a 32 GiB PoRep set is 51 GB of host memory. Resident on the device,
// the GPU never reads the host bases again (a streamed SRS reads its own
// page-locked copy), and the peak RSS of a warm 4-job PoRep run on a 128 GB
// host was 103 GB, 51 GB of it these bases (bench/RESULTS.md). Released, the
// vectors keep their addresses and sizes (every holder's
// `const groth16::Parameters&` stays valid; only the pages go,
// util/page_release.hpp) and the verifying key stays; reading them faults.
//
// The engine decides when (pipeline.cpp prove_on): a back end that does not
// hold the set (DeviceBackend::holds_srs) acquires the copy before its device
// step and lets it go after; once every GPU holds the set and nobody uses the
// copy, it is released (after a job's device step, or after a preload's
// uploads: engine_srs.cpp). Only sets persisted to a file of at least
// kMinBytes of bases get one (a WinningPoSt's 0.2 GB stay: the CPU races it;
// EngineConfig::srs_host_copy_min_bytes).
//
// Thread-safety: every method may be called from any thread; acquire() and
// release_if_unused() block (a reload reads the whole file) and belong on
// worker threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/types.hpp"
#include "groth16/params.hpp"
#include "util/page_release.hpp"

namespace cuzk::engine {

class HostSrsCopy {
 public:
  // Sets with fewer bytes of bases keep their host copy.
  static constexpr std::uint64_t kMinBytes = std::uint64_t{1} << 30;
  // Decodes a .params file into the vectors of `into` (the engine's io_uring
  // loader, ParamStore::read_params_into); throws when it cannot, or when the
  // file's vk or lengths differ from `into`'s.
  using Reader = std::function<void(const std::filesystem::path& file, groth16::Parameters& into)>;

  // `params` must outlive this object and must not be written while it lives
  // (besides by it); `file` holds the same parameters. `params` must not be
  // an object defined const (the read-back writes its vectors' memory).
  HostSrsCopy(const groth16::Parameters& params, std::filesystem::path file, Reader read);
  ~HostSrsCopy();  // restores the pages before `params` frees them
  HostSrsCopy(const HostSrsCopy&) = delete;
  HostSrsCopy& operator=(const HostSrsCopy&) = delete;

  // A back end is about to read the bases: reads them back from the file
  // when released (blocking; decoded in place, no second copy), then counts
  // a user until end_use(). kInternal naming the file when it cannot be read
  // or no longer holds these parameters (the copy is released again: nothing
  // reads a partial read-back; a later acquire tries again).
  std::optional<Error> acquire();
  void end_use();
  // Releases the bases when no user holds them; the bytes given back (0 when
  // in use or already released).
  std::uint64_t release_if_unused();

  bool released() const { return released_.load(std::memory_order_acquire); }
  // Bytes of the five vectors (what a release gives back, to a page).
  std::uint64_t bases_bytes() const { return bases_bytes_; }
  std::uint64_t releases() const { return releases_.load(); }
  std::uint64_t reloads() const { return reloads_.load(); }

  // The bases' bytes of `params` (h, l, a, b_g1, b_g2).
  static std::uint64_t bases_bytes_of(const groth16::Parameters& params);

 private:
  // Releases the five vectors' pages (mu_ held); the bytes given back.
  std::uint64_t release_locked();

  const groth16::Parameters& params_;
  const std::filesystem::path file_;
  const Reader read_;
  const std::uint64_t bases_bytes_;
  std::mutex mu_;  // guards users_ and pages_; held through a reload
  std::size_t users_ = 0;
  std::vector<ReleasedPages> pages_;  // empty: present
  std::atomic<bool> released_{false};
  std::atomic<std::uint64_t> releases_{0}, reloads_{0};
};

// A user of a HostSrsCopy until destroyed (end_use); empty: none.
class HostSrsUse {
 public:
  HostSrsUse() = default;
  explicit HostSrsUse(HostSrsCopy* copy) : copy_(copy) {}
  ~HostSrsUse() {
    if (copy_ != nullptr) copy_->end_use();
  }
  HostSrsUse(HostSrsUse&& o) noexcept : copy_(o.copy_) { o.copy_ = nullptr; }
  HostSrsUse& operator=(HostSrsUse&& o) noexcept {
    if (this != &o) {
      if (copy_ != nullptr) copy_->end_use();
      copy_ = o.copy_;
      o.copy_ = nullptr;
    }
    return *this;
  }

 private:
  HostSrsCopy* copy_ = nullptr;
};

}  // namespace cuzk::engine
