#include "veil/io/serialize.h"

#include "veil/io/serialize_detail.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/keyswitch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <numeric>

#include "veil/core/primes.h"
#include "veil/io/validate.h"
#include "veil/ring/ntt.h"
#include "veil/ring/sampler.h"

namespace veil::io {

std::string to_string(ObjectType t) {
  switch (t) {
    case ObjectType::parameters: return "parameters";
    case ObjectType::plaintext: return "plaintext";
    case ObjectType::ciphertext: return "ciphertext";
    case ObjectType::secret_key: return "secret key";
    case ObjectType::public_key: return "public key";
    case ObjectType::relin_keys: return "relinearization keys";
    case ObjectType::galois_keys: return "Galois keys";
    case ObjectType::switching_key: return "switching key";
    case ObjectType::bootstrap_parameters: return "bootstrap parameters";
  }
  return "unknown object";
}

namespace detail {


// ---- writing --------------------------------------------------------------------------------

Bytes frame(const Encoded& e, const SaveOptions& o) {
  if (o.compression == Compression::zlib) {
    throw InvalidArgument("compression: Veil's format uses 'none' or 'zstd' ('zlib' is for SEAL's)");
  }
  // 4-byte words (flag kFlagWords32) whenever every word fits: the bytes follow from the words
  // alone, so contexts with either word size save the same words as the same bytes.
  std::vector<std::uint32_t> narrow;
  const bool words32 = !e.body32.empty() ||
      (!e.body.empty() && std::all_of(e.body.begin(), e.body.end(), [](u64 v) {
        return v <= 0xFFFFFFFFull;
      }));
  if (words32 && e.body32.empty()) narrow.assign(e.body.begin(), e.body.end());
  const std::vector<std::uint32_t>& words = e.body32.empty() ? narrow : e.body32;
  const ByteView body = words32
      ? ByteView(reinterpret_cast<const std::uint8_t*>(words.data()), words.size() * 4)
      : ByteView(reinterpret_cast<const std::uint8_t*>(e.body.data()), e.body.size() * 8);
  const std::uint32_t crc = crc32(body, crc32(e.descriptor));
  Bytes compressed;
  if (o.compression == Compression::zstd) compressed = zstd_compress(body, o.level);
  // zstd only where it shrinks the body: uniform residues in 4-byte words do not compress, and
  // the header then says 'none' (every reader takes both).
  const bool zstd = o.compression == Compression::zstd && compressed.size() < body.size;
  const ByteView stored = zstd ? ByteView(compressed) : body;
  Bytes out;
  out.reserve(kHeaderSize + e.descriptor.size() + stored.size);
  ByteWriter w(out);
  w.raw(kMagic, 4);
  w.u16(kVersion);
  w.u8(static_cast<std::uint8_t>(e.type));
  w.u8(static_cast<std::uint8_t>(e.scheme));
  w.u8(static_cast<std::uint8_t>(zstd ? Compression::zstd : Compression::none));
  w.u8(static_cast<std::uint8_t>((e.seeded ? kFlagSeeded : 0) | (e.key_set ? kFlagKeySet : 0) |
                                 (words32 ? kFlagWords32 : 0) |
                                 (e.seeded && e.compact ? kFlagCompact : 0) |
                                 (e.per_key ? kFlagPerKey : 0)));
  w.u16(0);
  w.u32(crc);
  w.u64(e.hash);
  w.u32(static_cast<std::uint32_t>(e.descriptor.size()));
  w.u32(0);
  w.u64(body.size);
  w.u64(stored.size);
  w.raw(e.descriptor.data(), e.descriptor.size());
  w.raw(stored.data, stored.size);
  return out;
}

void write_seed(ByteWriter& w, const UniformSeed& s) {
  for (std::uint32_t x : s) w.u32(x);
}

UniformSeed read_seed(ByteReader& r) {
  UniformSeed s{};
  for (auto& x : s) x = r.u32("seed");
  return s;
}

// Samples uniform polynomial `index` of a seeded object over `base` into `out`.
void expand_uniform(const Context& ctx, const Device& dev, const UniformSeed& seed,
                    std::uint64_t index, const RnsBase& base, bool coefficient_form, WordPtr out,
                    LimbAddress addr) {
  sample_uniform(dev, out, ctx.n(), base, uniform_stream(seed, index), addr);
  if (coefficient_form) ntt_inverse(dev, out, 1, base, ctx.ntt());
}

void set_body(Encoded& e, std::vector<u64>&& words) { e.body = std::move(words); }
void set_body(Encoded& e, std::vector<std::uint32_t>&& words) { e.body32 = std::move(words); }

// True when the object's uniform polynomials (host words at `host + offset_j`, one per
// index j, as host_words<W> gives them) equal what its seed regenerates: seeded saving is only
// honest then.
template <class W>
bool seed_still_matches(const Context& ctx, const Device& dev, const UniformSeed& seed,
                        const RnsBase& base, bool coefficient_form, const W* host,
                        const std::vector<std::size_t>& offsets, LimbAddress addr = {}) {
  WordBuffer tmp(dev, base.size() * ctx.n(), ctx.word_bits());
  for (std::size_t j = 0; j < offsets.size(); ++j) {
    expand_uniform(ctx, dev, seed, j, base, coefficient_form, tmp.data(), addr);
    const std::vector<W> regen = host_words<W>(tmp);
    if (std::memcmp(regen.data(), host + offsets[j], regen.size() * sizeof(W)) != 0) return false;
  }
  return true;
}

// Decides whether to write seeded; throws when Seeding::always cannot be honoured.
bool decide_seeded(const SaveOptions& o, const std::optional<UniformSeed>& seed, bool shape_ok,
                   const std::function<bool()>& matches, const char* what) {
  if (o.seeded == Seeding::never) return false;
  const bool ok = seed && shape_ok && matches();
  if (!ok && o.seeded == Seeding::always) {
    throw InvalidArgument(std::string("seeded: this ") + what +
                          (seed ? " was modified since it was sampled (or has a size other than 2)"
                                : " has no seed (only symmetric-key ciphertexts and keys fresh "
                                  "from KeyGenerator do)") +
                          "; save it unseeded");
  }
  return ok;
}


template <class W>
void append_kswitch_seeded(const KSwitchKey& k, const std::vector<W>& all, std::vector<W>& out) {
  const std::size_t pw = k.poly_words();
  for (std::size_t j = 0; j < k.dnum(); ++j) {
    const W* b = all.data() + 2 * j * pw;
    out.insert(out.end(), b, b + pw);
  }
}

template <class W>
bool kswitch_seeded(const KSwitchKey& k, const SaveOptions& o, const std::vector<W>& host,
                    const char* what) {
  const Context& ctx = *k.context();
  return decide_seeded(o, k.uniform_seed(), true, [&] {
    // Sampled or loaded from the seed and not writable since: no need to expand it again (at
    // N = 2^16 the expansion of a bootstrapping key set is most of its saving time).
    if (k.seed_known_to_match()) return true;
    std::vector<std::size_t> offsets;
    for (std::size_t j = 0; j < k.dnum(); ++j) offsets.push_back((2 * j + 1) * k.poly_words());
    return seed_still_matches(ctx, k.device(), *k.uniform_seed(),
                              ctx.key_switch(k.level()).base_qp, false, host.data(), offsets,
                              k.limb_addresses());
  }, what);
}

template <class W>
void append_kswitch_b(const KSwitchKey& k, std::vector<W>& out) {
  const std::size_t pw = k.poly_words();
  for (std::size_t j = 0; j < k.dnum(); ++j) {
    const std::size_t at = out.size();
    out.resize(at + pw);
    backend::copy(Device::cpu(), out.data() + at, k.device(), k.template b<W>(j), pw * sizeof(W));
  }
}

template void append_kswitch_b<u64>(const KSwitchKey&, std::vector<u64>&);
template void append_kswitch_b<std::uint32_t>(const KSwitchKey&, std::vector<std::uint32_t>&);
template void append_kswitch_seeded<u64>(const KSwitchKey&, const std::vector<u64>&,
                                         std::vector<u64>&);
template void append_kswitch_seeded<std::uint32_t>(const KSwitchKey&,
                                                   const std::vector<std::uint32_t>&,
                                                   std::vector<std::uint32_t>&);
template bool kswitch_seeded<u64>(const KSwitchKey&, const SaveOptions&, const std::vector<u64>&,
                                  const char*);
template bool kswitch_seeded<std::uint32_t>(const KSwitchKey&, const SaveOptions&,
                                            const std::vector<std::uint32_t>&, const char*);

// Checks that the object is initialized and starts its encoding; every object's descriptor
// begins with N (the loader's first shape check).
Encoded start(ObjectType t, const ContextPtr& ctx, const char* what, u64 key_id) {
  if (!ctx) throw InvalidArgument(std::string(what) + ": is empty (not initialized)");
  Encoded e{t, ctx->scheme(), ctx->parameter_hash(), false, {}, {}, false, {}};
  ByteWriter w(e.descriptor);
  w.u64(ctx->n());
  if (key_id) {  // key-set identity (rlwe/checks.h): flag bit 1, then the id after N
    e.key_set = true;
    w.u64(key_id);
  }
  return e;
}

}  // namespace detail
using namespace detail;

Bytes save(const EncryptionParameters& p, const SaveOptions& o) {
  if (p.coeff_modulus.size() > kMaxPrimes) {
    throw InvalidArgument("coeff_modulus: at most " + std::to_string(kMaxPrimes) + " primes");
  }
  Encoded e{ObjectType::parameters, p.scheme, parameter_hash(p), false, {}, {}, false, {}};
  ByteWriter w(e.descriptor);
  w.u8(static_cast<std::uint8_t>(p.scheme));
  w.u8(static_cast<std::uint8_t>(p.mul_method));
  // Flags (formerly a reserved zero): bit 0 = CKKS rescale blocks follow the primes.
  const bool groups = !p.rescale_groups.empty();
  if (p.rescale_groups.size() > kMaxPrimes) {
    throw InvalidArgument("rescale_groups: at most " + std::to_string(kMaxPrimes) + " blocks");
  }
  w.u16(groups ? 1 : 0);
  w.u32(static_cast<std::uint32_t>(p.coeff_modulus.size()));
  w.u64(p.poly_modulus_degree);
  w.u64(p.special_primes);
  w.u64(p.alpha);
  w.u64(p.plain_modulus);
  for (u64 q : p.coeff_modulus) w.u64(q);
  if (groups) {
    w.u32(static_cast<std::uint32_t>(p.rescale_groups.size()));
    for (std::size_t g : p.rescale_groups) w.u32(static_cast<std::uint32_t>(g));
  }
  return frame(e, o);
}

Bytes save(const Plaintext& pt, const SaveOptions& o) {
  Encoded e = start(ObjectType::plaintext, pt.context(), "plain");
  ByteWriter w(e.descriptor);
  w.u32(static_cast<std::uint32_t>(pt.level()));
  w.u8(pt.is_ntt_form() ? 1 : 0);
  w.u8(0);
  w.u16(0);
  w.f64(pt.scale());
  e.body = pt.buffer().to_host();
  return frame(e, o);
}

Bytes save(const Ciphertext& ct, const SaveOptions& o) { return save(ct, o, CiphertextInfo{}); }

Bytes save(const Ciphertext& ct, const SaveOptions& o, const CiphertextInfo& info) {
  Encoded e = start(ObjectType::ciphertext, ct.context(), "encrypted", ct.key_id());
  if (info.recorded) {
    const bool ckks = e.scheme == SchemeType::ckks;
    const std::size_t slots = ckks ? ct.context()->n() / 2 : ct.context()->n();
    if (info.length > slots) {
      throw InvalidArgument("length: expected at most " + std::to_string(slots) + " slots, got " +
                            std::to_string(info.length));
    }
    if (info.complex_values && !ckks) {
      throw InvalidArgument("complex_values: only CKKS ciphertexts hold complex values");
    }
  }
  const Context& ctx = *ct.context();
  const std::size_t pw = ct.poly_words();
  // The words as stored (4-byte words are not widened): one host copy, then the body.
  with_word_type(ct.buffer(), [&](auto word) {
    using W = decltype(word);
    std::vector<W> host = host_words<W>(ct.buffer());
    check_not_transparent_words(host.data(), ct.size(), pw, "encrypted");
    e.seeded = decide_seeded(o, ct.uniform_seed(), ct.size() == 2, [&] {
      return seed_still_matches(ctx, ct.device(), *ct.uniform_seed(), ctx.base_q(ct.level()),
                                !ct.is_ntt_form(), host.data(), {pw});
    }, "ciphertext");
    if (e.seeded) host.resize(pw);  // c0 only
    set_body(e, std::move(host));
  });
  ByteWriter w(e.descriptor);
  w.u32(static_cast<std::uint32_t>(ct.size()));
  w.u32(static_cast<std::uint32_t>(ct.level()));
  w.u8(ct.is_ntt_form() ? 1 : 0);
  // The pythonic record (CiphertextInfo): flags, reserved, length; zeros when not recorded.
  w.u8(static_cast<std::uint8_t>(info.recorded ? (1 | (info.complex_values ? 2 : 0)) : 0));
  w.u16(0);
  w.u32(info.recorded ? info.length : 0);
  w.f64(ct.scale());
  w.u64(ct.correction_factor());
  if (e.seeded) write_seed(w, *ct.uniform_seed());
  return frame(e, o);
}

Bytes save(const SecretKey& sk, const SaveOptions& o) {
  Encoded e = start(ObjectType::secret_key, sk.context(), "secret_key", sk.key_id());
  ByteWriter(e.descriptor).u32(static_cast<std::uint32_t>(sk.context()->base_qp_full().size()));
  e.body = sk.buffer().to_host();
  return frame(e, o);
}

Bytes save(const PublicKey& pk, const SaveOptions& o) {
  Encoded e = start(ObjectType::public_key, pk.context(), "public_key", pk.key_id());
  const Context& ctx = *pk.context();
  const std::size_t pw = ctx.base_qp_full().size() * ctx.n();
  with_word_type(pk.buffer(), [&](auto word) {
    using W = decltype(word);
    std::vector<W> host = host_words<W>(pk.buffer());
    e.seeded = decide_seeded(o, pk.uniform_seed(), true, [&] {
      return seed_still_matches(ctx, pk.device(), *pk.uniform_seed(), ctx.base_qp_full(), false,
                                host.data(), {pw});
    }, "public key");
    if (e.seeded) host.resize(pw);  // b only
    set_body(e, std::move(host));
  });
  ByteWriter w(e.descriptor);
  w.u32(static_cast<std::uint32_t>(ctx.base_qp_full().size()));
  if (e.seeded) write_seed(w, *pk.uniform_seed());
  return frame(e, o);
}

Bytes save(const RelinKeys& rk, const SaveOptions& o) {
  Encoded e = start(ObjectType::relin_keys, rk.context(), "relin_keys", rk.key_id());
  if (rk.key().level() != rk.context()->max_level()) {
    throw InvalidArgument("relin_keys: a relinearization key serves every level; this one "
                          "stops at level " + std::to_string(rk.key().level()));
  }
  // A compact key is written as it is (its b_j and seed), or expanded when seeding is refused.
  const std::optional<KSwitchKey> expanded =
      rk.key().compact() && o.seeded == Seeding::never
          ? std::optional<KSwitchKey>(expand_compact_key(rk.key()))
          : std::nullopt;
  const KSwitchKey& k = expanded ? *expanded : rk.key();
  const Context& ctx = *k.context();
  // The words as stored (4-byte words are not widened): one host copy, then the body.
  with_word_type(k.buffer(), [&](auto word) {
    using W = decltype(word);
    if (k.compact()) {
      e.seeded = e.compact = true;
      std::vector<W> body;
      body.reserve(k.dnum() * k.poly_words());
      append_kswitch_b(k, body);
      return set_body(e, std::move(body));
    }
    if (o.seeded != Seeding::never && k.seed_known_to_match()) {  // only the b_j are read
      e.seeded = true;
      std::vector<W> body;
      body.reserve(k.dnum() * k.poly_words());
      append_kswitch_b(k, body);
      return set_body(e, std::move(body));
    }
    std::vector<W> host = host_words<W>(k.buffer());
    e.seeded = kswitch_seeded(k, o, host, "relinearization key");
    if (!e.seeded) return set_body(e, std::move(host));
    std::vector<W> body;
    body.reserve(k.dnum() * k.poly_words());
    append_kswitch_seeded(k, host, body);
    set_body(e, std::move(body));
  });
  ByteWriter w(e.descriptor);
  w.u32(static_cast<std::uint32_t>(k.dnum()));
  w.u32(static_cast<std::uint32_t>(ctx.base_qp_full().size()));
  if (e.seeded) write_seed(w, *k.uniform_seed());
  return frame(e, o);
}

namespace {

// The body of a Galois key set in words W: each key's b_j polynomials when every key still
// matches its seed (`seeded` comes back true), else every key whole. One key's host copy at a
// time besides the body, each allocated once: a bootstrapping key set is gigabytes, and every
// fresh allocation is paid again in page faults.
template <class W>
std::vector<W> galois_body(const GaloisKeys& gk, const SaveOptions& o, bool& seeded) {
  std::size_t words = 0;
  for (const auto& [elt, k] : gk.keys()) words += k.buffer().size();
  std::vector<W> body;
  seeded = o.seeded != Seeding::never && !gk.keys().empty();
  std::vector<W> host;  // one key's words, the same allocation for every key
  if (!gk.keys().empty() && gk.keys().begin()->second.compact()) {  // every key (insert's rule)
    if (seeded) {  // as they are: the b_j (and the seeds, in the descriptor)
      body.reserve(words);
      for (const auto& [elt, k] : gk.keys()) append_kswitch_b(k, body);
      return body;
    }
    body.reserve(2 * words);  // expanded, one key at a time
    for (const auto& [elt, k] : gk.keys()) {
      host_words_into(expand_compact_key(k).buffer(), host);
      body.insert(body.end(), host.begin(), host.end());
    }
    return body;
  }
  if (seeded) {
    body.reserve(words / 2);
    for (const auto& [elt, k] : gk.keys()) {
      if (k.seed_known_to_match()) {  // only its b_j are read, straight into the body
        append_kswitch_b(k, body);
        continue;
      }
      host_words_into(k.buffer(), host);
      // `automatic` gives up at the first key that cannot be seeded; `always` throws there.
      if (!kswitch_seeded(k, o, host, "Galois key")) {
        seeded = false;
        break;
      }
      append_kswitch_seeded(k, host, body);
    }
    if (seeded) return body;
    body = std::vector<W>();
  }
  body.reserve(words);
  for (const auto& [elt, k] : gk.keys()) {
    host_words_into(k.buffer(), host);
    body.insert(body.end(), host.begin(), host.end());
  }
  return body;
}

// Whether a Galois key set needs a descriptor per key (kFlagPerKey): a key below the top level
// (KSwitchKey::level), or compact and full keys in one set.
bool galois_per_key(const GaloisKeys& gk) {
  const std::size_t top = gk.context()->max_level();
  bool compact = false, full = false;
  for (const auto& [elt, k] : gk.keys()) {
    if (k.level() != top) return true;
    (k.compact() ? compact : full) = true;
  }
  return compact && full;
}

// The body of a set with per-key descriptors: each key in its own form, appended to `forms`
// (kKeySeeded, kKeyCompact): a compact key as it is (expanded under Seeding::never), a full
// key seeded where its seed still matches (as galois_body decides for a whole set).
template <class W>
std::vector<W> galois_body_per_key(const GaloisKeys& gk, const SaveOptions& o,
                                   std::vector<std::uint8_t>& forms) {
  std::vector<W> body, host;
  std::size_t words = 0;
  for (const auto& [elt, k] : gk.keys()) words += k.buffer().size();
  body.reserve(words);
  const bool may_seed = o.seeded != Seeding::never;
  for (const auto& [elt, k] : gk.keys()) {
    if (k.compact() && may_seed) {
      forms.push_back(kKeySeeded | kKeyCompact);
      append_kswitch_b(k, body);
      continue;
    }
    if (k.compact()) {
      forms.push_back(0);
      host_words_into(expand_compact_key(k).buffer(), host);
      body.insert(body.end(), host.begin(), host.end());
      continue;
    }
    if (may_seed && k.seed_known_to_match()) {
      forms.push_back(kKeySeeded);
      append_kswitch_b(k, body);
      continue;
    }
    host_words_into(k.buffer(), host);
    if (kswitch_seeded(k, o, host, "Galois key")) {  // `always` throws when it cannot
      forms.push_back(kKeySeeded);
      append_kswitch_seeded(k, host, body);
    } else {
      forms.push_back(0);
      body.insert(body.end(), host.begin(), host.end());
    }
  }
  return body;
}

}  // namespace

Bytes save(const GaloisKeys& gk, const SaveOptions& o) {
  Encoded e = start(ObjectType::galois_keys, gk.context(), "galois_keys", gk.key_id());
  const Context& ctx = *gk.context();
  const std::size_t limbs = ctx.base_qp_full().size();
  const std::size_t dnum = ctx.dnum();
  if (galois_per_key(gk)) {  // a level and a form per key
    e.per_key = true;
    std::vector<std::uint8_t> forms;
    with_word_type(gk.keys().begin()->second.buffer(), [&](auto word) {
      set_body(e, galois_body_per_key<decltype(word)>(gk, o, forms));
    });
    ByteWriter w(e.descriptor);
    w.u32(static_cast<std::uint32_t>(gk.keys().size()));
    w.u32(static_cast<std::uint32_t>(dnum));
    w.u32(static_cast<std::uint32_t>(limbs));
    std::size_t i = 0;
    for (const auto& [elt, k] : gk.keys()) {
      w.u32(elt);
      w.u32(static_cast<std::uint32_t>(k.level()));
      w.u8(forms[i]);
      if (forms[i++] & kKeySeeded) write_seed(w, *k.uniform_seed());
    }
    return frame(e, o);
  }
  // Seeded only if every key can be (one flag for the object). The words as stored: 4-byte
  // words are not widened (all keys of a set share the context's word size).
  if (!gk.keys().empty()) {
    with_word_type(gk.keys().begin()->second.buffer(), [&](auto word) {
      set_body(e, galois_body<decltype(word)>(gk, o, e.seeded));
    });
    e.compact = e.seeded && gk.keys().begin()->second.compact();
  }
  ByteWriter w(e.descriptor);
  w.u32(static_cast<std::uint32_t>(gk.keys().size()));
  w.u32(static_cast<std::uint32_t>(dnum));
  w.u32(static_cast<std::uint32_t>(limbs));
  for (const auto& [elt, k] : gk.keys()) {
    w.u32(elt);
    if (e.seeded) write_seed(w, *k.uniform_seed());
  }
  return frame(e, o);
}

// ---- reading --------------------------------------------------------------------------------

HeaderInfo read_header(ByteView in) {
  ByteReader r(in, "header");
  ByteView magic = r.take("magic", 4);
  if (std::memcmp(magic.data, kMagic, 4) != 0) {
    r.fail("magic", "not a Veil object (expected the bytes 'VEIL')");
  }
  const std::uint16_t version = r.u16("format_version");
  if (version != kVersion) {
    r.fail("format_version", std::to_string(version) + " is not supported (this build reads " +
                                 std::to_string(kVersion) + ")");
  }
  HeaderInfo h;
  const std::uint8_t type = r.u8("object_type");
  if (type < 1 || type > kLastObjectType) {
    r.fail("object_type", "unknown value " + std::to_string(type));
  }
  h.type = static_cast<ObjectType>(type);
  const std::uint8_t scheme = r.u8("scheme");
  if (scheme > 2) r.fail("scheme", "unknown value " + std::to_string(scheme));
  h.scheme = static_cast<SchemeType>(scheme);
  const std::uint8_t comp = r.u8("compression");
  if (comp != static_cast<std::uint8_t>(Compression::none) &&
      comp != static_cast<std::uint8_t>(Compression::zstd)) {
    r.fail("compression", "unknown value " + std::to_string(comp) + " (expected 0 none or 2 zstd)");
  }
  h.compression = static_cast<Compression>(comp);
  const std::uint8_t flags = r.u8("flags");
  if (flags & ~(kFlagSeeded | kFlagKeySet | kFlagWords32 | kFlagCompact | kFlagPerKey)) {
    r.fail("flags", "unknown bits set");
  }
  h.seeded = flags & kFlagSeeded;
  h.compact = flags & kFlagCompact;
  h.per_key = flags & kFlagPerKey;
  if (h.per_key && type != static_cast<std::uint8_t>(ObjectType::galois_keys)) {
    r.fail("flags", "only Galois keys have a descriptor per key");
  }
  if (h.per_key && (h.seeded || h.compact)) {
    r.fail("flags", "with a descriptor per key the forms are per key (bits 0 and 3 clear)");
  }
  if (h.compact && !h.seeded) r.fail("flags", "compact keys are always seeded");
  if (h.compact && type != static_cast<std::uint8_t>(ObjectType::relin_keys) &&
      type != static_cast<std::uint8_t>(ObjectType::galois_keys)) {
    r.fail("flags", "only relinearization and Galois keys are compact");
  }
  h.key_set = flags & kFlagKeySet;
  h.words32 = flags & kFlagWords32;
  if (r.u16("reserved") != 0) r.fail("reserved", "must be zero");
  h.crc32 = r.u32("crc32");
  h.parameter_hash = r.u64("parameter_hash");
  const std::uint32_t desc = r.u32("descriptor_size");
  h.descriptor_size = desc;
  if (desc > kMaxDescriptor) r.fail("descriptor_size", "larger than " + std::to_string(kMaxDescriptor));
  if (r.u32("reserved") != 0) r.fail("reserved", "must be zero");
  h.body_size = r.u64("body_size");
  const std::uint64_t stored = r.u64("stored_size");
  if (stored > in.size || desc > in.size - kHeaderSize ||
      kHeaderSize + desc + stored != in.size) {
    r.fail("stored_size", "header, descriptor (" + std::to_string(desc) + ") and body (" +
                              std::to_string(stored) + ") do not add up to the " +
                              std::to_string(in.size) + " bytes given");
  }
  if (h.compression == Compression::none && stored != h.body_size) {
    r.fail("body_size", "uncompressed body of " + std::to_string(h.body_size) + " bytes but " +
                            std::to_string(stored) + " stored");
  }
  h.total_size = in.size;
  return h;
}

namespace detail {

Framed open(ByteView in, ObjectType want, const Context* ctx) {
  Framed f{read_header(in), {}, {}};
  const std::size_t desc = f.h.descriptor_size;
  f.descriptor = in.sub(kHeaderSize, desc);
  f.stored = in.sub(kHeaderSize + desc, in.size - kHeaderSize - desc);
  if (f.h.type != want) {
    throw InvalidArgument("object_type: expected " + to_string(want) + ", got " + to_string(f.h.type));
  }
  if (ctx) {
    if (f.h.scheme != ctx->scheme()) {
      throw InvalidArgument("scheme: the object is " + veil::to_string(f.h.scheme) +
                            " but the context is " + veil::to_string(ctx->scheme()));
    }
    if (f.h.parameter_hash != ctx->parameter_hash()) {
      throw InvalidArgument("parameter_hash: the object was saved under parameters " +
                            hex64(f.h.parameter_hash) + " but the context has " +
                            hex64(ctx->parameter_hash()));
    }
  }
  return f;
}

// Reads the body after its size was checked against the shape and the limit.
BodyWords read_body_words(const Framed& f, std::size_t words, const LoadOptions& o) {
  const std::size_t wb = f.h.words32 ? 4 : 8;  // bytes per stored word
  if (f.h.body_size != words * wb) {
    throw InvalidArgument("body_size: " + std::to_string(f.h.body_size) + " bytes, but the " +
                          to_string(f.h.type) + "'s shape needs " + std::to_string(words * wb) +
                          (f.h.words32 ? " (4-byte words)" : ""));
  }
  if (f.h.body_size > o.max_bytes) {
    throw InvalidArgument("body_size: " + std::to_string(f.h.body_size) +
                          " bytes exceeds the load limit of " + std::to_string(o.max_bytes) +
                          " (raise max_bytes to load larger objects)");
  }
  BodyWords b;
  b.words_ = words;
  b.word_bytes_ = wb;
  if (f.h.compression == Compression::zstd) {
    b.owned_.resize(words * wb);
    zstd_decompress_exact(f.stored, b.owned_.data(), words * wb, "body");
    b.data_ = b.owned_.data();
  } else {
    b.data_ = f.stored.data;
  }
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // fuzzing skips it to reach the checks behind
  if (crc32(ByteView(b.data_, words * wb), crc32(f.descriptor)) != f.h.crc32) {
    throw InvalidArgument("crc32: checksum mismatch (the bytes were corrupted)");
  }
#endif
  return b;
}

namespace {

// Stored words [first, first + count) of `b` as u64.
std::vector<u64> widened(const BodyWords& b, std::size_t first, std::size_t count) {
  std::vector<u64> wide(count);
  const std::uint8_t* p = b.bytes(first);
  if (b.word_bytes() == 8) {
    if (count) std::memcpy(wide.data(), p, count * 8);
    return wide;
  }
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t v;
    std::memcpy(&v, p + 4 * i, 4);
    wide[i] = v;
  }
  return wide;
}

}  // namespace

std::vector<u64> read_body(const Framed& f, std::size_t words, const LoadOptions& o) {
  return widened(read_body_words(f, words, o), 0, words);
}

void check_below_moduli(const BodyWords& b, std::size_t first, std::size_t polys,
                        const RnsBase& base, std::size_t n, const std::string& what) {
  io::check_below_moduli(b.bytes(first), b.word_bytes(), polys, base, n, what);
}

void copy_in(const Device& dev, WordPtr dst, const BodyWords& b, std::size_t first,
             std::size_t count) {
  if (count == 0) return;
  if (static_cast<std::size_t>(dst.word_bits()) == 8 * b.word_bytes()) {
    backend::copy(dev, dst.get(), Device::cpu(), b.bytes(first), count * b.word_bytes());
    return;
  }
  const std::vector<u64> wide = widened(b, first, count);
  copy_words_from_host(dev, dst, wide.data(), count);  // narrowed with its check, or copied
}

// The key-set id after N when the header's flag says so (0: none; a flagged 0 is malformed).
u64 read_key_id(ByteReader& r, const HeaderInfo& h) {
  if (!h.key_set) return 0;
  const u64 id = r.u64("key_set_id");
  if (id == 0) r.fail("key_set_id", "a flagged key-set id is never 0");
  return id;
}

std::uint64_t check_n(ByteReader& r, const Context& ctx) {
  const std::uint64_t n = r.u64("poly_modulus_degree");
  if (n != ctx.n()) {
    r.fail("poly_modulus_degree", "the object has N = " + std::to_string(n) +
                                      " but the context has " + std::to_string(ctx.n()));
  }
  return n;
}

std::size_t check_level(ByteReader& r, const Context& ctx) {
  const std::uint32_t level = r.u32("level");
  if (level > ctx.max_level()) {
    r.fail("level", std::to_string(level) + " exceeds the context's maximum level " +
                        std::to_string(ctx.max_level()));
  }
  return level;
}

void check_limbs(ByteReader& r, std::uint32_t got, std::size_t want) {
  if (got != want) {
    r.fail("limbs", std::to_string(got) + " RNS limbs, the context's Q ∪ P has " + std::to_string(want));
  }
}

void copy_in(const Device& dev, WordPtr dst, const u64* src, std::size_t words) {
  copy_words_from_host(dev, dst, src, words);
}

// Builds a key-switching key on `dev` from body words (b_j, or (b_j, a_j) when not seeded).
// compact: the body holds the b_j of a compact key (kFlagCompact), kept as they are.
KSwitchKey build_kswitch(const ContextPtr& ctx, const Device& dev, std::size_t dnum,
                         const BodyWords& body, std::size_t first,
                         const std::optional<UniformSeed>& seed, bool compact,
                         std::size_t level) {
  KSwitchKey k(ctx, dev, dnum, compact, level);
  const std::size_t pw = k.poly_words();
  if (compact) {
    copy_in(dev, k.data(), body, first, dnum * pw);
    k.set_uniform_seed(seed);
    k.note_seed_matches();
  } else if (!seed) {
    copy_in(dev, k.data(), body, first, 2 * dnum * pw);
  } else {
    for (std::size_t j = 0; j < dnum; ++j) {
      copy_in(dev, k.data() + 2 * j * pw, body, first + j * pw, pw);
      expand_uniform(*ctx, dev, *seed, j, ctx->key_switch(k.level()).base_qp, false,
                     k.data() + (2 * j + 1) * pw, k.limb_addresses());
    }
    k.set_uniform_seed(seed);
    k.note_seed_matches();  // every a_j was just expanded from the seed
  }
  return k;
}

}  // namespace detail
using namespace detail;

