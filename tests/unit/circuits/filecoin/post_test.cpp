// FallbackPoSt: registry, conventions, challenge vectors, bincode codec on
// hostile input, public inputs, genuine 2 KiB and sparse 32/64 GiB vanilla
// proofs through the native check and the circuit, tampering.
//
// Challenge vectors were computed independently of this code with Python's
// hashlib from the formula in rust-fil-proofs storage-proofs-post
// fallback/vanilla.rs generate_leaf_challenge_inner:
//   leaf = int.from_bytes(sha256(rand + pack('<Q', sector_id) +
//                                pack('<Q', challenge_index)).digest()[:8], 'little') % nodes
// with challenge_index from fallback/utils.rs get_challenge_index. The 32 GiB
// vector uses the real inputs of rust-filecoin-proofs-api
// tests/verify_window_post_test.rs (randomness 2f b4 0f d7 .., sector 132,
// prover f03751): that proof verifies under both StackedDrgWindow32GiBV1 and
// V1_2 because sector position 0 of partition 0 gives challenge indexes n in
// both versions, which the V1_0 = V1_2 assertion below also shows.
#include <gtest/gtest.h>

#include <algorithm>

#include "circuits/filecoin/post_circuit.hpp"
#include "circuits/filecoin/post_gen.hpp"
#include "circuits/filecoin/post_inputs.hpp"
#include "circuits/filecoin/post_proof.hpp"
#include "circuits/native/sha256.hpp"
#include "groth16/constraint_system.hpp"

