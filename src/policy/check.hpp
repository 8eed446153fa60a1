// Invariant checks for the policy components: a broken invariant is a bug, so
// it aborts with the expression, the place and a message carrying the values
// (systemd restarts the daemon). Operating errors never go through here; they
// are returned as typed values.
#pragma once

#include <cstdio>
#include <cstdlib>

#define CUZK_POLICY_CHECK(cond, ...)                                                \
  do {                                                                              \
    if (!(cond)) [[unlikely]] {                                                     \
      std::fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                            \
      std::fputc('\n', stderr);                                                     \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)