EncryptionParameters load_parameters(ByteView in, const LoadOptions& o) {
  Framed f = open(in, ObjectType::parameters, nullptr);
  ByteReader r(f.descriptor, "parameters");
  EncryptionParameters p;
  const std::uint8_t scheme = r.u8("scheme");
  if (scheme > 2 || scheme != static_cast<std::uint8_t>(f.h.scheme)) {
    r.fail("scheme", "does not match the header");
  }
  p.scheme = static_cast<SchemeType>(scheme);
  const std::uint8_t mul = r.u8("mul_method");
  if (mul > 1) r.fail("mul_method", "unknown value " + std::to_string(mul));
  p.mul_method = static_cast<MulMethod>(mul);
  const std::uint16_t flags = r.u16("flags");
  if (flags > 1) r.fail("flags", "unknown bits set");
  const std::uint32_t count = r.u32("coeff_modulus_count");
  if (count == 0 || count > kMaxPrimes) {
    r.fail("coeff_modulus_count", "expected 1.." + std::to_string(kMaxPrimes) + ", got " + std::to_string(count));
  }
  p.poly_modulus_degree = r.u64("poly_modulus_degree");
  if (!is_power_of_two(p.poly_modulus_degree) || p.poly_modulus_degree < 1024 ||
      p.poly_modulus_degree > 131072) {
    r.fail("poly_modulus_degree", "expected a power of two in 1024..131072");
  }
  p.special_primes = r.u64("special_primes");
  if (p.special_primes >= count) r.fail("special_primes", "leaves no Q prime");
  p.alpha = r.u64("alpha");
  if (p.alpha > count) r.fail("alpha", "larger than the number of primes");
  p.plain_modulus = r.u64("plain_modulus");
  p.coeff_modulus.resize(count);
  for (auto& q : p.coeff_modulus) {
    q = r.u64("coeff_modulus");
    if (q < 2 || (q >> 61)) r.fail("coeff_modulus", "a prime outside 2..2^61");
  }
  if (flags & 1) {
    const std::uint32_t blocks = r.u32("rescale_groups_count");
    if (blocks == 0 || blocks > count) {
      r.fail("rescale_groups_count", "expected 1.." + std::to_string(count));
    }
    p.rescale_groups.resize(blocks);
    for (auto& g : p.rescale_groups) {
      g = r.u32("rescale_groups");
      if (g == 0 || g > count) r.fail("rescale_groups", "a block size outside 1.." + std::to_string(count));
    }
  }
  r.expect_end();
  read_body(f, 0, o);
  if (parameter_hash(p) != f.h.parameter_hash) {
    throw InvalidArgument("parameter_hash: " + hex64(f.h.parameter_hash) +
                          " does not match the parameters read (" + hex64(parameter_hash(p)) + ")");
  }
  return p;
}

