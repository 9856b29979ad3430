#include "veil/rlwe/checks.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <mutex>
#include <string>

#include "veil/backend/launch.h"
#include "veil/core/error.h"

namespace veil {

std::string parameter_summary(const Context& ctx) {
  const EncryptionParameters& p = ctx.params();
  std::string s = std::string(ctx.scheme_definition().name) + ", poly_modulus_degree " +
                  std::to_string(ctx.n()) + ", " + std::to_string(p.coeff_modulus.size()) +
                  " primes";
  if (ctx.scheme_definition().has_plain_modulus) {
    s += ", plain_modulus " + std::to_string(p.plain_modulus);
  }
  return s;
}

std::string parameter_difference(const Context& a, const Context& b) {
  const EncryptionParameters& p = a.params();
  const EncryptionParameters& q = b.params();
  auto bits = [](const std::vector<u64>& primes) {
    std::string s;
    for (u64 v : primes) s += (s.empty() ? "" : ",") + std::to_string(std::bit_width(v));
    return s;
  };
  if (p.coeff_modulus != q.coeff_modulus) {
    const std::string bp = bits(p.coeff_modulus), bq = bits(q.coeff_modulus);
    return bp == bq ? "the primes' values (same bit sizes " + bp + ")"
                    : "the primes' bit sizes (" + bp + " against " + bq + ")";
  }
  if (p.special_primes != q.special_primes) {
    return "special_primes (" + std::to_string(p.special_primes) + " against " +
           std::to_string(q.special_primes) + ")";
  }
  if (resolved_alpha(p) != resolved_alpha(q)) {
    return "alpha (" + std::to_string(resolved_alpha(p)) + " against " +
           std::to_string(resolved_alpha(q)) + ")";
  }
  if (p.mul_method != q.mul_method) {
    return "mul_method (" + to_string(p.mul_method) + " against " + to_string(q.mul_method) + ")";
  }
  if (p.rescale_groups != q.rescale_groups) return "rescale_groups";
  return "their parameter hash";
}

void check_compatible(const Context& ctx, const Device& dev, const ContextPtr& other_ctx,
                      const Device& other_dev, const char* what) {
  if (!other_ctx) throw InvalidArgument(std::string(what) + ": is empty (not initialized)");
  if (other_ctx->parameter_hash() != ctx.parameter_hash()) {
    const std::string theirs = parameter_summary(*other_ctx), ours = parameter_summary(ctx);
    std::string differs;
    if (theirs == ours) differs = "; they differ in " + parameter_difference(*other_ctx, ctx);
    throw InvalidArgument(std::string(what) + ": belongs to a different context (" + theirs +
                          "; the operation's: " + ours + differs + "): compute only on objects "
                          "of one context (and its public view)");
  }
  if (other_ctx->word_bits() != ctx.word_bits()) {
    throw InvalidArgument(std::string(what) + ": belongs to a context with " +
                          std::to_string(other_ctx->word_bits()) + "-bit words, this one has " +
                          std::to_string(ctx.word_bits()) + "-bit words (same parameters; "
                          "save and load it to convert)");
  }
  if (other_dev != dev) {
    throw TypeMismatch(std::string(what) + ": lives on " + other_dev.str() +
                       " but the operation runs on " + dev.str() + " (move it with .to(device))");
  }
}

void check_ciphertext(const Context& ctx, const Ciphertext& ct, const char* what, bool coeff_ntt) {
  if (ct.empty()) throw InvalidArgument(std::string(what) + ": is empty (not initialized)");
  check_compatible(ctx, ct.device(), ct.context(), ct.device(), what);
  if (ct.size() < 2) {
    throw InvalidArgument(std::string(what) + ": expected at least 2 polynomials, got " +
                          std::to_string(ct.size()));
  }
  const SchemeDefinition& def = ctx.scheme_definition();
  if (!def.ntt_form && ct.is_ntt_form() && !coeff_ntt) {
    throw InvalidArgument(std::string(what) + ": is a " + def.name +
                          " ciphertext in NTT form (transform_to_ntt), which only add, "
                          "sub, negate and multiply_plain take; transform_from_ntt first");
  }
  if (def.ntt_form && !ct.is_ntt_form()) {
    throw InvalidArgument(std::string(what) + ": " + to_string(ctx.scheme()) +
                          " ciphertexts are in NTT form");
  }
}

u64 join_key_sets(u64 ct_id, u64 other_id, const char* what) {
  if (ct_id && other_id && ct_id != other_id) {
    throw InvalidArgument(std::string(what) +
                          ": belongs to another key set (it was made with a different secret "
                          "key than the ciphertext; mixing them would give garbage)");
  }
  return ct_id ? ct_id : other_id;
}

u64 check_ciphertext_pair(const Context& ctx, const Ciphertext& a, const Ciphertext& b,
                          const char* what_a, const char* what_b, bool coeff_ntt) {
  check_ciphertext(ctx, a, what_a, coeff_ntt);
  check_ciphertext(ctx, b, what_b, coeff_ntt);
  if (a.is_ntt_form() != b.is_ntt_form()) {
    throw InvalidArgument(std::string(what_b) + ": is in " +
                          (b.is_ntt_form() ? "NTT" : "coefficient") + " form but " + what_a +
                          " is not (transform_to_ntt or transform_from_ntt one of them)");
  }
  if (b.device() != a.device()) {
    throw TypeMismatch(std::string(what_b) + ": lives on " + b.device().str() + " but " +
                       what_a + " lives on " + a.device().str());
  }
  if (a.level() != b.level()) {
    throw InvalidArgument(std::string(what_b) + ": is at level " + std::to_string(b.level()) +
                          " but " + what_a + " is at level " + std::to_string(a.level()) +
                          " (align them with mod_switch_to)");
  }
  return join_key_sets(a.key_id(), b.key_id(), what_b);
}

namespace {
std::atomic<bool> g_transparent_check{true};
std::mutex g_interrupt_mutex;
std::function<void()> g_interrupt;
}  // namespace

void set_transparent_check(bool on) { g_transparent_check = on; }
bool transparent_check() { return g_transparent_check.load(); }

void check_not_transparent(const Ciphertext& ct, const char* op) {
  // GPU results are tested when saved (checks.h): no synchronization here.
  if (!g_transparent_check.load() || ct.size() < 2 || ct.device().is_cuda()) return;
  const std::size_t words = (ct.size() - 1) * ct.poly_words();
  // Only the CPU reaches here: any word size reads as bytes (zero iff every byte is zero).
  const unsigned char* p = static_cast<const unsigned char*>(ct.poly(1).get());
  const std::size_t bytes = ct.poly(1).bytes(words);
  const bool nonzero = any_of(ct.device(), bytes, VEIL_LAMBDA(std::size_t i) { return p[i] != 0; });
  if (!nonzero) {
    throw InvalidArgument(std::string(op) +
                          ": the result ciphertext is transparent (its c1 is zero, so c0 "
                          "reveals the plaintext), e.g. a multiplication by a zero plaintext "
                          "or c - c; SEAL raises here too");
  }
}

namespace {

template <class W>
void not_transparent_words(const W* words, std::size_t size, std::size_t poly_words,
                           const char* what) {
  if (!g_transparent_check.load() || size < 2) return;
  const W* c1 = words + poly_words;
  for (std::size_t i = 0; i < (size - 1) * poly_words; ++i) {
    if (c1[i] != 0) return;
  }
  throw InvalidArgument(std::string(what) +
                        ": is transparent (its c1 is zero, so c0 reveals the plaintext to "
                        "anyone who reads these bytes), e.g. the result of a multiplication by "
                        "a zero plaintext or c - c; not saved (set_transparent_check(false) "
                        "allows it)");
}

}  // namespace

void check_not_transparent_words(const u64* words, std::size_t size, std::size_t poly_words,
                                 const char* what) {
  not_transparent_words(words, size, poly_words, what);
}

void check_not_transparent_words(const u32* words, std::size_t size, std::size_t poly_words,
                                 const char* what) {
  not_transparent_words(words, size, poly_words, what);
}

void check_interrupt() {
  std::function<void()> h;
  {
    std::lock_guard<std::mutex> lock(g_interrupt_mutex);
    h = g_interrupt;
  }
  if (h) h();
}

void set_interrupt_handler(std::function<void()> handler) {
  std::lock_guard<std::mutex> lock(g_interrupt_mutex);
  g_interrupt = std::move(handler);
}

}  // namespace veil
