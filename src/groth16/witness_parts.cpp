#include "groth16/witness_parts.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>

#include "util/huge_pages.hpp"

namespace cuzk::groth16 {

namespace {

// Grows v to n values; fresh memory is backed by huge pages and populated
// first (util/huge_pages.hpp). The new values are zeroed (std::vector), one
// pass over memory the parts then write: ~0.3 s for 4 GB on one core.
void grow_to(std::vector<Fr>& v, std::size_t n) {
  if (v.capacity() < n) {
    v.reserve(n);
    prefault_huge_pages_for(v);
  }
  v.resize(n);
}

}  // namespace

Witness synthesize_uniform_parts(ThreadPool& pool, WitnessCs& cs, std::size_t n_parts,
                                 const std::function<void(WitnessCs&, std::size_t)>& part) {
  if (n_parts == 0) return cs.take_witness();
  const std::size_t head_inputs = cs.num_inputs(), head_aux = cs.num_aux();
  part(cs, 0);
  const std::size_t part_inputs = cs.num_inputs() - head_inputs, part_aux = cs.num_aux() - head_aux;
  Witness w = cs.take_witness();
  const std::size_t base_inputs = w.inputs.size(), base_aux = w.aux.size();  // after part 0
  const std::size_t rest = n_parts - 1;
  if (rest == 0) return w;
  grow_to(w.inputs, base_inputs + rest * part_inputs);
  grow_to(w.aux, base_aux + rest * part_aux);

  // Chunks of consecutive parts, ~4 per thread: parts cost about the same,
  // and a WitnessCs per chunk rather than per part.
  const std::size_t chunks = std::min(rest, 4 * pool.size());
  pool.run_tasks(chunks, [&](std::size_t c) {
    const std::size_t begin = rest * c / chunks, end = rest * (c + 1) / chunks;  // among parts 1..rest
    WitnessCs chunk(std::span<Fr>(w.inputs).subspan(base_inputs + begin * part_inputs, (end - begin) * part_inputs),
                    std::span<Fr>(w.aux).subspan(base_aux + begin * part_aux, (end - begin) * part_aux));
    for (std::size_t i = begin; i < end; ++i) part(chunk, 1 + i);
    if (!chunk.filled()) {
      std::fprintf(stderr, "cuzk::groth16: parts %zu..%zu allocated fewer variables than part 0\n", 1 + begin, end);
      std::abort();
    }
  });
  return w;
}

}  // namespace cuzk::groth16
