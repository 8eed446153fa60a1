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
    case Variant::kMulCios: r = F::mul_cios(a, b); break;
    case Variant::kMulEvenOdd: r = F::mul_evenodd(a, b); break;
    case Variant::kMulDefault: r = a * b; break;
    case Variant::kSqrCios: r = a.sqr_cios(); break;
    case Variant::kSqrEvenOdd: r = a.sqr_evenodd(); break;
    case Variant::kSqrDefault: r = a.sqr(); break;
    case Variant::kRedcCios: r = F::redc_cios(w); break;
    case Variant::kRedcEvenOdd: r = F::redc_evenodd(w); break;
  }
  for (int i = 0; i < N; ++i) out[i] = r.l[i];
}

}  // namespace

const char* name(Variant v) {
  switch (v) {
    case Variant::kMulCios: return "mul_cios";
    case Variant::kMulEvenOdd: return "mul_evenodd";
    case Variant::kMulDefault: return "operator*";
    case Variant::kSqrCios: return "sqr_cios";
    case Variant::kSqrEvenOdd: return "sqr_evenodd";
    case Variant::kSqrDefault: return "sqr";
    case Variant::kRedcCios: return "redc_cios";
    case Variant::kRedcEvenOdd: return "redc_evenodd";
  }
  return "?";
}

void fp_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) {
  run<gpu::dev::Fp>(v, a, b, out);
}
void fr_op(Variant v, const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out) {
  run<gpu::dev::Fr>(v, a, b, out);
}

}  // namespace cuzk::gpu_ff_test
