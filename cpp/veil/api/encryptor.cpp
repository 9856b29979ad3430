#include "veil/api/encryptor.h"

#include "veil/api/schemes.h"
#include "veil/core/error.h"
#include "veil/rlwe/encrypt.h"

namespace veil {

namespace {
Prng make_prng(std::optional<std::uint64_t> seed) { return seed ? Prng::from_u64(*seed) : Prng(); }
// The gate of decryption: a ciphertext of this context, on the secret key's device, of its key
// set (the key-set error names `encrypted`: the ciphertext is the user's argument).
void check_decryptable(const Context& ctx, const SecretKey& sk, const Ciphertext& encrypted) {
  check_ciphertext(ctx, encrypted, "encrypted");
  if (encrypted.device() != sk.device()) {
    throw TypeMismatch("encrypted: lives on " + encrypted.device().str() +
                       " but the operation runs on " + sk.device().str() +
                       " (move it with .to(device))");
  }
  join_key_sets(encrypted.key_id(), sk.key_id(), "encrypted");
}
[[noreturn]] void unsupported(SchemeType s, const char* op) {
  throw InvalidArgument(std::string(op) + ": not available for scheme " + to_string(s));
}
}  // namespace

Encryptor::Encryptor(ContextPtr ctx, const PublicKey& pk, std::optional<std::uint64_t> seed)
    : ctx_(std::move(ctx)), pk_(pk), prng_(make_prng(seed)) {
  check_compatible(*ctx_, pk.device(), pk.context(), pk.device(), "public_key");
}

Encryptor::Encryptor(ContextPtr ctx, const SecretKey& sk, std::optional<std::uint64_t> seed)
    : ctx_(std::move(ctx)), sk_(sk), prng_(make_prng(seed)) {
  check_compatible(*ctx_, sk.device(), sk.context(), sk.device(), "secret_key");
  if (sk_->key_id() == 0) sk_->set_key_id(key_set_id(*sk_));
}

const Device& Encryptor::device() const { return pk_ ? pk_->device() : sk_->device(); }

Ciphertext Encryptor::encrypt(const Plaintext& plain) const {
  check_compatible(*ctx_, device(), plain.context(), plain.device(), "plain");
  const SchemeOps& ops = scheme_ops(ctx_->scheme());
  return pk_ ? ops.encrypt(*pk_, plain, prng_) : ops.encrypt_symmetric(*sk_, plain, prng_);
}

Ciphertext Encryptor::encrypt_zero() const {
  const bool ntt = ctx_->scheme_definition().ntt_form;
  const u64 f = ctx_->error_factor();
  return pk_ ? encrypt_zero_asymmetric(*pk_, ctx_->max_level(), prng_, ntt, f)
             : encrypt_zero_symmetric(*sk_, ctx_->max_level(), prng_, ntt, f);
}

Decryptor::Decryptor(ContextPtr ctx, const SecretKey& sk) : ctx_(std::move(ctx)), sk_(sk) {
  if (!ctx_) throw InvalidArgument("context: is empty");
  check_compatible(*ctx_, sk.device(), sk.context(), sk.device(), "secret_key");
  if (sk_.key_id() == 0) sk_.set_key_id(key_set_id(sk_));
}

void Decryptor::set_noise_flooding(int bits) {
  if (bits < 0 || bits > 62) {
    throw InvalidArgument("bits: expected 0 (off) .. 62 bits of flooding noise, got " +
                          std::to_string(bits));
  }
  if (bits && scheme_ops(ctx_->scheme()).invariant_noise_budget) {  // exact decryption
    throw InvalidArgument("bits: noise flooding applies to CKKS (BFV/BGV decryption is exact)");
  }
  flooding_bits_ = bits;
}

Plaintext Decryptor::decrypt(const Ciphertext& encrypted, bool check_noise) const {
  check_decryptable(*ctx_, sk_, encrypted);
  return scheme_ops(ctx_->scheme())
      .decrypt(sk_, encrypted, check_noise, flooding_bits_, &flooding_prng_);
}

int Decryptor::invariant_noise_budget(const Ciphertext& encrypted) const {
  check_decryptable(*ctx_, sk_, encrypted);
  const SchemeOps& ops = scheme_ops(ctx_->scheme());
  if (!ops.invariant_noise_budget) unsupported(ctx_->scheme(), "invariant_noise_budget");
  return ops.invariant_noise_budget(sk_, encrypted);
}

}  // namespace veil
