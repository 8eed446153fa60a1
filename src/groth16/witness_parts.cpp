#include "groth16/witness_parts.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "util/huge_pages.hpp"

namespace cuzk::groth16 {

namespace {

// Grows v to n values; fresh memory is backed by huge pages and populated
// first (util/huge_pages.hpp).
void grow_to(std::vector<Fr>& v, std::size_t n) {
  if (v.capacity() < n) {
    v.reserve(n);
    prefault_huge_pages_for(v);
  }
  v.resize(n);
}

}  // namespace

void synthesize_uniform_parts(ThreadPool& pool, Witness& w, std::size_t n_parts,
                              const std::function<void(WitnessCs&, std::size_t)>& part) {
  if (n_parts == 0) return;
  WitnessCs first;
  part(first, 0);
  const std::size_t part_inputs = first.num_inputs() - 1, part_aux = first.num_aux();
  const Witness head = first.take_witness();

  const std::size_t base_inputs = w.inputs.size(), base_aux = w.aux.size();
  grow_to(w.inputs, base_inputs + n_parts * part_inputs);
  grow_to(w.aux, base_aux + n_parts * part_aux);
  std::copy(head.inputs.begin() + 1, head.inputs.end(), w.inputs.begin() + std::ptrdiff_t(base_inputs));
  std::copy(head.aux.begin(), head.aux.end(), w.aux.begin() + std::ptrdiff_t(base_aux));

  // Chunks of consecutive parts, ~4 per thread: parts cost about the same,
  // and a WitnessCs per chunk rather than per part.
  const std::size_t rest = n_parts - 1;
  if (rest == 0) return;
  const std::size_t chunks = std::min(rest, 4 * pool.size());
  pool.run_tasks(chunks, [&](std::size_t c) {
    const std::size_t begin = 1 + rest * c / chunks, end = 1 + rest * (c + 1) / chunks;
    WitnessCs cs(std::span<Fr>(w.inputs).subspan(base_inputs + begin * part_inputs, (end - begin) * part_inputs),
                 std::span<Fr>(w.aux).subspan(base_aux + begin * part_aux, (end - begin) * part_aux));
    for (std::size_t i = begin; i < end; ++i) part(cs, i);
    if (!cs.filled()) {
      std::fprintf(stderr, "cuzk::groth16: parts %zu..%zu allocated fewer variables than part 0\n", begin, end - 1);
      std::abort();
    }
  });
}

}  // namespace cuzk::groth16
