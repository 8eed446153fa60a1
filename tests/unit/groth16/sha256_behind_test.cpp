// Sha256Behind against OpenSSL's one-shot SHA-256 of the whole stream: pieces
// borrowed and copied, empty, more than kMaxPending of them, and the ways a
// hasher is left without a digest.
#include "groth16/sha256_behind.hpp"

#include <gtest/gtest.h>
#include <openssl/sha.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

namespace cuzk::groth16 {
namespace {

std::array<std::uint8_t, 32> one_shot(const std::vector<std::uint8_t>& bytes) {
  std::array<std::uint8_t, 32> md{};
  SHA256(bytes.data(), bytes.size(), md.data());
  return md;
}

TEST(Sha256Behind, KnownVector) {
  Sha256Behind h;
  h.update_copied("a", 1);
  h.update_borrowed("bc", 2);
  const std::array<std::uint8_t, 32> md = h.digest();
  // FIPS 180-2, "abc".
  const std::array<std::uint8_t, 32> want = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
                                             0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
                                             0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};
  EXPECT_EQ(md, want);
}

TEST(Sha256Behind, EqualsTheOneShotHashOverRandomPieces) {
  std::mt19937_64 rng(7);
  std::vector<std::uint8_t> stream(3 << 20);
  for (auto& b : stream) b = static_cast<std::uint8_t>(rng());
  for (int round = 0; round < 4; ++round) {
    Sha256Behind h;
    std::size_t at = 0;
    std::size_t pieces = 0;
    while (at < stream.size()) {
      // Many tiny pieces (well over kMaxPending: the producer waits for
      // room), some empty, some large.
      const std::size_t n = std::min<std::size_t>(stream.size() - at, rng() % 4 == 0 ? rng() % 70000 : rng() % 9);
      if (rng() % 2 == 0) {
        h.update_borrowed(stream.data() + at, n);
      } else {
        h.update_copied(stream.data() + at, n);
      }
      at += n;
      ++pieces;
    }
    ASSERT_GT(pieces, Sha256Behind::kMaxPending);
    EXPECT_EQ(h.digest(), one_shot(stream)) << round;
  }
  Sha256Behind empty;
  EXPECT_EQ(empty.digest(), one_shot({}));
}

// A copied piece is hashed as it was when handed over, whatever becomes of
// the caller's buffer.
TEST(Sha256Behind, CopiedPiecesDoNotDependOnTheCallersBuffer) {
  std::vector<std::uint8_t> want;
  Sha256Behind h;
  std::vector<std::uint8_t> buf(1000);
  for (int i = 0; i < 200; ++i) {
    for (auto& b : buf) b = static_cast<std::uint8_t>(i * 31 + (&b - buf.data()));
    h.update_copied(buf.data(), buf.size());
    want.insert(want.end(), buf.begin(), buf.end());
  }
  EXPECT_EQ(h.digest(), one_shot(want));
}

// Destroyed with pieces pending, or abandoned: returns, and reads no borrowed
// piece afterwards (ASan would see the freed buffers).
TEST(Sha256Behind, AbandonedOrDestroyedWithPiecesPending) {
  for (bool abandon : {false, true}) {
    auto buffers = std::make_unique<std::vector<std::vector<std::uint8_t>>>();
    {
      Sha256Behind h;
      for (int i = 0; i < 50; ++i) {
        buffers->emplace_back(std::size_t{1} << 16, static_cast<std::uint8_t>(i));
        h.update_borrowed(buffers->back().data(), buffers->back().size());
      }
      if (abandon) {
        h.abandon();
        buffers.reset();  // the hasher no longer reads them
      }
    }
    buffers.reset();
  }
}

TEST(Sha256BehindDeathTest, APieceAfterTheDigestIsABug) {
  EXPECT_DEATH(
      {
        Sha256Behind h;
        (void)h.digest();
        h.update_copied("x", 1);
      },
      "");
}

}  // namespace
}  // namespace cuzk::groth16
