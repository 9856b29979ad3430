#include "veil/io/seal.h"

#include <cmath>
#include <cstring>
#include <numeric>

#include "veil/io/blake2.h"
#include "veil/io/seal_internal.h"
#include "veil/io/validate.h"
#include "veil/ring/ntt.h"
#include "veil/rlwe/checks.h"

namespace veil::io::seal {

using namespace detail;

ParmsId parms_id(SchemeType scheme, std::size_t n, const std::vector<std::uint64_t>& primes,
                 std::uint64_t plain_modulus) {
  std::vector<std::uint64_t> words;
  words.reserve(primes.size() + 3);
  words.push_back(seal_scheme(scheme));
  words.push_back(n);
  words.insert(words.end(), primes.begin(), primes.end());
  words.push_back(scheme == SchemeType::ckks ? 0 : plain_modulus);
  const auto digest = blake2b_256(ByteView(reinterpret_cast<const std::uint8_t*>(words.data()),
                                           words.size() * 8));
  ParmsId id{};
  std::memcpy(id.data(), digest.data(), 32);
  return id;
}

namespace detail {

std::uint8_t seal_scheme(SchemeType s) {
  switch (s) {
    case SchemeType::bfv: return 1;
    case SchemeType::ckks: return 2;
    case SchemeType::bgv: return 3;
  }
  return 0;
}

// ---- writing ------------------------------------------------------------------------------------

void write_header(ByteWriter& w, std::uint8_t minor, Compression c, std::uint64_t size) {
  w.u16(kMagic);
  w.u8(kHeaderSize);
  w.u8(4);
  w.u8(minor);
  w.u8(static_cast<std::uint8_t>(c));
  w.u16(0);
  w.u64(size);
}

void write_parms_id(ByteWriter& w, const ParmsId& id) {
  for (std::uint64_t x : id) w.u64(x);
}

void write_dynarray(ByteWriter& w, std::uint8_t minor, const std::uint64_t* words,
                    std::size_t count) {
  write_header(w, minor, Compression::none, 24 + 8 * std::uint64_t(count));
  w.u64(count);
  w.words(words, count);
}

void write_ciphertext_object(ByteWriter& w, std::uint8_t minor, const ParmsId& id, bool ntt,
                             std::size_t size, std::size_t n, std::size_t k, double scale,
                             std::uint64_t correction, const std::uint64_t* words) {
  write_header(w, minor, Compression::none, ciphertext_object_size(size, n, k));
  write_parms_id(w, id);
  w.u8(ntt ? 1 : 0);
  w.u64(size);
  w.u64(n);
  w.u64(k);
  w.f64(scale);
  w.u64(correction);
  write_dynarray(w, minor, words, size * n * k);
}

Bytes frame(const Bytes& members, const SaveOptions& o) {
  Bytes stored;
  const Bytes* body = &members;
  if (o.compression == Compression::zlib) {
    stored = zlib_compress(members, o.level < 0 ? 6 : o.level);
    body = &stored;
  } else if (o.compression == Compression::zstd) {
    stored = zstd_compress(members, o.level < 0 ? 3 : o.level);
    body = &stored;
  }
  Bytes out;
  out.reserve(kHeaderSize + body->size());
  ByteWriter w(out);
  write_header(w, o.version_minor, o.compression, kHeaderSize + body->size());
  w.raw(body->data(), body->size());
  return out;
}

// ---- reading ------------------------------------------------------------------------------------

Header read_header(ByteReader& r, const std::string& what) {
  Header h;
  const std::uint16_t magic = r.u16("magic");
  if (magic != kMagic) r.fail("magic", "not a SEAL object (expected 0xA15E) in " + what);
  if (r.u8("header_size") != kHeaderSize) r.fail("header_size", "expected 16 in " + what);
  h.major = r.u8("version_major");
  h.minor = r.u8("version_minor");
  if (h.major != 4) {
    r.fail("version_major", "SEAL " + std::to_string(h.major) + "." + std::to_string(h.minor) +
                                " objects are not supported (Veil reads SEAL 4.x)");
  }
  const std::uint8_t c = r.u8("compr_mode");
  if (c > 2) r.fail("compr_mode", "unknown value " + std::to_string(c) + " in " + what);
  h.compression = static_cast<Compression>(c);
  r.u16("reserved");  // SEAL ignores it
  h.size = r.u64("size");
  if (h.size < kHeaderSize) r.fail("size", "smaller than the header in " + what);
  return h;
}

Members open_object(ByteView in, const std::string& what, std::uint64_t max_bytes) {
  ByteReader r(in, what);
  const Header h = read_header(r, what);
  if (h.size != in.size) {
    r.fail("size", "the header says " + std::to_string(h.size) + " bytes but " +
                       std::to_string(in.size) +
                       " were given (one object per call; seal.split separates a stream)");
  }
  const ByteView body = in.sub(kHeaderSize, in.size - kHeaderSize);
  Members m;
  if (h.compression == Compression::zlib) m.owned = zlib_decompress_bounded(body, max_bytes, what + ": body");
  if (h.compression == Compression::zstd) m.owned = zstd_decompress_bounded(body, max_bytes, what + ": body");
  m.view = h.compression == Compression::none ? body : ByteView(m.owned);
  return m;
}

Header read_nested_header(ByteReader& r, const std::string& what) {
  const Header h = read_header(r, what);
  if (h.compression != Compression::none) {
    r.fail("compr_mode", "compressed nested " + what + " (SEAL never writes one)");
  }
  if (h.size - kHeaderSize > r.remaining()) r.fail("size", "nested " + what + " runs past the end");
  return h;
}

ParmsId read_parms_id(ByteReader& r) {
  ParmsId id{};
  for (auto& x : id) x = r.u64("parms_id");
  return id;
}

std::vector<std::uint64_t> read_dynarray(ByteReader& r, const std::string& what,
                                         const std::vector<std::size_t>& allowed_counts) {
  const std::size_t start = r.position();
  const Header h = read_nested_header(r, what);
  const std::uint64_t count = r.u64("count");
  bool ok = false;
  for (std::size_t c : allowed_counts) ok = ok || count == c;
  if (!ok) {
    r.fail("count", std::to_string(count) + " coefficients do not fit the " + what +
                        "'s shape (expected " + std::to_string(allowed_counts.front()) + ")");
  }
  if (h.size != 24 + 8 * count) r.fail("size", "does not match the coefficient count of " + what);
  if (count > r.remaining() / 8) r.fail("count", "more coefficients than bytes left in " + what);
  std::vector<std::uint64_t> words(count);  // allocated only once the bytes are known present
  r.words("coefficients", words.data(), count);
  if (r.position() - start != h.size) r.fail("size", "nested " + what + " size mismatch");
  return words;
}

std::optional<std::size_t> Levels::level_of(const ParmsId& id) const {
  for (std::size_t l = 0; l < data.size(); ++l)
    if (data[l] == id) return l;
  return std::nullopt;
}

Levels levels(const Context& ctx, const char* what) {
  if (ctx.num_p() > 1 || (ctx.num_p() == 0 && ctx.num_q() > 1)) {
    throw InvalidArgument(std::string(what) + ": SEAL has exactly one special prime (the last of " +
                          "coeff_modulus, none with a single prime); this context has " +
                          std::to_string(ctx.num_p()) + " special primes and " +
                          std::to_string(ctx.num_q()) + " Q primes");
  }
  Levels lv;
  const auto& all = ctx.params().coeff_modulus;
  for (std::size_t l = 0; l < ctx.num_q(); ++l) {
    lv.data.push_back(parms_id(ctx.scheme(), ctx.n(),
                               std::vector<std::uint64_t>(all.begin(), all.begin() + l + 1),
                               ctx.plain_modulus()));
  }
  lv.key = parms_id(ctx.scheme(), ctx.n(), all, ctx.plain_modulus());
  return lv;
}

namespace {

// SEAL's sample_poly_uniform: N*K words drawn at once (limb-major), then limb by limb, each
// word r redrawn while r >= 2^64 - 1 - ((2^64 - 1) mod q) - 1, output r mod q.
void expand_seal_uniform(const std::array<std::uint8_t, 64>& seed, const RnsBase& base,
                         std::size_t n, std::uint64_t* out) {
  Blake2xbStream prng(seed);
  const std::size_t k = base.size();
  prng.generate(reinterpret_cast<std::uint8_t*>(out), n * k * 8);
  const std::uint64_t m = ~std::uint64_t(0);
  for (std::size_t j = 0; j < k; ++j) {
    const std::uint64_t q = base[j].value;
    const std::uint64_t max_multiple = m - (m % q) - 1;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t v = out[j * n + i];
      while (v >= max_multiple) v = prng.next_u64();
      out[j * n + i] = v % q;
    }
  }
}

}  // namespace

CiphertextData read_ciphertext_members(ByteReader& r, const Context& ctx,
                                       const std::vector<ParmsId>& ids,
                                       const std::vector<const RnsBase*>& bases,
                                       const std::string& what) {
  CiphertextData c;
  c.id = read_parms_id(r);
  std::size_t which = ids.size();
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == c.id) which = i;
  if (which == ids.size()) {
    r.fail("parms_id", "the " + what + " belongs to other parameters or another level than expected");
  }
  const RnsBase& base = *bases[which];
  c.ntt = r.u8("is_ntt_form") != 0;
  const std::uint64_t size = r.u64("size");
  if (size < 2 || size > kMaxCiphertextSize) {
    r.fail("size", std::to_string(size) + " polynomials (expected 2.." +
                       std::to_string(kMaxCiphertextSize) + "; empty ciphertexts are not loaded)");
  }
  c.size = size;
  c.n = r.u64("poly_modulus_degree");
  if (c.n != ctx.n()) {
    r.fail("poly_modulus_degree", std::to_string(c.n) + ", the context has " + std::to_string(ctx.n()));
  }
  c.k = r.u64("coeff_modulus_size");
  if (c.k != base.size()) {
    r.fail("coeff_modulus_size", std::to_string(c.k) + " does not match its parms_id level (" +
                                     std::to_string(base.size()) + " primes)");
  }
  c.scale = r.f64("scale");
  c.correction = r.u64("correction_factor");
  const std::size_t pw = c.n * c.k;
  std::vector<std::size_t> counts{c.size * pw};
  if (c.size == 2) counts.push_back(pw);
  c.words = read_dynarray(r, what + " data", counts);
  check_below_moduli(c.words.data(), c.words.size() / pw, base, c.n, what);
  if (c.words.size() == pw) {  // seeded: c1 comes from SEAL's PRNG record
    c.seeded = true;
    const std::size_t start = r.position();
    const Header h = read_nested_header(r, "PRNG record");
    const std::uint8_t type = r.u8("prng_type");
    if (type == 2) r.fail("prng_type", "SHAKE256-seeded SEAL objects are not supported (BLAKE2Xb is SEAL's default)");
    if (type != 1) r.fail("prng_type", "unknown value " + std::to_string(type));
    std::array<std::uint8_t, 64> seed{};
    const ByteView s = r.take("seed", 64);
    std::memcpy(seed.data(), s.data, 64);
    if (r.position() - start != h.size) r.fail("size", "PRNG record size mismatch");
    c.words.resize(2 * pw);
    expand_seal_uniform(seed, base, c.n, c.words.data() + pw);
  }
  return c;
}

