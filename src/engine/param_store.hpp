// Groth16 parameters of the built-in circuits, loaded on demand and cached.
//
// The demo circuit has no published parameters, so the first use of a size
// GENERATES development parameters (groth16/setup.hpp: one party knows the
// toxic waste - never use them for anything of value), writes them to
// <state_dir>/params/demo-<log_domain>.{params,vk} atomically (tmp + rename), and
// later uses read them back through io::ParamsLoader (io_uring with many
// large reads in flight, O_DIRECT when the file system allows it, a pread
// thread pool where io_uring is refused; decoding overlaps the reads).
// Loaded parameters stay in memory until evicted.
//
// Thread-safety: every method may be called from any thread. get() blocks
// (generation or file read) and is meant for worker threads; concurrent get()
// calls for the same circuit wait for one load. loaded() never blocks on a
// load in progress, so the loop may call it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "groth16/params.hpp"
#include "groth16/r1cs.hpp"
#include "engine/types.hpp"
#include "engine/views.hpp"
#include "groth16/verifier.hpp"
#include "io/params_loader.hpp"
#include "runtime/log.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::engine {

// A circuit with its parameters, ready to prove and verify.
struct CircuitParams {
  std::string circuit_id;  // "demo-<log_domain>"
  std::uint32_t demo_log_domain = 0;
  groth16::R1cs r1cs;
  groth16::Parameters params;
  groth16::PreparedVerifyingKey pvk;
  std::vector<std::uint8_t> vk_bytes;  // bellperson .vk encoding
  std::uint64_t bytes = 0;             // size of the parameter file
};

// "demo-<log_domain>" -> log_domain (>= kMinDemoLogDomain), or nullopt.
// Strict: only the canonical decimal spelling (demo_circuit_id), no leading
// zeros or signs, so that every set has exactly one id.
inline constexpr std::uint32_t kMinDemoLogDomain = 3;  // 2^3 rows hold one round + 3 inputs
std::optional<std::uint32_t> parse_demo_circuit_id(const std::string& id);
std::string demo_circuit_id(std::uint32_t log_domain);

// Asked with a circuit's compiled shape before its parameters are read or
// generated: an error refuses the load (nothing is read, generated or kept),
// e.g. a set that can never fit the memory budget (Engine::params_admit).
using ParamsAdmit = std::function<std::optional<Error>(const groth16::R1cs& r1cs)>;

// Thrown by a load that ParamsAdmit refused; carries its typed error.
class ParamsRefused : public std::runtime_error {
 public:
  explicit ParamsRefused(Error e) : std::runtime_error(e.message), error_(std::move(e)) {}
  const Error& error() const { return error_; }

 private:
  Error error_;
};

class ParamStore {
 public:
  // `ring` (borrowed, may be null): the event loop's io_uring ring; every
  // parameter and R1CS file is then read by coroutines on the loop
  // (io/loop_ring.hpp). Null: each read owns a ring (or the pread pool).
  ParamStore(std::filesystem::path state_dir, ThreadPool& math, runtime::Logger& log, io::LoopRing* ring = nullptr);

  struct Loaded {
    std::shared_ptr<const CircuitParams> params;
    bool already_loaded = false;
    bool generated = false;
  };
  // Blocking: returns the cached parameters, or reads / generates them once
  // `admit` (if set) accepted the shape; throws ParamsRefused otherwise.
  Loaded get_demo(std::uint32_t log_domain, const ParamsAdmit& admit = {});
  // Drops the cached copy (the file stays); false if it was not loaded.
  bool evict(const std::string& circuit_id);

  // Reads a .params file of a Filecoin set (PoRep, PoSt, SnapDeals) through
  // the io_uring loader with `pool` decoding, as demo parameters are read;
  // logs a progress line at every tenth of the file and the read's rate at
  // the end. groth16::read_params's errors (fc::ParamsReader's contract).
  // `observe`, when set, is called after each chunk too (on the loading
  // thread, with the file listed by loading()).
  groth16::Parameters read_params_file(const std::filesystem::path& path, ThreadPool& pool,
                                       const io::ProgressFn& observe = {}) const;
  // The same read, decoded into the vectors `into` already holds
  // (io::ParamsLoader::load_params_into: its vk and lengths must match).
  void read_params_into(const std::filesystem::path& path, ThreadPool& pool, groth16::Parameters& into) const;
  // Reads a compiled R1CS cache file through the same reads (listed by
  // loading(), rate logged). groth16::load_r1cs's errors (fc::R1csReader's
  // contract).
  groth16::R1cs read_r1cs_file(const std::filesystem::path& path) const;

  std::vector<ParamsEntry> loaded() const;
  // The parameter files being read now, with their progress.
  std::vector<ParamsLoadView> loading() const;
  std::uint64_t loaded_bytes() const;
  // <state_dir>/params: where every circuit's parameter files live.
  const std::filesystem::path& dir() const { return dir_; }

 private:
  struct Slot {
    std::mutex load_mu;  // held while one thread loads this circuit
  };
  std::shared_ptr<const CircuitParams> load_or_generate(std::uint32_t log_domain, const ParamsAdmit& admit,
                                                        bool& generated);

  std::filesystem::path dir_;
  ThreadPool& math_;
  runtime::Logger& log_;
  io::LoopRing* ring_;
  // One file being read: updated by the loading thread (progress callback),
  // read by loading() on any thread.
  struct Load {
    std::string file;
    std::chrono::steady_clock::time_point started;
    std::atomic<std::uint64_t> file_bytes{0}, read_bytes{0}, decoded_bytes{0};
  };
  // Reads `path` through the io_uring loader, registered in loads_ while it runs.
  groth16::Parameters read_tracked(const std::filesystem::path& path, ThreadPool& pool, io::LoadStats& stats,
                                   const io::ProgressFn& also) const;
  // Registers a file in loads_ for the lifetime of the returned guard; the
  // ProgressFn updates it (and calls `also`).
  struct LoadGuard;
  LoadGuard track(const std::filesystem::path& path, const io::ProgressFn& also, io::ProgressFn& progress) const;
  io::FileSourceOptions source_options() const;
  void log_read(const std::filesystem::path& path, const io::LoadStats& stats) const;

  mutable std::mutex loads_mu_;  // guards loads_
  mutable std::vector<std::shared_ptr<Load>> loads_;
  mutable std::mutex mu_;  // guards slots_ and ready_
  std::map<std::uint32_t, std::shared_ptr<Slot>> slots_;
  std::map<std::uint32_t, std::shared_ptr<const CircuitParams>> ready_;
};

}  // namespace cuzk::engine
