// SDR labeling (rust-fil-proofs stacked/vanilla/create_label/single.rs,
// labeling_proof.rs, graph.rs copy_parents_data*).
//
// label(layer l >= 1, node v) = fr32(sha256(replica_id[32] || l u32 BE ||
//     v u64 BE || 20 zero bytes || P[0] || ... || P[36]))
// where P is the 37-parent expansion of the node's parent labels:
//   layer 1: the 6 DRG parent labels of layer 1, repeated: 6 x 6 + P[0]
//            (slots 0..35 = d0..d5 six times, slot 36 = d0);
//   layer > 1: the 6 DRG labels of layer l followed by the 8 expander labels
//            of layer l - 1 (14 values e0..e13), repeated: e0..e13, e0..e13,
//            e0..e8 (14 + 14 + 9 = 37).
// In general P[i] = e[i mod k] with k = 6 or 14 (rfp fills 37 slots with
// chunks of k). Node 0 hashes only the first 64 bytes (no parents).
// fr32 clears the top two bits of byte 31. 37 x 32 + 64 = 1248 bytes.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "circuits/filecoin/graph.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::filecoin {

using native::Digest32;

inline constexpr std::size_t kTotalParents = 37;

// Slot i of the 37 takes parent i mod k (k = number of distinct parents).
constexpr std::size_t expanded_parent_source(std::size_t slot, std::size_t distinct) { return slot % distinct; }

// `parents` holds 6 (layer 1) or 14 (layer > 1) labels.
std::array<Digest32, kTotalParents> expand_parents(std::span<const Digest32> parents);

// The label of `node` in `layer` (1-based) from its 37 expanded parent labels.
Digest32 create_label(const Digest32& replica_id, std::uint32_t layer, std::uint64_t node,
                      std::span<const Digest32, kTotalParents> expanded_parents);
// Node 0's label: no parents.
Digest32 create_label_node0(const Digest32& replica_id, std::uint32_t layer);

// All labels of all layers (layers[l - 1][v]); for small sectors (tests,
// synthetic C1). Cost: layers x nodes sha256 of 1248 bytes.
std::vector<std::vector<Digest32>> label_layers(const StackedGraph& graph, const Digest32& replica_id,
                                                std::uint32_t layers);

// The 6 or 14 parent labels of `node` in `layer` given all layers' labels.
std::vector<Digest32> parent_labels(const StackedGraph& graph, const std::vector<std::vector<Digest32>>& layers,
                                    std::uint32_t layer, std::uint32_t node);

}  // namespace cuzk::circuits::filecoin
