// Host emulation of the lean radix-4 NTT passes (gpu/ntt/ntt_lean.cu): the
// kernels' own index math and butterflies (gpu/ntt/ntt_lean_index.hpp,
// compiled here for the host Fr) run one block and one thread at a time over a
// host copy of the shared tile, and the result is compared with the CPU NTT of
// src/ntt. No GPU needed: this validates the indexing where CI has no device.
// Also checked: every pass touches each global index exactly once, every
// round each tile element exactly once, twiddle indices stay in (0, n/2),
// and no warp's shared access has a bank conflict (the header's claim).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "gpu/ntt/ntt_lean_index.hpp"
#include "gpu_test_util.hpp"
#include "ntt/ntt.hpp"

namespace cuzk::gpu {
namespace {

using ff::Fr;
using ntt_lean::u32;
using ntt_lean::u64;
namespace nl = ntt_lean;

static_assert(sizeof(Fr) == 32);

struct Findings {
  std::size_t bad_twiddle = 0;     // index > n/2 requested (the table holds w^0 .. w^(n/2))
  std::size_t bank_conflicts = 0;  // warp accesses with two lanes on one bank
  std::size_t coverage = 0;        // elements touched != once per round / pass
};

// Banks of the 32 lanes of each warp for element t of every group: distinct
// unless the round is a radix-2 group at tile bit 4 (k = 3, documented 2-way).
void check_banks(int S, int r, std::size_t groups, Findings& f) {
  if (r == 1 && S == 4) return;
  for (std::size_t w = 0; w < groups; w += 32) {
    for (u32 t = 0; t < (1u << r); ++t) {
      std::set<u32> banks;
      std::size_t lanes = 0;
      for (std::size_t q = w; q < std::min(groups, w + 32); ++q, ++lanes) {
        banks.insert(nl::slot(nl::group_e0(u32(q), S, r) | (t << S), 0) % 32);
      }
      if (banks.size() != lanes) ++f.bank_conflicts;
    }
  }
}

// The lean DIF passes on x (natural in, the inverse without 1/n); scale (when
// not empty) multiplies element i by scale[i] on the first pass's load, as the
// coset's g^i does. Without bitrev_store the result is x, bit-reversed; with
// it the last pass writes natural order into the returned vector (x keeps its
// partly transformed state), position j scaled by store_scale[j] when given.
std::vector<Fr> emulate(std::vector<Fr>& x, int log_n, bool inverse, const std::vector<Fr>& tw,
                        const std::vector<Fr>& scale, bool bitrev_store, const std::vector<Fr>& store_scale,
                        Findings& f) {
  const std::size_t n = x.size();
  const u32 half_n = u32(n / 2);
  const auto twiddle = [&](u32 j) {
    if (j > half_n) {
      ++f.bad_twiddle;
      return Fr::one();
    }
    return tw[j];
  };
  std::vector<Fr> out;
  if (bitrev_store) out.assign(n, Fr::zero());
  std::vector<std::uint8_t> stored(n, 0);  // natural positions written by the bit-reversing pass
  nl::Pass plan[8];
  const int passes = nl::plan(log_n, plan);
  for (int pi = passes - 1; pi >= 0; --pi) {
    const int s_lo = plan[pi].s_lo, k = plan[pi].k;
    const bool to_out = bitrev_store && pi == 0;
    const int o_pos = nl::other_pos(s_lo, k, log_n, to_out);
    const u32 tile = 1u << (k + nl::kOtherBits);
    std::vector<u32> shm(nl::kTileWords);
    std::vector<std::uint8_t> seen(n, 0);
    for (u64 b = 0; b < (n >> (k + nl::kOtherBits)); ++b) {
      const u64 base = nl::block_base(b, s_lo, k, o_pos);
      const auto put = [&](u32 e, const Fr& v) {
        u32 limbs[8];
        std::memcpy(limbs, &v, 32);
        for (int l = 0; l < 8; ++l) shm[nl::slot(e, l)] = limbs[l];
      };
      const auto get = [&](u32 e) {
        u32 limbs[8];
        for (int l = 0; l < 8; ++l) limbs[l] = shm[nl::slot(e, l)];
        Fr v;
        std::memcpy(&v, limbs, 32);
        return v;
      };
      for (u32 e = 0; e < tile; ++e) {
        const u64 gi = nl::global_index(base, e, s_lo, o_pos);
        if (gi >= n || seen[gi]++ != 0) {
          ++f.coverage;
          continue;
        }
        put(e, pi == passes - 1 && !scale.empty() ? x[gi] * scale[gi] : x[gi]);
      }
      for (int i = 0; i < nl::rounds(k); ++i) {
        const int g_lo = nl::round_g_lo(k, i), r = nl::round_radix_log(k, i);
        std::vector<std::uint8_t> loads(tile, 0);
        const auto ld = [&](u32 e) {
          ++loads[e];
          return get(e);
        };
        const std::size_t groups = tile >> r;
        for (u32 q = 0; q < groups; ++q) {
          if (r == 2 && s_lo + g_lo == 0) {
            nl::run_group<2, Fr, true>(q, g_lo, base, s_lo, o_pos, log_n, inverse, twiddle, ld, put);
          } else if (r == 2) {
            nl::run_group<2, Fr>(q, g_lo, base, s_lo, o_pos, log_n, inverse, twiddle, ld, put);
          } else {
            nl::run_group<1, Fr>(q, g_lo, base, s_lo, o_pos, log_n, inverse, twiddle, ld, put);
          }
        }
        for (u32 e = 0; e < tile; ++e) f.coverage += loads[e] != 1;
        if (b == 0) check_banks(g_lo + nl::kOtherBits, r, groups, f);
      }
      for (u32 e = 0; e < tile; ++e) {
        const u64 gi = nl::global_index(base, e, s_lo, o_pos);
        if (gi >= n) continue;
        if (!to_out) {
          x[gi] = get(e);
          continue;
        }
        const u64 j = nl::bit_reverse(gi, log_n);
        ++stored[j];
        out[j] = store_scale.empty() ? get(e) : get(e) * store_scale[j];
      }
    }
    for (std::size_t i = 0; i < n; ++i) f.coverage += seen[i] != 1;
  }
  if (bitrev_store) {
    for (std::size_t j = 0; j < n; ++j) f.coverage += stored[j] != 1;
  }
  return out;
}

std::vector<Fr> powers(const Fr& base, std::size_t count) {
  std::vector<Fr> p(count);
  Fr acc = Fr::one();
  for (auto& v : p) {
    v = acc;
    acc = acc * base;
  }
  return p;
}

TEST(NttLeanEmulation, PassesMatchCpuNttOnEverySize) {
  auto rng = test::seeded_rng(21);
  ThreadPool pool(0);
  // 2^6..2^19: pass splits 3+3 .. 9+9 (k = 9 with its radix-2 round at 2^17,
  // 2^18) and 3 passes (7+6+6) at 2^19.
  for (int log_n = 6; log_n <= 19; ++log_n) {
    const std::size_t n = std::size_t{1} << log_n;
    const ntt::Domain domain(static_cast<unsigned>(log_n));
    const std::vector<Fr> tw = powers(domain.omega(), n / 2 + 1);
    const std::vector<Fr> coset = powers(domain.coset_gen(), n);
    std::vector<Fr> x(n);
    for (auto& v : x) v = Fr::random(rng);
    const Fr size = Fr::from_u64(n);
    // n^-1 g^-j: the coset inverse's store scaling (Device::ntt's t.coset_inv()).
    std::vector<Fr> coset_inv = powers(domain.coset_gen_inv(), n);
    for (Fr& v : coset_inv) v = v * domain.size_inv();
    struct Case {
      const char* name;
      bool inverse, coset, natural_out;
    };
    for (const Case c :
         {Case{"forward", false, false, false}, Case{"inverse", true, false, false}, Case{"coset", false, true, false},
          Case{"forward natural", false, false, true}, Case{"coset inverse natural", true, true, true}}) {
      // Above 2^14 the forward only (a few seconds in all; the index math is the same for all).
      if (log_n > 14 && (c.inverse || c.coset || c.natural_out)) continue;
      std::vector<Fr> expect = x;
      if (c.coset && c.inverse) {
        ntt::coset_intt(domain, expect, pool);
      } else if (c.coset) {
        ntt::coset_ntt(domain, expect, pool);
      } else if (c.inverse) {
        ntt::intt(domain, expect, pool);
        for (Fr& v : expect) v = v * size;  // the kernels omit 1/n
      } else {
        ntt::ntt(domain, expect, pool);
      }
      if (!c.natural_out) ntt::bit_reverse_permute(expect, pool);
      std::vector<Fr> got = x;
      Findings f;
      const std::vector<Fr> out = emulate(got, log_n, c.inverse, tw, c.coset && !c.inverse ? coset : std::vector<Fr>{},
                                          c.natural_out, c.coset && c.inverse ? coset_inv : std::vector<Fr>{}, f);
      if (c.natural_out) got = out;
      EXPECT_EQ(f.bad_twiddle, 0u) << c.name << " log_n=" << log_n;
      EXPECT_EQ(f.coverage, 0u) << c.name << " log_n=" << log_n;
      EXPECT_EQ(f.bank_conflicts, 0u) << c.name << " log_n=" << log_n;
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i], expect[i]) << c.name << " log_n=" << log_n << " i=" << i;
      }
    }
  }
}

