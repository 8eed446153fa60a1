// Witness synthesis of one PoRep partition from a C1 output, as the daemon's
// pipeline runs it (one thread, or the partition's challenges on a pool):
// the host cost that paces the GPU (issue 25). Run REPEAT times: the first
// without the witness shape (vectors grown as synthesis goes), the others
// with the first's counts (as the daemon passes its R1cs's). Prints wall and
// CPU times (user and kernel apart); `perf record` on it shows where the time
// goes. With --reuse, each run after the first fills the previous run's
// witness memory, as the daemon's pipeline does with a proved partition's
// (no fresh pages for the kernel to clear).
//
//   bench_synthesis [--reuse] C1_JSON [PARTITION] [THREADS] [REPEAT] [INPUTS AUX]
// (INPUTS AUX: the shape from the first run on, e.g. 328 130169893 for a
// 32 GiB partition)
//   (cuzk-bench gen-c1 --sector-size 32GiB --seed 1 -o c1.json writes one)
//   bench_synthesis --post DIR [THREADS]
// a WindowPoSt / WinningPoSt partition from a `cuzkctl post gen` directory
// (the daemon synthesizes it on its math pool), with the witness's size.
//   bench_synthesis --update SECTOR_BYTES SEED PARTITION [REPEAT] [INPUTS AUX]
// a SnapDeals partition of a synthetic sparse update (`cuzkctl update gen`'s),
// on one thread as the daemon's lanes run them: the first run on fresh
// memory (sized once when the shape is given, e.g. 5 80978488 at 32 GiB),
// the next ones each reusing the previous witness with its shape.
#include <sys/resource.h>

#include <chrono>
#include <ctime>
#include <array>
#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/post_proof.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "circuits/filecoin/update_gen.hpp"
#include "circuits/filecoin/update_prove.hpp"
#include "util/thread_pool.hpp"

namespace {

// The 64 hex digits of post.json's "randomness" (what post gen writes).
std::array<std::uint8_t, 32> manifest_randomness(const std::string& text) {
  const std::size_t key = text.find("\"randomness\"");
  const std::size_t open = text.find('"', text.find(':', key)) + 1;
  std::array<std::uint8_t, 32> out{};
  for (std::size_t i = 0; i < 32; ++i) out[i] = std::uint8_t(std::stoul(text.substr(open + 2 * i, 2), nullptr, 16));
  return out;
}

std::string field(const std::string& text, const std::string& key) {
  const std::size_t at = text.find(':', text.find("\"" + key + "\"")) + 1;
  const std::size_t begin = text.find_first_not_of(" \"", at);
  return text.substr(begin, text.find_first_of("\",}\n", begin) - begin);
}

int post_partition(const std::filesystem::path& dir, std::size_t threads) {
  using namespace cuzk;
  namespace fc = circuits::filecoin;
  std::ifstream in(dir / "post.json");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto proof = fc::post_proof_from_name(field(text, "registered_proof"));
  if (!proof) return 2;
  std::vector<fc::FallbackPostSectorProof> sectors;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".bin") continue;
    std::ifstream f(e.path(), std::ios::binary);
    const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)), {});
    sectors.push_back(fc::parse_sector_proof(bytes, *proof));
  }
  const fc::PostPartition p =
      fc::make_post_partition(*proof, manifest_randomness(text),
                              fc::prover_id_from_actor(std::stoull(field(text, "actor_id"))), 0, std::move(sectors));
  ThreadPool pool(threads);
  const auto t0 = std::chrono::steady_clock::now();
  const fc::FallbackPostCircuit c = fc::post_partition_circuit(p);
  const groth16::Witness w = threads > 1 ? c.generate_witness(pool) : groth16::generate_witness(c);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s, %zu sectors: %.3f s on %zu thread(s), %zu aux (%.2f GB), %zu inputs\n",
              std::string(fc::post_proof_info(*proof).name).c_str(), p.sectors.size(), s, threads, w.aux.size(),
              double(w.aux.size()) * 32 / 1e9, w.inputs.size());
  return 0;
}

// User and kernel CPU seconds of the process so far.
std::pair<double, double> cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) { return double(t.tv_sec) + double(t.tv_usec) / 1e6; };
  return {sec(u.ru_utime), sec(u.ru_stime)};
}

