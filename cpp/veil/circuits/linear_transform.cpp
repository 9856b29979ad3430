#include "veil/circuits/linear_transform.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/env.h"
#include "veil/core/error.h"

namespace veil::circuits {

using detail::cplx;

namespace {

std::size_t mod_n(long long k, std::size_t n) {
  const long long m = static_cast<long long>(n);
  return static_cast<std::size_t>(((k % m) + m) % m);
}

long long floor_div(long long a, long long b) {
  long long q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

}  // namespace

// ---- Diagonals ------------------------------------------------------------------------------

Diagonals::Diagonals(std::size_t n) : n_(n) {
  if (n == 0) throw InvalidArgument("n: expected at least one slot");
}

const Diagonals::Vector& Diagonals::at(std::size_t k) const {
  auto it = index_.find(k);
  if (it == index_.end()) throw InvalidArgument("k: no diagonal " + std::to_string(k));
  return values_[it->second];
}

void Diagonals::add(long long k, const Vector& v) {
  if (v.size() != n_) {
    throw InvalidArgument("diagonal: expected " + std::to_string(n_) + " entries, got " +
                          std::to_string(v.size()));
  }
  const std::size_t key = mod_n(k, n_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    index_.emplace(key, values_.size());
    keys_.push_back(key);
    values_.push_back(v);
    return;
  }
  Vector& d = values_[it->second];
  for (std::size_t j = 0; j < n_; ++j) d[j] += v[j];
}

Diagonals Diagonals::scaled(double c) const {
  Diagonals out(n_);
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    Vector v(values_[i]);
    for (auto& x : v) x = detail::np_mul(x, cplx(c, 0.0));
    out.add(static_cast<long long>(keys_[i]), v);
  }
  return out;
}

double Diagonals::max_abs() const {
  double m = 0.0;
  for (const Vector& v : values_) {
    for (const cplx& x : v) m = std::max(m, detail::np_abs(x));
  }
  return m;
}

Diagonals::Vector Diagonals::apply(const Vector& x) const {
  if (x.size() != n_) throw InvalidArgument("x: expected " + std::to_string(n_) + " entries");
  Vector y(n_, cplx(0.0, 0.0));
  for (std::size_t i = 0; i < keys_.size(); ++i) {
    for (std::size_t j = 0; j < n_; ++j) y[j] += values_[i][j] * x[(j + keys_[i]) % n_];
  }
  return y;
}

Diagonals diagonals_of(const std::vector<std::vector<std::complex<double>>>& matrix) {
  const std::size_t n = matrix.size();
  if (n == 0) throw InvalidArgument("matrix: is empty");
  for (const auto& row : matrix) {
    if (row.size() != n) throw InvalidArgument("matrix: expected a square n x n matrix");
  }
  Diagonals out(n);
  for (std::size_t k = 0; k < n; ++k) {
    Diagonals::Vector d(n);
    bool nonzero = false;
    for (std::size_t j = 0; j < n; ++j) {
      d[j] = matrix[j][(j + k) % n];
      nonzero = nonzero || d[j] != cplx(0.0, 0.0);
    }
    if (nonzero) out.add(static_cast<long long>(k), d);
  }
  return out;
}

Diagonals compose(const Diagonals& a, const Diagonals& b) {
  const std::size_t n = a.n();
  if (b.n() != n) throw InvalidArgument("b: diagonals of another size");
  Diagonals out(n);
  Diagonals::Vector prod(n);
  for (std::size_t ka : a.keys()) {
    const auto& da = a.at(ka);
    for (std::size_t kb : b.keys()) {
      const auto& db = b.at(kb);
      for (std::size_t j = 0; j < n; ++j) prod[j] = detail::np_mul(da[j], db[(j + ka) % n]);
      out.add(static_cast<long long>(ka + kb), prod);
    }
  }
  Diagonals kept(n);
  for (std::size_t k : out.keys()) {
    const auto& d = out.at(k);
    if (std::any_of(d.begin(), d.end(), [](const cplx& x) { return x != cplx(0.0, 0.0); })) {
      kept.add(static_cast<long long>(k), d);
    }
  }
  return kept;
}

Diagonals row_scale(const Diagonals& a, const std::vector<double>& rows) {
  if (rows.size() != a.n())
    throw InvalidArgument("rows: expected " + std::to_string(a.n()) + " entries");
  Diagonals out(a.n());
  for (std::size_t k : a.keys()) {
    Diagonals::Vector v(a.at(k));
    for (std::size_t j = 0; j < v.size(); ++j) v[j] = detail::np_mul(v[j], cplx(rows[j], 0.0));
    out.add(static_cast<long long>(k), v);
  }
  return out;
}

Diagonals col_scale(const Diagonals& a, const std::vector<double>& cols) {
  const std::size_t n = a.n();
  if (cols.size() != n) throw InvalidArgument("cols: expected " + std::to_string(n) + " entries");
  Diagonals out(n);
  for (std::size_t k : a.keys()) {
    Diagonals::Vector v(a.at(k));
    for (std::size_t j = 0; j < n; ++j) v[j] = detail::np_mul(v[j], cplx(cols[(j + k) % n], 0.0));
    out.add(static_cast<long long>(k), v);
  }
  return out;
}

// ---- baby-step giant-step split ---------------------------------------------------------------

double baby_cost() {
  static const double cost = [] {
    const char* v = std::getenv("VEIL_BSGS_BABY_COST");
    if (v == nullptr || *v == '\0') return kBabyCost;
    double c = 0.0;  // from_chars: the C locale's '.', whatever the process locale
    const char* end = v + std::strlen(v);
    const auto [ptr, ec] = std::from_chars(v, end, c);
    if (ec != std::errc() || ptr != end || !std::isfinite(c) || c <= 0.0 || c > 64.0) {
      throw InvalidArgument("VEIL_BSGS_BABY_COST: expected a number in (0, 64], got '" +
                            std::string(v) + "'");
    }
    return c;
  }();
  return cost;
}

BsgsSplit bsgs_split(const std::vector<std::size_t>& keys, std::size_t n, std::size_t inputs,
                     std::size_t outputs) {
  if (n == 0 || !std::has_single_bit(n)) {
    throw InvalidArgument("n: expected a power of two, got " + std::to_string(n));
  }
  if (keys.empty()) throw InvalidArgument("keys: expected at least one diagonal");
  const long long nn = static_cast<long long>(n);
  std::vector<long long> signed_keys;
  for (std::size_t k : keys) {
    if (k >= n) throw InvalidArgument("keys: " + std::to_string(k) + " is not below n");
    const long long s = static_cast<long long>(k);
    signed_keys.push_back(s <= nn / 2 ? s : s - nn);
  }
  bool have = false;
  double best_cost = 0.0;
  BsgsSplit best;
  for (std::size_t n1 = 1; n1 <= n; n1 *= 2) {
    BsgsSplit cand;
    cand.n1 = n1;
    const long long m = static_cast<long long>(n1);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const long long s = signed_keys[i];
      const long long g = floor_div(s, m) * m;
      auto it = std::find_if(cand.giants.begin(), cand.giants.end(),
                             [&](const auto& e) { return e.first == g; });
      if (it == cand.giants.end()) {
        cand.giants.emplace_back(g, std::vector<std::pair<long long, std::size_t>>{});
        it = cand.giants.end() - 1;
      }
      it->second.emplace_back(s - g, keys[i]);
    }
    std::set<long long> babies;
    for (const auto& [g, items] : cand.giants) {
      for (const auto& [b, k] : items) babies.insert(b);
    }
    const std::size_t nonzero_babies = babies.size() - babies.count(0);
    std::size_t nonzero_giants = 0;
    for (const auto& [g, items] : cand.giants) nonzero_giants += g != 0;
    const double cost =
        baby_cost() * static_cast<double>(inputs) * static_cast<double>(nonzero_babies) +
        static_cast<double>(outputs * nonzero_giants);
    if (!have || cost < best_cost) {
      have = true;
      best_cost = cost;
      best = std::move(cand);
    }
  }
  return best;
}