CiphertextData read_key_ciphertext_object(ByteReader& r, const Context& ctx, const Levels& lv,
                                          const std::string& what) {
  const std::size_t start = r.position();
  const Header h = read_nested_header(r, what);
  CiphertextData c = read_key_ciphertext_members(r, ctx, lv, what);
  if (r.position() - start != h.size) r.fail("size", what + " size mismatch");
  return c;
}

CiphertextData read_key_ciphertext_members(ByteReader& r, const Context& ctx, const Levels& lv,
                                           const std::string& what) {
  const std::vector<ParmsId> ids{lv.key};
  const std::vector<const RnsBase*> bases{&ctx.base_qp_full()};
  CiphertextData c = read_ciphertext_members(r, ctx, ids, bases, what);
  if (!c.ntt) r.fail("is_ntt_form", what + " must be in NTT form");
  if (c.size != 2) r.fail("size", what + " has 2 polynomials");
  if (c.scale != 1.0) r.fail("scale", what + " has scale 1");
  if (c.correction != 1) r.fail("correction_factor", what + " has correction factor 1");
  return c;
}

}  // namespace detail

namespace {

void copy_in(const Device& dev, WordPtr dst, const std::vector<u64>& src) {
  copy_words_from_host(dev, dst, src.data(), src.size());
}

void expect_end(const ByteReader& r) { r.expect_end(); }

}  // namespace

