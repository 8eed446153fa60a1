#include "groth16/params.hpp"

#include <cstdio>
#include <memory>

#include "ec/encoding.hpp"

namespace cuzk::groth16 {

std::string_view to_string(ParamsErrorKind kind) {
  switch (kind) {
    case ParamsErrorKind::kIo:
      return "io";
    case ParamsErrorKind::kTruncated:
      return "truncated";
    case ParamsErrorKind::kTrailingBytes:
      return "trailing-bytes";
    case ParamsErrorKind::kBadPoint:
      return "bad-point";
    case ParamsErrorKind::kPointAtInfinity:
      return "point-at-infinity";
    case ParamsErrorKind::kShapeMismatch:
      return "shape-mismatch";
  }
  return "unknown";
}

std::uint64_t params_file_bytes(std::size_t n_ic, std::size_t h, std::size_t l, std::size_t a, std::size_t b) {
  return vk_file_bytes(n_ic) + 5 * 4 + 96ull * (h + l + a + b) + 192ull * b;
}

namespace {

using ec::G1Affine;
using ec::G2Affine;
constexpr std::size_t kG1 = ec::kG1UncompressedBytes;
constexpr std::size_t kG2 = ec::kG2UncompressedBytes;
// Points are decoded in chunks of this many bytes: large enough for sequential
// reads at disk speed, small enough to keep the staging buffer modest.
constexpr std::size_t kChunkBytes = std::size_t{64} << 20;

void put_u32_be(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(std::uint8_t(v >> s));
}
std::uint32_t get_u32_be(const std::uint8_t* p) {
  return std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
}

void append_g1(std::vector<std::uint8_t>& out, const G1Affine& p) {
  std::uint8_t buf[kG1];
  ec::encode_g1_uncompressed(p, std::span<std::uint8_t, kG1>(buf, kG1));
  out.insert(out.end(), buf, buf + kG1);
}
void append_g2(std::vector<std::uint8_t>& out, const G2Affine& p) {
  std::uint8_t buf[kG2];
  ec::encode_g2_uncompressed(p, std::span<std::uint8_t, kG2>(buf, kG2));
  out.insert(out.end(), buf, buf + kG2);
}

[[noreturn]] void throw_point(std::string_view vector, std::size_t index, ec::DecodeError e) {
  throw ParamsError(ParamsErrorKind::kBadPoint,
                    std::string(vector) + "[" + std::to_string(index) + "]: " + std::string(ec::to_string(e)));
}

G1Affine decode_vk_g1(const std::uint8_t* p, std::string_view name) {
  G1Affine out;
  auto e = ec::decode_g1_uncompressed({p, kG1}, out, ec::Subgroup::kCheck);
  if (e != ec::DecodeError::kOk) throw_point(name, 0, e);
  return out;
}
G2Affine decode_vk_g2(const std::uint8_t* p, std::string_view name) {
  G2Affine out;
  auto e = ec::decode_g2_uncompressed({p, kG2}, out, ec::Subgroup::kCheck);
  if (e != ec::DecodeError::kOk) throw_point(name, 0, e);
  return out;
}

// A file read front to back with a typed error on short reads.
class Reader {
 public:
  explicit Reader(const std::filesystem::path& path) : f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw ParamsError(ParamsErrorKind::kIo, "cannot open " + path.string());
    std::error_code ec;
    size_ = std::filesystem::file_size(path, ec);
    if (ec) throw ParamsError(ParamsErrorKind::kIo, "cannot stat " + path.string());
    std::setvbuf(f_.get(), nullptr, _IONBF, 0);  // we read in large chunks ourselves
  }
  std::uint64_t remaining() const { return size_ - pos_; }
  void read(std::uint8_t* dst, std::size_t n, std::string_view what) {
    if (n > remaining()) {
      throw ParamsError(ParamsErrorKind::kTruncated, std::string(what) + ": needs " + std::to_string(n) +
                                                         " bytes, file has " + std::to_string(remaining()) + " left");
    }
    if (std::fread(dst, 1, n, f_.get()) != n) {
      throw ParamsError(ParamsErrorKind::kIo, std::string(what) + ": read failed");
    }
    pos_ += n;
  }
  std::uint32_t read_u32(std::string_view what) {
    std::uint8_t b[4];
    read(b, 4, what);
    return get_u32_be(b);
  }

