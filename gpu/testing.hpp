// Hooks for tests: element-wise device field arithmetic on host arrays, so the
// device fields can be compared with the host's MontField. No CUDA types.
#pragma once

#include <span>
#include <vector>

#include "gpu/gpu.hpp"

namespace cuzk::gpu::testing {

enum class FieldOp { kAdd, kSub, kMul, kSqr, kFromMont, kMulCios, kMulEvenOdd, kSqrCios, kSqrEvenOdd };

// out[i] = a[i] op b[i] computed on the device (b is ignored by kSqr and kFromMont;
// kFromMont returns the standard integer's limbs wrapped as raw Montgomery limbs).
// kMulCios ... kSqrEvenOdd name one form of gpu/ff/field.cuh regardless of
// CUZK_FIELD_MUL (Fp and Fr only; Fp2 throws kInvalidArgument).
std::vector<ff::Fp> field_op(Device& device, FieldOp op, std::span<const ff::Fp> a, std::span<const ff::Fp> b);
std::vector<ff::Fr> field_op(Device& device, FieldOp op, std::span<const ff::Fr> a, std::span<const ff::Fr> b);
std::vector<ff::Fp2> field_op(Device& device, FieldOp op, std::span<const ff::Fp2> a, std::span<const ff::Fp2> b);

}  // namespace cuzk::gpu::testing
