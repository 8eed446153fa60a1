#include "engine/filecoin_request.hpp"

#include <cstring>
#include <optional>

namespace cuzk::engine {
namespace {

constexpr std::uint8_t kVersion = 1;

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_bytes(std::string& out, const std::uint8_t* p, std::size_t n) {
  out.append(reinterpret_cast<const char*>(p), n);
}
void put_blobs(std::string& out, const std::vector<std::vector<std::uint8_t>>& blobs) {
  put(out, blobs.size(), 4);
  for (const auto& b : blobs) {
    put(out, b.size(), 4);
    put_bytes(out, b.data(), b.size());
  }
}

// Bounds-checked reads; `field` names what ran out for the error.
class Reader {
 public:
  explicit Reader(std::string_view b) : b_(b) {}
  std::optional<Error> u(std::uint64_t& v, int bytes, const char* field) {
    if (b_.size() - at_ < static_cast<std::size_t>(bytes)) return truncated(field);
    v = 0;
    for (int i = 0; i < bytes; ++i) v |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(b_[at_ + i])) << (8 * i);
    at_ += static_cast<std::size_t>(bytes);
    return std::nullopt;
  }
  std::optional<Error> bytes(std::uint8_t* out, std::size_t n, const char* field) {
    if (b_.size() - at_ < n) return truncated(field);
    std::memcpy(out, b_.data() + at_, n);
    at_ += n;
    return std::nullopt;
  }
  std::optional<Error> blob(std::vector<std::uint8_t>& out, const char* field) {
    std::uint64_t n = 0;
    if (auto e = u(n, 4, field)) return e;
    if (b_.size() - at_ < n) return truncated(field);
    out.assign(b_.begin() + static_cast<std::ptrdiff_t>(at_), b_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
    at_ += n;
    return std::nullopt;
  }
  std::optional<Error> blobs(std::vector<std::vector<std::uint8_t>>& out, const char* field) {
    std::uint64_t n = 0;
    if (auto e = u(n, 4, field)) return e;
    // Each blob needs at least its 4-byte length: a count the bytes cannot
    // hold is refused before anything is allocated for it.
    if (n > (b_.size() - at_) / 4) return truncated(field);
    out.resize(n);
    for (auto& b : out)
      if (auto e = blob(b, field)) return e;
    return std::nullopt;
  }
  // Walks n x (u32 bytes | bytes) without copying; n in `count`.
  std::optional<Error> skip_blobs(std::size_t& count, const char* field) {
    std::uint64_t n = 0;
    if (auto e = u(n, 4, field)) return e;
    if (n > (b_.size() - at_) / 4) return truncated(field);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t len = 0;
      if (auto e = u(len, 4, field)) return e;
      if (b_.size() - at_ < len) return truncated(field);
      at_ += len;
    }
    count = static_cast<std::size_t>(n);
    return std::nullopt;
  }
  std::optional<Error> skip(std::size_t n, const char* field) {
    if (b_.size() - at_ < n) return truncated(field);
    at_ += n;
    return std::nullopt;
  }
  std::optional<Error> version(const char* what) {
    std::uint64_t v = 0;
    if (auto e = u(v, 1, "version")) return e;
    if (v != kVersion)
      return Error{ErrorKind::kInvalidInput, std::string(what) + " request encoding version " + std::to_string(v)};
    return std::nullopt;
  }
  std::optional<Error> done(const char* what) const {
    if (at_ == b_.size()) return std::nullopt;
    return Error{ErrorKind::kInvalidInput,
                 std::string(what) + " request: " + std::to_string(b_.size() - at_) + " trailing bytes"};
  }

 private:
  Error truncated(const char* field) const {
    return Error{ErrorKind::kInvalidInput, std::string("request truncated in ") + field};
  }
  std::string_view b_;
  std::size_t at_ = 0;
};

}  // namespace

std::string encode_post_request(const PostRequest& r) {
  std::string out;
  put(out, kVersion, 1);
  put(out, r.registered_proof, 8);
  put(out, r.miner_id, 8);
  put(out, r.partition_index, 4);
  put(out, r.randomness.size(), 4);
  put_bytes(out, r.randomness.data(), r.randomness.size());
  put_blobs(out, r.vanilla_proofs);
  return out;
}

std::string encode_snap_request(const SnapRequest& r) {
  std::string out;
  put(out, kVersion, 1);
  put(out, r.registered_proof, 8);
  put_bytes(out, r.comm_r_old.data(), 32);
  put_bytes(out, r.comm_d_new.data(), 32);
  put_bytes(out, r.comm_r_new.data(), 32);
  put_blobs(out, r.vanilla_proofs);
  return out;
}

Result<PostRequest> decode_post_request(std::string_view bytes) {
  Reader in(bytes);
  PostRequest r;
  std::uint64_t partition = 0;
  if (auto e = in.version("PoSt")) return *e;
  if (auto e = in.u(r.registered_proof, 8, "registered proof")) return *e;
  if (auto e = in.u(r.miner_id, 8, "miner id")) return *e;
  if (auto e = in.u(partition, 4, "partition index")) return *e;
  r.partition_index = static_cast<std::uint32_t>(partition);
  if (auto e = in.blob(r.randomness, "randomness")) return *e;
  if (auto e = in.blobs(r.vanilla_proofs, "vanilla proofs")) return *e;
  if (auto e = in.done("PoSt")) return *e;
  return r;
}

Result<SnapRequest> decode_snap_request(std::string_view bytes) {
  Reader in(bytes);
  SnapRequest r;
  if (auto e = in.version("SnapDeals")) return *e;
  if (auto e = in.u(r.registered_proof, 8, "registered proof")) return *e;
  if (auto e = in.bytes(r.comm_r_old.data(), 32, "comm_r_old")) return *e;
  if (auto e = in.bytes(r.comm_d_new.data(), 32, "comm_d_new")) return *e;
  if (auto e = in.bytes(r.comm_r_new.data(), 32, "comm_r_new")) return *e;
  if (auto e = in.blobs(r.vanilla_proofs, "vanilla proofs")) return *e;
  if (auto e = in.done("SnapDeals")) return *e;
  return r;
}

Result<FilecoinRequestHeader> peek_post_request(std::string_view bytes) {
  Reader in(bytes);
  FilecoinRequestHeader h;
  std::uint64_t skipped = 0, randomness = 0;
  if (auto e = in.version("PoSt")) return *e;
  if (auto e = in.u(h.registered_proof, 8, "registered proof")) return *e;
  if (auto e = in.u(skipped, 8, "miner id")) return *e;
  if (auto e = in.u(skipped, 4, "partition index")) return *e;
  if (auto e = in.u(randomness, 4, "randomness")) return *e;
  if (auto e = in.skip(static_cast<std::size_t>(randomness), "randomness")) return *e;
  h.randomness_bytes = static_cast<std::size_t>(randomness);
  if (auto e = in.skip_blobs(h.vanilla_proofs, "vanilla proofs")) return *e;
  if (auto e = in.done("PoSt")) return *e;
  return h;
}

Result<FilecoinRequestHeader> peek_snap_request(std::string_view bytes) {
  Reader in(bytes);
  FilecoinRequestHeader h;
  if (auto e = in.version("SnapDeals")) return *e;
  if (auto e = in.u(h.registered_proof, 8, "registered proof")) return *e;
  if (auto e = in.skip(3 * 32, "commitments")) return *e;
  if (auto e = in.skip_blobs(h.vanilla_proofs, "vanilla proofs")) return *e;
  if (auto e = in.done("SnapDeals")) return *e;
  return h;
}

}  // namespace cuzk::engine
