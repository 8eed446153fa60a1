// The C2 input: rust-filecoin-proofs-api `SealCommitPhase1Output`, as
// filecoin-ffi serialises it with serde_json, parsed into typed structs.
//
//   {"registered_proof": "StackedDrg32GiBV1_1",
//    "vanilla_proofs": {"StackedDrg32GiBV1": [[Proof x challenges] x partitions]},
//    "comm_r": [32 u8], "comm_d": [..], "replica_id": [..], "seed": [..], "ticket": [..]}
//
// The vanilla_proofs key is always the size's V1 name. Every domain value
// (Poseidon or SHA-256) is an array of 32 integers 0..255 (the LE repr).
// Proof (storage-proofs-porep stacked/vanilla/params.rs), keys in order:
//   comm_d_proofs         MerkleProof, SHA-256, binary, Single
//   comm_r_last_proof     MerkleProof, Poseidon, tree R shape
//   replica_column_proofs {"c_x": ColumnProof, "drg_parents": [6], "exp_parents": [8]}
//                         ColumnProof = {"column": {"index": u32, "rows": [layers],
//                         "_h": null}, "inclusion_proof": MerkleProof (tree C)}
//   labeling_proofs       [layers] {"parents": [37], "layer_index": 1.., "node": u64}
//   encoding_proof        {"parents": [37], "layer_index": layers, "node": u64}
// MerkleProof = {"data": {"Single": {"root", "leaf", "path": {"path": [E]}}}}
//   | {"data": {"Sub": {"base_proof": {"path"}, "sub_proof": {"path"}, "root", "leaf"}}}
//   | {"data": {"Top": {"base_proof", "sub_proof", "top_proof", "root", "leaf"}}}
//   E = {"hashes": [arity - 1 domains], "index": position among the arity siblings}
// Paths run leaf to root.
//
// Errors are typed (C1Error: kind + JSON pointer of the offending value).
// parse_c1 checks the structure for the declared registered proof (lengths,
// arities, counts, layer indexes) and, cheaply, the commitments:
// every comm_d proof's root is comm_d, all tree R roots agree (comm_r_last),
// all tree C roots agree (comm_c) and comm_r = Poseidon2(comm_c, comm_r_last),
// the labeling/encoding proofs' parents are the parent columns' rows, and
// every domain value but seed and ticket is a canonical Fr (the synthesis and
// the public inputs convert them and abort on one >= r).
// The JSON is read with util/json_input (bounded depth and size; every JSON
// failure, e.g. "1e400" or trailing data, is a JsonSyntax C1Error).
// verify_c1 optionally goes further (challenges, parents, every Merkle path,
// labels and encodings).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "circuits/filecoin/registry.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk {
class ThreadPool;  // util/thread_pool.hpp
}  // namespace cuzk

namespace cuzk::circuits::filecoin {

using native::Digest32;

struct PathElement {
  std::vector<Digest32> hashes;  // arity - 1 siblings, in order
  std::uint64_t index = 0;       // position of the path node among its arity
  bool operator==(const PathElement&) const = default;
};
using InclusionPath = std::vector<PathElement>;

enum class MerkleProofKind : std::uint8_t { Single, Sub, Top };

struct MerkleProof {
  MerkleProofKind kind = MerkleProofKind::Single;
  Digest32 root{};
  Digest32 leaf{};
  InclusionPath base;  // Single: the whole path
  InclusionPath sub;   // Sub, Top: one element
  InclusionPath top;   // Top: one element
  bool operator==(const MerkleProof&) const = default;

  // All levels leaf to root (base, then sub, then top).
  InclusionPath levels() const;
  // Leaf index: mixed radix of the indexes, leaf level least significant.
  std::uint64_t leaf_index() const;
};

struct Column {
  std::uint32_t index = 0;
  std::vector<Digest32> rows;  // one label per layer
  bool operator==(const Column&) const = default;
};

struct ColumnProof {
  Column column;
  MerkleProof inclusion_proof;  // into tree C; leaf = column hash
  bool operator==(const ColumnProof&) const = default;
};

struct ReplicaColumnProof {
  ColumnProof c_x;
  std::vector<ColumnProof> drg_parents;  // 6
  std::vector<ColumnProof> exp_parents;  // 8
  bool operator==(const ReplicaColumnProof&) const = default;
};

struct LabelingProof {
  std::vector<Digest32> parents;  // 37 expanded parent labels
  std::uint32_t layer_index = 0;  // 1-based
  std::uint64_t node = 0;
  bool operator==(const LabelingProof&) const = default;
};
using EncodingProof = LabelingProof;

struct ChallengeProof {
  MerkleProof comm_d_proofs;
  MerkleProof comm_r_last_proof;
  ReplicaColumnProof replica_column_proofs;
  std::vector<LabelingProof> labeling_proofs;  // one per layer
  EncodingProof encoding_proof;
  bool operator==(const ChallengeProof&) const = default;

