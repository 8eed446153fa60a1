// The binary PoSt / SnapDeals request framing (engine/filecoin_request.hpp):
// round trips of every field, and hostile framing refused with kInvalidInput.
#include "engine/filecoin_request.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cuzk::engine {
namespace {

PostRequest sample_post() {
  PostRequest r;
  r.registered_proof = 0x0102030405060708ULL;
  r.miner_id = 0xfedcba9876543210ULL;
  r.partition_index = 0x89abcdefU;
  for (int i = 0; i < 32; ++i) r.randomness.push_back(static_cast<std::uint8_t>(0xa0 + i));
  r.vanilla_proofs = {{1, 2, 3}, {}, {0xff, 0x00, 0x7f, 0x80}};
  return r;
}

SnapRequest sample_snap() {
  SnapRequest r;
  r.registered_proof = 4;
  for (int i = 0; i < 32; ++i) {
    r.comm_r_old[i] = static_cast<std::uint8_t>(i);
    r.comm_d_new[i] = static_cast<std::uint8_t>(0x40 + i);
    r.comm_r_new[i] = static_cast<std::uint8_t>(0x80 + i);
  }
  r.vanilla_proofs = {{9, 8, 7, 6}, {5}};
  return r;
}

TEST(FilecoinRequest, PostRoundTripKeepsEveryField) {
  const PostRequest r = sample_post();
  const std::string bytes = encode_post_request(r);
  // 1 + 8 + 8 + 4 + (4 + 32) + 4 + (4 + 3) + (4 + 0) + (4 + 4)
  EXPECT_EQ(bytes.size(), 80u);
  EXPECT_EQ(static_cast<std::uint8_t>(bytes[0]), 1u);
  const Result<PostRequest> back = decode_post_request(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value().registered_proof, r.registered_proof);
  EXPECT_EQ(back.value().miner_id, r.miner_id);
  EXPECT_EQ(back.value().partition_index, r.partition_index);
  EXPECT_EQ(back.value().randomness, r.randomness);
  EXPECT_EQ(back.value().vanilla_proofs, r.vanilla_proofs);
  EXPECT_EQ(encode_post_request(back.value()), bytes);
}

TEST(FilecoinRequest, SnapRoundTripKeepsEveryField) {
  const SnapRequest r = sample_snap();
  const std::string bytes = encode_snap_request(r);
  EXPECT_EQ(bytes.size(), 1u + 8 + 96 + 4 + (4 + 4) + (4 + 1));
  const Result<SnapRequest> back = decode_snap_request(bytes);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value().registered_proof, r.registered_proof);
  EXPECT_EQ(back.value().comm_r_old, r.comm_r_old);
  EXPECT_EQ(back.value().comm_d_new, r.comm_d_new);
  EXPECT_EQ(back.value().comm_r_new, r.comm_r_new);
  EXPECT_EQ(back.value().vanilla_proofs, r.vanilla_proofs);
  EXPECT_EQ(encode_snap_request(back.value()), bytes);
}

TEST(FilecoinRequest, EveryTruncationIsInvalidInput) {
  const std::string post = encode_post_request(sample_post());
  for (std::size_t n = 0; n < post.size(); ++n) {
    const Result<PostRequest> r = decode_post_request(std::string_view(post).substr(0, n));
    ASSERT_FALSE(r) << "PoSt prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << n;
  }
  const std::string snap = encode_snap_request(sample_snap());
  for (std::size_t n = 0; n < snap.size(); ++n) {
    const Result<SnapRequest> r = decode_snap_request(std::string_view(snap).substr(0, n));
    ASSERT_FALSE(r) << "SnapDeals prefix of " << n << " bytes decoded";
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput) << n;
  }
}

TEST(FilecoinRequest, TruncationNamesTheField) {
  const std::string post = encode_post_request(sample_post());
  const Result<PostRequest> r = decode_post_request(std::string_view(post).substr(0, 30));  // inside randomness
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("randomness"), std::string::npos) << r.error().message;
  const std::string snap = encode_snap_request(sample_snap());
  const Result<SnapRequest> s = decode_snap_request(std::string_view(snap).substr(0, 1 + 8 + 40));
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("comm_d_new"), std::string::npos) << s.error().message;
}

// Overwrites the u32 LE at `at`.
void set_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>(v >> (8 * i));
}

