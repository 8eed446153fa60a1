// SDR parent generation against rust-fil-proofs' published parent-cache
// digests (storage-proofs-porep/parent_cache.json, copied to
// tests/data/filecoin/parent_cache.json).
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "circuits/filecoin/graph.hpp"

namespace cuzk::circuits::filecoin {
namespace {

nlohmann::json load_parent_cache_manifest() {
  std::ifstream f(std::string(CUZK_TEST_DATA_DIR) + "/filecoin/parent_cache.json");
  EXPECT_TRUE(f.good());
  return nlohmann::json::parse(f);
}

TEST(FilecoinGraph, Blake2bMatchesOpenSsl) {
  for (std::size_t len : {0, 1, 16, 64, 127, 128}) {
    std::vector<std::uint8_t> msg(len);
    for (std::size_t i = 0; i < len; ++i) msg[i] = std::uint8_t(i * 7 + 3);
    std::array<std::uint8_t, 64> want{};
    unsigned out_len = 0;
    ASSERT_EQ(EVP_Digest(msg.data(), msg.size(), want.data(), &out_len, EVP_blake2b512(), nullptr), 1);
    ASSERT_EQ(out_len, 64u);
    EXPECT_EQ(blake2b512_short(msg), want) << "len " << len;
  }
}

TEST(FilecoinGraph, ChaCha8StreamIsContiguousAcrossBlocks) {
  std::array<std::uint8_t, 32> seed{};
  seed[0] = 1;
  ChaCha8Rng a(seed), b(seed);
  // 16 words per block: u64 reads must equal pairs of u32 reads (low first)
  // across block boundaries.
  for (int i = 0; i < 40; ++i) {
    const std::uint64_t lo = a.next_u32();
    const std::uint64_t hi = a.next_u32();
    EXPECT_EQ(b.next_u64(), lo | hi << 32);
  }
}

TEST(FilecoinGraph, FeistelIsAPermutationAndInverts) {
  const FeistelKeys keys = {1, 2, 3, 4};
  for (std::uint64_t n : {512ULL, 1000ULL, 8192ULL}) {
    const auto dom = feistel_domain(n);
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < n; ++i) {
      const std::uint64_t p = feistel_permute(n, i, keys, dom);
      ASSERT_LT(p, n);
      seen.insert(p);
      ASSERT_EQ(feistel_invert(n, p, keys, dom), i);
    }
    EXPECT_EQ(seen.size(), n);
  }
}

TEST(FilecoinGraph, DrgParentOrderByApiVersion) {
  const PorepId id = porep_id_from_number(5);
  const StackedGraph v10(64, id, ApiVersion::V1_0_0), v11(64, id, ApiVersion::V1_1_0);
  for (std::uint32_t node = 2; node < 64; ++node) {
    const Parents a = v10.parents(node), b = v11.parents(node);
    // Same draws, predecessor moved from slot 5 to slot 0.
    EXPECT_EQ(a[5], node - 1);
    EXPECT_EQ(b[0], node - 1);
    for (int k = 0; k < 5; ++k) EXPECT_EQ(a[k], b[k + 1]);
    for (int k = 0; k < 6; ++k) EXPECT_LT(a[k], node);
    for (std::size_t k = 6; k < kDegree; ++k) EXPECT_LT(a[k], 64u);
  }
  // Nodes 0 and 1: all DRG parents are node 0 (expander parents are regular).
  for (std::uint32_t node : {0u, 1u}) {
    const Parents p = v10.parents(node);
    for (int k = 0; k < 6; ++k) EXPECT_EQ(p[k], 0u);
  }
}

void check_cache(SealProof p, const nlohmann::json& manifest, ThreadPool* pool) {
  const StackedGraph g = StackedGraph::for_proof(p);
  const std::string name = g.parent_cache_name();
  ASSERT_TRUE(manifest.contains(name)) << seal_proof_info(p).name << " -> " << name;
  const auto& entry = manifest.at(name);
  EXPECT_EQ(entry.at("sector_size").get<std::uint64_t>(), seal_proof_info(p).sector_bytes);
  EXPECT_EQ(to_hex(g.parent_cache_sha256(pool)), entry.at("digest").get<std::string>()) << seal_proof_info(p).name;
}

TEST(FilecoinGraph, ParentCache2KiBMatchesPublishedDigests) {
  const auto manifest = load_parent_cache_manifest();
  check_cache(SealProof::StackedDrg2KiBV1, manifest, nullptr);
  check_cache(SealProof::StackedDrg2KiBV1_1, manifest, nullptr);
  // The two 2 KiB files differ, and the in-memory cache hashes the same.
  const StackedGraph g = StackedGraph::for_proof(SealProof::StackedDrg2KiBV1);
  EXPECT_EQ(native::sha256(g.parent_cache()), g.parent_cache_sha256());
}

TEST(FilecoinGraph, ParentCache8MiBMatchesPublishedDigests) {
  const auto manifest = load_parent_cache_manifest();
  ThreadPool pool(2);
  check_cache(SealProof::StackedDrg8MiBV1, manifest, &pool);
  check_cache(SealProof::StackedDrg8MiBV1_1, manifest, &pool);
}

// Minutes to hours of CPU: run by hand with --gtest_also_run_disabled_tests.
TEST(FilecoinGraph, DISABLED_ParentCacheLargeSizesMatchPublishedDigests) {
  const auto manifest = load_parent_cache_manifest();
  ThreadPool pool;
  for (SealProof p : {SealProof::StackedDrg512MiBV1, SealProof::StackedDrg512MiBV1_1, SealProof::StackedDrg32GiBV1,
                      SealProof::StackedDrg32GiBV1_1, SealProof::StackedDrg64GiBV1, SealProof::StackedDrg64GiBV1_1}) {
    check_cache(p, manifest, &pool);
  }
}

// The larger cache names can be checked without generating the caches.
TEST(FilecoinGraph, ParentCacheNamesForAllSizesAreInTheManifest) {
  const auto manifest = load_parent_cache_manifest();
  std::set<std::string> names;
  for (const auto& info : seal_proofs()) {
    const std::string name = StackedGraph::for_proof(info.proof).parent_cache_name();
    EXPECT_TRUE(manifest.contains(name)) << info.name;
    if (manifest.contains(name)) {
      EXPECT_EQ(manifest.at(name).at("sector_size").get<std::uint64_t>(), info.sector_bytes);
    }
    names.insert(name);
  }
  EXPECT_EQ(names.size(), 10u);
  EXPECT_EQ(manifest.size(), 10u);
}

}  // namespace
}  // namespace cuzk::circuits::filecoin
