// SnapDeals vanilla proofs (circuits/filecoin/update_vanilla.cpp
// parse_partition_proof): one partition's bincode PartitionProof, as every
// update proving request carries them. Byte 0 picks the registered update
// proof (mod 5: 2 KiB, 8 MiB, 512 MiB, 32 GiB, 64 GiB) and the partition
// number errors name (byte 0 / 5); the rest is the proof. Only UpdateError of
// a malformed-input kind, naming that partition, may come out; a proof that
// parses covers every byte (trailing bytes are an error), so
// serialize_partition_proof must give the input back.
#include "circuits/filecoin/update_vanilla.hpp"
#include "fuzz_util.hpp"

using namespace cuzk;
using namespace cuzk::circuits::filecoin;

namespace {

bool is_parse_error(UpdateErrorKind k) {
  switch (k) {
    case UpdateErrorKind::Truncated:
    case UpdateErrorKind::TrailingBytes:
    case UpdateErrorKind::LengthMismatch:
    case UpdateErrorKind::ProofShape:
    case UpdateErrorKind::PathArity:
    case UpdateErrorKind::NonCanonicalField:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const UpdateProof proof = UpdateProof(data[0] % update_proofs().size());
  const std::size_t partition = data[0] / update_proofs().size();
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  PartitionProof p;
  try {
    p = parse_partition_proof(bytes, proof, partition);
  } catch (const UpdateError& e) {
    fuzz::require(is_parse_error(e.kind()), "parse_partition_proof threw a validity error kind");
    fuzz::require(e.partition() == partition, "UpdateError names the partition");
    return 0;
  }
  const UpdateLayout l = update_layout(update_proof_info(proof).nodes);
  fuzz::require(p.apex_leafs.size() == l.apex_leaf_count && p.challenge_proofs.size() == l.challenge_count,
                "parsed proof has the registered apex leaf and challenge counts");
  for (const UpdateChallengeProof& c : p.challenge_proofs) {
    for (const MerkleProof* m : {&c.proof_r_old, &c.proof_d_new, &c.proof_r_new}) {
      fuzz::require(m->leaf_index() < l.nodes, "parsed path opens a leaf of the tree");
    }
    fuzz::require(c.proof_d_new.levels().size() == l.challenge_bit_len, "tree D path has log2(nodes) levels");
  }
  const std::vector<std::uint8_t> again = serialize_partition_proof(p);
  fuzz::require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()),
                "serialize_partition_proof(parse_partition_proof(x)) == x");
  return 0;
}