// REPEAT runs of synth(shape, storage), one line each: from the second run
// on, the shape is the previous witness's and, with `reuse`, its memory too
// (as the daemon's pipeline reuses a proved partition's).
void repeat_synthesis(
    const std::string& what, int repeat, bool reuse, cuzk::groth16::WitnessShape shape,
    const std::function<cuzk::groth16::Witness(cuzk::groth16::WitnessShape, cuzk::groth16::Witness)>& synth) {
  cuzk::groth16::Witness previous;
  for (int r = 0; r < repeat; ++r) {
    const bool reused = reuse && previous.aux.capacity() > 0;
    cuzk::groth16::Witness storage = reuse ? std::move(previous) : cuzk::groth16::Witness{};
    previous = {};  // freed before the next run when not reused
    const auto t0 = std::chrono::steady_clock::now();
    const auto [u0, k0] = cpu_seconds();
    cuzk::groth16::Witness w = synth(shape, std::move(storage));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto [u1, k1] = cpu_seconds();
    std::printf("%s (%s%s): %.3f s wall, %.3f s user, %.3f s kernel, %zu aux, %zu inputs\n", what.c_str(),
                shape.aux ? "shape known" : "shape unknown", reused ? ", memory reused" : "", s, u1 - u0, k1 - k0,
                w.aux.size(), w.inputs.size());
    shape = {w.inputs.size(), w.aux.size()};
    previous = std::move(w);
  }
}

int update_partition(std::uint64_t sector_bytes, std::uint64_t seed, std::size_t k, int repeat,
                     cuzk::groth16::WitnessShape shape) {
  using namespace cuzk;
  namespace fc = circuits::filecoin;
  const std::optional<fc::UpdateProof> proof = fc::update_proof_from_sector_bytes(sector_bytes);
  if (!proof) return 2;
  const fc::UpdateInputs in = fc::make_sparse_update(*proof, seed);
  repeat_synthesis(std::string(fc::update_proof_info(*proof).name) + " partition " + std::to_string(k), repeat,
                   /*reuse=*/true, shape, [&](groth16::WitnessShape sh, groth16::Witness storage) {
                     return fc::synthesize_update_partition(in, k, nullptr, sh, std::move(storage));
                   });
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cuzk;
  bool reuse = false;
  if (argc > 1 && std::string(argv[1]) == "--reuse") {
    reuse = true;
    --argc;
    ++argv;
  }
  if (argc > 4 && std::string(argv[1]) == "--update")
    return update_partition(
        std::strtoull(argv[2], nullptr, 10), std::strtoull(argv[3], nullptr, 10), std::strtoul(argv[4], nullptr, 10),
        argc > 5 ? std::atoi(argv[5]) : 2,
        argc > 7 ? groth16::WitnessShape{std::strtoul(argv[6], nullptr, 10), std::strtoul(argv[7], nullptr, 10)}
                 : groth16::WitnessShape{});
  if (argc > 2 && std::string(argv[1]) == "--post")
    return post_partition(argv[2], argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1);
  if (argc < 2 || std::string(argv[1]).starts_with("-")) {
    std::fprintf(stderr,
                 "usage: bench_synthesis [--reuse] C1_JSON [PARTITION] [THREADS] [REPEAT] [INPUTS AUX]\n"
                 "       bench_synthesis --post DIR [THREADS]\n"
                 "       bench_synthesis --update SECTOR_BYTES SEED PARTITION [REPEAT] [INPUTS AUX]\n");
    return 2;
  }
  const std::size_t partition = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
  const std::size_t threads = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1;
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 1;
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "bench_synthesis: cannot read %s\n", argv[1]);
    return 2;
  }
  const std::string json((std::istreambuf_iterator<char>(in)), {});
  ThreadPool pool(threads);
  circuits::filecoin::C1Output c1;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    c1 = circuits::filecoin::parse_c1(json, threads > 1 ? &pool : nullptr);
    std::printf("parse_c1: %zu bytes in %.1f ms on %zu thread(s)\n", json.size(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(), threads);
    std::fflush(stdout);
  } catch (const circuits::filecoin::C1Error& e) {
    std::fprintf(stderr, "bench_synthesis: %s: %s\n", argv[1], e.what());
    return 2;
  }
  groth16::WitnessShape shape;
  if (argc > 6) shape = {std::strtoul(argv[5], nullptr, 10), std::strtoul(argv[6], nullptr, 10)};
  repeat_synthesis("partition " + std::to_string(partition) + " on " + std::to_string(threads) + " thread(s)", repeat,
                   reuse, shape, [&](groth16::WitnessShape sh, groth16::Witness storage) {
                     return circuits::filecoin::synthesize_partition(c1, partition, threads > 1 ? &pool : nullptr, sh,
                                                                     std::move(storage));
                   });
  return 0;
}