// ---- LinearTransform --------------------------------------------------------------------------

int LinearTransform::signed_step(long long k, std::size_t slots) {
  const long long n = static_cast<long long>(slots);
  const long long r = static_cast<long long>(mod_n(k, slots));
  return static_cast<int>(r <= n / 2 ? r : r - n);
}

namespace {

std::vector<std::size_t> union_keys(const std::vector<std::vector<Diagonals>>& matrices,
                                    std::size_t slots) {
  if (matrices.empty() || matrices.front().empty()) {
    throw InvalidArgument("matrices: expected at least one output and one input");
  }
  std::set<std::size_t> keys;
  for (const auto& row : matrices) {
    if (row.size() != matrices.front().size()) {
      throw InvalidArgument("matrices: every output needs the same number of inputs");
    }
    bool any = false;
    for (const Diagonals& m : row) {
      if (m.n() != slots) {
        throw InvalidArgument("matrices: diagonals of size " + std::to_string(m.n()) +
                              ", expected " + std::to_string(slots));
      }
      for (std::size_t k : m.keys()) keys.insert(k);
      any = any || m.size() != 0;
    }
    if (!any) throw InvalidArgument("matrices: an output has no diagonal");
  }
  return {keys.begin(), keys.end()};
}

}  // namespace

std::map<int, std::size_t> LinearTransform::rotation_uses_of(
    const std::vector<std::vector<Diagonals>>& matrices, std::size_t slots) {
  const std::vector<std::size_t> keys = union_keys(matrices, slots);
  const std::size_t inputs = matrices.front().size(), outputs = matrices.size();
  const BsgsSplit split = bsgs_split(keys, slots, inputs, outputs);
  std::map<int, std::size_t> uses;
  std::set<long long> babies;
  for (const auto& [g, items] : split.giants) {
    if (mod_n(g, slots) != 0) uses[signed_step(g, slots)] += outputs;
    for (const auto& [b, k] : items) {
      if (mod_n(b, slots) != 0 && babies.insert(mod_n(b, slots)).second) {
        uses[signed_step(b, slots)] += inputs;
      }
    }
  }
  return uses;
}