namespace cuzk::circuits::filecoin {
namespace {

using ff::Fr;

constexpr Digest32 kApiRandomness = {47,  180, 15,  215, 4,   51,  54, 214, 69,  205, 19,  137, 99, 198, 249, 96,
                                     246, 73,  219, 83,  160, 245, 50, 226, 100, 89,  142, 159, 83, 226, 237, 35};

Digest32 seq_randomness() {
  Digest32 r{};
  for (std::size_t i = 0; i < 32; ++i) r[i] = std::uint8_t(i);
  return r;
}

PostGenOutput gen(PostProof proof, PostGenMode mode, std::size_t sectors, std::uint32_t partition = 0,
                  std::uint64_t first_id = 1, std::optional<Digest32> rand = std::nullopt) {
  PostGenOptions o;
  o.proof = proof;
  o.mode = mode;
  o.seed = 7;
  o.sectors = sectors;
  o.partition = partition;
  o.first_sector_id = first_id;
  o.randomness = rand;
  return generate_post_vanilla(o);
}

PostPartition partition_of(PostProof proof, const PostGenOutput& g, std::uint32_t partition = 0) {
  return make_post_partition(proof, g.randomness, g.prover_id, partition, g.sectors);
}

PostErrorKind parse_error(std::span<const std::uint8_t> bytes, PostProof proof) {
  try {
    parse_sector_proof(bytes, proof);
  } catch (const PostError& e) {
    return e.kind();
  }
  ADD_FAILURE() << "parsed";
  return PostErrorKind::kUnknownProof;
}

// The first failure, checked sequentially and on a pool (same answer).
PostErrorKind check_error(const PostPartition& p) {
  std::optional<PostError> seq, par;
  try {
    check_post_partition(p);
  } catch (const PostError& e) {
    seq = e;
  }
  ThreadPool pool(3);
  try {
    check_post_partition(p, &pool);
  } catch (const PostError& e) {
    par = e;
  }
  if (!seq || !par) {
    ADD_FAILURE() << "checked valid";
    return PostErrorKind::kUnknownProof;
  }
  EXPECT_EQ(std::string(seq->what()), std::string(par->what()));
  return seq->kind();
}

// ---- registry and conventions -------------------------------------------------

TEST(PostRegistry, IdsNamesVersionsAndCounts) {
  ASSERT_EQ(post_proofs().size(), 15u);
  const auto& w32 = post_proof_info(PostProof::Window32GiBV1_2);
  EXPECT_EQ(w32.registered_id, 13u);
  EXPECT_EQ(w32.name, "StackedDrgWindow32GiBV1_2");
  EXPECT_EQ(w32.api_version, PostApiVersion::kV1_2);
  EXPECT_EQ(w32.circuit_sector_count, 2349u);
  EXPECT_EQ(w32.path_levels(), 10u);
  EXPECT_EQ(post_proof_info(PostProof::Window64GiBV1).circuit_sector_count, 2300u);
  EXPECT_EQ(post_proof_info(PostProof::Window64GiBV1).api_version, PostApiVersion::kV1_0);
  EXPECT_EQ(post_proof_info(PostProof::Window64GiBV1).path_levels(), 11u);
  const auto& win = post_proof_info(PostProof::Winning2KiBV1);
  EXPECT_EQ(win.registered_id, 0u);
  EXPECT_EQ(win.circuit_sector_count, 66u);
  EXPECT_EQ(win.circuit_challenge_count, 1u);
  EXPECT_EQ(win.vanilla_challenges(), 66u);
  EXPECT_EQ(post_proof_info(PostProof::Window2KiBV1).circuit_sector_count, 2u);
  EXPECT_EQ(post_proof_from_name("StackedDrgWinning64GiBV1"), PostProof::Winning64GiBV1);
  EXPECT_EQ(post_proof_from_id(9), PostProof::Window64GiBV1);
  EXPECT_FALSE(post_proof_from_id(15));
  EXPECT_EQ(post_proof_for(PostKind::kWindow, 2048), PostProof::Window2KiBV1_2);
  EXPECT_EQ(post_proof_for(PostKind::kWinning, std::uint64_t(32) << 30), PostProof::Winning32GiBV1);
  EXPECT_FALSE(post_proof_for(PostKind::kWindow, 4096));
}

TEST(PostConventions, ProverIdIsLeb128OfTheActorId) {
  Digest32 want{};
  want[0] = 167;  // f03751, rust-filecoin-proofs-api tests
  want[1] = 29;
  EXPECT_EQ(prover_id_from_actor(3751), want);
  EXPECT_EQ(prover_id_from_actor(0), Digest32{});
  const Digest32 big = prover_id_from_actor(~std::uint64_t(0));
  for (int i = 0; i < 9; ++i) EXPECT_EQ(big[i], 0xff);
  EXPECT_EQ(big[9], 0x01);
  EXPECT_EQ(big[10], 0x00);
}

TEST(PostConventions, RandomnessTopBitsCleared) {
  Digest32 r;
  r.fill(0xff);
  const Digest32 m = post_randomness(r);
  EXPECT_EQ(m[31], 0x3f);
  EXPECT_EQ(m[0], 0xff);
  EXPECT_EQ(post_randomness(kApiRandomness), kApiRandomness);  // already canonical
}

// ---- challenges -----------------------------------------------------------------

TEST(PostChallenges, IndexFormula) {
  // V1_0: (k * sector_count + i) * challenge_count + n; V1_2: n.
  EXPECT_EQ(post_challenge_index(PostApiVersion::kV1_0, 1 * 2 + 1, 10, 3), 33u);
  EXPECT_EQ(post_challenge_index(PostApiVersion::kV1_2, 1 * 2 + 1, 10, 3), 3u);
  EXPECT_EQ(post_challenge_index(PostApiVersion::kV1_0, 0, 10, 9), 9u);
}

TEST(PostChallenges, ApiTestVector32GiB) {
  const std::uint64_t want[10] = {396119802, 277217811, 436245381, 243087716, 706056829,
                                  128152768, 598990178, 81580961,  470132133, 332920863};
  for (auto proof : {PostProof::Window32GiBV1, PostProof::Window32GiBV1_2}) {
    const auto got = vanilla_challenges(proof, kApiRandomness, 0, 0, 132);
    ASSERT_EQ(got.size(), 10u);
    for (std::size_t n = 0; n < 10; ++n) EXPECT_EQ(got[n], want[n]) << n;
  }
  // V1_0, partition 1, position 1 (sector_index 2350): indexes 23500 + n.
  const auto v10 = vanilla_challenges(PostProof::Window32GiBV1, kApiRandomness, 1, 1, 7);
  EXPECT_EQ(v10[0], 159907832u);
  EXPECT_EQ(v10[1], 520554222u);
  EXPECT_EQ(v10[2], 185097773u);
  // V1_2 ignores the position.
  EXPECT_EQ(vanilla_challenges(PostProof::Window32GiBV1_2, kApiRandomness, 1, 1, 132)[0], want[0]);
}

TEST(PostChallenges, SmallVectorsAndWinning) {
  const std::uint64_t want[10] = {46, 10, 14, 42, 22, 8, 31, 41, 43, 30};
  const auto got = vanilla_challenges(PostProof::Window2KiBV1_2, seq_randomness(), 0, 0, 1);
  for (std::size_t n = 0; n < 10; ++n) EXPECT_EQ(got[n], want[n]) << n;
  const std::uint64_t win[8] = {26, 20, 59, 15, 60, 46, 40, 17};
  const auto w = vanilla_challenges(PostProof::Winning2KiBV1, seq_randomness(), 0, 0, 5);
  ASSERT_EQ(w.size(), 66u);
  for (std::size_t n = 0; n < 8; ++n) EXPECT_EQ(w[n], win[n]) << n;
  EXPECT_EQ(winning_sector_challenge(kApiRandomness, prover_id_from_actor(3751), 0, 1000), 948u);
}

// ---- bincode ----------------------------------------------------------------------

TEST(PostBincode, RoundTripAndTheReal32GiBSize) {
  const PostGenOutput g = gen(PostProof::Window32GiBV1_2, PostGenMode::kSparse, 1, 0, 132, kApiRandomness);
  const auto bytes = to_bincode(g.sectors[0]);
  // POST-SNAP.md B.2: a real 32 GiB WindowPoSt sector proof is 24,960 B.
  EXPECT_EQ(bytes.size(), 24960u);
  EXPECT_EQ(parse_sector_proof(bytes, PostProof::Window32GiBV1_2), g.sectors[0]);
  const PostGenOutput h = gen(PostProof::Window64GiBV1_2, PostGenMode::kSparse, 1);
  const auto b64 = to_bincode(h.sectors[0]);
  EXPECT_EQ(parse_sector_proof(b64, PostProof::Window64GiBV1_2), h.sectors[0]);
  // A 64 GiB proof is not a 32 GiB one.
  EXPECT_EQ(parse_error(b64, PostProof::Window32GiBV1_2), PostErrorKind::kProofShape);
}

TEST(PostBincode, HostileInputIsATypedError) {
  const PostGenOutput g = gen(PostProof::Window2KiBV1_2, PostGenMode::kSealed, 1);
  const auto good = to_bincode(g.sectors[0]);
  ASSERT_EQ(parse_sector_proof(good, PostProof::Window2KiBV1_2), g.sectors[0]);
  // Every truncation.
  for (std::size_t n = 0; n < good.size(); ++n) {
    EXPECT_EQ(parse_error(std::span(good).first(n), PostProof::Window2KiBV1_2), PostErrorKind::kTruncated) << n;
  }
  auto trailing = good;
  trailing.push_back(0);
  EXPECT_EQ(parse_error(trailing, PostProof::Window2KiBV1_2), PostErrorKind::kTrailingBytes);
  // A huge inclusion-proof count is refused before any allocation.
  auto huge = good;
  for (int i = 0; i < 8; ++i) huge[48 + i] = 0xff;  // after sector_id, comm_r, sectors len
  EXPECT_EQ(parse_error(huge, PostProof::Window2KiBV1_2), PostErrorKind::kLength);
  // Winning needs 66 inclusion proofs: a window proof is the wrong length.
  EXPECT_EQ(parse_error(good, PostProof::Winning2KiBV1), PostErrorKind::kLength);
  auto tag = good;
  tag[56] = 1;  // Single -> Sub
  EXPECT_EQ(parse_error(tag, PostProof::Window2KiBV1_2), PostErrorKind::kProofShape);
  auto noncanon = good;
  std::fill(noncanon.begin() + 8, noncanon.begin() + 40, 0xff);  // comm_r
  EXPECT_EQ(parse_error(noncanon, PostProof::Window2KiBV1_2), PostErrorKind::kNonCanonical);
  // The first path element's index: tag 4 + root 32 + leaf 32 + len 8 +
  // hashes len 8 + 7 x 32 after the 56-byte prefix.
  auto index = good;
  const std::size_t at = 56 + 4 + 64 + 8 + 8 + 7 * 32;
  index[at] = 8;
  EXPECT_EQ(parse_error(index, PostProof::Window2KiBV1_2), PostErrorKind::kPathArity);
  try {
    parse_sector_proof(index, PostProof::Window2KiBV1_2);
  } catch (const PostError& e) {
    EXPECT_EQ(e.sector_id(), std::optional<std::uint64_t>(1));
    EXPECT_EQ(e.field(), "vanilla_proof.sectors[0].inclusion_proofs[0].path[0].index");
  }
}

TEST(PostBincode, RandomMutationsNeverCrash) {
  const PostGenOutput g = gen(PostProof::Window2KiBV1_2, PostGenMode::kSealed, 1);
  const auto good = to_bincode(g.sectors[0]);
  std::uint64_t x = 12345;
  auto next = [&x] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x >> 33;
  };
  std::size_t parsed = 0, rejected = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    auto b = good;
    for (int k = 0, n = 1 + int(next() % 4); k < n; ++k) b[next() % b.size()] = std::uint8_t(next());
    if (iter % 7 == 0) b.resize(next() % (b.size() + 16), 0xff);
    try {
      const FallbackPostSectorProof p = parse_sector_proof(b, PostProof::Window2KiBV1_2);
      EXPECT_EQ(to_bincode(p), b);  // what parses re-encodes to the same bytes
      ++parsed;
    } catch (const PostError&) {
      ++rejected;
    }
  }
  EXPECT_GT(parsed, 0u);  // e.g. a changed sibling byte still parses
  EXPECT_GT(rejected, 0u);
}

