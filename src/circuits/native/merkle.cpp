#include "circuits/native/merkle.hpp"

namespace cuzk::circuits::native {

std::vector<std::size_t> tree_shape_arities(std::uint64_t leaves, std::size_t base_arity, std::size_t sub_arity,
                                            std::size_t top_arity) {
  auto die = [](const char* what) {
    std::fprintf(stderr, "tree_shape_arities: %s\n", what);
    std::abort();
  };
  if (top_arity != 0 && sub_arity == 0) die("a top level needs a sub level");
  const std::uint64_t base_trees = (sub_arity ? sub_arity : 1) * (top_arity ? top_arity : 1);
  if (base_arity < 2 || leaves % base_trees != 0) die("shape does not divide the leaves");
  std::uint64_t per_tree = leaves / base_trees;
  std::vector<std::size_t> arities;
  while (per_tree > 1) {
    if (per_tree % base_arity != 0) die("base tree size is not a power of the base arity");
    per_tree /= base_arity;
    arities.push_back(base_arity);
  }
  if (sub_arity) arities.push_back(sub_arity);
  if (top_arity) arities.push_back(top_arity);
  return arities;
}

}  // namespace cuzk::circuits::native