Plaintext load_plaintext(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  Framed f = open(in, ObjectType::plaintext, ctx.get());
  ByteReader r(f.descriptor, "plaintext");
  check_n(r, *ctx);
  if (f.h.key_set) r.fail("flags", "a plaintext belongs to no key set");
  const std::size_t level = check_level(r, *ctx);
  const std::uint8_t ntt = r.u8("is_ntt_form");
  if (ntt > 1) r.fail("is_ntt_form", "expected 0 or 1");
  r.u8("reserved");
  r.u16("reserved");
  const double scale = r.f64("scale");
  r.expect_end();
  if (ctx->scheme() == SchemeType::ckks) {
    if (!ntt) r.fail("is_ntt_form", "CKKS plaintexts are in NTT form");
    check_scale(scale, "scale");
  } else if (scale != 1.0) {
    r.fail("scale", "BFV/BGV plaintexts have scale 1");
  }
  const std::size_t n = ctx->n();
  const std::size_t words = ntt ? (level + 1) * n : n;
  Plaintext pt;
  if (ntt) {
    const BodyWords body = read_body_words(f, words, o);
    check_below_moduli(body, 0, 1, ctx->base_q(level), n, "plaintext");
    pt = Plaintext(ctx, dev, words, level, ntt);
    copy_in(dev, pt.data(), body, 0, words);
  } else {
    const std::vector<u64> body = read_body(f, words, o);
    check_below_modulus(body.data(), n, ctx->plain_modulus(), "plaintext");
    pt = Plaintext(ctx, dev, words, level, ntt);
    copy_in(dev, pt.data(), body.data(), words);
  }
  pt.set_scale(scale);
  return pt;
}