// ---- partitions and public inputs ---------------------------------------------

TEST(PostPartitionTest, SortsRejectsDuplicatesAndCounts) {
  PostGenOutput g = gen(PostProof::Window2KiBV1_2, PostGenMode::kSparse, 2, 0, 10);
  std::reverse(g.sectors.begin(), g.sectors.end());
  const PostPartition p = partition_of(PostProof::Window2KiBV1_2, g);
  EXPECT_EQ(p.sectors[0].sector_id, 10u);
  EXPECT_EQ(p.sectors[1].sector_id, 11u);
  auto dup = g.sectors;
  dup[1] = dup[0];
  try {
    make_post_partition(PostProof::Window2KiBV1_2, g.randomness, g.prover_id, 0, dup);
    ADD_FAILURE();
  } catch (const PostError& e) {
    EXPECT_EQ(e.kind(), PostErrorKind::kDuplicateSector);
  }
  auto three = g.sectors;
  three.push_back(g.sectors[0]);
  three.back().sector_id = 99;
  EXPECT_THROW(make_post_partition(PostProof::Window2KiBV1_2, g.randomness, g.prover_id, 0, three), PostError);
  EXPECT_THROW(make_post_partition(PostProof::Window2KiBV1_2, g.randomness, g.prover_id, 0, {}), PostError);
}

