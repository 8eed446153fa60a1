#include "circuits/native/sha256.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace cuzk::circuits::native {

namespace {

[[noreturn]] void sha_abort(const char* what) {
  std::fprintf(stderr, "sha256: %s\n", what);
  std::abort();
}

EVP_MD_CTX* as_ctx(void* p) { return static_cast<EVP_MD_CTX*>(p); }

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (ctx_ == nullptr) sha_abort("EVP_MD_CTX_new failed");
  reset();
}

Sha256::~Sha256() { EVP_MD_CTX_free(as_ctx(ctx_)); }

void Sha256::reset() {
  if (EVP_DigestInit_ex(as_ctx(ctx_), EVP_sha256(), nullptr) != 1) sha_abort("EVP_DigestInit_ex");
}

void Sha256::update(std::span<const std::uint8_t> data) {
  if (EVP_DigestUpdate(as_ctx(ctx_), data.data(), data.size()) != 1) sha_abort("EVP_DigestUpdate");
}

Digest32 Sha256::finish() {
  Digest32 out{};
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(as_ctx(ctx_), out.data(), &len) != 1 || len != 32) {
    sha_abort("EVP_DigestFinal_ex");
  }
  reset();
  return out;
}

Digest32 sha256(std::span<const std::uint8_t> data) {
  Digest32 out{};
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), out.data(), &len, EVP_sha256(), nullptr) != 1 || len != 32) {
    sha_abort("EVP_Digest");
  }
  return out;
}

Digest32 sha256_fr32(std::span<const std::uint8_t> data) {
  Digest32 d = sha256(data);
  trim_to_fr32(d);
  return d;
}

Digest32 sha256_hash2(const Digest32& a, const Digest32& b) {
  std::array<std::uint8_t, 64> buf{};
  std::copy(a.begin(), a.end(), buf.begin());
  std::copy(b.begin(), b.end(), buf.begin() + 32);
  return sha256_fr32(buf);
}

Digest32 fr_to_le_bytes(const ff::Fr& x) {
  Digest32 d{};
  x.to_bytes_le(d);
  return d;
}

ff::Fr fr_from_le_bytes(const Digest32& d) {
  ff::Fr x;
  if (!ff::Fr::from_bytes_le(d, x)) sha_abort("bytes are not a canonical Fr");
  return x;
}

}  // namespace cuzk::circuits::native
