// Element-wise field operations, used by the tests to compare the device
// arithmetic with the host's MontField on random inputs.
#include "gpu/cuda_rt.hpp"
#include "gpu/ff/field.cuh"
#include "gpu/kernels.hpp"

namespace cuzk::gpu::kernels {
namespace {

template <class F>
__global__ void field_op_kernel(FieldOpKind op, const F* a, const F* b, F* out, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (op) {
    case FieldOpKind::kAdd:
      out[i] = a[i] + b[i];
      break;
    case FieldOpKind::kSub:
      out[i] = a[i] - b[i];
      break;
    case FieldOpKind::kMul:
      out[i] = a[i] * b[i];
      break;
    case FieldOpKind::kSqr:
      out[i] = a[i].sqr();
      break;
    case FieldOpKind::kFromMont:
      if constexpr (requires { a[i].from_mont(); }) out[i] = a[i].from_mont();
      break;
    // The named forms of gpu/ff/field.cuh (Fp, Fr; the host refuses them for Fp2).
    case FieldOpKind::kMulCios:
      if constexpr (requires { F::mul_cios(a[i], b[i]); }) out[i] = F::mul_cios(a[i], b[i]);
      break;
    case FieldOpKind::kMulEvenOdd:
      if constexpr (requires { F::mul_evenodd(a[i], b[i]); }) out[i] = F::mul_evenodd(a[i], b[i]);
      break;
    case FieldOpKind::kSqrCios:
      if constexpr (requires { a[i].sqr_cios(); }) out[i] = a[i].sqr_cios();
      break;
    case FieldOpKind::kSqrEvenOdd:
      if constexpr (requires { a[i].sqr_evenodd(); }) out[i] = a[i].sqr_evenodd();
      break;
  }
}

template <class F>
void launch(cudaStream_t s, FieldOpKind op, const u32* a, const u32* b, u32* out, std::size_t n) {
  field_op_kernel<F><<<detail::grid_for(n, 128), 128, 0, s>>>(
      op, reinterpret_cast<const F*>(a), reinterpret_cast<const F*>(b), reinterpret_cast<F*>(out), n);
  CUZK_CUDA_CHECK_LAUNCH();
}

}  // namespace

void field_op(cudaStream_t s, FieldKind field, FieldOpKind op, const u32* a, const u32* b, u32* out, std::size_t n) {
  if (n == 0) return;
  switch (field) {
    case FieldKind::kFp:
      launch<dev::Fp>(s, op, a, b, out, n);
      break;
    case FieldKind::kFr:
      launch<dev::Fr>(s, op, a, b, out, n);
      break;
    case FieldKind::kFp2:
      launch<dev::Fp2>(s, op, a, b, out, n);
      break;
  }
}

}  // namespace cuzk::gpu::kernels
