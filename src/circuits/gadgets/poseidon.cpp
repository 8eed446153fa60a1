#include "circuits/gadgets/poseidon.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cuzk::circuits::gadgets {

namespace {

const Variable kOne = Variable::one();

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "poseidon gadget: %s\n", what);
  std::abort();
}

// A state lane: an allocated variable, or a linear combination with its
// value. The combination is tracked only when the constraint system keeps
// constraints: witness-only synthesis then costs just the field arithmetic
// (neptune's Num-based lanes made a 598-constraint hash cost ~2.4 ms here).
struct Elt {
  bool allocated = false;
  AllocatedNum var;
  std::optional<Fr> value;
  LinearCombination lc;

  static Elt of(const AllocatedNum& v) { return {true, v, v.value(), {}}; }
  static Elt constant(const Fr& c, bool track) {
    Elt e;
    e.value = c;
    if (track) e.lc = LinearCombination::constant(c);
    return e;
  }

  // The lane as a variable; a linear combination costs one variable and one
  // constraint lc * 1 = v.
  AllocatedNum ensure_allocated(ConstraintSystem& cs) const {
    if (allocated) return var;
    AllocatedNum v;
    {
      auto ns = cs.ns("allocate for Elt::Num");
      v = AllocatedNum::alloc(cs, value);
    }
    cs.enforce(
        "enforce num allocation preserves lc", [&] { return lc; }, [] { return LinearCombination(kOne); },
        [&] { return LinearCombination(v.variable()); });
    return v;
  }

  // acc += s * this (as a free combination).
  void add_scaled_to(Elt& acc, const Fr& s, bool track) const {
    if (acc.value && value) {
      *acc.value += *value * s;
    } else {
      acc.value.reset();
    }
    if (!track) return;
    if (allocated) {
      acc.lc.add(s, var.variable());
    } else {
      for (const auto& t : lc.terms()) acc.lc.add(t.coeff * s, t.var);
    }
  }
};

// sum_i elts[i] * scalars[i] as a free linear combination.
Elt scalar_product(const std::vector<Elt>& elts, std::span<const Fr> scalars, bool track) {
  Elt acc = Elt::constant(Fr::zero(), false);
  for (std::size_t i = 0; i < elts.size(); ++i) elts[i].add_scaled_to(acc, scalars[i], track);
  return acc;
}

// x^5 + post (S-box of a full or partial round after the first).
Elt quintic_s_box(ConstraintSystem& cs, const Elt& e, const std::optional<Fr>& post) {
  AllocatedNum l;
  {
    auto ns = cs.ns("S-box input");
    l = e.ensure_allocated(cs);
  }
  AllocatedNum l2, l4;
  {
    auto ns = cs.ns("l^2");
    l2 = l.square(cs);
  }
  {
    auto ns = cs.ns("l^4");
    l4 = l2.square(cs);
  }
  auto ns = cs.ns("(l4 * l) + rk)");
  return Elt::of(mul_sum(cs, l4, l, std::nullopt, post));
}

// (x + pre)^5 + post (first round: its round constants are added in the S-box).
Elt quintic_s_box_pre_add(ConstraintSystem& cs, const Elt& e, const Fr& pre, const Fr& post) {
  AllocatedNum l;
  {
    auto ns = cs.ns("S-box input");
    l = e.ensure_allocated(cs);
  }
  AllocatedNum l2, l4;
  {
    auto ns = cs.ns("(l+rk)^2");
    l2 = square_sum(cs, pre, l);
  }
  {
    auto ns = cs.ns("l^4");
    l4 = l2.square(cs);
  }
  auto ns = cs.ns("l4 * (l + rk)");
  return Elt::of(mul_sum(cs, l4, l, pre, post));
}

class PoseidonCircuit {
 public:
  PoseidonCircuit(std::vector<Elt> elements, const native::PoseidonConstants& c, bool track)
      : c_(c), width_(c.width), elements_(std::move(elements)), track_(track) {}

  AllocatedNum hash(ConstraintSystem& cs) {
    const std::size_t h = c_.half_full_rounds();
    {
      auto ns = cs.ns("first round");
      full_round(cs, true, false);
    }
    for (std::size_t i = 1; i < h; ++i) {
      auto ns = cs.ns("initial full round", i);
      full_round(cs, false, false);
    }
    for (std::size_t i = 0; i < c_.partial_rounds; ++i) {
      auto ns = cs.ns("partial round", i);
      partial_round(cs);
    }
    for (std::size_t i = 0; i + 1 < h; ++i) {
      auto ns = cs.ns("final full round", i);
      full_round(cs, false, false);
    }
    {
      auto ns = cs.ns("terminal full round");
      full_round(cs, false, true);
    }
    auto ns = cs.ns("hash result");
    return elements_[1].ensure_allocated(cs);
  }