TEST(PostPublicInputs, PerSlotCommRThenLeavesPaddedWithTheLastSector) {
  const PostGenOutput g = gen(PostProof::Window2KiBV1_2, PostGenMode::kSealed, 1, 0, 1, seq_randomness());
  const PostPartition p = partition_of(PostProof::Window2KiBV1_2, g);
  const auto in = post_public_inputs(p);
  ASSERT_EQ(in.size(), 22u);  // 2 slots x (comm_r + 10)
  const std::uint64_t want[10] = {46, 10, 14, 42, 22, 8, 31, 41, 43, 30};
  EXPECT_EQ(in[0], native::fr_from_le_bytes(g.sectors[0].comm_r));
  for (std::size_t n = 0; n < 10; ++n) EXPECT_EQ(in[1 + n], Fr::from_u64(want[n]));
  for (std::size_t j = 0; j < 11; ++j) EXPECT_EQ(in[11 + j], in[j]);
  // Winning: 66 slots x (comm_r, challenge i).
  const PostGenOutput w = gen(PostProof::Winning2KiBV1, PostGenMode::kSparse, 1, 0, 5, seq_randomness());
  const auto win = post_public_inputs(partition_of(PostProof::Winning2KiBV1, w));
  ASSERT_EQ(win.size(), 132u);
  EXPECT_EQ(win[1], Fr::from_u64(26));
  EXPECT_EQ(win[3], Fr::from_u64(20));
  EXPECT_EQ(win[2], win[0]);
}