namespace {

// The ciphertext descriptor's record after is_ntt_form (CiphertextInfo): u8 flags, u16 reserved,
// u32 length. Bytes written before the record existed hold zeros there (not recorded).
CiphertextInfo read_record(ByteReader& r, SchemeType scheme, std::uint64_t n) {
  const std::uint8_t flags = r.u8("value_flags");
  if (flags & ~3u) r.fail("value_flags", "unknown bits set");
  if (r.u16("reserved") != 0) r.fail("reserved", "must be zero");
  CiphertextInfo info;
  info.recorded = flags & 1;
  info.complex_values = flags & 2;
  info.length = r.u32("length");
  if (!info.recorded && (flags || info.length)) {
    r.fail("value_flags", "a length or complex flag without the recorded bit");
  }
  if (info.complex_values && scheme != SchemeType::ckks) {
    r.fail("value_flags", "only CKKS ciphertexts hold complex values");
  }
  const std::uint64_t slots = scheme == SchemeType::ckks ? n / 2 : n;
  if (info.length > slots) {
    r.fail("length", "expected at most " + std::to_string(slots) + " slots, got " +
                         std::to_string(info.length));
  }
  return info;
}

}  // namespace

CiphertextInfo read_ciphertext_info(ByteView in) {
  Framed f = open(in, ObjectType::ciphertext, nullptr);
  ByteReader r(f.descriptor, "ciphertext");
  const std::uint64_t n = r.u64("poly_modulus_degree");
  read_key_id(r, f.h);
  r.u32("size");
  r.u32("level");
  r.u8("is_ntt_form");
  return read_record(r, f.h.scheme, n);
}

