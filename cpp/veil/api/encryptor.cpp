#include "veil/api/encryptor.h"

#include "veil/bfv/bfv.h"
#include "veil/bgv/bgv.h"
#include "veil/ckks/ckks.h"
#include "veil/core/error.h"
#include "veil/rlwe/encrypt.h"

namespace veil {

namespace {
Prng make_prng(std::optional<std::uint64_t> seed) { return seed ? Prng::from_u64(*seed) : Prng(); }
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
  switch (ctx_->scheme()) {
    case SchemeType::bfv:
      return pk_ ? bfv::encrypt(*pk_, plain, prng_) : bfv::encrypt_symmetric(*sk_, plain, prng_);
    case SchemeType::bgv:
      return pk_ ? bgv::encrypt(*pk_, plain, prng_) : bgv::encrypt_symmetric(*sk_, plain, prng_);
    case SchemeType::ckks:
      return pk_ ? ckks::encrypt(*pk_, plain, prng_) : ckks::encrypt_symmetric(*sk_, plain, prng_);
  }
  unsupported(ctx_->scheme(), "encrypt");
}

Ciphertext Encryptor::encrypt_zero() const {
  const bool ntt = ctx_->scheme() != SchemeType::bfv;
  const u64 f = ctx_->scheme() == SchemeType::bgv ? ctx_->plain_modulus() : 1;
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
  if (bits && ctx_->scheme() != SchemeType::ckks) {
    throw InvalidArgument("bits: noise flooding applies to CKKS (BFV/BGV decryption is exact)");
  }
  flooding_bits_ = bits;
}

Plaintext Decryptor::decrypt(const Ciphertext& encrypted, bool check_noise) const {
  check_ciphertext(*ctx_, encrypted, "encrypted");
  check_compatible(*ctx_, sk_.device(), encrypted.context(), encrypted.device(), "encrypted");
  join_key_sets(encrypted.key_id(), sk_.key_id(), "encrypted");
  switch (ctx_->scheme()) {
    case SchemeType::bfv: return bfv::decrypt(sk_, encrypted, check_noise);
    case SchemeType::bgv: return bgv::decrypt(sk_, encrypted, check_noise);
    case SchemeType::ckks: return ckks::decrypt(sk_, encrypted, flooding_bits_, &flooding_prng_);
  }
  unsupported(ctx_->scheme(), "decrypt");
}

int Decryptor::invariant_noise_budget(const Ciphertext& encrypted) const {
  check_ciphertext(*ctx_, encrypted, "encrypted");
  check_compatible(*ctx_, sk_.device(), encrypted.context(), encrypted.device(), "encrypted");
  join_key_sets(encrypted.key_id(), sk_.key_id(), "encrypted");
  switch (ctx_->scheme()) {
    case SchemeType::bfv: return bfv::invariant_noise_budget(sk_, encrypted);
    case SchemeType::bgv: return bgv::invariant_noise_budget(sk_, encrypted);
    default: break;
  }
  unsupported(ctx_->scheme(), "invariant_noise_budget");
}

}  // namespace veil