// ---- parameters -----------------------------------------------------------------------------------

Bytes save(const EncryptionParameters& p, const SaveOptions& o) {
  const std::size_t k = p.coeff_modulus.size();
  if (p.special_primes > 1 || (p.special_primes == 0 && k > 1)) {
    throw InvalidArgument("special_primes: SEAL has exactly one special prime (the last of "
                          "coeff_modulus, none with a single prime), got " +
                          std::to_string(p.special_primes));
  }
  if (resolved_alpha(p) != 1) {
    throw InvalidArgument("alpha: SEAL decomposes key switching per prime (alpha = 1)");
  }
  Bytes m;
  ByteWriter w(m);
  w.u8(detail::seal_scheme(p.scheme));
  w.u64(p.poly_modulus_degree);
  w.u64(k);
  for (u64 q : p.coeff_modulus) {
    write_header(w, o.version_minor, Compression::none, 24);
    w.u64(q);
  }
  write_header(w, o.version_minor, Compression::none, 24);
  w.u64(p.scheme == SchemeType::ckks ? 0 : p.plain_modulus);
  return frame(m, o);
}

EncryptionParameters load_parameters(ByteView in, const LoadOptions& o) {
  const Members body = open_object(in, "SEAL parameters", std::min<std::uint64_t>(o.max_bytes, 1 << 20));
  ByteReader r(body.view, "SEAL parameters");
  EncryptionParameters p;
  const std::uint8_t scheme = r.u8("scheme");
  switch (scheme) {
    case 1: p.scheme = SchemeType::bfv; break;
    case 2: p.scheme = SchemeType::ckks; break;
    case 3: p.scheme = SchemeType::bgv; break;
    default: r.fail("scheme", "expected 1 (BFV), 2 (CKKS) or 3 (BGV), got " + std::to_string(scheme));
  }
  p.poly_modulus_degree = r.u64("poly_modulus_degree");
  if (p.poly_modulus_degree == 0 || p.poly_modulus_degree > 131072) {
    r.fail("poly_modulus_degree", "expected 1..131072");
  }
  const std::uint64_t k = r.u64("coeff_modulus_size");
  if (k == 0 || k > 256) r.fail("coeff_modulus_size", "expected 1..256 primes");
  auto read_modulus = [&](const char* field) {
    const std::size_t start = r.position();
    const Header h = read_nested_header(r, field);
    const std::uint64_t v = r.u64(field);
    if (h.size != 24 || r.position() - start != 24) r.fail(field, "Modulus object size mismatch");
    if (v == 1 || (v >> 61)) r.fail(field, "a modulus of 1 or above 61 bits");
    return v;
  };
  for (std::uint64_t i = 0; i < k; ++i) p.coeff_modulus.push_back(read_modulus("coeff_modulus"));
  p.plain_modulus = read_modulus("plain_modulus");
  if (p.scheme == SchemeType::ckks && p.plain_modulus != 0) {
    r.fail("plain_modulus", "CKKS parameters have none");
  }
  expect_end(r);
  p.special_primes = k > 1 ? 1 : 0;
  p.alpha = 0;
  return p;
}

