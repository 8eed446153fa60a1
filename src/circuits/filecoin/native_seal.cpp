#include "circuits/filecoin/native_seal.hpp"

#include <cstdio>
#include <cstdlib>

#include "circuits/filecoin/derive.hpp"
#include "circuits/native/poseidon.hpp"

namespace cuzk::circuits::filecoin {

NativeSeal seal_natively(SealProof proof, std::span<const Digest32> data, const Digest32& prover_id,
                         std::uint64_t sector_id, const Digest32& ticket, ThreadPool* pool) {
  using ff::Fr;
  using native::fr_from_le_bytes;
  const SealProofInfo& info = seal_proof_info(proof);
  const std::size_t n = info.nodes;
  if (data.size() != n) {
    std::fprintf(stderr, "seal_natively: %zu data nodes for %s (%zu nodes)\n", data.size(), info.name.data(), n);
    std::abort();
  }
  native::Sha256MerkleTree tree_d(native::Sha256TreeHasher{}, std::vector<std::size_t>(info.comm_d_levels, 2),
                                  std::vector<Digest32>(data.begin(), data.end()), pool);
  const Digest32 rid = replica_id(prover_id, sector_id, ticket, tree_d.root(), porep_id(proof));
  StackedGraph graph(n, porep_id(proof), info.api_version);
  std::vector<std::vector<Digest32>> labels = label_layers(graph, rid, info.layers);

  std::vector<Fr> column_hashes(n), replica(n);
  auto leaves = [&](std::size_t begin, std::size_t end) {
    std::vector<Fr> col(info.layers);
    for (std::size_t v = begin; v < end; ++v) {
      for (std::size_t l = 0; l < info.layers; ++l) col[l] = fr_from_le_bytes(labels[l][v]);
      column_hashes[v] = native::poseidon_hash(native::filecoin_poseidon(info.layers), col);
      replica[v] = fr_from_le_bytes(labels[info.layers - 1][v]) + fr_from_le_bytes(data[v]);
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(n, leaves);
  } else {
    leaves(0, n);
  }
  const auto arities = native::tree_shape_arities(n, info.base_arity, info.sub_arity, info.top_arity);
  native::PoseidonMerkleTree tree_c(native::PoseidonTreeHasher{}, arities, std::move(column_hashes), pool);
  native::PoseidonMerkleTree tree_r(native::PoseidonTreeHasher{}, arities, std::move(replica), pool);
  return NativeSeal{std::move(tree_d), rid, std::move(graph), std::move(labels), std::move(tree_c), std::move(tree_r)};
}

}  // namespace cuzk::circuits::filecoin
