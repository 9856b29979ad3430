#include "veil/circuits/dft.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"

namespace veil::circuits {

using detail::cplx;

namespace {

void check_fft_size(std::size_t n) {
  if (n < 2 || !std::has_single_bit(n)) {
    throw InvalidArgument("n: expected a power of two >= 2, got " + std::to_string(n));
  }
}

std::uint64_t pow_mod(std::uint64_t b, std::uint64_t e, std::uint64_t m) {
  unsigned __int128 r = 1, x = b % m;
  while (e) {
    if (e & 1) r = r * x % m;
    x = x * x % m;
    e >>= 1;
  }
  return static_cast<std::uint64_t>(r);
}

/// One radix-2 stage: h (half the block), lo[p] (p in the lower half of its block) and w[p], the
/// twiddle of p's butterfly zeta^(g^(p mod h) mod 2^(s+2) * n / 2^s), computed as numpy's
/// exp(2j pi k / m) (one complex product, Smith's quotient and the C library's cexp).
struct Butterfly {
  std::size_t h;
  std::vector<bool> lo;
  std::vector<cplx> w;
};

std::vector<Butterfly> butterflies(std::size_t n) {
  const std::uint64_t m = 4 * n, g = m - 3;
  std::vector<Butterfly> out;
  const double two_pi = 2.0 * std::numbers::pi;
  // Smith's quotient (x i) / (m + 0 i): rat = 0 / m, scl = 1 / (m + 0 rat).
  const double md = static_cast<double>(m), rat = 0.0 / md, scl = 1.0 / (md + 0.0 * rat);
  for (std::size_t length = 2; length <= n; length *= 2) {
    Butterfly b;
    b.h = length / 2;
    const std::uint64_t lenq = 4 * length;
    std::vector<cplx> wj(b.h);
    for (std::size_t j = 0; j < b.h; ++j) {
      const std::uint64_t k = pow_mod(g, j, lenq) * (m / lenq);
      const double im = two_pi * static_cast<double>(k);  // (2 pi i) (k + 0 i)
      const double re_q = (0.0 + im * rat) * scl, im_q = (im - 0.0 * rat) * scl;
      const double e = std::exp(re_q);  // cexp(x + iy) = e^x (cos y + i sin y)
      wj[j] = cplx(e * std::cos(im_q), e * std::sin(im_q));
    }
    b.lo.resize(n);
    b.w.resize(n);
    for (std::size_t p = 0; p < n; ++p) {
      const std::size_t pos = p % length;
      b.lo[p] = pos < b.h;
      b.w[p] = wj[b.lo[p] ? pos : pos - b.h];
    }
    out.push_back(std::move(b));
  }
  return out;
}

/// A stage's diagonals {0: d0, h: dplus, -h: dminus} (+h and -h coincide when h = n/2).
Diagonals stage(std::size_t n, std::size_t h, const std::vector<cplx>& d0,
                const std::vector<cplx>& dplus, const std::vector<cplx>& dminus) {
  Diagonals st(n);
  st.add(0, d0);
  st.add(static_cast<long long>(h), dplus);
  st.add(-static_cast<long long>(h), dminus);
  return st;
}

std::vector<double> parity_mask(std::size_t n, bool even) {
  std::vector<double> m(n);
  for (std::size_t j = 0; j < n; ++j) m[j] = (j % 2 == 0) == even ? 1.0 : 0.0;
  return m;
}

}  // namespace

std::vector<Diagonals> special_fft_stages(std::size_t n) {
  check_fft_size(n);
  std::vector<Diagonals> out;
  for (const Butterfly& b : butterflies(n)) {
    std::vector<cplx> d0(n), dp(n), dm(n);
    for (std::size_t p = 0; p < n; ++p) {
      d0[p] = b.lo[p] ? cplx(1.0, 0.0) : -b.w[p];
      dp[p] = b.lo[p] ? b.w[p] : cplx(0.0, 0.0);
      dm[p] = b.lo[p] ? cplx(0.0, 0.0) : cplx(1.0, 0.0);
    }
    out.push_back(stage(n, b.h, d0, dp, dm));
  }
  return out;
}

std::vector<Diagonals> special_ifft_stages(std::size_t n) {
  check_fft_size(n);
  std::vector<Diagonals> out;
  for (const Butterfly& b : butterflies(n)) {
    std::vector<cplx> d0(n), dp(n), dm(n);
    for (std::size_t p = 0; p < n; ++p) {
      d0[p] = b.lo[p] ? cplx(0.5, 0.0) : detail::np_div(cplx(-0.5, 0.0), b.w[p]);
      dp[p] = b.lo[p] ? cplx(0.5, 0.0) : cplx(0.0, 0.0);
      dm[p] = b.lo[p] ? cplx(0.0, 0.0) : detail::np_div(cplx(0.5, 0.0), b.w[p]);
    }
    out.push_back(stage(n, b.h, d0, dp, dm));
  }
  return out;
}

std::vector<std::vector<std::size_t>> split_stages(std::size_t count, std::size_t parts) {
  parts = std::max<std::size_t>(1, std::min(parts, count));
  std::vector<std::vector<std::size_t>> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < parts; ++i) {
    const std::size_t size = count / parts + (i < count % parts ? 1 : 0);
    std::vector<std::size_t> g;
    for (std::size_t s = start; s < start + size; ++s) g.push_back(s);
    out.push_back(std::move(g));
    start += size;
  }
  return out;
}