// ---- plaintexts and secret keys -------------------------------------------------------------------

namespace {
Bytes save_plain_layout(const ParmsId& id, std::size_t count, double scale,
                        const std::vector<u64>& words, const SaveOptions& o) {
  Bytes m;
  ByteWriter w(m);
  write_parms_id(w, id);
  w.u64(count);
  w.f64(scale);
  write_dynarray(w, o.version_minor, words.data(), count);
  return frame(m, o);
}
}  // namespace

Bytes save(const Plaintext& pt, const SaveOptions& o) {
  if (pt.empty()) throw InvalidArgument("plain: is empty");
  const Context& ctx = *pt.context();
  const Levels lv = levels(ctx, "plain");
  const std::vector<u64> words = pt.buffer().to_host();
  if (!pt.is_ntt_form()) return save_plain_layout(ParmsId{}, words.size(), 1.0, words, o);
  return save_plain_layout(lv.data.at(pt.level()), words.size(), pt.scale(), words, o);
}

Plaintext load_plaintext(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  const Levels lv = levels(*ctx, "context");
  const Members body = open_object(in, "SEAL plaintext", o.max_bytes);
  ByteReader r(body.view, "SEAL plaintext");
  const ParmsId id = read_parms_id(r);
  const std::uint64_t count = r.u64("coeff_count");
  const double scale = r.f64("scale");
  const std::size_t n = ctx->n();
  if (id == ParmsId{}) {  // coefficient form: BFV/BGV, at most N coefficients below t
    if (ctx->scheme() == SchemeType::ckks) r.fail("parms_id", "CKKS plaintexts are in NTT form");
    if (count > n) r.fail("coeff_count", std::to_string(count) + " coefficients, at most N = " + std::to_string(n));
    if (scale != 1.0) r.fail("scale", "BFV/BGV plaintexts have scale 1");
    std::vector<u64> words = read_dynarray(r, "plaintext data", {static_cast<std::size_t>(count)});
    expect_end(r);
    check_below_modulus(words.data(), words.size(), ctx->plain_modulus(), "SEAL plaintext");
    words.resize(n, 0);
    Plaintext pt(ctx, dev, n, ctx->max_level(), false);
    copy_in(dev, pt.data(), words);
    return pt;
  }
  const auto level = lv.level_of(id);
  if (!level) r.fail("parms_id", "not a data level of this context");
  if (ctx->scheme() != SchemeType::ckks) {
    r.fail("parms_id", "NTT-form BFV/BGV plaintexts are not supported (multiply_plain takes "
                       "coefficient plaintexts)");
  }
  check_scale(scale, "scale");
  const RnsBase& q = ctx->base_q(*level);
  if (count != q.size() * n) r.fail("coeff_count", "does not match the level's N x K");
  const std::vector<u64> words = read_dynarray(r, "plaintext data", {static_cast<std::size_t>(count)});
  expect_end(r);
  check_below_moduli(words.data(), 1, q, n, "SEAL plaintext");
  Plaintext pt(ctx, dev, words.size(), *level, true);
  pt.set_scale(scale);
  copy_in(dev, pt.data(), words);
  return pt;
}

