// Force-included (clang only, see rpc/CMakeLists.txt) before every TU that
// uses cuzk_rpc: capnp 0.9's blob.h compares `const char*` with
// kj::StringPtr through operators that kj 0.9 declares only for compilers
// without C++20 rewritten comparisons. gcc 12 resolves those comparisons
// through StringPtr's member operator; clang 16 finds no candidate. These are
// the two operators kj leaves out, written so that they cannot recurse.
#pragma once

#include <kj/string.h>

namespace kj {
inline bool operator==(const char* a, const StringPtr& b) { return b == StringPtr(a); }
inline bool operator!=(const char* a, const StringPtr& b) { return !(b == StringPtr(a)); }
}  // namespace kj