std::vector<int> LinearTransform::rotation_steps_of(
    const std::vector<std::vector<Diagonals>>& matrices, std::size_t slots) {
  std::vector<int> steps;
  for (const auto& [s, n] : rotation_uses_of(matrices, slots)) steps.push_back(s);
  return steps;
}

bool LinearTransform::periodic_diagonals() {
  return env_flag_on("VEIL_PERIODIC_DIAGONALS");
}

Hoisting LinearTransform::default_hoisting() {
  return env_flag_on("VEIL_DOUBLE_HOIST") ? Hoisting::double_hoisted : Hoisting::single;
}

LinearTransform::LinearTransform(const CKKSEncoder& encoder,
                                 const std::vector<std::vector<Diagonals>>& matrices,
                                 std::size_t slots, std::size_t level, double scale_in,
                                 double scale_out, const Device& dev, Hoisting hoisting)
    : slots_(slots), level_(level), hoisting_(hoisting) {
  const Context& ctx = *encoder.context();
  if (hoisting != Hoisting::single && hoisting != Hoisting::double_hoisted) {
    throw InvalidArgument("hoisting: expected single or double_hoisted");
  }
  if (hoisting == Hoisting::double_hoisted && ctx.num_p() == 0) {
    throw InvalidArgument("hoisting: double hoisting needs special primes (the basis Q_l ∪ P)");
  }
  if (slots == 0 || !std::has_single_bit(slots) || slots > ctx.n() / 2) {
    throw InvalidArgument("slots: expected a power of two in 1.." + std::to_string(ctx.n() / 2) +
                          ", got " + std::to_string(slots));
  }
  if (level > ctx.max_level() || level < ckks_context_tables(ctx).groups.front()) {
    throw InvalidArgument("level: expected a level above q_0's block (that can rescale), got " +
                          std::to_string(level));
  }
  if (!std::isfinite(scale_in) || scale_in <= 0)
    throw InvalidArgument("scale_in: expected a finite scale > 0");
  if (!std::isfinite(scale_out) || scale_out <= 0)
    throw InvalidArgument("scale_out: expected a finite scale > 0");
  const std::vector<std::size_t> keys = union_keys(matrices, slots);
  const std::size_t inputs = matrices.front().size();
  const BsgsSplit split = bsgs_split(keys, slots, inputs, matrices.size());
  n1_ = split.n1;
  // The product of the rescale block above `level` (the same double as RescaleChain's).
  std::vector<std::uint64_t> block;
  for (std::size_t i = ckks::rescale_target(ctx, level) + 1; i <= level; ++i)
    block.push_back(ctx.base_q(level)[i].value);
  pt_scale_ = scale_out * detail::exact_product(block) / scale_in;
  const std::size_t reps = ctx.n() / 2 / slots;
  const bool periodic = periodic_diagonals();
  std::vector<std::set<long long>> babies(inputs);
  std::vector<std::complex<double>> tiled(slots * reps);
  for (const auto& row : matrices) {
    std::vector<std::pair<long long, std::vector<Term>>> out;
    for (const auto& [g, items] : split.giants) {
      std::vector<Term> terms;
      for (const auto& [b, k] : items) {
        for (std::size_t i = 0; i < row.size(); ++i) {
          if (!row[i].contains(k)) continue;
          const auto& d = row[i].at(k);
          // rot_{-G}(d_k) (numpy.roll by G), tiled to the N/2 slots
          for (std::size_t j = 0; j < slots; ++j) {
            const std::complex<double> v = d[mod_n(static_cast<long long>(j) - g, slots)];
            for (std::size_t r = 0; r < reps; ++r) tiled[r * slots + j] = v;
          }
          if (hoisting == Hoisting::double_hoisted) {
            const unsigned shift = periodic ? encoder.periodic_shift(tiled) : 0;
            terms.push_back(Term{i, b,
                                 encoder.encode_extended_periodic(tiled, pt_scale_, level,
                                                                  shift, dev),
                                 shift});
          } else {
            terms.push_back(Term{i, b, encoder.encode(tiled, pt_scale_, level, dev), 0});
          }
          babies[i].insert(b);
        }
      }
      if (!terms.empty()) out.emplace_back(g, std::move(terms));
    }
    plan_.push_back(std::move(out));
  }
  for (const auto& s : babies) babies_.emplace_back(s.begin(), s.end());
}