Bytes save(const SecretKey& sk, const SaveOptions& o) {
  if (sk.empty()) throw InvalidArgument("secret_key: is empty");
  const Levels lv = levels(*sk.context(), "secret_key");
  const std::vector<u64> words = sk.buffer().to_host();
  return save_plain_layout(lv.key, words.size(), 1.0, words, o);
}

SecretKey load_secret_key(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  const Levels lv = levels(*ctx, "context");
  const Members body = open_object(in, "SEAL secret key", o.max_bytes);
  ByteReader r(body.view, "SEAL secret key");
  if (read_parms_id(r) != lv.key) r.fail("parms_id", "not this context's key level");
  const RnsBase& qp = ctx->base_qp_full();
  const std::uint64_t count = r.u64("coeff_count");
  if (count != qp.size() * ctx->n()) r.fail("coeff_count", "does not match N x K at the key level");
  if (r.f64("scale") != 1.0) r.fail("scale", "a secret key has scale 1");
  const std::vector<u64> words = read_dynarray(r, "secret key data", {static_cast<std::size_t>(count)});
  expect_end(r);
  check_below_moduli(words.data(), 1, qp, ctx->n(), "SEAL secret key");
  SecretKey sk(ctx, dev, words.size());
  copy_in(dev, sk.data(), words);
  return sk;
}

// ---- ciphertexts and public keys ------------------------------------------------------------------

Bytes save(const Ciphertext& ct, const SaveOptions& o) {
  if (ct.empty()) throw InvalidArgument("encrypted: is empty");
  const Context& ctx = *ct.context();
  const Levels lv = levels(ctx, "encrypted");
  if (ct.size() > kMaxCiphertextSize) {
    throw InvalidArgument("encrypted: SEAL holds at most 16 polynomials, this has " +
                          std::to_string(ct.size()) + " (relinearize first)");
  }
  const std::vector<u64> words = ct.buffer().to_host();
  check_not_transparent_words(words.data(), ct.size(), ct.poly_words(), "encrypted");
  Bytes obj;
  ByteWriter w(obj);
  write_ciphertext_object(w, o.version_minor, lv.data.at(ct.level()), ct.is_ntt_form(), ct.size(),
                          ctx.n(), ct.limbs(), ct.scale(), ct.correction_factor(), words.data());
  return frame(Bytes(obj.begin() + kHeaderSize, obj.end()), o);  // members, then reframed
}

