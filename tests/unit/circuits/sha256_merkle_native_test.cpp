// Native SHA-256 and Merkle trees against external vectors (FIPS 180-2,
// rust-fil-proofs comm_d / Poseidon tree tests).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "circuits/native/merkle.hpp"
#include "circuits/native/sha256.hpp"

namespace cuzk::circuits::native {
namespace {

std::string hex(std::span<const std::uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (auto x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

TEST(Sha256Native, Fips180Vectors) {
  EXPECT_EQ(hex(sha256(bytes(""))), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex(sha256(bytes("abc"))), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex(sha256(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 h;
  h.update(bytes("ab"));
  h.update(bytes("c"));
  EXPECT_EQ(hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  h.update(bytes("abc"));  // the context was reset by finish()
  EXPECT_EQ(hex(h.finish()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256Native, Fr32TrimClearsTopTwoBits) {
  Digest32 d = sha256_fr32(bytes("abc"));
  EXPECT_EQ(d[31], 0xad & 0x3f);
  EXPECT_EQ(d[0], 0xba);
  // A trimmed digest is always a canonical Fr.
  Fr x = fr_from_le_bytes(d);
  EXPECT_EQ(fr_to_le_bytes(x), d);
}

// rust-fil-proofs filecoin-proofs/tests/pieces.rs test_compute_comm_d_empty:
// comm_d of an all-zero sector (binary SHA-256 tree over 32-byte zero leaves).
TEST(MerkleNative, CommDOfZeroSectors) {
  Sha256MerkleTree t128(Sha256TreeHasher{}, tree_shape_arities(4, 2), std::vector<Digest32>(4));
  EXPECT_EQ(hex(t128.root()), "3731bb99ac689f66eef5973e4a94da188f4ddcae580724fc6f3fd60dfd488333");
  const Digest32 expected_2k = {252, 126, 146, 130, 150, 229, 22, 250, 173, 233, 134, 178, 143, 146, 212, 74,
                                79,  36,  185, 53,  72,  82,  35, 55,  106, 121, 144, 39,  188, 24,  248, 51};
  Sha256MerkleTree t2k(Sha256TreeHasher{}, tree_shape_arities(64, 2), std::vector<Digest32>(64));
  EXPECT_EQ(t2k.root(), expected_2k);
  Sha256SparseTree s2k(Sha256TreeHasher{}, tree_shape_arities(64, 2), Digest32{});
  EXPECT_EQ(s2k.root(), expected_2k);
}

// rust-fil-proofs filecoin-hashers/src/poseidon.rs test_poseidon_hasher.
TEST(MerkleNative, PoseidonBinaryTreeVector) {
  std::vector<Fr> leaves{Fr::one(), Fr::zero(), Fr::zero(), Fr::one()};
  PoseidonMerkleTree t(PoseidonTreeHasher{}, tree_shape_arities(4, 2), leaves);
  ff::BigInt<4> r{};
  r.limb = {0xefbb8be3e291e671, 0x77cc72b8cb2b5ad2, 0x30eb6385ae6b74ae, 0x1effebb7b26ad9eb};
  EXPECT_EQ(t.root(), Fr::from_int(r));
  ff::BigInt<4> n{};
  n.limb = {0xb339ff6079800b5e, 0xec5907b3dc3094af, 0x93c003cc74a24f26, 0x042f94ffbe786bc3};
  EXPECT_EQ(t.level(1)[0], Fr::from_int(n));
}

TEST(MerkleNative, ShapesMatchRfp) {
  EXPECT_EQ(tree_shape_arities(64, 8), (std::vector<std::size_t>{8, 8}));
  EXPECT_EQ(tree_shape_arities(128, 8, 2), (std::vector<std::size_t>{8, 8, 2}));
  EXPECT_EQ(tree_shape_arities(512, 8, 4, 2), (std::vector<std::size_t>{8, 8, 4, 2}));
  EXPECT_EQ(tree_shape_arities(1024, 8, 8, 2), (std::vector<std::size_t>{8, 8, 8, 2}));
  // 32 GiB: 2^30 nodes, 8 base trees of 2^27 leaves (9 octal levels) + sub 8.
  EXPECT_EQ(tree_shape_arities(std::uint64_t{1} << 30, 8, 8).size(), 10u);
}

TEST(MerkleNative, PathsRecomputeRootAndSparseEqualsDense) {
  std::mt19937_64 rng(7);
  for (auto arities : {tree_shape_arities(64, 8), tree_shape_arities(128, 8, 2), tree_shape_arities(512, 8, 4, 2),
                       tree_shape_arities(64, 4)}) {
    std::uint64_t n = 1;
    for (auto a : arities) n *= a;
    std::vector<Fr> leaves(n, Fr::from_u64(5));
    PoseidonSparseTree sparse(PoseidonTreeHasher{}, arities, Fr::from_u64(5));
    for (int k = 0; k < 3; ++k) {
      std::uint64_t i = rng() % n;
      leaves[i] = Fr::random(rng);
      sparse.set_leaf(i, leaves[i]);
    }
    PoseidonMerkleTree dense(PoseidonTreeHasher{}, arities, leaves);
    EXPECT_EQ(sparse.root(), dense.root());
    for (std::uint64_t i : {std::uint64_t{0}, n - 1, rng() % n}) {
      auto p = dense.path(i);
      EXPECT_EQ(path_leaf_index(p), i);
      EXPECT_EQ(root_from_path(PoseidonTreeHasher{}, leaves[i], p), dense.root());
      auto sp = sparse.path(i);
      EXPECT_EQ(root_from_path(PoseidonTreeHasher{}, sparse.leaf(i), sp), dense.root());
      EXPECT_NE(root_from_path(PoseidonTreeHasher{}, leaves[i] + Fr::one(), p), dense.root());
    }
  }
}

TEST(MerkleNative, ParallelBuildEqualsSerial) {
  std::mt19937_64 rng(8);
  std::vector<Fr> leaves(512);
  for (auto& x : leaves) x = Fr::random(rng);
  ThreadPool pool(2);
  const auto arities = tree_shape_arities(512, 8, 4, 2);
  PoseidonMerkleTree serial(PoseidonTreeHasher{}, arities, leaves);
  PoseidonMerkleTree parallel(PoseidonTreeHasher{}, arities, leaves, &pool);
  EXPECT_EQ(serial.root(), parallel.root());
  EXPECT_EQ(serial.level(1), parallel.level(1));
}

TEST(MerkleNative, Sha256PathsRecomputeRoot) {
  std::vector<Digest32> leaves(32);
  for (std::size_t i = 0; i < leaves.size(); ++i) leaves[i] = sha256_fr32(bytes(std::to_string(i)));
  Sha256MerkleTree t(Sha256TreeHasher{}, tree_shape_arities(32, 2), leaves);
  for (std::uint64_t i = 0; i < 32; i += 5) {
    EXPECT_EQ(root_from_path(Sha256TreeHasher{}, leaves[i], t.path(i)), t.root());
  }
}

}  // namespace
}  // namespace cuzk::circuits::native
