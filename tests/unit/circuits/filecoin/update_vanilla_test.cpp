// SnapDeals vanilla proofs: bincode round trip, typed errors on hostile or
// inconsistent input, native checks of genuine and sparse proof sets.
#include <gtest/gtest.h>

#include "circuits/filecoin/update_gen.hpp"
#include "circuits/filecoin/update_vanilla.hpp"

namespace cuzk::circuits::filecoin {
namespace {

std::vector<std::vector<std::uint8_t>> to_bytes(const UpdateInputs& in) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& p : in.partitions) out.push_back(serialize_partition_proof(p));
  return out;
}

UpdateError parse_error(const UpdateInputs& in, const std::vector<std::vector<std::uint8_t>>& b) {
  try {
    parse_update_inputs(in.proof, in.comm_r_old, in.comm_d_new, in.comm_r_new, b);
  } catch (const UpdateError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return UpdateError(UpdateErrorKind::Truncated, {}, {}, "", "");
}

UpdateError check_error(const UpdateInputs& in) {
  try {
    check_update(in);
  } catch (const UpdateError& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return UpdateError(UpdateErrorKind::Truncated, {}, {}, "", "");
}

class UpdateVanilla : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { genuine_ = new UpdateInputs(make_sealed_update(UpdateProof::StackedDrg2KiBV1, 5)); }
  static void TearDownTestSuite() { delete genuine_; }
  static UpdateInputs* genuine_;
};
UpdateInputs* UpdateVanilla::genuine_ = nullptr;

TEST_F(UpdateVanilla, BincodeRoundTripAndLayout) {
  const UpdateInputs& in = *genuine_;
  const auto bytes = to_bytes(in);
  // 2 KiB: comm_c 32 + apex (8 + 8 x 32) + 8 + 10 x (two tree R Single
  // proofs of 2 octal levels: 4 + 64 + 8 + 2 x (8 + 7 x 32 + 8) = 556;
  // tree D Single of 6 binary levels: 4 + 64 + 8 + 6 x (8 + 32 + 8) = 364).
  EXPECT_EQ(bytes[0].size(), 32u + 8 + 8 * 32 + 8 + 10 * (2 * 556 + 364));
  const UpdateInputs back = parse_update_inputs(in.proof, in.comm_r_old, in.comm_d_new, in.comm_r_new, bytes);
  EXPECT_EQ(back.partitions, in.partitions);
  EXPECT_EQ(back.h, 1u);
}

TEST_F(UpdateVanilla, GenuineProofsCheck) { EXPECT_NO_THROW(check_update(*genuine_)); }

TEST_F(UpdateVanilla, TruncatedBincodeIsTyped) {
  auto bytes = to_bytes(*genuine_);
  const std::size_t full = bytes[0].size();
  for (std::size_t cut : {std::size_t(0), std::size_t(31), std::size_t(400), full - 1}) {
    auto b = bytes;
    b[0].resize(cut);
    const UpdateError e = parse_error(*genuine_, b);
    EXPECT_EQ(e.kind(), UpdateErrorKind::Truncated) << cut << ": " << e.what();
    EXPECT_EQ(e.partition(), 0u);
  }
  auto b = bytes;
  b[0].resize(full - 1);
  const UpdateError e = parse_error(*genuine_, b);
  EXPECT_EQ(e.challenge(), 9u);
  EXPECT_EQ(e.field(), "proof_r_new.path[1].index");  // Single: root, leaf, path
}

TEST_F(UpdateVanilla, TrailingBytesAndHostileLengths) {
  auto b = to_bytes(*genuine_);
  b[0].push_back(0);
  EXPECT_EQ(parse_error(*genuine_, b).kind(), UpdateErrorKind::TrailingBytes);
  // A huge apex_leafs length must be rejected before any allocation.
  b = to_bytes(*genuine_);
  for (int i = 0; i < 8; ++i) b[0][32 + i] = 0xff;
  const UpdateError e = parse_error(*genuine_, b);
  EXPECT_EQ(e.kind(), UpdateErrorKind::LengthMismatch);
  EXPECT_EQ(e.field(), "apex_leafs");
  // A wrong MerkleProof variant tag (first challenge's proof_r_old).
  b = to_bytes(*genuine_);
  b[0][32 + 8 + 8 * 32 + 8] = 1;
  EXPECT_EQ(parse_error(*genuine_, b).kind(), UpdateErrorKind::ProofShape);
  // A value above the field modulus (comm_c all ones).
  b = to_bytes(*genuine_);
  for (int i = 0; i < 32; ++i) b[0][i] = 0xff;
  EXPECT_EQ(parse_error(*genuine_, b).kind(), UpdateErrorKind::NonCanonicalField);
  // Missing partitions.
  EXPECT_EQ(parse_error(*genuine_, {}).kind(), UpdateErrorKind::PartitionCount);
}

TEST_F(UpdateVanilla, MismatchedCommitmentsRejected) {
  UpdateInputs in = *genuine_;
  in.comm_r_new = genuine_->comm_r_old;
  EXPECT_EQ(check_error(in).kind(), UpdateErrorKind::RootMismatch);
  in = *genuine_;
  in.comm_d_new[0] ^= 1;
  EXPECT_EQ(check_error(in).kind(), UpdateErrorKind::ApexMismatch);
}

TEST_F(UpdateVanilla, SwappedPathRejected) {
  UpdateInputs in = *genuine_;
  auto& h = in.partitions[0].challenge_proofs[4].proof_r_old.base[0].hashes;
  std::swap(h[0], h[1]);
  const UpdateError e = check_error(in);
  EXPECT_EQ(e.kind(), UpdateErrorKind::PathMismatch);
  EXPECT_EQ(e.challenge(), 4u);
  EXPECT_EQ(e.field(), "proof_r_old");
  // Another challenge's proofs in place of challenge 2's.
  in = *genuine_;
  auto& cps = in.partitions[0].challenge_proofs;
  if (cps[2].proof_r_old.leaf_index() != cps[5].proof_r_old.leaf_index()) {
    std::swap(cps[2], cps[5]);
    EXPECT_EQ(check_error(in).kind(), UpdateErrorKind::ChallengeMismatch);
  }
}

TEST_F(UpdateVanilla, TamperedLeafAndBadHRejected) {
  UpdateInputs in = *genuine_;
  in.partitions[0].challenge_proofs[1].proof_d_new.leaf[0] ^= 2;
  EXPECT_EQ(check_error(in).kind(), UpdateErrorKind::PathMismatch);
  in = *genuine_;
  in.h = 2;  // 2 KiB allows h = 1 only
  EXPECT_EQ(check_error(in).kind(), UpdateErrorKind::BadH);
}

// Random byte changes and cuts: every outcome is a parse, an UpdateError or
// a clean check, never a crash (a crash fails the whole binary).
TEST_F(UpdateVanilla, MutatedBytesNeverCrash) {
  const auto clean = to_bytes(*genuine_);
  std::uint64_t x = 0x1234;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  std::size_t errors = 0;
  for (int round = 0; round < 400; ++round) {
    auto b = clean;
    const int edits = 1 + int(next() % 4);
    for (int e = 0; e < edits; ++e) b[0][next() % b[0].size()] = std::uint8_t(next());
    if (round % 5 == 0) b[0].resize(next() % b[0].size());
    try {
      const UpdateInputs in =
          parse_update_inputs(genuine_->proof, genuine_->comm_r_old, genuine_->comm_d_new, genuine_->comm_r_new, b);
      check_update(in);
    } catch (const UpdateError&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 350u);
}

// 512 MiB adds nothing over 8 MiB (Single proofs) and 32 GiB (16 partitions).
TEST(UpdateSparse, AllShapesCheck) {
  for (const auto& info : update_proofs()) {
    if (info.proof == UpdateProof::StackedDrg512MiBV1) continue;
    SCOPED_TRACE(info.name);
    const UpdateInputs in = make_sparse_update(info.proof, 11);
    EXPECT_EQ(in.partitions.size(), update_partition_count(info.nodes));
    EXPECT_NO_THROW(check_update(in));
    // The bincode of one partition parses back.
    const auto b = serialize_partition_proof(in.partitions.back());
    EXPECT_EQ(parse_partition_proof(b, info.proof, in.partitions.size() - 1), in.partitions.back());
  }
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