Ciphertext load_ciphertext(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  Framed f = open(in, ObjectType::ciphertext, ctx.get());
  ByteReader r(f.descriptor, "ciphertext");
  check_n(r, *ctx);
  const u64 key_id = read_key_id(r, f.h);
  const std::uint32_t size = r.u32("size");
  if (size < 2 || size > kMaxCiphertextSize) {
    r.fail("size", "expected 2.." + std::to_string(kMaxCiphertextSize) + " polynomials, got " + std::to_string(size));
  }
  const std::size_t level = check_level(r, *ctx);
  const std::uint8_t ntt = r.u8("is_ntt_form");
  if (ntt > 1) r.fail("is_ntt_form", "expected 0 or 1");
  // BFV ciphertexts are in coefficient form, or in NTT form after Evaluator::transform_to_ntt;
  // BGV and CKKS ciphertexts are always in NTT form.
  if (ctx->scheme() != SchemeType::bfv && ntt != 1) {
    r.fail("is_ntt_form", std::string(veil::to_string(ctx->scheme())) +
                              " ciphertexts are in NTT form");
  }
  read_record(r, ctx->scheme(), ctx->n());
  const double scale = r.f64("scale");
  const std::uint64_t cf = r.u64("correction_factor");
  if (ctx->scheme() == SchemeType::ckks) {
    check_scale(scale, "scale");
  } else if (scale != 1.0) {
    r.fail("scale", "BFV/BGV ciphertexts have scale 1");
  }
  if (ctx->scheme() == SchemeType::bgv) {
    const u64 t = ctx->plain_modulus();
    if (cf == 0 || cf >= t || std::gcd(cf, t) != 1) {
      r.fail("correction_factor", "expected a unit modulo the plain modulus");
    }
  } else if (cf != 1) {
    r.fail("correction_factor", "must be 1 outside BGV");
  }
  std::optional<UniformSeed> seed;
  if (f.h.seeded) {
    if (size != 2) r.fail("size", "a seeded ciphertext has 2 polynomials");
    if (ctx->scheme() == SchemeType::bfv && ntt) {
      r.fail("is_ntt_form", "a seeded BFV ciphertext is in coefficient form");
    }
    seed = read_seed(r);
  }
  r.expect_end();
  const std::size_t n = ctx->n(), pw = (level + 1) * n;
  const BodyWords body = read_body_words(f, (seed ? 1 : size) * pw, o);
  const RnsBase& q = ctx->base_q(level);
  check_below_moduli(body, 0, seed ? 1 : size, q, n, "ciphertext");
  Ciphertext ct(ctx, dev, size, level, ntt == 1);
  copy_in(dev, ct.data(), body, 0, body.size());
  if (seed) {
    expand_uniform(*ctx, dev, *seed, 0, q, ntt == 0, ct.poly(1));
    ct.set_uniform_seed(seed);
  }
  ct.set_scale(scale);
  ct.set_correction_factor(cf);
  ct.set_key_id(key_id);
  return ct;
}