// The GPU prover's H stage (GpuProver::queue_h, lean path) runs six
// transforms: A and B on the coset as before, c only back to coefficients, and
// H = iNTT_g(A B) / Z - iNTT(c) / Z with the product on the coset iNTT's first
// load and the subtraction after its last store. Emulated pass by pass here,
// it must equal the CPU prover's seven-transform quotient (src/groth16
// compute_h: (A B - C) / Z on the coset, back to coefficients) for vectors
// that satisfy nothing: the identity is linear algebra, not divisibility.
TEST(NttLeanEmulation, HStageOfSixTransformsEqualsTheSevenTransformQuotient) {
  auto rng = test::seeded_rng(22);
  ThreadPool pool(0);
  for (int log_n = 6; log_n <= 12; log_n += 3) {
    const std::size_t n = std::size_t{1} << log_n;
    const ntt::Domain domain(static_cast<unsigned>(log_n));
    const std::vector<Fr> tw = powers(domain.omega(), n / 2 + 1);
    const Fr z_inv = ntt::vanishing_on_coset_inv(domain);
    std::vector<Fr> coset_ninv = powers(domain.coset_gen(), n), coset_inv_z = powers(domain.coset_gen_inv(), n);
    for (Fr& v : coset_ninv) v = v * domain.size_inv();
    for (Fr& v : coset_inv_z) v = v * domain.size_inv() * z_inv;
    const std::vector<Fr> inv_size_z(n, domain.size_inv() * z_inv);
    std::vector<Fr> abc[3];
    for (auto& v : abc) {
      v.resize(n);
      for (Fr& x : v) x = Fr::random(rng);
    }

    std::vector<Fr> expect[3] = {abc[0], abc[1], abc[2]};
    for (auto& v : expect) {
      ntt::intt(domain, v, pool);
      ntt::coset_ntt(domain, v, pool);
    }
    for (std::size_t i = 0; i < n; ++i) expect[0][i] = (expect[0][i] * expect[1][i] - expect[2][i]) * z_inv;
    ntt::coset_intt(domain, expect[0], pool);

    Findings f;
    std::vector<Fr> on_coset[2];
    for (int k = 0; k < 2; ++k) {
      std::vector<Fr> x = abc[k];
      std::vector<Fr> coefficients = emulate(x, log_n, /*inverse=*/true, tw, {}, true, coset_ninv, f);
      on_coset[k] = emulate(coefficients, log_n, /*inverse=*/false, tw, {}, true, {}, f);
    }
    std::vector<Fr> c = abc[2];
    const std::vector<Fr> c_over_z = emulate(c, log_n, /*inverse=*/true, tw, {}, true, inv_size_z, f);
    // load_mul is a load scaling by a full vector: the emulation's `scale`.
    std::vector<Fr> a_on_coset = on_coset[0];
    std::vector<Fr> h = emulate(a_on_coset, log_n, /*inverse=*/true, tw, on_coset[1], true, coset_inv_z, f);
    for (std::size_t j = 0; j < n; ++j) h[j] = h[j] - c_over_z[j];
    EXPECT_EQ(f.coverage + f.bad_twiddle, 0u) << "log_n=" << log_n;
    for (std::size_t j = 0; j < n; ++j) ASSERT_EQ(h[j], expect[0][j]) << "log_n=" << log_n << " j=" << j;
  }
}

