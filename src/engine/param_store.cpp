#include "engine/param_store.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>
#include <system_error>

#include "circuits/demo.hpp"
#include "groth16/setup.hpp"
#include "io/sequential_reader.hpp"

namespace cuzk::engine {

std::optional<std::uint32_t> parse_demo_circuit_id(const std::string& id) {
  constexpr std::string_view kPrefix = "demo-";
  if (id.size() <= kPrefix.size() || id.compare(0, kPrefix.size(), kPrefix) != 0) return std::nullopt;
  std::uint32_t log_domain = 0;
  const char* first = id.data() + kPrefix.size();
  const char* last = id.data() + id.size();
  auto [p, ec] = std::from_chars(first, last, log_domain);
  if (ec != std::errc() || p != last || log_domain < kMinDemoLogDomain || log_domain > 31) return std::nullopt;
  // One spelling per set: "demo-016" would name the same parameters under
  // another residency key, each alias charged to the budget again.
  if (*first == '0') return std::nullopt;
  return log_domain;
}

std::string demo_circuit_id(std::uint32_t log_domain) { return "demo-" + std::to_string(log_domain); }

ParamStore::ParamStore(std::filesystem::path state_dir, ThreadPool& math, runtime::Logger& log, io::LoopRing* ring)
    : dir_(std::move(state_dir) / "params"), math_(math), log_(log), ring_(ring) {}

ParamStore::Loaded ParamStore::get_demo(std::uint32_t log_domain, const ParamsAdmit& admit) {
  std::shared_ptr<Slot> slot;
  {
    std::lock_guard lock(mu_);
    if (auto it = ready_.find(log_domain); it != ready_.end()) return {it->second, true, false};
    auto& s = slots_[log_domain];
    if (!s) s = std::make_shared<Slot>();
    slot = s;
  }
  std::lock_guard load_lock(slot->load_mu);
  {
    // Another thread may have finished the load while we waited.
    std::lock_guard lock(mu_);
    if (auto it = ready_.find(log_domain); it != ready_.end()) return {it->second, true, false};
  }
  bool generated = false;
  auto params = load_or_generate(log_domain, admit, generated);
  std::lock_guard lock(mu_);
  ready_[log_domain] = params;
  return {params, false, generated};
}

std::shared_ptr<const CircuitParams> ParamStore::load_or_generate(std::uint32_t log_domain, const ParamsAdmit& admit,
                                                                  bool& generated) {
  using namespace std::chrono;
  auto t0 = steady_clock::now();
  const std::string circuit_id = demo_circuit_id(log_domain);
  groth16::R1cs r1cs =
      groth16::compile(circuits::DemoCircuit(circuits::DemoCircuit::rounds_for_log_domain(log_domain), std::nullopt));
  if (admit) {
    if (std::optional<Error> refused = admit(r1cs)) throw ParamsRefused(std::move(*refused));
  }
  std::filesystem::path params_path = dir_ / (circuit_id + ".params");
  std::filesystem::path vk_path = dir_ / (circuit_id + ".vk");
  groth16::Parameters params;
  std::error_code ec;
  if (std::filesystem::exists(params_path, ec)) {
    io::LoadStats stats;
    params = read_tracked(params_path, math_, stats, {});
    log_.debug("parameter file read", {{"circuit", circuit_id},
                                       {"backend", io::to_string(stats.backend)},
                                       {"direct", stats.direct ? "yes" : "no"},
                                       {"io_wait_s", stats.io_wait_s},
                                       {"decode_s", stats.decode_s}});
    generated = false;
  } else {
    log_.warn("generating DEVELOPMENT parameters: single-party toxic waste, for development only",
              {{"circuit", circuit_id}, {"path", params_path.string()}});
    params = groth16::generate_parameters(r1cs, groth16::random_toxic_waste(), math_);
    std::filesystem::create_directories(dir_);
    // tmp + rename: a crash mid-write never leaves a truncated file under the
    // final name; the pid keeps two daemons on one state dir apart.
    std::string tmp_suffix = ".tmp." + std::to_string(::getpid());
    groth16::write_params(params, params_path.string() + tmp_suffix);
    groth16::write_vk(params.vk, vk_path.string() + tmp_suffix);
    std::filesystem::rename(vk_path.string() + tmp_suffix, vk_path);
    std::filesystem::rename(params_path.string() + tmp_suffix, params_path);
    generated = true;
  }
  // The prover re-checks vector lengths against the circuit (check_inputs),
  // so a parameter file of the wrong shape fails the job, not the daemon.
  groth16::PreparedVerifyingKey pvk = groth16::prepare_verifying_key(params.vk);
  std::vector<std::uint8_t> vk_bytes = groth16::encode_vk(params.vk);
  std::uint64_t bytes = std::filesystem::file_size(params_path);
  auto cp = std::make_shared<CircuitParams>(CircuitParams{circuit_id, log_domain, std::move(r1cs), std::move(params),
                                                          std::move(pvk), std::move(vk_bytes), bytes});
  auto ms = duration_cast<milliseconds>(steady_clock::now() - t0).count();
  log_.info(generated ? "parameters generated" : "parameters loaded",
            {{"circuit", cp->circuit_id}, {"bytes", cp->bytes}, {"ms", ms}});
  return cp;
}

namespace {

// A progress callback that logs a line at every tenth of the file.
io::ProgressFn log_tenths(runtime::Logger& log, std::string what, std::string file, const io::ProgressFn& observe) {
  auto next_tenth = std::make_shared<std::uint64_t>(1);
  return [&log, what = std::move(what), file = std::move(file), observe, next_tenth](const io::LoadProgress& p) {
    if (observe) observe(p);
    if (p.file_bytes == 0 || p.decoded_bytes * 10 < *next_tenth * p.file_bytes) return;
    *next_tenth = p.decoded_bytes * 10 / p.file_bytes + 1;
    log.info(what, {{"file", file},
                    {"percent", p.decoded_bytes * 100 / p.file_bytes},
                    {"read_bytes", p.read_bytes},
                    {"file_bytes", p.file_bytes}});
  };
}

}  // namespace

struct ParamStore::LoadGuard {
  const ParamStore* store;
  const Load* load;
  LoadGuard(const ParamStore* s, const Load* l) : store(s), load(l) {}
  LoadGuard(const LoadGuard&) = delete;
  LoadGuard& operator=(const LoadGuard&) = delete;
  ~LoadGuard() {
    std::lock_guard lock(store->loads_mu_);
    std::erase_if(store->loads_, [this](const std::shared_ptr<Load>& l) { return l.get() == load; });
  }
};

ParamStore::LoadGuard ParamStore::track(const std::filesystem::path& path, const io::ProgressFn& also,
                                        io::ProgressFn& progress) const {
  auto load = std::make_shared<Load>();
  load->file = path.filename().string();
  load->started = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(loads_mu_);
    loads_.push_back(load);
  }
  progress = [load, also](const io::LoadProgress& p) {
    load->file_bytes = p.file_bytes;
    load->read_bytes = p.read_bytes;
    load->decoded_bytes = p.decoded_bytes;
    if (also) also(p);
  };
  return LoadGuard(this, load.get());
}