SecretKey load_secret_key(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  Framed f = open(in, ObjectType::secret_key, ctx.get());
  if (f.h.seeded) throw InvalidArgument("flags: a secret key is never seeded");
  ByteReader r(f.descriptor, "secret key");
  check_n(r, *ctx);
  const u64 key_id = read_key_id(r, f.h);
  const RnsBase& qp = ctx->base_qp_full();
  check_limbs(r, r.u32("limbs"), qp.size());
  r.expect_end();
  const BodyWords body = read_body_words(f, qp.size() * ctx->n(), o);
  check_below_moduli(body, 0, 1, qp, ctx->n(), "secret key");
  SecretKey sk(ctx, dev, body.size());
  copy_in(dev, sk.data(), body, 0, body.size());
  const u64 actual = key_set_id(sk);
  if (key_id && key_id != actual) {
    throw InvalidArgument("key_set_id: does not match the secret key's words");
  }
  sk.set_key_id(actual);
  return sk;
}

PublicKey load_public_key(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  Framed f = open(in, ObjectType::public_key, ctx.get());
  ByteReader r(f.descriptor, "public key");
  check_n(r, *ctx);
  const u64 key_id = read_key_id(r, f.h);
  const RnsBase& qp = ctx->base_qp_full();
  check_limbs(r, r.u32("limbs"), qp.size());
  std::optional<UniformSeed> seed;
  if (f.h.seeded) seed = read_seed(r);
  r.expect_end();
  const std::size_t pw = qp.size() * ctx->n();
  const BodyWords body = read_body_words(f, (seed ? 1 : 2) * pw, o);
  check_below_moduli(body, 0, seed ? 1 : 2, qp, ctx->n(), "public key");
  PublicKey pk(ctx, dev, 2 * pw);
  copy_in(dev, pk.data(), body, 0, body.size());
  if (seed) {
    expand_uniform(*ctx, dev, *seed, 0, qp, false, pk.data() + pw);
    pk.set_uniform_seed(seed);
  }
  pk.set_key_id(key_id);
  return pk;
}

