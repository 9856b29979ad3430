// SEAL's KSwitchKeys layout (RelinKeys, GaloisKeys): key-level parms_id, the number of rows, then
// per row its key count and that many nested PublicKey objects. RelinKeys row r holds the key
// for s^(r+2); GaloisKeys have N rows, row (g-1)/2 holding the key of Galois element g. Each row
// holds one key per Q prime: SEAL decomposes per prime (alpha = 1) with one special prime.
#include <algorithm>
#include <optional>
#include <string>

#include "veil/io/seal.h"
#include "veil/rlwe/keyswitch.h"
#include "veil/io/seal_internal.h"

namespace veil::io::seal {

using namespace detail;

namespace {

// Checks that a Veil key-switching key can be written in SEAL's per-prime layout.
void require_per_prime(const Context& ctx, const char* what) {
  if (ctx.alpha() != 1) {
    throw InvalidArgument(std::string(what) + ": SEAL decomposes key switching per prime (alpha = 1); "
                          "this context has alpha = " + std::to_string(ctx.alpha()) +
                          ", whose digit keys cannot be split without the secret key");
  }
}

void write_kswitch_row(ByteWriter& w, const Context& ctx, const ParmsId& key_id, std::uint8_t minor,
                       const KSwitchKey& k) {
  if (k.level() != ctx.max_level()) {  // SEAL's keys cover every level
    throw InvalidArgument("key: SEAL's keys serve every level; this one stops at level " +
                          std::to_string(k.level()) + " (KSwitchKey::level)");
  }
  if (k.compact()) {  // SEAL stores every a_j
    write_kswitch_row(w, ctx, key_id, minor, expand_compact_key(k));
    return;
  }
  const std::vector<u64> words = k.buffer().to_host();
  const std::size_t pw = k.poly_words();
  w.u64(k.dnum());
  for (std::size_t j = 0; j < k.dnum(); ++j) {
    write_ciphertext_object(w, minor, key_id, true, 2, ctx.n(), ctx.base_qp_full().size(), 1.0, 1,
                            words.data() + 2 * j * pw);
  }
}

// One SEAL row (a key per Q prime, each (b_i, a_i) over Q ∪ {p}) as a Veil key: digit j is the
// sum of the per-prime keys of its primes (each encrypts p s' on its own limb, 0 elsewhere, so
// the sum encrypts p s' on the digit's limbs: the digit's key, with the errors added).
KSwitchKey build_key(const ContextPtr& ctx, const Device& dev,
                     const std::vector<std::vector<u64>>& per_prime) {
  const std::size_t L = ctx->num_q(), alpha = ctx->alpha();
  const std::size_t dnum = ctx->dnum();
  KSwitchKey key(ctx, dev, dnum);
  const std::size_t pw = key.poly_words(), n = ctx->n();
  const RnsBase& qp = ctx->base_qp_full();
  std::vector<u64> host(2 * dnum * pw, 0);
  for (std::size_t i = 0; i < L; ++i) {
    u64* dst = host.data() + 2 * (i / alpha) * pw;
    const std::vector<u64>& src = per_prime[i];
    if (alpha == 1) {
      std::copy(src.begin(), src.end(), dst);
      continue;
    }
    for (std::size_t p = 0; p < 2; ++p)
      for (std::size_t l = 0; l < qp.size(); ++l) {
        const u64 q = qp[l].value;
        for (std::size_t c = 0; c < n; ++c) {
          const std::size_t idx = (p * qp.size() + l) * n + c;
          const u64 s = dst[idx] + src[idx];
          dst[idx] = s >= q ? s - q : s;
        }
      }
  }
  copy_words_from_host(dev, key.data(), host.data(), host.size());
  return key;
}

// Reads a KSwitchKeys object's rows; `on_row(index, keys)` receives each non-empty row.
template <class OnRow>
void read_kswitch(ByteView in, const ContextPtr& ctx, const LoadOptions& o, const std::string& what,
                  OnRow on_row) {
  const Levels lv = levels(*ctx, "context");
  if (ctx->num_p() == 0) throw InvalidArgument("context: has no special prime, so no " + what);
  const Members body = open_object(in, "SEAL " + what, o.max_bytes);
  ByteReader r(body.view, "SEAL " + what);
  if (read_parms_id(r) != lv.key) r.fail("parms_id", "not this context's key level");
  const std::uint64_t rows = r.u64("dim1");
  if (rows > ctx->n()) r.fail("dim1", std::to_string(rows) + " rows, at most N = " + std::to_string(ctx->n()));
  for (std::uint64_t row = 0; row < rows; ++row) {
    const std::uint64_t count = r.u64("dim2");
    if (count == 0) continue;
    if (count != ctx->num_q()) {
      r.fail("dim2", "row " + std::to_string(row) + " has " + std::to_string(count) +
                         " keys, expected one per Q prime (" + std::to_string(ctx->num_q()) + ")");
    }
    std::vector<std::vector<u64>> keys;
    for (std::uint64_t i = 0; i < count; ++i) {
      keys.push_back(read_key_ciphertext_object(r, *ctx, lv, what + " row " + std::to_string(row)).words);
    }
    on_row(row, keys, r);
  }
  r.expect_end();
}

}  // namespace

Bytes save(const RelinKeys& rk, const SaveOptions& o) {
  if (rk.empty()) throw InvalidArgument("relin_keys: is empty");
  const Context& ctx = *rk.context();
  const Levels lv = levels(ctx, "relin_keys");
  require_per_prime(ctx, "relin_keys");
  Bytes m;
  ByteWriter w(m);
  write_parms_id(w, lv.key);
  w.u64(1);  // one row: the key for s^2
  write_kswitch_row(w, ctx, lv.key, o.version_minor, rk.key());
  return frame(m, o);
}

Bytes save(const GaloisKeys& gk, const SaveOptions& o) {
  if (!gk.context()) throw InvalidArgument("galois_keys: is empty");
  const Context& ctx = *gk.context();
  const Levels lv = levels(ctx, "galois_keys");
  require_per_prime(ctx, "galois_keys");
  Bytes m;
  ByteWriter w(m);
  write_parms_id(w, lv.key);
  w.u64(ctx.n());  // SEAL: always N rows, row (g - 1) / 2
  for (std::size_t row = 0; row < ctx.n(); ++row) {
    const u32 elt = static_cast<u32>(2 * row + 1);
    if (gk.has_key(elt)) {
      write_kswitch_row(w, ctx, lv.key, o.version_minor, gk.key(elt));
    } else {
      w.u64(0);
    }
  }
  return frame(m, o);
}

RelinKeys load_relin_keys(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  std::optional<KSwitchKey> key;
  read_kswitch(in, ctx, o, "relinearization keys",
               [&](std::uint64_t row, const std::vector<std::vector<u64>>& keys, ByteReader& r) {
                 if (row != 0) {
                   r.fail("dim1", "keys for s^" + std::to_string(row + 2) +
                                      " are not supported (Veil relinearizes size-3 ciphertexts)");
                 }
                 key = build_key(ctx, dev, keys);
               });
  if (!key) throw InvalidArgument("SEAL relinearization keys: no key for s^2");
  return RelinKeys(std::move(*key));
}

GaloisKeys load_galois_keys(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  GaloisKeys gk(ctx, dev);
  read_kswitch(in, ctx, o, "Galois keys",
               [&](std::uint64_t row, const std::vector<std::vector<u64>>& keys, ByteReader& r) {
                 if (row == 0) r.fail("dim1", "row 0 would be the identity (Galois element 1)");
                 gk.insert(static_cast<u32>(2 * row + 1), build_key(ctx, dev, keys));
               });
  return gk;
}

}  // namespace veil::io::seal
