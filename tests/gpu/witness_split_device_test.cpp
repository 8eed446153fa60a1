// The witness MSMs' selection + split on the device
// (gpu/groth16/witness_split_device.hpp) against the obvious host steps:
// select the scalars of a witness range by its densities, then split the
// selected vector into ones / tail. Shapes not multiples of the kernels'
// block (512) or of a density word (64), inputs with and without densities,
// and both output forms (split, all selected).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ff/fp.hpp"
#include "gpu/cuda_rt.hpp"
#include "gpu/groth16/witness_split_device.hpp"
#include "gpu_test_util.hpp"
#include "groth16/r1cs.hpp"

namespace cuzk::gpu::test {
namespace {

using ff::Fr;
using groth16_kernels::SplitSource;

struct Shape {
  std::size_t n_inputs, n_aux;
  double p_zero, p_one, p_in, p_aux;  // scalar 0 / 1 fractions, density bit fractions
};

struct Witness {
  std::vector<Fr> values;  // inputs ++ aux
  groth16::BitVec in_density, aux_density;
};

Witness make_witness(std::mt19937_64& rng, const Shape& s) {
  Witness w{{}, groth16::BitVec(s.n_inputs), groth16::BitVec(s.n_aux)};
  std::uniform_real_distribution<double> u(0, 1);
  for (std::size_t i = 0; i < s.n_inputs + s.n_aux; ++i) {
    const double r = u(rng);
    // Values near one (one +- a limb) too: a kernel comparing fewer limbs fails.
    w.values.push_back(r < s.p_zero                    ? Fr::zero()
                       : r < s.p_zero + s.p_one        ? Fr::one()
                       : r < s.p_zero + s.p_one + 0.02 ? Fr::one() + Fr::from_u64(std::uint64_t{1} << (rng() % 64))
                                                       : Fr::from_u64(rng()) * Fr::from_u64(rng() | 1));
  }
  for (std::size_t i = 0; i < s.n_inputs; ++i) {
    if (u(rng) < s.p_in) w.in_density.set(i);
  }
  for (std::size_t i = 0; i < s.n_aux; ++i) {
    if (u(rng) < s.p_aux) w.aux_density.set(i);
  }
  return w;
}

struct Expected {
  std::size_t selected = 0;
  std::vector<Fr> all;  // every selected scalar
  std::vector<std::uint32_t> ones, tail_idx;
  std::vector<Fr> tail;
};

Expected expected(const Witness& w, std::size_t n_inputs, const SplitSource& src) {
  Expected e;
  for (std::size_t i = src.begin; i < src.end; ++i) {
    const bool sel =
        i < n_inputs ? src.every_input || w.in_density.get(i) : src.every_aux || w.aux_density.get(i - n_inputs);
    if (sel) e.all.push_back(w.values[i]);
  }
  e.selected = e.all.size();
  for (std::size_t k = 0; k < e.all.size(); ++k) {
    if (e.all[k].is_zero()) continue;
    if (e.all[k].is_one()) {
      e.ones.push_back(static_cast<std::uint32_t>(k));
    } else {
      e.tail_idx.push_back(static_cast<std::uint32_t>(k));
      e.tail.push_back(e.all[k]);
    }
  }
  return e;
}

template <class T>
std::vector<T> download(const detail::DeviceBuffer<std::uint32_t>& buf, std::size_t count) {
  std::vector<T> out(count);
  if (count > 0) CUZK_CUDA_CHECK(cudaMemcpy(out.data(), buf.get(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

template <class T>
detail::DeviceBuffer<std::uint32_t> upload(const std::vector<T>& v) {
  const std::size_t words = (v.size() * sizeof(T) + 3) / 4;
  detail::DeviceBuffer<std::uint32_t> buf(words, "test upload");
  if (words > 0) CUZK_CUDA_CHECK(cudaMemcpy(buf.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buf;
}

void check_shape(std::mt19937_64& rng, const Shape& shape) {
  SCOPED_TRACE(::testing::Message() << shape.n_inputs << " inputs, " << shape.n_aux << " aux");
  const Witness w = make_witness(rng, shape);
  const auto witness = upload(w.values);
  const std::vector<std::uint64_t> in_words(w.in_density.words().begin(), w.in_density.words().end());
  const std::vector<std::uint64_t> aux_words(w.aux_density.words().begin(), w.aux_density.words().end());
  const auto in_dev = upload(in_words), aux_dev = upload(aux_words);
  const auto* in_bits = reinterpret_cast<const std::uint64_t*>(in_dev.get());
  const auto* aux_bits = reinterpret_cast<const std::uint64_t*>(aux_dev.get());
  const std::uint64_t n_in = shape.n_inputs, n_var = shape.n_inputs + shape.n_aux;
  // The prover's three sources (L, A, B), then a range starting mid-inputs.
  const SplitSource sources[] = {
      {witness.get(), n_in, n_var, n_in, true, true, nullptr, nullptr},
      {witness.get(), 0, n_var, n_in, true, false, nullptr, aux_bits},
      {witness.get(), 0, n_var, n_in, false, false, in_bits, aux_bits},
      {witness.get(), n_in / 2, n_var, n_in, false, true, in_bits, nullptr},
  };
  detail::Stream stream;
  detail::PinnedBuffer<std::uint32_t> totals(3);
  for (const SplitSource& src : sources) {
    SCOPED_TRACE(::testing::Message() << "source [" << src.begin << ", " << src.end << ")");
    const Expected e = expected(w, shape.n_inputs, src);
    detail::DeviceBuffer<std::uint32_t> counts(groth16_kernels::split_counts_words(src), "counts");
    const std::size_t temp_bytes = groth16_kernels::split_scan_temp_bytes(src);
    detail::DeviceBuffer<unsigned char> temp(temp_bytes, "scan temp");
    groth16_kernels::count_witness_split(stream.get(), src, counts.get(), temp.get(), temp_bytes, totals.get());
    CUZK_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    ASSERT_EQ(totals.get()[0], e.selected);
    ASSERT_EQ(totals.get()[1], e.ones.size());
    ASSERT_EQ(totals.get()[2], e.tail.size());
    // Split form. Buffers one larger than needed, poisoned: no write past the end.
    detail::DeviceBuffer<std::uint32_t> ones(e.ones.size() + 1, "ones"), tail_idx(e.tail.size() + 1, "tail idx"),
        values(8 * (e.selected + 1), "values");
    CUZK_CUDA_CHECK(cudaMemset(ones.get(), 0xa5, ones.bytes()));
    CUZK_CUDA_CHECK(cudaMemset(tail_idx.get(), 0xa5, tail_idx.bytes()));
    CUZK_CUDA_CHECK(cudaMemset(values.get(), 0xa5, values.bytes()));
    groth16_kernels::fill_witness_split(stream.get(), src, counts.get(), true, ones.get(), tail_idx.get(),
                                        values.get());
    CUZK_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    std::vector<std::uint32_t> got_ones = download<std::uint32_t>(ones, e.ones.size() + 1);
    std::vector<std::uint32_t> got_tail_idx = download<std::uint32_t>(tail_idx, e.tail.size() + 1);
    std::vector<Fr> got_tail = download<Fr>(values, e.tail.size());
    EXPECT_EQ(got_ones.back(), 0xa5a5a5a5u);
    EXPECT_EQ(got_tail_idx.back(), 0xa5a5a5a5u);
    got_ones.pop_back();
    got_tail_idx.pop_back();
    EXPECT_EQ(got_ones, e.ones);
    EXPECT_EQ(got_tail_idx, e.tail_idx);
    EXPECT_TRUE(got_tail == e.tail);
    // Gathered form: every selected scalar, in order.
    groth16_kernels::fill_witness_split(stream.get(), src, counts.get(), false, nullptr, nullptr, values.get());
    CUZK_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
    EXPECT_TRUE(download<Fr>(values, e.selected) == e.all);
  }
}

TEST(GpuWitnessSplit, MatchesSelectThenSplit) {
  CUZK_REQUIRE_GPU();
  auto rng = seeded_rng(0x5917);
  const Shape shapes[] = {
      {1, 1, 0.3, 0.3, 1.0, 0.5},         // the smallest: one input, one aux
      {3, 511, 0.4, 0.4, 0.7, 0.6},       // below one block
      {70, 4097, 0.5, 0.3, 0.5, 0.5},     // inputs past a density word, aux past a block
      {1, 100003, 0.45, 0.45, 1.0, 0.8},  // PoRep-like: mostly bits
      {5, 262145, 0.05, 0.05, 0.3, 0.2},  // mostly tail, sparse densities
      {2, 70000, 1.0, 0.0, 1.0, 1.0},     // all zero: empty split lists
  };
  for (const Shape& s : shapes) check_shape(rng, s);
}

}  // namespace
}  // namespace cuzk::gpu::test