std::vector<int> LinearTransform::rotation_steps() const {
  std::set<int> steps;
  for (const auto& bs : babies_) {
    for (long long b : bs) {
      if (mod_n(b, slots_) != 0) steps.insert(signed_step(b, slots_));
    }
  }
  for (const auto& out : plan_) {
    for (const auto& [g, terms] : out) {
      if (mod_n(g, slots_) != 0) steps.insert(signed_step(g, slots_));
    }
  }
  return {steps.begin(), steps.end()};
}

std::size_t LinearTransform::plaintext_bytes() const {
  std::size_t total = 0;
  for (const auto& out : plan_) {
    for (const auto& [g, terms] : out) {
      for (const Term& t : terms) total += t.plain.buffer().bytes();
    }
  }
  return total;
}

std::vector<Plaintext> LinearTransform::plaintexts() const {
  std::vector<Plaintext> out;
  for (const auto& o : plan_) {
    for (const auto& [g, terms] : o) {
      for (const Term& t : terms) {
        out.push_back(t.shift != 0 ? CKKSEncoder::expand_periodic(t.plain, t.shift) : t.plain);
      }
    }
  }
  return out;
}

std::vector<unsigned> LinearTransform::plaintext_shifts() const {
  std::vector<unsigned> out;
  for (const auto& o : plan_) {
    for (const auto& [g, terms] : o) {
      for (const Term& t : terms) out.push_back(t.shift);
    }
  }
  return out;
}