 private:
  struct Close {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::unique_ptr<std::FILE, Close> f_;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
};

template <class Point>
void read_vector(Reader& r, std::vector<Point>& out, std::string_view name, ThreadPool& pool, SubgroupCheck check) {
  constexpr bool kIsG1 = std::is_same_v<Point, G1Affine>;
  constexpr std::size_t kSize = kIsG1 ? kG1 : kG2;
  std::uint32_t n = r.read_u32(name);
  // Check the declared length against the file before allocating, so a
  // corrupt length is a typed error rather than a huge allocation.
  if (std::uint64_t(n) * kSize > r.remaining()) {
    throw ParamsError(ParamsErrorKind::kTruncated, std::string(name) + ": declares " + std::to_string(n) +
                                                       " points, file has room for " +
                                                       std::to_string(r.remaining() / kSize));
  }
  out.resize(n);
  const std::size_t per_chunk = kChunkBytes / kSize;
  std::vector<std::uint8_t> buf(std::min<std::size_t>(n, per_chunk) * kSize);
  auto sub = check == SubgroupCheck::kAll ? ec::Subgroup::kCheck : ec::Subgroup::kSkip;
  for (std::size_t done = 0; done < n;) {
    std::size_t count = std::min<std::size_t>(n - done, per_chunk);
    r.read(buf.data(), count * kSize, name);
    std::span<Point> dst(out.data() + done, count);
    ec::BulkDecodeResult res;
    if constexpr (kIsG1) {
      res = ec::decode_g1_many({buf.data(), count * kSize}, dst, ec::PointForm::kUncompressed, sub, &pool);
    } else {
      res = ec::decode_g2_many({buf.data(), count * kSize}, dst, ec::PointForm::kUncompressed, sub, &pool);
    }
    if (res.error != ec::DecodeError::kOk) throw_point(name, done + res.index, res.error);
    for (std::size_t i = 0; i < count; ++i) {
      if (dst[i].infinity) {
        throw ParamsError(ParamsErrorKind::kPointAtInfinity,
                          std::string(name) + "[" + std::to_string(done + i) + "] is the point at infinity");
      }
    }
    done += count;
  }
}

void write_all(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes, std::FILE* f) {
  if (std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) {
    throw ParamsError(ParamsErrorKind::kIo, "write failed: " + path.string());
  }
}

}  // namespace

std::vector<std::uint8_t> encode_vk(const VerifyingKey& vk) {
  std::vector<std::uint8_t> out;
  out.reserve(vk_file_bytes(vk.ic.size()));
  append_g1(out, vk.alpha_g1);
  append_g1(out, vk.beta_g1);
  append_g2(out, vk.beta_g2);
  append_g2(out, vk.gamma_g2);
  append_g1(out, vk.delta_g1);
  append_g2(out, vk.delta_g2);
  put_u32_be(out, std::uint32_t(vk.ic.size()));
  for (const auto& p : vk.ic) append_g1(out, p);
  return out;
}

namespace {
// Decodes the vk prefix; returns the number of bytes consumed.
std::size_t decode_vk_prefix(std::span<const std::uint8_t> b, VerifyingKey& vk) {
  if (b.size() < kVkFixedBytes) {
    throw ParamsError(ParamsErrorKind::kTruncated,
                      "verifying key needs at least 868 bytes, have " + std::to_string(b.size()));
  }
  const std::uint8_t* p = b.data();
  vk.alpha_g1 = decode_vk_g1(p, "vk.alpha_g1");
  vk.beta_g1 = decode_vk_g1(p + 96, "vk.beta_g1");
  vk.beta_g2 = decode_vk_g2(p + 192, "vk.beta_g2");
  vk.gamma_g2 = decode_vk_g2(p + 384, "vk.gamma_g2");
  vk.delta_g1 = decode_vk_g1(p + 576, "vk.delta_g1");
  vk.delta_g2 = decode_vk_g2(p + 672, "vk.delta_g2");
  std::uint32_t n_ic = get_u32_be(p + 864);
  if (std::uint64_t(n_ic) * kG1 > b.size() - kVkFixedBytes) {
    throw ParamsError(ParamsErrorKind::kTruncated, "vk.ic declares " + std::to_string(n_ic) + " points");
  }
  vk.ic.resize(n_ic);
  for (std::uint32_t i = 0; i < n_ic; ++i) {
    auto e = ec::decode_g1_uncompressed({p + kVkFixedBytes + i * kG1, kG1}, vk.ic[i], ec::Subgroup::kCheck);
    if (e != ec::DecodeError::kOk) throw_point("vk.ic", i, e);
    if (vk.ic[i].infinity) {
      throw ParamsError(ParamsErrorKind::kPointAtInfinity, "vk.ic[" + std::to_string(i) + "] is the point at infinity");
    }
  }
  return vk_file_bytes(n_ic);
}
}  // namespace

VerifyingKey decode_vk(std::span<const std::uint8_t> bytes) {
  VerifyingKey vk;
  std::size_t used = decode_vk_prefix(bytes, vk);
  if (used != bytes.size()) {
    throw ParamsError(ParamsErrorKind::kTrailingBytes,
                      std::to_string(bytes.size() - used) + " bytes after the verifying key");
  }
  return vk;
}

void write_vk(const VerifyingKey& vk, const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw ParamsError(ParamsErrorKind::kIo, "cannot create " + path.string());
  write_all(path, encode_vk(vk), f.get());
  // A vk fits stdio's buffer: a failed write (disk full) shows only here.
  if (std::fflush(f.get()) != 0) throw ParamsError(ParamsErrorKind::kIo, "flush failed: " + path.string());
  if (std::fclose(f.release()) != 0) throw ParamsError(ParamsErrorKind::kIo, "close failed: " + path.string());
}

VerifyingKey read_vk(const std::filesystem::path& path) {
  Reader r(path);
  if (r.remaining() > (std::uint64_t{64} << 20)) {
    throw ParamsError(ParamsErrorKind::kTrailingBytes, path.string() + " is too large for a verifying key");
  }
  std::vector<std::uint8_t> bytes(r.remaining());
  r.read(bytes.data(), bytes.size(), "vk");
  return decode_vk(bytes);
}

void write_params(const Parameters& params, const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) throw ParamsError(ParamsErrorKind::kIo, "cannot create " + path.string());
  write_all(path, encode_vk(params.vk), f.get());
  std::vector<std::uint8_t> buf;
  auto flush = [&] {
    write_all(path, buf, f.get());
    buf.clear();
  };
  auto g1_vec = [&](const std::vector<G1Affine>& v) {
    put_u32_be(buf, std::uint32_t(v.size()));
    for (const auto& p : v) {
      append_g1(buf, p);
      if (buf.size() >= kChunkBytes) flush();
    }
  };
  g1_vec(params.h);
  g1_vec(params.l);
  g1_vec(params.a);
  g1_vec(params.b_g1);
  put_u32_be(buf, std::uint32_t(params.b_g2.size()));
  for (const auto& p : params.b_g2) {
    append_g2(buf, p);
    if (buf.size() >= kChunkBytes) flush();
  }
  flush();
  if (std::fflush(f.get()) != 0) throw ParamsError(ParamsErrorKind::kIo, "flush failed: " + path.string());
  if (std::fclose(f.release()) != 0) throw ParamsError(ParamsErrorKind::kIo, "close failed: " + path.string());
}