Ciphertext load_ciphertext(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  const Levels lv = levels(*ctx, "context");
  const Members body = open_object(in, "SEAL ciphertext", o.max_bytes);
  ByteReader r(body.view, "SEAL ciphertext");
  std::vector<const RnsBase*> bases;
  for (std::size_t l = 0; l < lv.data.size(); ++l) bases.push_back(&ctx->base_q(l));
  CiphertextData c = read_ciphertext_members(r, *ctx, lv.data, bases, "ciphertext");
  expect_end(r);
  const std::size_t level = *lv.level_of(c.id);
  const SchemeType s = ctx->scheme();
  if (s == SchemeType::bfv && c.ntt) r.fail("is_ntt_form", "BFV ciphertexts are in coefficient form");
  if (s == SchemeType::ckks && !c.ntt) r.fail("is_ntt_form", "CKKS ciphertexts are in NTT form");
  if (s == SchemeType::ckks) {
    check_scale(c.scale, "scale");
  } else if (c.scale != 1.0) {
    r.fail("scale", "BFV/BGV ciphertexts have scale 1");
  }
  if (s == SchemeType::bgv) {
    const u64 t = ctx->plain_modulus();
    if (c.correction == 0 || c.correction >= t || std::gcd(c.correction, t) != 1) {
      r.fail("correction_factor", "expected a unit modulo the plain modulus");
    }
  } else if (c.correction != 1) {
    r.fail("correction_factor", "must be 1 outside BGV");
  }
  const bool want_ntt = s != SchemeType::bfv;
  Ciphertext ct(ctx, dev, c.size, level, want_ntt);
  copy_in(dev, ct.data(), c.words);
  // SEAL 4.0 kept BGV ciphertexts in coefficient form; SEAL 4.1+ converts them on load too.
  if (s == SchemeType::bgv && !c.ntt) ntt_forward(dev, ct.data(), c.size, ctx->base_q(level), ctx->ntt());
  ct.set_scale(c.scale);
  ct.set_correction_factor(c.correction);
  return ct;
}

Bytes save(const PublicKey& pk, const SaveOptions& o) {
  if (pk.empty()) throw InvalidArgument("public_key: is empty");
  const Context& ctx = *pk.context();
  const Levels lv = levels(ctx, "public_key");
  const std::vector<u64> words = pk.buffer().to_host();
  Bytes obj;
  ByteWriter ow(obj);
  write_ciphertext_object(ow, o.version_minor, lv.key, true, 2, ctx.n(),
                          ctx.base_qp_full().size(), 1.0, 1, words.data());
  return frame(Bytes(obj.begin() + kHeaderSize, obj.end()), o);
}

PublicKey load_public_key(ByteView in, const ContextPtr& ctx, const Device& dev, const LoadOptions& o) {
  const Levels lv = levels(*ctx, "context");
  const Members body = open_object(in, "SEAL public key", o.max_bytes);
  ByteReader r(body.view, "SEAL public key");
  CiphertextData c = read_key_ciphertext_members(r, *ctx, lv, "public key");
  expect_end(r);
  PublicKey pk(ctx, dev, c.words.size());
  copy_in(dev, pk.data(), c.words);
  return pk;
}

std::vector<std::pair<std::size_t, std::size_t>> split(ByteView in) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t pos = 0;
  while (pos < in.size) {
    ByteReader r(in.sub(pos, in.size - pos), "SEAL stream");
    const Header h = read_header(r, "object " + std::to_string(out.size()));
    if (h.size > in.size - pos) r.fail("size", "object " + std::to_string(out.size()) + " runs past the end");
    out.emplace_back(pos, static_cast<std::size_t>(h.size));
    pos += h.size;
  }
  return out;
}

}  // namespace veil::io::seal
