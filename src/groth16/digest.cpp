#include "groth16/digest.hpp"

#include <openssl/evp.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "util/json_input.hpp"

namespace cuzk::groth16 {

std::string blake2b_file_hex(const std::filesystem::path& path,
                             const std::function<void(std::uint64_t, std::uint64_t)>& progress) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw std::runtime_error("cannot open " + path.string());
  const std::uint64_t total = std::filesystem::file_size(path);
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_blake2b512(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL BLAKE2b-512 unavailable");
  }
  std::vector<unsigned char> buf(std::size_t{8} << 20);
  std::uint64_t done = 0;
  for (;;) {
    std::size_t n = std::fread(buf.data(), 1, buf.size(), f.get());
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf.data(), n);
    done += n;
    if (progress) progress(done, total);
  }
  if (std::ferror(f.get())) throw std::runtime_error("read failed: " + path.string());
  unsigned char md[64];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

std::string blake2b_hex(std::span<const std::uint8_t> bytes) {
  unsigned char md[64];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_blake2b512(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL BLAKE2b-512 unavailable");
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

std::optional<PublishedParam> find_published(const std::string& text, const std::string& file_name) {
  nlohmann::json j;
  try {
    j = parse_json_input(text);
  } catch (const JsonInputError&) {
    return std::nullopt;
  }
  if (!j.is_object() || !j.contains(file_name)) return std::nullopt;
  const auto& e = j.at(file_name);
  if (!e.is_object()) return std::nullopt;
  // Missing or mistyped members read as empty / 0 (a digest "" never matches).
  auto text_of = [&e](const char* key) {
    auto it = e.find(key);
    return it != e.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  PublishedParam p;
  p.name = file_name;
  p.cid = text_of("cid");
  p.digest = text_of("digest");
  auto size = e.find("sector_size");
  p.sector_size = size != e.end() && size->is_number_unsigned() ? size->get<std::uint64_t>() : 0;
  return p;
}

}  // namespace cuzk::groth16