io::FileSourceOptions ParamStore::source_options() const {
  io::FileSourceOptions opts;
  opts.loop = ring_;
  return opts;
}

void ParamStore::log_read(const std::filesystem::path& path, const io::LoadStats& stats) const {
  log_.info("parameter file read",
            {{"path", path.string()},
             {"bytes", stats.file_bytes},
             {"backend", io::to_string(stats.backend)},
             {"direct", stats.direct ? "yes" : "no"},
             {"wall_s", stats.wall_s},
             {"io_wait_s", stats.io_wait_s},
             {"decode_s", stats.decode_s},
             {"mib_per_s", stats.wall_s > 0 ? stats.file_bytes / stats.wall_s / (1 << 20) : 0.0}});
}

groth16::Parameters ParamStore::read_params_file(const std::filesystem::path& path, ThreadPool& pool,
                                                 const io::ProgressFn& observe) const {
  io::LoadStats stats;
  groth16::Parameters params =
      read_tracked(path, pool, stats, log_tenths(log_, "reading parameters", path.filename().string(), observe));
  log_read(path, stats);
  return params;
}

void ParamStore::read_params_into(const std::filesystem::path& path, ThreadPool& pool,
                                  groth16::Parameters& into) const {
  io::ParamsLoaderOptions opts;
  LoadGuard guard =
      track(path, log_tenths(log_, "reading parameters back", path.filename().string(), {}), opts.progress);
  opts.source = source_options();
  io::LoadStats stats;
  io::ParamsLoader(pool, opts).load_params_into(path, into, &stats);
  log_read(path, stats);
}

groth16::R1cs ParamStore::read_r1cs_file(const std::filesystem::path& path) const {
  io::ProgressFn progress;
  LoadGuard guard = track(path, log_tenths(log_, "reading r1cs", path.filename().string(), {}), progress);
  io::LoadStats stats;
  groth16::R1cs r1cs = io::load_r1cs(path, source_options(), progress, &stats);
  log_read(path, stats);
  return r1cs;
}

groth16::Parameters ParamStore::read_tracked(const std::filesystem::path& path, ThreadPool& pool, io::LoadStats& stats,
                                             const io::ProgressFn& also) const {
  io::ParamsLoaderOptions opts;
  LoadGuard guard = track(path, also, opts.progress);
  opts.source = source_options();
  return io::ParamsLoader(pool, opts).load_params(path, &stats);
}

std::vector<ParamsLoadView> ParamStore::loading() const {
  std::lock_guard lock(loads_mu_);
  std::vector<ParamsLoadView> out;
  const auto now = std::chrono::steady_clock::now();
  for (const auto& l : loads_) {
    out.push_back(
        {l->file, l->file_bytes.load(), l->read_bytes.load(), l->decoded_bytes.load(),
         static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(now - l->started).count())});
  }
  return out;
}

bool ParamStore::evict(const std::string& circuit_id) {
  auto log_domain = parse_demo_circuit_id(circuit_id);
  if (!log_domain) return false;
  std::lock_guard lock(mu_);
  // In-flight jobs keep their shared_ptr; memory is freed when the last ends.
  return ready_.erase(*log_domain) != 0;
}

std::vector<ParamsEntry> ParamStore::loaded() const {
  std::lock_guard lock(mu_);
  std::vector<ParamsEntry> out;
  for (const auto& [log_domain, p] : ready_) out.push_back({p->circuit_id, p->bytes});
  return out;
}

std::uint64_t ParamStore::loaded_bytes() const {
  std::uint64_t total = 0;
  for (const ParamsEntry& e : loaded()) total += e.bytes;
  return total;
}

}  // namespace cuzk::engine