namespace detail {
std::size_t expected_dnum(const Context& ctx) {
  if (ctx.num_p() == 0) {
    throw InvalidArgument("special_primes: the context has no special prime, so no key-switching keys");
  }
  return ctx.dnum();
}

void check_dnum(ByteReader& r, std::uint32_t got, std::size_t want) {
  if (got != want) {
    r.fail("dnum", std::to_string(got) + " key-switching digits, the context's alpha gives " +
                       std::to_string(want));
  }
}
}  // namespace detail
using namespace detail;

RelinKeys load_relin_keys(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  Framed f = open(in, ObjectType::relin_keys, ctx.get());
  ByteReader r(f.descriptor, "relinearization keys");
  check_n(r, *ctx);
  const u64 key_id = read_key_id(r, f.h);
  const std::size_t dnum = expected_dnum(*ctx);
  check_dnum(r, r.u32("dnum"), dnum);
  const RnsBase& qp = ctx->base_qp_full();
  check_limbs(r, r.u32("limbs"), qp.size());
  std::optional<UniformSeed> seed;
  if (f.h.seeded) seed = read_seed(r);
  r.expect_end();
  const std::size_t pw = qp.size() * ctx->n();
  const std::size_t polys = dnum * (seed ? 1 : 2);
  const BodyWords body = read_body_words(f, polys * pw, o);
  check_below_moduli(body, 0, polys, qp, ctx->n(), "relinearization keys");
  KSwitchKey k = build_kswitch(ctx, dev, dnum, body, 0, seed, f.h.compact, ctx->max_level());
  k.set_key_id(key_id);
  return RelinKeys(std::move(k));
}