TEST(PostPublicInputs, Window32GiBCountsOneSectorPadded) {
  const PostGenOutput g = gen(PostProof::Window32GiBV1_2, PostGenMode::kSparse, 1, 0, 132, kApiRandomness);
  const auto in = post_public_inputs(partition_of(PostProof::Window32GiBV1_2, g));
  ASSERT_EQ(in.size(), 2349u * 11);  // n_ic = 25,840 with ONE
  EXPECT_EQ(in[1], Fr::from_u64(396119802));
  EXPECT_EQ(in[in.size() - 1], Fr::from_u64(332920863));
}

// ---- shapes -------------------------------------------------------------------------

struct ShapeCase {
  const char* name;
  std::uint64_t constraints, inputs;
};

TEST(PostShape, CountsAssertedByTheReference) {
  const ShapeCase cases[] = {
      {"post-base-8", 16869, 19},
      {"post-sub-8-4", 22674, 19},
      {"post-top-8-4-2", 27384, 19},
      {"post-base-8-2", 11246, 13},
      {"post-blank-32g", 266665, 56},
      {"window-post-2k", 21866, 23},
      {"winning-post-2k", 90750, 133},
      {"winning-post-32g", 370590, 133},
      {"window-post-32g", 125279217, 25840},
      {"window-post-64g", 129887900, 25301},
  };
  for (const auto& c : cases) {
    const auto shape = post_shape_by_name(c.name);
    ASSERT_TRUE(shape) << c.name;
    const ShapeStats s = post_shape_stats(*shape, CountMode::kExtrapolate);
    EXPECT_EQ(s.constraints, c.constraints) << c.name;
    EXPECT_EQ(s.inputs, c.inputs) << c.name;
    EXPECT_EQ(s.density_b_input, 1u) << c.name;  // only ONE, via the inputize rows
  }
  EXPECT_FALSE(post_shape_by_name("window-post-4k"));
}

TEST(PostShape, DerivedCountsOfTheOtherSizes) {
  // FILECOIN.md §4's model: 313 per slot + per challenge 530 per oct level
  // + 2 (+ 314 for the binary top level of 64 GiB).
  const ShapeCase cases[] = {
      {"window-post-8m", 2 * (313 + 10 * (530 * 6 + 2)), 23},
      {"window-post-512m", 2 * (313 + 10 * (530 * 8 + 2)), 23},
      {"winning-post-8m", 66 * (313 + 530 * 6 + 2), 133},
      {"winning-post-512m", 66 * (313 + 530 * 8 + 2), 133},
      {"winning-post-64g", 66 * (313 + 530 * 10 + 2 + 314), 133},
  };
  for (const auto& c : cases) {
    const ShapeStats s = post_shape_stats(*post_shape_by_name(c.name), CountMode::kExtrapolate);
    EXPECT_EQ(s.constraints, c.constraints) << c.name;
    EXPECT_EQ(s.inputs, c.inputs) << c.name;
  }
}

TEST(PostShape, ExtrapolationEqualsFullSynthesis) {
  for (const char* name : {"post-blank-32g", "winning-post-2k"}) {
    const auto shape = *post_shape_by_name(name);
    EXPECT_EQ(post_shape_stats(shape, CountMode::kExtrapolate), post_shape_stats(shape, CountMode::kFull)) << name;
  }
}

// ---- genuine and sparse proofs through the check and the circuit ------------------

void expect_circuit_ok(const PostPartition& p, std::uint64_t constraints) {
  const FallbackPostCircuit c = post_partition_circuit(p);
  groth16::TestCs cs;
  c.synthesize(cs);
  EXPECT_EQ(cs.which_is_unsatisfied(), std::nullopt);
  EXPECT_EQ(cs.num_constraints(), constraints);
  const auto want = post_public_inputs(p);
  ASSERT_EQ(cs.inputs().size(), want.size() + 1);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(cs.inputs()[i + 1], want[i]) << i;
  ThreadPool pool(2);
  const groth16::Witness w = c.generate_witness(pool);
  EXPECT_TRUE(std::equal(w.inputs.begin(), w.inputs.end(), cs.inputs().begin(), cs.inputs().end()));
  EXPECT_TRUE(std::equal(w.aux.begin(), w.aux.end(), cs.aux().begin(), cs.aux().end()));
}

