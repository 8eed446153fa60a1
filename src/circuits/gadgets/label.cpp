#include "circuits/gadgets/label.hpp"

#include <cstdio>
#include <cstdlib>

#include "circuits/gadgets/multipack.hpp"
#include "circuits/gadgets/sha256.hpp"

namespace cuzk::circuits::gadgets {

AllocatedNum create_label_circuit(ConstraintSystem& cs, std::span<const Boolean> replica_id,
                                  const std::vector<std::vector<Boolean>>& parents, const UInt32& layer_index,
                                  const UInt64& node) {
  if (replica_id.size() < 32 || replica_id.size() > 256 || parents.size() != kTotalParents) {
    std::fprintf(stderr, "create_label_circuit: bad input sizes\n");
    std::abort();
  }
  std::vector<Boolean> buf(replica_id.begin(), replica_id.end());
  buf.reserve((2 + kTotalParents) * 256);
  buf.resize(256, Boolean::constant(false));
  for (const Boolean& b : layer_index.into_bits_be()) buf.push_back(b);
  for (const Boolean& b : node.to_bits_be()) buf.push_back(b);
  buf.resize(512, Boolean::constant(false));
  for (const auto& p : parents) {
    buf.insert(buf.end(), p.begin(), p.end());
    while (buf.size() % 256 != 0) buf.push_back(Boolean::constant(false));
  }
  if (buf.size() != (2 + kTotalParents) * 256) {
    std::fprintf(stderr, "create_label_circuit: parent wider than 256 bits\n");
    std::abort();
  }
  std::vector<Boolean> digest;
  {
    auto ns = cs.ns("hash");
    digest = sha256(cs, buf);
  }
  std::vector<Boolean> le = reverse_bit_numbering(std::move(digest));
  auto ns = cs.ns("result_num");
  return pack_bits(cs, std::span<const Boolean>(le).first(kFrCapacityBits));
}

}  // namespace cuzk::circuits::gadgets