 private:
  const Fr& key(std::size_t i) const { return c_.compressed_round_constants[i]; }

  void full_round(ConstraintSystem& cs, bool first_round, bool last_round) {
    std::size_t off = offset_;
    const std::size_t pre_off = off;
    if (first_round) off += width_;
    const std::size_t post_off = off;
    const bool has_post = first_round || !last_round;
    if (has_post) off += width_;

    for (std::size_t i = 0; i < width_; ++i) {
      if (first_round) {
        if (i == 0) {
          // The domain tag is a constant: its S-box is computed natively.
          Fr t = *elements_[0].value + key(pre_off);
          t = t.square().square() * t + key(post_off);
          elements_[0] = Elt::constant(t, track_);
        } else {
          auto ns = cs.ns("quintic s-box", i);
          elements_[i] = quintic_s_box_pre_add(cs, elements_[i], key(pre_off + i), key(post_off + i));
        }
      } else {
        std::optional<Fr> post;
        if (has_post) post = key(post_off + i);
        auto ns = cs.ns("quintic s-box", i);
        elements_[i] = quintic_s_box(cs, elements_[i], post);
      }
    }
    offset_ = off;
    product_mds();
  }

  void partial_round(ConstraintSystem& cs) {
    const Fr& rk = key(offset_++);
    auto ns = cs.ns("solitary quintic s-box");
    elements_[0] = quintic_s_box(cs, elements_[0], rk);
    product_mds();
  }

  // Values only (no constraints kept, every lane's value known): the
  // linear layers run on plain field elements in `values_`, and each lane
  // becomes a free combination holding just its value. Through Elt (an
  // optional value and an LC per lane, a fresh vector per round) they were
  // 35% of a 32 GiB WindowPoSt partition's synthesis.
  bool load_values() {
    if (track_) return false;
    values_.resize(width_);
    for (std::size_t i = 0; i < width_; ++i) {
      if (!elements_[i].value) return false;
      values_[i] = *elements_[i].value;
    }
    return true;
  }
  void set_free(std::size_t j, const Fr& v) {
    elements_[j].allocated = false;
    elements_[j].value = v;
  }

  // Vector-matrix product: lane j <- sum_i lane_i * m[i][j].
  void product_with_matrix(const native::FrMatrix& m) {
    if (load_values()) {
      for (std::size_t j = 0; j < width_; ++j) {
        Fr acc = Fr::zero();
        for (std::size_t i = 0; i < width_; ++i) acc += values_[i] * m.at(i, j);
        set_free(j, acc);
      }
      return;
    }
    std::vector<Elt> out;
    out.reserve(width_);
    std::vector<Fr> column(width_);
    for (std::size_t j = 0; j < width_; ++j) {
      for (std::size_t i = 0; i < width_; ++i) column[i] = m.at(i, j);
      out.push_back(scalar_product(elements_, column, track_));
    }
    elements_ = std::move(out);
  }

  // M'' = [[w_hat], [v_rest; I]]: lane 0 <- w_hat . lanes, lane j <- lane j + v_j lane 0.
  void product_with_sparse(const native::SparseMatrix& m) {
    if (load_values()) {
      Fr lane0 = Fr::zero();
      for (std::size_t i = 0; i < width_; ++i) lane0 += values_[i] * m.w_hat[i];
      for (std::size_t j = 1; j < width_; ++j) {
        if (elements_[j].allocated) die("sparse round on an allocated lane");
        set_free(j, values_[j] + values_[0] * m.v_rest[j - 1]);
      }
      set_free(0, lane0);
      return;
    }
    std::vector<Elt> out;
    out.reserve(width_);
    out.push_back(scalar_product(elements_, m.w_hat, track_));
    for (std::size_t j = 1; j < width_; ++j) {
      if (elements_[j].allocated) die("sparse round on an allocated lane");
      Elt lane = std::move(elements_[j]);
      elements_[0].add_scaled_to(lane, m.v_rest[j - 1], track_);
      out.push_back(std::move(lane));
    }
    elements_ = std::move(out);
  }