Diagonals merge_stages(const std::vector<Diagonals>& stages, const std::vector<std::size_t>& order,
                       std::size_t n) {
  Diagonals acc(n);
  acc.add(0, std::vector<cplx>(n, cplx(1.0, 0.0)));
  for (std::size_t i : order) {
    if (i >= stages.size()) {
      throw InvalidArgument("order: stage " + std::to_string(i) + " of " +
                            std::to_string(stages.size()));
    }
    acc = compose(stages[i], acc);
  }
  return acc;
}

namespace {

/// Checks that `levels` transform levels fit at and below `first` (each one rescale block above
/// q_0's block at least).
void check_levels(std::size_t n, std::size_t levels, std::size_t first, const Context& ctx,
                  const char* what) {
  check_fft_size(n);
  if (levels < 1) throw InvalidArgument("levels: expected at least one level");
  if (first > ctx.max_level()) {
    throw InvalidArgument(std::string(what) + ": " + std::to_string(first) +
                          " is above the top level " + std::to_string(ctx.max_level()));
  }
  const std::size_t used = std::min<std::size_t>(levels, std::countr_zero(n));
  std::size_t level = first;
  for (std::size_t i = 0; i < used; ++i) {
    if (level < ckks_context_tables(ctx).groups.front()) {
      throw InvalidArgument(std::string(what) + ": " + std::to_string(used) +
                            " transform levels need as many rescale blocks at and below level " +
                            std::to_string(first) + " above q_0's block");
    }
    if (i + 1 < used) level = ckks::rescale_target(ctx, level);
  }
}

}  // namespace

Diagonals lower_half_of_2n(const Diagonals& m) {
  const std::size_t n = m.n();
  Diagonals out(2 * n);
  for (std::size_t k : m.keys()) {
    const long long signed_k = LinearTransform::signed_step(static_cast<long long>(k), n);
    Diagonals::Vector v(2 * n);
    const Diagonals::Vector& d = m.at(k);
    std::copy(d.begin(), d.end(), v.begin());
    out.add(signed_k, v);
  }
  return out;
}

