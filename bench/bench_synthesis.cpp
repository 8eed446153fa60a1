// Witness synthesis of one PoRep partition from a C1 output, as the daemon's
// pipeline runs it (one thread, or the partition's challenges on a pool):
// the host cost that paces the GPU (issue 25). Run REPEAT times: the first
// without the witness shape (vectors grown as synthesis goes), the others
// with the first's counts (as the daemon passes its R1cs's). Prints wall and
// CPU times; `perf record` on it shows where the time goes.
//
//   bench_synthesis C1_JSON [PARTITION] [THREADS] [REPEAT] [INPUTS AUX]
// (INPUTS AUX: the shape from the first run on, e.g. 328 130169893 for a
// 32 GiB partition)
//   (cuzk-bench gen-c1 --sector-size 32GiB --seed 1 -o c1.json writes one)
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/porep_c2.hpp"
#include "util/thread_pool.hpp"

int main(int argc, char** argv) {
  using namespace cuzk;
  using clock = std::chrono::steady_clock;
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_synthesis C1_JSON [PARTITION] [THREADS] [REPEAT] [INPUTS AUX]\n");
    return 2;
  }
  const std::size_t partition = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0;
  const std::size_t threads = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1;
  const int repeat = argc > 4 ? std::atoi(argv[4]) : 1;
  std::ifstream in(argv[1], std::ios::binary);
  const std::string json((std::istreambuf_iterator<char>(in)), {});
  const circuits::filecoin::C1Output c1 = circuits::filecoin::parse_c1(json);
  ThreadPool pool(threads);
  groth16::WitnessShape shape;
  if (argc > 6) shape = {std::strtoul(argv[5], nullptr, 10), std::strtoul(argv[6], nullptr, 10)};
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = clock::now();
    const std::clock_t c0 = std::clock();
    groth16::Witness w = circuits::filecoin::synthesize_partition(c1, partition, threads > 1 ? &pool : nullptr, shape);
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    const double cpu_s = double(std::clock() - c0) / CLOCKS_PER_SEC;
    std::printf("partition %zu (%s): %.3f s wall, %.3f s CPU (user + sys) on %zu thread(s), %zu aux, %zu inputs\n",
                partition, shape.aux ? "shape known" : "shape unknown", s, cpu_s, threads, w.aux.size(),
                w.inputs.size());
    shape = {w.inputs.size(), w.aux.size()};
  }
  return 0;
}