  void product_mds() {
    const std::size_t full_half = c_.half_full_rounds();
    const std::size_t sparse_offset = full_half - 1;
    if (round_ == sparse_offset) {
      product_with_matrix(c_.pre_sparse_matrix);
    } else if (round_ > sparse_offset && round_ < full_half + c_.partial_rounds) {
      product_with_sparse(c_.sparse_matrices[round_ - sparse_offset - 1]);
    } else {
      product_with_matrix(c_.mds);
    }
    ++round_;
  }

  const native::PoseidonConstants& c_;
  std::size_t width_;
  std::vector<Elt> elements_;
  bool track_;              // build linear combinations (only when constraints are kept)
  std::vector<Fr> values_;  // the lanes' values in a values-only linear layer
  std::size_t offset_ = 0;
  std::size_t round_ = 0;
};

}  // namespace

AllocatedNum square_sum(ConstraintSystem& cs, const Fr& to_add, const AllocatedNum& num) {
  std::optional<Fr> value;
  if (num.value()) value = (*num.value() + to_add).square();
  AllocatedNum res;
  {
    auto ns = cs.ns("squared sum");
    res = AllocatedNum::alloc(cs, value);
  }
  auto sum = [&] { return LinearCombination(num.variable()) + to_add * kOne; };
  cs.enforce("squared sum constraint", sum, sum, [&] { return LinearCombination(res.variable()); });
  return res;
}

AllocatedNum mul_sum(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b,
                     const std::optional<Fr>& pre_add, const std::optional<Fr>& post_add) {
  std::optional<Fr> value;
  if (a.value() && b.value()) {
    Fr t = *b.value();
    if (pre_add) t += *pre_add;
    t *= *a.value();
    if (post_add) t += *post_add;
    value = t;
  }
  AllocatedNum res;
  {
    auto ns = cs.ns("mul_sum");
    res = AllocatedNum::alloc(cs, value);
  }
  // (b + pre) * a = res - post
  cs.enforce(
      post_add ? (pre_add ? "mul sum constraint pre-post-add" : "mul sum constraint post-add")
               : (pre_add ? "mul sum constraint pre-add" : "mul sum constraint"),
      [&] {
        LinearCombination l(b.variable());
        if (pre_add) l.add(*pre_add, kOne);
        return l;
      },
      [&] { return LinearCombination(a.variable()); },
      [&] {
        LinearCombination l(res.variable());
        if (post_add) l.add(-*post_add, kOne);
        return l;
      });
  return res;
}

AllocatedNum poseidon_hash(ConstraintSystem& cs, std::span<const AllocatedNum> preimage,
                           const native::PoseidonConstants& c) {
  if (preimage.size() != c.arity) die("preimage length != arity");
  std::vector<Elt> elements;
  elements.reserve(c.width);
  const bool track = cs.keeps_constraints();
  elements.push_back(Elt::constant(c.domain_tag, track));
  for (const AllocatedNum& x : preimage) elements.push_back(Elt::of(x));
  PoseidonCircuit p(std::move(elements), c, track);
  return p.hash(cs);
}

AllocatedNum poseidon_hash2(ConstraintSystem& cs, const AllocatedNum& a, const AllocatedNum& b) {
  const AllocatedNum in[2] = {a, b};
  return poseidon_hash(cs, in, native::filecoin_poseidon(2));
}

AllocatedNum poseidon_hash_md(ConstraintSystem& cs, std::span<const AllocatedNum> elements) {
  constexpr std::size_t kArity = 36;
  if (elements.size() < 2) die("hash_md needs more than one element");
  AllocatedNum hash = elements[0];
  std::vector<AllocatedNum> preimage(kArity, hash);
  for (std::size_t start = 1, k = 0; start < elements.size(); start += kArity - 1, ++k) {
    preimage[0] = hash;
    const std::size_t n = std::min(kArity - 1, elements.size() - start);
    for (std::size_t i = 0; i < n; ++i) preimage[i + 1] = elements[start + i];
    for (std::size_t i = n + 1; i < kArity; ++i) {
      auto ns = cs.ns("padding", i);
      preimage[i] = AllocatedNum::alloc(cs, Fr::zero());
    }
    auto ns = cs.ns("hash md", k);
    hash = poseidon_hash(cs, preimage, native::filecoin_poseidon(kArity));
  }
  return hash;
}

AllocatedNum hash_single_column(ConstraintSystem& cs, std::span<const AllocatedNum> column) {
  return poseidon_hash(cs, column, native::filecoin_poseidon(column.size()));
}

}  // namespace cuzk::circuits::gadgets
