// RAII owner of one io_uring instance (liburing). Internal to io/: the public
// interface is FileSource.
#pragma once

#include <liburing.h>

namespace cuzk::io {

class Ring {
 public:
  // Sets up a ring with `entries` submission slots; throws
  // IoError(kUnsupported) with the errno when the kernel refuses.
  explicit Ring(unsigned entries);
  ~Ring();
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;

  io_uring* get() { return &ring_; }
  // Whether IORING_OP_READ is supported (kernel >= 5.6).
  bool supports_read();

 private:
  io_uring ring_;
};

}  // namespace cuzk::io