std::vector<Ciphertext> LinearTransform::apply(const Evaluator& ev,
                                               const std::vector<const Ciphertext*>& inputs,
                                               const GaloisKeys& galois_keys) const {
  if (inputs.size() != babies_.size()) {
    throw InvalidArgument("inputs: expected " + std::to_string(babies_.size()) +
                          " ciphertexts, got " + std::to_string(inputs.size()));
  }
  for (const Ciphertext* ct : inputs) {
    if (ct == nullptr || ct->empty()) throw InvalidArgument("inputs: a ciphertext is empty");
    if (ct->level() != level_) {
      throw InvalidArgument("inputs: expected ciphertexts at level " + std::to_string(level_) +
                            ", got level " + std::to_string(ct->level()));
    }
  }
  if (hoisting_ == Hoisting::double_hoisted) {
    std::vector<std::vector<ckks::BsgsGiant>> plan;
    bool keys = true;
    auto has = [&](long long step) {
      const int s = signed_step(step, slots_);
      return s == 0 || galois_keys.has_key(ev.context()->galois_elt_from_step(s));
    };
    for (const auto& out : plan_) {
      std::vector<ckks::BsgsGiant> giants;
      for (const auto& [g, terms] : out) {
        ckks::BsgsGiant giant{signed_step(g, slots_), {}};
        keys = keys && has(g);
        for (const Term& t : terms) {
          giant.terms.push_back({t.input, signed_step(t.baby, slots_), &t.plain, t.shift});
        }
        giants.push_back(std::move(giant));
      }
      plan.push_back(std::move(giants));
    }
    for (const auto& bs : babies_) {
      for (long long b : bs) keys = keys && has(b);
    }
    // Without a key for every step the rotations are composed (single-hoisted).
    if (keys) return ev.multiply_diagonals_bsgs(inputs, plan, galois_keys);
  }
  return apply_single(ev, inputs, galois_keys);
}

std::vector<Ciphertext> LinearTransform::apply_single(const Evaluator& ev,
                                                      const std::vector<const Ciphertext*>& inputs,
                                                      const GaloisKeys& galois_keys) const {
  // Baby steps: one hoisted decomposition per input.
  std::vector<std::map<long long, Ciphertext>> rotated(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::vector<int> steps;
    for (long long b : babies_[i]) steps.push_back(signed_step(b, slots_));
    std::vector<Ciphertext> r = ev.rotate_many(*inputs[i], steps, galois_keys);
    for (std::size_t j = 0; j < r.size(); ++j) rotated[i].emplace(babies_[i][j], std::move(r[j]));
  }
  std::vector<Ciphertext> outs;
  for (const auto& out : plan_) {
    std::optional<Ciphertext> total;
    for (const auto& [g, terms] : out) {
      std::vector<const Ciphertext*> cts;
      std::vector<const Plaintext*> pts;
      std::vector<Plaintext> full;  // diagonals stored as one period, expanded for this sum
      full.reserve(terms.size());
      for (const Term& t : terms) {
        cts.push_back(&rotated[t.input].at(t.baby));
        if (t.shift != 0) full.push_back(CKKSEncoder::expand_periodic(t.plain, t.shift));
        pts.push_back(t.shift != 0 ? &full.back() : &t.plain);
      }
      Ciphertext acc = ev.multiply_plain_sum(cts, pts);
      if (mod_n(g, slots_) != 0) acc = ev.rotate_vector(acc, signed_step(g, slots_), galois_keys);
      if (total) {
        ev.add_inplace(*total, acc);
      } else {
        total = std::move(acc);
      }
    }
    outs.push_back(ev.rescale_to_next(*total));
  }
  return outs;
}

}  // namespace veil::circuits
