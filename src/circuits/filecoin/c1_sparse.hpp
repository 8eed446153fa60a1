// A synthetic C1 output (SealCommitPhase1Output) for ANY registered PoRep
// size, 2 KiB .. 64 GiB, without materialising the sector: only the nodes
// that the vanilla proofs open are given values, every other leaf of trees
// D, C and R takes a per-tree default, and the three trees are sparse
// (O(touched leaves x depth) hashes). For 32 GiB that is 10 partitions x 18
// challenges x (1 + 14 parents) columns of 11 labels: ~2,700 tree-C leaves.
//
// Construction (the order matters: each step fixes what the next derives):
//   1. prover_id, sector_id, ticket, seed and a data seed come from the
//      caller (or from one u64 via sparse_c1_inputs).
//   2. Data (tree D, SHA-256 binary). replica_id depends on comm_d and the
//      challenges on replica_id, so the data of the challenged leaves cannot
//      be chosen after the challenges are known. The sector data is instead
//      PERIODIC: a random fr32 block of 2^min(10, levels) leaves repeated
//      over the whole sector (all zero with SparseC1Data::Zero: a CC
//      sector). Every subtree above the block level is then the same,
//      comm_d costs ~2^10 hashes, and every challenged leaf holds real
//      non-zero data. For 2 KiB (64 leaves) the block is the whole sector.
//   3. replica_id = sha256(prover_id || sector_id BE || ticket || comm_d ||
//      porep_id) trimmed; interactive challenges from (replica_id, seed).
//   4. Labels ("chosen parent columns"). For each challenged node c the
//      circuit recomputes label_l(c) from the labels of its 6 DRG parents in
//      layer l and its 8 expander parents in layer l-1, read from their
//      tree-C columns. A parent that is not itself challenged gets a free
//      column: `layers` random fr32 labels (a hash of the data seed, node and
//      layer). A challenged node's labels are computed with create_label,
//      layer by layer, nodes in increasing order: DRG parents are smaller
//      than their child and expander parents are one layer below, so a
//      challenged node that is also another challenge's parent is computed
//      before it is read, and every node has exactly one column.
//   5. Tree C (Poseidon, tree-R shape): leaf = Poseidon_layers(column) for
//      every touched node (challenged or parent), 0 elsewhere. Tree R: leaf
//      = label_L(c) + data(c) (in Fr) for challenged nodes, 0 elsewhere.
//      comm_r = Poseidon2(comm_c, comm_r_last).
//   6. Vanilla proofs exactly as rust-fil-proofs serialises them (labeling
//      proofs = the parent columns' rows expanded to 37, encoding proof =
//      the last labeling proof).
//
// What holds (tested):
//   - parse_c1 / check_structure: shapes, counts, path indexes, shared roots,
//     comm_r = Poseidon2(comm_c, comm_r_last).
//   - verify_c1(Full): challenges from (replica_id, seed), graph parents,
//     every Merkle path and column hash, every label of a challenged node
//     from its parent columns, encoding = label_L + data.
//   - verify_c1_circuit_relations below, i.e. everything the StackedCircuit
//     enforces, so the partition circuits are satisfied (for 2 KiB the
//     circuit is also synthesized and checked constraint by constraint).
//   - replica_id and comm_d are those of the (periodic) sector data.
// What does NOT hold (nothing in C1 verification or in the circuit checks
// it): a free parent's labels are not the labels of ITS parents, untouched
// tree C / tree R leaves are not columns / encodings of a real labeling, so
// the C1 is not the output of an actual seal.
//
// Cost (Release, 2-core Debian VM shared with other builds): 32 GiB and
// 64 GiB take ~0.9 s to generate (mostly the ~27,000 sequential Poseidon
// hashes of tree C's set_leaf) and ~0.1 s to serialise to 37.6 MB of JSON;
// peak RSS ~270 MB with re-parse and verification.
#pragma once

#include <cstddef>
#include <cstdint>

#include "circuits/filecoin/c1.hpp"
#include "circuits/filecoin/c1_synth.hpp"
#include "util/thread_pool.hpp"

namespace cuzk::circuits::filecoin {

// log2 of the period of the synthetic sector data, in 32-byte nodes.
inline constexpr std::uint32_t kSparseDataPeriodLog2 = 10;

// The synthetic sector's data.
enum class SparseC1Data : std::uint8_t {
  PeriodicRandom,  // a random fr32 block of 2^kSparseDataPeriodLog2 nodes, repeated
  Zero,            // all zero: a committed-capacity (CC) sector
};

struct SparseC1Options {
  SparseC1Data data = SparseC1Data::PeriodicRandom;
};

// Deterministic public inputs from one seed: fr32 prover_id, ticket and seed,
// a sector id below 2^32 and the data seed.
SyntheticSealInputs sparse_c1_inputs(std::uint64_t seed);

// Data of sector node `node` (fr32), as make_sparse_synthetic_c1 lays it out:
// lets tests materialise the data of small sectors and recompute comm_d.
Digest32 sparse_c1_data_leaf(SealProof proof, const SyntheticSealInputs& in, const SparseC1Options& opts,
                             std::uint64_t node);

C1Output make_sparse_synthetic_c1(SealProof proof, const SyntheticSealInputs& in, const SparseC1Options& opts,
                                  ThreadPool* pool = nullptr);
// Inputs from sparse_c1_inputs(seed), default options.
C1Output make_sparse_synthetic_c1(SealProof proof, std::uint64_t seed, ThreadPool* pool = nullptr);

// Checks exactly the relations the StackedCircuit enforces on the witness
// that stacked_circuit_from_c1 builds, with the public inputs a verifier
// derives (interactive challenges from replica_id and seed, graph parents):
//   global: replica_id, comm_d, comm_r, comm_c, comm_r_last canonical Fr;
//           comm_r = Poseidon2(comm_c, comm_r_last), where comm_c and
//           comm_r_last are the first challenge's tree C / tree R roots;
//   per challenge c = labeling_proofs[0].node:
//     c = the derived challenge;
//     data leaf (comm_d_proofs.leaf) + its SHA-256 path hash to comm_d, path
//       index = c;
//     each parent column: rows canonical, Poseidon(rows) + its path hash to
//       comm_c, path index = the graph parent;
//     label_l = create_label(replica_id, l, c, 37-expansion of the DRG rows
//       l and expander rows l-1 of the parent columns), l = 1..layers;
//     label_L + data leaf + the tree R path hash to comm_r_last, index = c;
//     Poseidon(label_1..label_L) + the c_x path hash to comm_c, index = c.
// Values the circuit never reads are NOT checked: the c_x rows, the c_x and
// tree R leaves, labeling_proofs parents, encoding_proof, per-proof roots
// (verify_c1(Full) checks those). Nor can replica_id be checked against
// prover_id / sector_id / ticket, which C1 does not carry.
// Challenges are checked in parallel on `pool` when given. Throws C1Error.
void verify_c1_circuit_relations(const C1Output& c1, ThreadPool* pool = nullptr);
// The same for one partition's challenges (plus the global relations): what
// the circuit of that partition enforces. Throws C1Error (PartitionCount
// when the partition does not exist).
void verify_c1_partition_circuit_relations(const C1Output& c1, std::size_t partition, ThreadPool* pool = nullptr);

}  // namespace cuzk::circuits::filecoin