TEST(FilecoinRequest, HugeCountsAndLengthsAreRefusedWithoutAllocating) {
  // Offsets in the PoSt encoding: randomness length at 21, proof count at 57,
  // first proof length at 61.
  const std::string post = encode_post_request(sample_post());
  for (const std::size_t at : {std::size_t{21}, std::size_t{57}, std::size_t{61}}) {
    for (const std::uint32_t n : {0xffffffffU, 0x80000000U, 1000U}) {
      std::string bad = post;
      set_u32(bad, at, n);
      // A vector of 2^32-1 blobs would be ~100 GiB: decoding it would throw
      // bad_alloc or exhaust the machine instead of returning.
      const Result<PostRequest> r = decode_post_request(bad);
      ASSERT_FALSE(r) << "offset " << at << " n " << n;
      EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
    }
  }
  // SnapDeals: proof count at 105, first length at 109.
  const std::string snap = encode_snap_request(sample_snap());
  for (const std::size_t at : {std::size_t{105}, std::size_t{109}}) {
    std::string bad = snap;
    set_u32(bad, at, 0xffffffffU);
    const Result<SnapRequest> r = decode_snap_request(bad);
    ASSERT_FALSE(r) << "offset " << at;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  }
}

TEST(FilecoinRequest, TrailingBytesAreRefused) {
  const std::string post = encode_post_request(sample_post()) + '\0';
  const Result<PostRequest> r = decode_post_request(post);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(r.error().message.find("trailing"), std::string::npos) << r.error().message;
  const std::string snap = encode_snap_request(sample_snap()) + "xy";
  const Result<SnapRequest> s = decode_snap_request(snap);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().kind, ErrorKind::kInvalidInput);
  EXPECT_NE(s.error().message.find("2 trailing"), std::string::npos) << s.error().message;
}

TEST(FilecoinRequest, WrongVersionIsRefused) {
  for (const char v : {'\0', '\2', '\xff'}) {
    std::string post = encode_post_request(sample_post());
    post[0] = v;
    const Result<PostRequest> r = decode_post_request(post);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidInput);
    EXPECT_NE(r.error().message.find("version"), std::string::npos) << r.error().message;
    std::string snap = encode_snap_request(sample_snap());
    snap[0] = v;
    const Result<SnapRequest> s = decode_snap_request(snap);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().kind, ErrorKind::kInvalidInput);
  }
}

// The submit-time peek walks the same framing as decode: it accepts exactly
// what decode accepts (every prefix, trailing bytes, a huge count) and
// reports the header decode would give.
TEST(FilecoinRequest, PeekAcceptsExactlyWhatDecodeAccepts) {
  const std::string post = encode_post_request(sample_post());
  for (std::size_t n = 0; n <= post.size(); ++n) {
    const std::string_view b = std::string_view(post).substr(0, n);
    EXPECT_EQ(bool(peek_post_request(b)), bool(decode_post_request(b))) << n;
  }
  const Result<FilecoinRequestHeader> h = peek_post_request(post);
  ASSERT_TRUE(h) << h.error().message;
  EXPECT_EQ(h.value().registered_proof, sample_post().registered_proof);
  EXPECT_EQ(h.value().randomness_bytes, 32u);
  EXPECT_EQ(h.value().vanilla_proofs, 3u);
  EXPECT_FALSE(peek_post_request(post + "x"));
  std::string huge = post;
  set_u32(huge, 57, 0xffffffffU);
  EXPECT_FALSE(peek_post_request(huge));

  const std::string snap = encode_snap_request(sample_snap());
  for (std::size_t n = 0; n <= snap.size(); ++n) {
    const std::string_view b = std::string_view(snap).substr(0, n);
    EXPECT_EQ(bool(peek_snap_request(b)), bool(decode_snap_request(b))) << n;
  }
  const Result<FilecoinRequestHeader> s = peek_snap_request(snap);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s.value().registered_proof, 4u);
  EXPECT_EQ(s.value().vanilla_proofs, 2u);
  EXPECT_FALSE(peek_snap_request(snap + "xy"));
  EXPECT_FALSE(peek_post_request(snap));
  EXPECT_FALSE(peek_snap_request(post));
}

TEST(FilecoinRequest, OneKindsBytesDoNotDecodeAsTheOther) {
  // A SnapDeals request is not a well-formed PoSt request and vice versa.
  EXPECT_FALSE(decode_post_request(encode_snap_request(sample_snap())));
  EXPECT_FALSE(decode_snap_request(encode_post_request(sample_post())));
}

}  // namespace
}  // namespace cuzk::engine