Parameters read_params(const std::filesystem::path& path, ThreadPool& pool, SubgroupCheck check) {
  Reader r(path);
  Parameters p;
  // The vk prefix: fixed part, then IC whose length we learn from it.
  std::vector<std::uint8_t> vk_bytes(kVkFixedBytes);
  r.read(vk_bytes.data(), kVkFixedBytes, "vk");
  std::uint32_t n_ic = get_u32_be(vk_bytes.data() + 864);
  if (std::uint64_t(n_ic) * kG1 > r.remaining()) {
    throw ParamsError(ParamsErrorKind::kTruncated, "vk.ic declares " + std::to_string(n_ic) + " points");
  }
  vk_bytes.resize(vk_file_bytes(n_ic));
  r.read(vk_bytes.data() + kVkFixedBytes, n_ic * kG1, "vk.ic");
  decode_vk_prefix(vk_bytes, p.vk);
  read_vector(r, p.h, "h", pool, check);
  read_vector(r, p.l, "l", pool, check);
  read_vector(r, p.a, "a", pool, check);
  read_vector(r, p.b_g1, "b_g1", pool, check);
  read_vector(r, p.b_g2, "b_g2", pool, check);
  if (r.remaining() != 0) {
    throw ParamsError(ParamsErrorKind::kTrailingBytes,
                      std::to_string(r.remaining()) + " bytes after b_g2 in " + path.string());
  }
  if (p.b_g1.size() != p.b_g2.size()) {
    throw ParamsError(ParamsErrorKind::kShapeMismatch,
                      "|b_g1| = " + std::to_string(p.b_g1.size()) + " but |b_g2| = " + std::to_string(p.b_g2.size()));
  }
  return p;
}

void check_shape(const Parameters& params, const ExpectedShape& s) {
  auto expect = [](std::string_view name, std::size_t have, std::size_t want) {
    if (have != want) {
      throw ParamsError(ParamsErrorKind::kShapeMismatch, std::string(name) + " has " + std::to_string(have) +
                                                             " elements, the circuit needs " + std::to_string(want));
    }
  };
  expect("vk.ic", params.vk.ic.size(), s.num_inputs);
  expect("h", params.h.size(), s.domain_size - 1);
  expect("l", params.l.size(), s.num_aux);
  expect("a", params.a.size(), s.a_len);
  expect("b_g1", params.b_g1.size(), s.b_len);
  expect("b_g2", params.b_g2.size(), s.b_len);
}

}  // namespace cuzk::groth16
