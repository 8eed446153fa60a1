// PoSt vanilla proofs (circuits/filecoin/post_proof.cpp parse_sector_proof):
// one sector's bincode FallbackPoStSectorProof, as every WindowPoSt and
// WinningPoSt request carries it. Byte 0 picks the registered proof (mod 15:
// Winning*V1, Window*V1, Window*V1_2, see post_proof.hpp); the rest is the
// proof. Only PostError of a malformed-input kind may come out (parsing
// checks shape, never validity); a proof that parses covers every byte
// (trailing bytes are an error), so to_bincode must give the input back.
#include "circuits/filecoin/post_proof.hpp"
#include "fuzz_util.hpp"

using namespace cuzk;
using namespace cuzk::circuits::filecoin;

namespace {

bool is_parse_error(PostErrorKind k) {
  switch (k) {
    case PostErrorKind::kTruncated:
    case PostErrorKind::kTrailingBytes:
    case PostErrorKind::kLength:
    case PostErrorKind::kProofShape:
    case PostErrorKind::kPathArity:
    case PostErrorKind::kNonCanonical:
      return true;
    default:
      return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const PostProof proof = PostProof(data[0] % post_proofs().size());
  const std::span<const std::uint8_t> bytes(data + 1, size - 1);
  FallbackPostSectorProof p;
  try {
    p = parse_sector_proof(bytes, proof);
  } catch (const PostError& e) {
    fuzz::require(is_parse_error(e.kind()), "parse_sector_proof threw a validity error kind");
    return 0;
  }
  const PostProofInfo& info = post_proof_info(proof);
  fuzz::require(p.sectors.size() == 1 && p.sectors[0].inclusion_proofs.size() == info.vanilla_challenges(),
                "parsed proof has the registered challenge count");
  for (const MerkleProof& m : p.sectors[0].inclusion_proofs) {
    fuzz::require(m.levels().size() == info.path_levels(), "parsed path has the registered levels");
    fuzz::require(m.leaf_index() < info.nodes, "parsed path opens a leaf of the tree");
  }
  const std::vector<std::uint8_t> again = to_bincode(p);
  fuzz::require(std::equal(again.begin(), again.end(), bytes.begin(), bytes.end()),
                "to_bincode(parse_sector_proof(x)) == x");
  return 0;
}
