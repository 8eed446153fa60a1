#include "circuits/filecoin/labels.hpp"

#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits::filecoin {
namespace {

// replica_id || layer u32 BE || node u64 BE || 20 zero bytes.
std::array<std::uint8_t, 64> label_prefix(const Digest32& replica_id, std::uint32_t layer, std::uint64_t node) {
  std::array<std::uint8_t, 64> b{};
  std::copy(replica_id.begin(), replica_id.end(), b.begin());
  for (int i = 0; i < 4; ++i) b[32 + i] = std::uint8_t(layer >> (24 - 8 * i));
  for (int i = 0; i < 8; ++i) b[36 + i] = std::uint8_t(node >> (56 - 8 * i));
  return b;
}

}  // namespace

std::array<Digest32, kTotalParents> expand_parents(std::span<const Digest32> parents) {
  if (parents.size() != kBaseDegree && parents.size() != kDegree) {
    std::fprintf(stderr, "expand_parents: %zu parents (want 6 or 14)\n", parents.size());
    std::abort();
  }
  std::array<Digest32, kTotalParents> out;
  for (std::size_t i = 0; i < kTotalParents; ++i) {
    out[i] = parents[expanded_parent_source(i, parents.size())];
  }
  return out;
}

Digest32 create_label(const Digest32& replica_id, std::uint32_t layer, std::uint64_t node,
                      std::span<const Digest32, kTotalParents> expanded_parents) {
  native::Sha256 h;
  h.update(label_prefix(replica_id, layer, node));
  for (const auto& p : expanded_parents) h.update(p);
  Digest32 d = h.finish();
  native::trim_to_fr32(d);
  return d;
}

Digest32 create_label_node0(const Digest32& replica_id, std::uint32_t layer) {
  Digest32 d = native::sha256(label_prefix(replica_id, layer, 0));
  native::trim_to_fr32(d);
  return d;
}

std::vector<Digest32> parent_labels(const StackedGraph& graph, const std::vector<std::vector<Digest32>>& layers,
                                    std::uint32_t layer, std::uint32_t node) {
  const Parents p = graph.parents(node);
  const auto& cur = layers[layer - 1];
  std::vector<Digest32> out;
  for (std::size_t k = 0; k < kBaseDegree; ++k) out.push_back(cur[p[k]]);
  if (layer > 1) {
    const auto& prev = layers[layer - 2];
    for (std::size_t k = kBaseDegree; k < kDegree; ++k) out.push_back(prev[p[k]]);
  }
  return out;
}

std::vector<std::vector<Digest32>> label_layers(const StackedGraph& graph, const Digest32& replica_id,
                                                std::uint32_t layers) {
  const std::uint64_t n = graph.nodes();
  std::vector<std::vector<Digest32>> out;
  out.reserve(layers);
  for (std::uint32_t layer = 1; layer <= layers; ++layer) {
    out.emplace_back(n);
    out.back()[0] = create_label_node0(replica_id, layer);
    // Sequential: DRG parents are earlier nodes of the same layer.
    for (std::uint64_t v = 1; v < n; ++v) {
      const auto parents = parent_labels(graph, out, layer, std::uint32_t(v));
      const auto expanded = expand_parents(parents);
      out.back()[v] = create_label(replica_id, layer, v, expanded);
    }
  }
  return out;
}

}  // namespace cuzk::circuits::filecoin