std::vector<DftLevel> coeff_to_slot_levels(std::size_t n, std::size_t levels, std::size_t top_level,
                                           double c, const Context& ctx, bool pack) {
  if (pack && 2 * n > ctx.n() / 2) {
    throw InvalidArgument("n: packing both halves needs n <= N/4, got n = " + std::to_string(n));
  }
  check_levels(n, levels, top_level, ctx, "top_level");
  if (!std::isfinite(c)) throw InvalidArgument("c: expected a finite constant");
  const std::vector<Diagonals> ifft = special_ifft_stages(n);
  const std::size_t logn = ifft.size();
  std::vector<std::size_t> order;  // S_logn^-1 first
  for (std::size_t i = logn; i-- > 0;) order.push_back(i);
  const std::vector<double> even = parity_mask(n, true), odd = parity_mask(n, false);
  std::vector<DftLevel> out;
  std::size_t level = top_level;
  const auto groups = split_stages(order.size(), levels);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    std::vector<std::size_t> idx;
    for (std::size_t i : groups[gi]) idx.push_back(order[i]);
    Diagonals m = merge_stages(ifft, idx, n);
    DftLevel lv;
    lv.level = level;
    if (gi == 0) {
      m = m.scaled(c);
      lv.matrices = {{col_scale(m, even), col_scale(m, odd)}};
    } else {
      lv.matrices = {{m}};
    }
    if (pack && gi + 1 == groups.size()) {
      for (auto& row : lv.matrices) {
        for (Diagonals& d : row) d = lower_half_of_2n(d);
      }
      lv.slots = 2 * n;
    }
    out.push_back(std::move(lv));
    if (gi + 1 < groups.size()) level = ckks::rescale_target(ctx, level);
  }
  return out;
}

std::vector<DftLevel> slot_to_coeff_levels(std::size_t n, std::size_t levels,
                                           std::size_t input_level, const Context& ctx) {
  check_levels(n, levels, input_level, ctx, "input_level");
  const std::vector<Diagonals> fft = special_fft_stages(n);
  const std::vector<double> even = parity_mask(n, true), odd = parity_mask(n, false);
  std::vector<DftLevel> out;
  std::size_t level = input_level;
  const auto groups = split_stages(fft.size(), levels);
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    Diagonals m = merge_stages(fft, groups[gi], n);
    DftLevel lv;
    lv.level = level;
    if (gi + 1 == groups.size()) {
      lv.matrices = {{row_scale(m, even)}, {row_scale(m, odd)}};
    } else {
      lv.matrices = {{m}};
    }
    out.push_back(std::move(lv));
    if (gi + 1 < groups.size()) level = ckks::rescale_target(ctx, level);
  }
  return out;
}

std::vector<double> shared_precision_scales(const std::vector<DftLevel>& levels,
                                            const std::vector<double>& block_products,
                                            double s_first, double s_last) {
  if (levels.empty() || block_products.size() != levels.size()) {
    throw InvalidArgument("levels: expected one block product per level");
  }
  if (!std::isfinite(s_first) || s_first <= 0)
    throw InvalidArgument("s_first: expected a finite scale > 0");
  if (!std::isfinite(s_last) || s_last <= 0)
    throw InvalidArgument("s_last: expected a finite scale > 0");
  std::vector<double> dmax;
  for (const DftLevel& lv : levels) {
    double m = 0.0;
    for (const auto& row : lv.matrices) {
      for (const Diagonals& d : row) m = std::max(m, d.max_abs());
    }
    if (m == 0.0) throw InvalidArgument("levels: a level whose matrices are all zero");
    dmax.push_back(m);
  }
  // As the Python oracle's sum(map(math.log2, ...)) (CPython 3.12+'s compensated sum).
  std::vector<double> log_d, log_m_entries;
  for (double d : block_products) log_d.push_back(std::log2(d));
  for (double d : dmax) log_m_entries.push_back(std::log2(d));
  const double sum_d = detail::py_sum(log_d), sum_m = detail::py_sum(log_m_entries);
  const double log_m =
      (std::log2(s_last / s_first) + sum_d + sum_m) / static_cast<double>(levels.size());
  std::vector<double> scales{s_first};
  double s_in = s_first;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const bool last = i + 1 == levels.size();
    const double s_out =
        last ? s_last : s_in * std::pow(2.0, log_m) / (block_products[i] * dmax[i]);
    scales.push_back(s_out);
    s_in = s_out;
  }
  return scales;
}

}  // namespace veil::circuits