// The production shapes (2^24: 8+8+8, 2^27: 9+9+9): index math only. Every
// round covers its tile once without bank conflicts; at 2^24 every global
// index is loaded (and stored) exactly once per pass (2^27 has the same
// block mapping with k = 9, covered by the emulation at 2^17 / 2^18).
TEST(NttLeanEmulation, LargePlansCoverEveryIndexOnce) {
  for (int log_n : {24, 27}) {
    const u64 n = u64{1} << log_n;
    nl::Pass plan[8];
    const int passes = nl::plan(log_n, plan);
    ASSERT_EQ(passes, 3);
    int stages = 0;
    for (int pi = 0; pi < passes; ++pi) {
      ASSERT_EQ(plan[pi].s_lo, stages);
      stages += plan[pi].k;
      ASSERT_LE(plan[pi].k, nl::kStagesMax);
    }
    ASSERT_EQ(stages, log_n);
    for (int pi = 0; pi < passes; ++pi) {
      const int s_lo = plan[pi].s_lo, k = plan[pi].k;
      const u32 tile = 1u << (k + nl::kOtherBits);
      // The bottom pass also in its bit-reversing layout (other bits on top):
      // loads cover every index once, and so do the stores at bitrev(i).
      for (bool bitrev_store : {false, true}) {
        if (log_n != 24 || (bitrev_store && s_lo != 0)) continue;
        const int o_pos = nl::other_pos(s_lo, k, log_n, bitrev_store);
        std::vector<std::uint8_t> seen(n, 0), stored(n, 0);
        for (u64 b = 0; b < (n >> (k + nl::kOtherBits)); ++b) {
          const u64 base = nl::block_base(b, s_lo, k, o_pos);
          for (u32 e = 0; e < tile; ++e) {
            const u64 gi = nl::global_index(base, e, s_lo, o_pos);
            ASSERT_LT(gi, n);
            ++seen[gi];
            if (bitrev_store) ++stored[nl::bit_reverse(gi, log_n)];
          }
        }
        std::size_t bad = 0;
        for (u64 i = 0; i < n; ++i) bad += (seen[i] != 1) + (bitrev_store && stored[i] != 1);
        EXPECT_EQ(bad, 0u) << "log_n=" << log_n << " pass " << pi << " bitrev_store=" << bitrev_store;
      }
      Findings f;
      for (int i = 0; i < nl::rounds(k); ++i) {
        const int g_lo = nl::round_g_lo(k, i), r = nl::round_radix_log(k, i);
        std::vector<std::uint8_t> touched(tile, 0);
        for (u32 q = 0; q < (tile >> r); ++q) {
          for (u32 t = 0; t < (1u << r); ++t) ++touched[nl::group_e0(q, g_lo + nl::kOtherBits, r) | (t << (g_lo + 2))];
        }
        for (u32 e = 0; e < tile; ++e) f.coverage += touched[e] != 1;
        check_banks(g_lo + nl::kOtherBits, r, tile >> r, f);
      }
      EXPECT_EQ(f.coverage, 0u) << "log_n=" << log_n << " pass " << pi;
      EXPECT_EQ(f.bank_conflicts, 0u) << "log_n=" << log_n << " pass " << pi;
    }
  }
}

}  // namespace
}  // namespace cuzk::gpu