TEST(PostGenuine, Window2KiBSealedSectorsSatisfyTheCircuit) {
  const PostGenOutput g = gen(PostProof::Window2KiBV1_2, PostGenMode::kSealed, 2);
  const PostPartition p = partition_of(PostProof::Window2KiBV1_2, g);
  EXPECT_NO_THROW(check_post_partition(p));
  expect_circuit_ok(p, 21866);
}

TEST(PostGenuine, Winning2KiBSealedSectorSatisfiesTheCircuit) {
  const PostGenOutput g = gen(PostProof::Winning2KiBV1, PostGenMode::kSealed, 1);
  const PostPartition p = partition_of(PostProof::Winning2KiBV1, g);
  EXPECT_NO_THROW(check_post_partition(p));
  expect_circuit_ok(p, 90750);
}

TEST(PostGenuine, V1_0PartitionIndexEntersTheChallenges) {
  const PostGenOutput g = gen(PostProof::Window2KiBV1, PostGenMode::kSealed, 2, /*partition=*/1);
  EXPECT_NO_THROW(check_post_partition(partition_of(PostProof::Window2KiBV1, g, 1)));
  EXPECT_EQ(check_error(partition_of(PostProof::Window2KiBV1, g, 0)), PostErrorKind::kChallengeMismatch);
  expect_circuit_ok(partition_of(PostProof::Window2KiBV1, g, 1), 21866);
}

TEST(PostSparse, LargeSectorsPassTheCheckAndOneSlotOfTheCircuit) {
  for (PostProof proof : {PostProof::Window32GiBV1_2, PostProof::Window64GiBV1_2, PostProof::Winning32GiBV1}) {
    const PostGenOutput g = gen(proof, PostGenMode::kSparse, 1);
    const PostPartition p = partition_of(proof, g);
    EXPECT_NO_THROW(check_post_partition(p));
    groth16::TestCs cs;
    post_partition_circuit(p).with_sectors(0, 1).synthesize(cs);
    EXPECT_EQ(cs.which_is_unsatisfied(), std::nullopt) << post_proof_info(proof).name;
  }
}

// ---- tampering ------------------------------------------------------------------------

TEST(PostTamper, EachFaultIsCaughtNativelyAndByTheCircuit) {
  const PostGenOutput g = gen(PostProof::Window2KiBV1_2, PostGenMode::kSealed, 2);
  const PostPartition good = partition_of(PostProof::Window2KiBV1_2, g);

  PostPartition comm_r = good;
  comm_r.sectors[1].comm_r[0] ^= 1;
  EXPECT_EQ(check_error(comm_r), PostErrorKind::kCommRMismatch);

  PostPartition swapped = good;
  auto& proofs = swapped.sectors[0].sectors[0].inclusion_proofs;
  std::swap(proofs[0], proofs[1]);
  EXPECT_EQ(check_error(swapped), PostErrorKind::kChallengeMismatch);

  PostPartition rand = good;
  rand.randomness[0] ^= 1;
  EXPECT_EQ(check_error(rand), PostErrorKind::kChallengeMismatch);

  // Two faults: the first slot's is reported, on a pool too.
  PostPartition two = comm_r;
  two.sectors[0].sectors[0].inclusion_proofs[9].root[0] ^= 1;
  EXPECT_EQ(check_error(two), PostErrorKind::kRootMismatch);

  PostPartition sibling = good;
  sibling.sectors[0].sectors[0].inclusion_proofs[3].base[1].hashes[2][0] ^= 1;
  EXPECT_EQ(check_error(sibling), PostErrorKind::kPathMismatch);
  groth16::TestCs cs;
  post_partition_circuit(sibling).synthesize(cs);
  const auto bad = cs.which_is_unsatisfied();
  ASSERT_TRUE(bad);
  EXPECT_NE(bad->find("sector_0/challenge_inclusion_3/enforce root is correct"), std::string::npos) << *bad;

  groth16::TestCs cs2;
  post_partition_circuit(comm_r).synthesize(cs2);
  const auto bad2 = cs2.which_is_unsatisfied();
  ASSERT_TRUE(bad2);
  EXPECT_NE(bad2->find("sector_1/enforce_comm_c_comm_r_last_hash_comm_r"), std::string::npos) << *bad2;
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