  std::uint64_t challenge() const { return labeling_proofs.empty() ? 0 : labeling_proofs[0].node; }
};

struct C1Output {
  SealProof registered_proof = SealProof::StackedDrg2KiBV1;
  std::vector<std::vector<ChallengeProof>> vanilla_proofs;  // [partition][challenge]
  Digest32 comm_r{};
  Digest32 comm_d{};
  Digest32 replica_id{};
  Digest32 seed{};
  Digest32 ticket{};
  bool operator==(const C1Output&) const = default;

  const SealProofInfo& info() const { return seal_proof_info(registered_proof); }
  // Roots shared by all proofs (valid after parse_c1 / check_structure).
  Digest32 comm_r_last() const;
  Digest32 comm_c() const;
};

enum class C1ErrorKind : std::uint8_t {
  JsonSyntax,         // not JSON
  MissingField,       // a required key is absent
  WrongType,          // e.g. a string where an array is expected
  ByteValue,          // an element of a byte array is not an integer 0..255
  ByteLength,         // a domain/commitment array is not 32 long
  IntegerRange,       // an index/node/layer does not fit its type
  UnknownProof,       // registered_proof is not a supported PoRep
  ProofKeyMismatch,   // vanilla_proofs key is not the V1 name of the size
  PartitionCount,     // outer vanilla_proofs length
  ChallengeCount,     // inner length
  ProofShape,         // Single/Sub/Top does not match the sector's tree shape
  PathLength,         // wrong number of path elements
  PathArity,          // wrong number of hashes in an element or index >= arity
  ParentCount,        // drg_parents != 6, exp_parents != 8, labeling parents != 37
  LayerCount,         // rows / labeling_proofs != layers
  LayerIndex,         // labeling/encoding layer_index out of order
  ChallengeMismatch,  // node numbers disagree within a challenge, or with the
                      // derived challenges (verify_c1)
  ParentMismatch,     // a column index is not the graph parent (verify_c1)
  RootMismatch,       // comm_d / comm_r_last / comm_c / comm_r disagree
  NonCanonicalField,  // a domain value >= r (parse_c1: every one but seed/ticket)
  PathMismatch,       // a Merkle path does not hash to its root (verify_c1)
  LabelMismatch,      // labeling/encoding parents differ from the column rows
                      // (parse_c1), or a label or encoding does not recompute
                      // (verify_c1)
};

std::string_view to_string(C1ErrorKind k);

class C1Error : public std::runtime_error {
 public:
  C1Error(C1ErrorKind kind, std::string json_path, const std::string& detail);
  C1ErrorKind kind() const { return kind_; }
  // JSON pointer (RFC 6901) of the offending value, "" for the document.
  const std::string& json_path() const { return json_path_; }

 private:
  C1ErrorKind kind_;
  std::string json_path_;
};

// Parses and checks structure + commitments (see the header comment).
// Throws C1Error. With `pool`, the partitions' vanilla proofs (nearly all of
// the text: 37.6 MB of 37.6 for 32 GiB) are parsed as separate documents on
// it (0.81-0.83 s on one thread of the dev VM for 32 GiB); whatever that
// path does not expect (a syntax error, a shape it does not recognise) is
// parsed again whole, so results and errors are the same either way.
C1Output parse_c1(std::string_view json_text, ThreadPool* pool = nullptr);

// serde_json-compatible serialisation (compact, keys in struct order).
std::string to_json(const C1Output& c1);

// The structural and commitment checks of parse_c1 on an in-memory value.
void check_structure(const C1Output& c1);

enum class C1VerifyDepth : std::uint8_t {
  PublicData,  // challenges from (replica_id, seed), node numbers, graph parents
  Full,        // plus every Merkle path, column hash, label and encoding
};
// Throws C1Error (json_path points at the challenge proof concerned).
void verify_c1(const C1Output& c1, C1VerifyDepth depth);

}  // namespace cuzk::circuits::filecoin
