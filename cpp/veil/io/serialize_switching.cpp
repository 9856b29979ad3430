// Veil's format for SwitchingKey (object type 8): a key switching ciphertexts from one secret to
// another, as KeyGenerator::create_switching_key makes it. Descriptor: N, the target key-set id
// (flag bit 1), the source key-set id (u64), max_level (u32), the digits stored (u32), the limbs
// stored per polynomial (u32), then the seed when seeded. Body: per stored digit, b_j and (when
// not seeded) a_j over the stored limbs.
//
// A key serving only the levels <= max_level < L (the dense -> sparse key of sparse-secret
// encapsulation, Bossuat-Troncoso-Hubaux, eprint 2022/024, §5) is a key of that level
// (KSwitchKey::level): only the ceil((max_level + 1) / alpha) digits that meet Q_max_level and,
// in each, the limbs of Q_max_level ∪ P exist (at N = 2^16: a few MiB instead of a full key),
// and it loads as such. It is seeded as any key is (its a_j keep their addresses in Q ∪ P);
// files written before keys had levels hold such a key unseeded, and load the same.
#include <optional>
#include <string>
#include <vector>

#include "veil/backend/word_buffer.h"
#include "veil/io/serialize.h"
#include "veil/io/serialize_detail.h"
#include "veil/rlwe/keyswitch.h"
#include "veil/io/validate.h"

namespace veil::io {

using namespace detail;

Bytes save(const SwitchingKey& sk, const SaveOptions& o) {
  Encoded e = start(ObjectType::switching_key, sk.context(), "switching_key", sk.key_id());
  // KeyGenerator makes no compact switching key; one built by hand is written expanded. A key
  // above its max_level (made before keys had levels) is written as its projection.
  std::optional<KSwitchKey> changed;  // set only when the stored key is not written as it is
  if (sk.key().compact()) changed = expand_compact_key(sk.key());
  const KSwitchKey& held = changed ? *changed : sk.key();
  if (held.level() < sk.max_level()) {
    throw InvalidArgument("switching_key: its key serves levels <= " +
                          std::to_string(held.level()) + ", below its max_level " +
                          std::to_string(sk.max_level()));
  }
  if (held.level() > sk.max_level()) changed = lower_key_level(held, sk.max_level());
  const KSwitchKey& k = changed ? *changed : sk.key();
  // The words as stored (4-byte words are not widened): the key's digits over its limbs.
  with_word_type(k.buffer(), [&](auto word) {
    using W = decltype(word);
    std::vector<W> body;
    if (o.seeded != Seeding::never && k.seed_known_to_match()) {  // only the b_j read
      e.seeded = true;
      body.reserve(k.dnum() * k.poly_words());
      append_kswitch_b(k, body);
      return set_body(e, std::move(body));
    }
    std::vector<W> host = host_words<W>(k.buffer());
    e.seeded = kswitch_seeded(k, o, host, "switching key");
    if (!e.seeded) return set_body(e, std::move(host));
    body.reserve(k.dnum() * k.poly_words());
    append_kswitch_seeded(k, host, body);
    set_body(e, std::move(body));
  });
  ByteWriter w(e.descriptor);
  w.u64(sk.from_key_id());
  w.u32(static_cast<std::uint32_t>(sk.max_level()));
  w.u32(static_cast<std::uint32_t>(k.dnum()));
  w.u32(static_cast<std::uint32_t>(k.limbs()));
  if (e.seeded) write_seed(w, *k.uniform_seed());
  return frame(e, o);
}

SwitchingKey load_switching_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                                const LoadOptions& o) {
  Framed f = open(in, ObjectType::switching_key, ctx.get());
  ByteReader r(f.descriptor, "switching key");
  check_n(r, *ctx);
  const u64 key_id = read_key_id(r, f.h);
  const u64 from_id = r.u64("from_key_set_id");
  const std::size_t max_level = check_level(r, *ctx);
  (void)expected_dnum(*ctx);  // throws without special primes
  // A key of level max_level (KSwitchKey::level): the digits that meet Q_max_level, over
  // Q_max_level ∪ P.
  const KeySwitchLevel& ks = ctx->key_switch(max_level);
  const std::size_t digits = ks.dnum, limbs = ks.base_qp.size();
  const std::uint32_t digits_read = r.u32("dnum");
  if (digits_read != digits) {
    r.fail("dnum", std::to_string(digits_read) + " digits stored, a key serving levels <= " +
                       std::to_string(max_level) + " has " + std::to_string(digits));
  }
  const std::uint32_t limbs_read = r.u32("limbs");
  if (limbs_read != limbs) {
    r.fail("limbs", std::to_string(limbs_read) + " RNS limbs stored, a key serving levels <= " +
                        std::to_string(max_level) + " has " + std::to_string(limbs));
  }
  std::optional<UniformSeed> seed;
  if (f.h.seeded) seed = read_seed(r);
  r.expect_end();
  const std::size_t polys = digits * (seed ? 1 : 2);
  const BodyWords body = read_body_words(f, polys * limbs * ctx->n(), o);
  check_below_moduli(body, 0, polys, ks.base_qp, ctx->n(), "switching key");
  KSwitchKey k = build_kswitch(ctx, dev, digits, body, 0, seed, false, max_level);
  k.set_key_id(key_id);
  return SwitchingKey(std::move(k), from_id, max_level);
}

}  // namespace veil::io