GaloisKeys load_galois_keys(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  Framed f = open(in, ObjectType::galois_keys, ctx.get());
  ByteReader r(f.descriptor, "Galois keys");
  check_n(r, *ctx);
  const u64 key_id = read_key_id(r, f.h);
  const std::uint32_t count = r.u32("count");
  if (count > ctx->n()) {
    r.fail("count", std::to_string(count) + " keys, but only N = " + std::to_string(ctx->n()) +
                        " Galois elements exist");
  }
  const std::uint32_t dnum_read = r.u32("dnum");
  const std::uint32_t limbs = r.u32("limbs");
  const RnsBase& qp = ctx->base_qp_full();
  std::size_t dnum = 0;
  if (count) {
    dnum = expected_dnum(*ctx);
    check_dnum(r, dnum_read, dnum);
    check_limbs(r, limbs, qp.size());
  }
  // Each key's level and form: from its own descriptor (kFlagPerKey), else the set's.
  struct KeyShape {
    u32 elt;
    std::size_t level;
    std::uint8_t form;
    std::optional<UniformSeed> seed;
  };
  std::vector<KeyShape> keys(count);
  const std::uint8_t set_form = static_cast<std::uint8_t>((f.h.seeded ? kKeySeeded : 0) |
                                                          (f.h.compact ? kKeyCompact : 0));
  const std::uint64_t two_n = 2 * ctx->n();
  for (std::uint32_t i = 0; i < count; ++i) {
    KeyShape& ks = keys[i];
    ks.elt = r.u32("galois_elt");
    if (ks.elt % 2 == 0 || ks.elt >= two_n || ks.elt == 1) {
      r.fail("galois_elt", std::to_string(ks.elt) + " is not an odd element in 3..2N-1");
    }
    if (i && ks.elt <= keys[i - 1].elt) {
      r.fail("galois_elt", "elements must be distinct and increasing");
    }
    ks.level = ctx->max_level();
    ks.form = set_form;
    if (f.h.per_key) {
      ks.level = check_level(r, *ctx);
      ks.form = r.u8("form");
      if (ks.form & ~(kKeySeeded | kKeyCompact)) r.fail("form", "unknown bits set");
      if ((ks.form & kKeyCompact) && !(ks.form & kKeySeeded)) {
        r.fail("form", "a compact key is always seeded");
      }
    }
    if (ks.form & kKeySeeded) ks.seed = read_seed(r);
  }
  r.expect_end();
  // Key i: ceil((l + 1) / alpha) digits of one (seeded) or two polynomials over l + 1 + k limbs.
  auto polys_of = [&](const KeyShape& ks) {
    return ctx->key_switch(ks.level).dnum * ((ks.form & kKeySeeded) ? 1 : 2);
  };
  auto poly_words_of = [&](const KeyShape& ks) {
    return (ks.level + 1 + ctx->num_p()) * ctx->n();
  };
  std::size_t total = 0;
  for (const KeyShape& ks : keys) total += polys_of(ks) * poly_words_of(ks);
  const BodyWords body = read_body_words(f, total, o);
  std::size_t first = 0;
  for (const KeyShape& ks : keys) {
    check_below_moduli(body, first, polys_of(ks), ctx->key_switch(ks.level).base_qp, ctx->n(),
                       "Galois keys");
    first += polys_of(ks) * poly_words_of(ks);
  }
  GaloisKeys gk(ctx, dev);
  first = 0;
  for (const KeyShape& ks : keys) {
    KSwitchKey k = build_kswitch(ctx, dev, ctx->key_switch(ks.level).dnum, body, first, ks.seed,
                                 (ks.form & kKeyCompact) != 0, ks.level);
    first += polys_of(ks) * poly_words_of(ks);
    k.set_key_id(key_id);
    gk.insert(ks.elt, std::move(k));
  }
  return gk;
}

void write_file(const std::string& path, ByteView data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw RuntimeError("path: cannot open '" + path + "' for writing");
  out.write(reinterpret_cast<const char*>(data.data), static_cast<std::streamsize>(data.size));
  out.close();
  if (!out) throw RuntimeError("path: writing '" + path + "' failed");
}

Bytes read_file(const std::string& path, std::uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw RuntimeError("path: cannot open '" + path + "' for reading");
  const std::streamoff size = in.tellg();
  if (size < 0) throw RuntimeError("path: cannot tell the size of '" + path + "'");
  if (static_cast<std::uint64_t>(size) > max_bytes) {
    throw InvalidArgument("path: '" + path + "' has " + std::to_string(size) +
                          " bytes, more than the limit of " + std::to_string(max_bytes));
  }
  Bytes data(static_cast<std::size_t>(size));
  in.seekg(0);
  if (size && !in.read(reinterpret_cast<char*>(data.data()), size)) {
    throw RuntimeError("path: reading '" + path + "' failed");
  }
  return data;
}

}  // namespace veil::io
