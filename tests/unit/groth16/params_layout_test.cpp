// bellperson's .params layout built by hand, byte by byte, from points whose
// encodings are checked against @noble/curves elsewhere: the reader must
// place every vector where bellperson's Parameters::write puts it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "ec/curve.hpp"
#include "ec/encoding.hpp"
#include "groth16/params.hpp"

namespace cuzk::groth16 {
namespace {

ec::G1Affine g1(std::uint64_t k) { return ec::to_affine(ec::mul(ec::kG1Generator, ff::Fr::from_u64(k))); }
ec::G2Affine g2(std::uint64_t k) { return ec::to_affine(ec::mul(ec::kG2Generator, ff::Fr::from_u64(k))); }

void put_g1(std::vector<std::uint8_t>& b, std::uint64_t k) {
  std::uint8_t buf[96];
  ec::encode_g1_uncompressed(g1(k), std::span<std::uint8_t, 96>(buf, 96));
  b.insert(b.end(), buf, buf + 96);
}
void put_g2(std::vector<std::uint8_t>& b, std::uint64_t k) {
  std::uint8_t buf[192];
  ec::encode_g2_uncompressed(g2(k), std::span<std::uint8_t, 192>(buf, 192));
  b.insert(b.end(), buf, buf + 192);
}
void put_len(std::vector<std::uint8_t>& b, std::uint32_t n) {  // u32 big-endian
  b.push_back(std::uint8_t(n >> 24));
  b.push_back(std::uint8_t(n >> 16));
  b.push_back(std::uint8_t(n >> 8));
  b.push_back(std::uint8_t(n));
}

TEST(ParamsLayout, HandBuiltFileReadsIntoTheRightFields) {
  // vk: alpha_g1 = 1G, beta_g1 = 2G, beta_g2 = 3H, gamma_g2 = 4H, delta_g1 = 5G,
  // delta_g2 = 6H, ic = [7G, 8G]; h = [10G, 11G, 12G]; l = [20G]; a = [30G, 31G];
  // b_g1 = [40G]; b_g2 = [41H].
  std::vector<std::uint8_t> b;
  put_g1(b, 1);
  put_g1(b, 2);
  put_g2(b, 3);
  put_g2(b, 4);
  put_g1(b, 5);
  put_g2(b, 6);
  put_len(b, 2);
  put_g1(b, 7);
  put_g1(b, 8);
  ASSERT_EQ(b.size(), vk_file_bytes(2));
  put_len(b, 3);
  for (int k : {10, 11, 12}) put_g1(b, std::uint64_t(k));
  put_len(b, 1);
  put_g1(b, 20);
  put_len(b, 2);
  put_g1(b, 30);
  put_g1(b, 31);
  put_len(b, 1);
  put_g1(b, 40);
  put_len(b, 1);
  put_g2(b, 41);
  ASSERT_EQ(b.size(), params_file_bytes(2, 3, 1, 2, 1));

  auto path = std::filesystem::temp_directory_path() / ("cuzk-layout-" + std::to_string(::getpid()) + ".params");
  {
    std::ofstream o(path, std::ios::binary);
    o.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
  }
  ThreadPool pool(2);
  Parameters p = read_params(path, pool, SubgroupCheck::kAll);
  EXPECT_EQ(p.vk.alpha_g1, g1(1));
  EXPECT_EQ(p.vk.beta_g1, g1(2));
  EXPECT_EQ(p.vk.beta_g2, g2(3));
  EXPECT_EQ(p.vk.gamma_g2, g2(4));
  EXPECT_EQ(p.vk.delta_g1, g1(5));
  EXPECT_EQ(p.vk.delta_g2, g2(6));
  ASSERT_EQ(p.vk.ic.size(), 2u);
  EXPECT_EQ(p.vk.ic[1], g1(8));
  ASSERT_EQ(p.h.size(), 3u);
  EXPECT_EQ(p.h[2], g1(12));
  ASSERT_EQ(p.l.size(), 1u);
  EXPECT_EQ(p.l[0], g1(20));
  ASSERT_EQ(p.a.size(), 2u);
  EXPECT_EQ(p.a[1], g1(31));
  ASSERT_EQ(p.b_g1.size(), 1u);
  EXPECT_EQ(p.b_g1[0], g1(40));
  ASSERT_EQ(p.b_g2.size(), 1u);
  EXPECT_EQ(p.b_g2[0], g2(41));

  // Writing it back gives the same bytes.
  auto out = path;
  out += ".out";
  write_params(p, out);
  std::ifstream in(out, std::ios::binary);
  std::vector<std::uint8_t> back((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(back, b);

  // A point at infinity in a vector is rejected, naming it (bellperson does too).
  auto inf = b;
  std::size_t a1 = vk_file_bytes(2) + 4 + 3 * 96 + 4 + 96 + 4 + 96;  // a[1]
  std::fill(inf.begin() + long(a1), inf.begin() + long(a1 + 96), 0);
  inf[a1] = 0x40;
  {
    std::ofstream o(path, std::ios::binary | std::ios::trunc);
    o.write(reinterpret_cast<const char*>(inf.data()), std::streamsize(inf.size()));
  }
  try {
    read_params(path, pool);
    ADD_FAILURE() << "accepted infinity";
  } catch (const ParamsError& e) {
    EXPECT_EQ(e.kind(), ParamsErrorKind::kPointAtInfinity);
    EXPECT_NE(std::string(e.what()).find("a[1]"), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace cuzk::groth16
