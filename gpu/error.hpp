// Typed errors of the CUDA back end (operating conditions, not bugs).
#pragma once

#include <stdexcept>
#include <string>

namespace cuzk::gpu {

enum class ErrorKind {
  kNoDevice,           // no CUDA driver or no device with that ordinal
  kOutOfDeviceMemory,  // the request does not fit in the device's free memory
  kInvalidArgument,    // sizes out of range or mismatched
  kOutOfHostMemory,    // page-locked host memory could not be allocated (the pinned SRS tier)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace cuzk::gpu
