// Witness generation of a circuit made of independent, equally shaped parts
// (the sector slots of a PoSt partition, the challenges of a PoRep or
// SnapDeals partition), in parallel and in place.
//
// Why in place: each part used to be synthesized into its own vectors and
// then appended to the witness, so a 4.06 GB WindowPoSt witness touched
// 8 GB of fresh pages and was copied once more on one thread; in `perf` of
// bench_synthesis --post on the dev VM the merge's copy and page clearing
// were ~40% of the samples. Here every part writes straight into its final
// place (WitnessCs's span mode) and `storage` may be a proved witness whose
// pages are already faulted in.
#pragma once

#include <cstddef>
#include <functional>

#include "groth16/constraint_system.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::groth16 {

// Appends parts 0..n_parts-1 to what `cs` (owning mode) holds so far (ONE
// and the circuit's global variables) and returns the witness, exactly as a
// sequential synthesis calling part(cs, 0), part(cs, 1), ... would. Parts
// may read the variables allocated before them, never each other's, and each
// allocates as many inputs and aux as part 0, which runs first on `cs` itself
// to learn the counts; a part that allocates otherwise is a bug (abort).
// Synthesis errors thrown by a part propagate (ThreadPool: first one wins).
Witness synthesize_uniform_parts(ThreadPool& pool, WitnessCs& cs, std::size_t n_parts,
                                 const std::function<void(WitnessCs&, std::size_t)>& part);

}  // namespace cuzk::groth16
