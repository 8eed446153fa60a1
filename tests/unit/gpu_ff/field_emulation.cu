// nvcc host pass over gpu/ff/field.cuh (see field_emulation.hpp).
#include "field_emulation.hpp"

#include "gpu/ff/field.cuh"

namespace cuzk::gpu_ff_test {
namespace {

template <class F>
void run(Variant v, const std::uint32_t* a_limbs, const std::uint32_t* b_limbs, std::uint32_t* out) {
  constexpr int N = F::N;
  F a, b, r;
  for (int i = 0; i < N; ++i) {
    a.l[i] = a_limbs[i];
    b.l[i] = b_limbs[i];
  }
  std::uint32_t w[2 * N] = {};
  for (int i = 0; i < N; ++i) w[i] = a_limbs[i];
  switch (v) {
    case Variant::kMulCios:
      r = F::mul_cios(a, b);
      break;
    case Variant::kMulEvenOdd:
      r = F::mul_evenodd(a, b);
      break;
    case Variant::kMulDefault:
      r = a * b;
      break;
    case Variant::kSqrCios:
      r = a.sqr_cios();
      break;
    case Variant::kSqrEvenOdd:
      r = a.sqr_evenodd();
      break;
    case Variant::kSqrDefault:
      r = a.sqr();
      break;
    case Variant::kRedcCios:
      r = F::redc_cios(w);
      break;
    case Variant::kRedcEvenOdd:
      r = F::redc_evenodd(w);
      break;
  }
  for (int i = 0; i < N; ++i) out[i] = r.l[i];
}

}  // namespace

const char* name(Variant v) {
  switch (v) {
    case Variant::kMulCios:
      return "mul_cios";
    case Variant::kMulEvenOdd:
      return "mul_evenodd";
    case Variant::kMulDefault:
      return "operator*";
    case Variant::kSqrCios:
      return "sqr_cios";
    case Variant::kSqrEvenOdd:
      return "sqr_evenodd";
    case Variant::kSqrDefault:
      return "sqr";
    case Variant::kRedcCios:
      return "redc_cios";
    case Variant::kRedcEvenOdd:
      return "redc_evenodd";
  }
  return "?";
}

const char* name(Fp2Variant v) {
  switch (v) {
    case Fp2Variant::kMulKaratsuba3:
      return "Fp2::mul_karatsuba3";
    case Fp2Variant::kMulLazy:
      return "Fp2::mul_lazy";
    case Fp2Variant::kMulDefault:
      return "Fp2::operator*";
  }
  return "?";
}

void fp2_op(Fp2Variant v, const std::uint32_t* a_limbs, const std::uint32_t* b_limbs, std::uint32_t* out) {
  using gpu::dev::Fp2;
  constexpr int N = gpu::dev::Fp::N;
  Fp2 a, b, r;
  for (int i = 0; i < N; ++i) {
    a.c0.l[i] = a_limbs[i];
    a.c1.l[i] = a_limbs[N + i];
    b.c0.l[i] = b_limbs[i];
    b.c1.l[i] = b_limbs[N + i];
  }
  switch (v) {
    case Fp2Variant::kMulKaratsuba3:
      r = Fp2::mul_karatsuba3(a, b);
      break;
    case Fp2Variant::kMulLazy:
      r = Fp2::mul_lazy(a, b);
      break;
    case Fp2Variant::kMulDefault:
      r = a * b;
      break;
  }
  for (int i = 0; i < N; ++i) {
    out[i] = r.c0.l[i];
    out[N + i] = r.c1.l[i];
  }
}

void fp2_norm(const std::uint32_t* a_limbs, std::uint32_t* out) {
  using gpu::dev::Fp2;
  constexpr int N = gpu::dev::Fp::N;
  Fp2 a;
  for (int i = 0; i < N; ++i) {
    a.c0.l[i] = a_limbs[i];
    a.c1.l[i] = a_limbs[N + i];
  }
  const gpu::dev::Fp n = a.norm();
  for (int i = 0; i < N; ++i) out[i] = n.l[i];
}

void fp2_inverse_from_norm(const std::uint32_t* a_limbs, const std::uint32_t* n_inv_limbs, std::uint32_t* out) {
  using gpu::dev::Fp2;
  constexpr int N = gpu::dev::Fp::N;
  Fp2 a;
  gpu::dev::Fp n_inv;
  for (int i = 0; i < N; ++i) {
    a.c0.l[i] = a_limbs[i];
    a.c1.l[i] = a_limbs[N + i];
    n_inv.l[i] = n_inv_limbs[i];
  }
  const Fp2 r = a.inverse_from_norm(n_inv);
  for (int i = 0; i < N; ++i) {
    out[i] = r.c0.l[i];
    out[N + i] = r.c1.l[i];
  }
}

void fp_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) {
  run<gpu::dev::Fp>(v, a, b, out);
}
void fr_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) {
  run<gpu::dev::Fr>(v, a, b, out);
}

}  // namespace cuzk::gpu_ff_test
