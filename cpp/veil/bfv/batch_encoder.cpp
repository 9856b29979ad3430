#include "veil/bfv/batch_encoder.h"

#include <string>
#include <type_traits>

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/ring/eltwise_simd.h"

namespace veil {

namespace {
// Slots -> plaintext: place slot i at NTT index map[i], then inverse NTT mod t. `src`: N slots
// in [0, t) on the plaintext's device.
// `count` <= N slots at `s` (words S, u32 or u64) on `dev`; the slots after them are zero.
template <class S>
Plaintext encode_words(const ContextPtr& ctx_, const RnsBase& base, const S* s, std::size_t count,
                       const Device& dev) {
  const std::size_t n = ctx_->n();
  Plaintext pt(ctx_, dev, n, ctx_->max_level(), false);
  const u32* map = ctx_->slot_index_map().data(dev);
  u64* out = pt.data<u64>();
  for_each(dev, n, VEIL_LAMBDA(std::size_t i) { out[map[i]] = i < count ? u64(s[i]) : 0; });
  ntt_inverse(dev, out, 1, base, ctx_->plain_ntt());
  return pt;
}

Plaintext encode_words(const ContextPtr& ctx_, const RnsBase& base, const Buffer<u64>& src) {
  return encode_words(ctx_, base, src.data(), src.size(), src.device());
}

// The N slots of a batched plaintext in [0, t), on its device (decode's steps; `pt` checked).
Buffer<u64> decode_words(const ContextPtr& ctx_, const RnsBase& base, const Plaintext& pt) {
  if (!pt.context() || pt.context()->parameter_hash() != ctx_->parameter_hash()) {
    throw InvalidArgument("plain: belongs to a different context");
  }
  if (pt.is_ntt_form()) {
    throw InvalidArgument("plain: is in NTT form (prepared for multiply_plain); decode needs a "
                          "plaintext from encode() or decrypt()");
  }
  const Device& dev = pt.device();
  const std::size_t n = ctx_->n();
  WordBuffer tmp = pt.buffer().clone();  // coefficient plaintexts: 64-bit words
  ntt_forward(dev, tmp.data<u64>(), 1, base, ctx_->plain_ntt());
  Buffer<u64> out(dev, n);
  const u64* src = tmp.data<u64>();
  u64* o = out.data();
  const u32* map = ctx_->slot_index_map().data(dev);
  for_each(dev, n, VEIL_LAMBDA(std::size_t i) { o[i] = src[map[i]]; });
  return out;
}

// N slots on `dev` from `count` <= N values at `src` (zero-padded): unsigned values must be < t;
// signed ones in [-(t-1)/2, (t-1)/2] are read mod t. Throws InvalidArgument naming `values`.
template <class T>
Buffer<u64> slots_from_view(const T* src, std::size_t count, std::size_t n, u64 t,
                            const Device& dev) {
  backend::synchronize_device(dev);  // the producer's writes (another framework's stream)
  const bool is_signed = std::is_signed_v<T>;
  const std::int64_t bound = static_cast<std::int64_t>((t - 1) / 2);
  if (any_of(dev, count, VEIL_LAMBDA(std::size_t i) {
        if (is_signed) {
          const auto v = static_cast<std::int64_t>(src[i]);
          return v > bound || v < -bound;
        }
        return static_cast<u64>(src[i]) >= t;
      })) {
    throw InvalidArgument(is_signed ? "values: expected every value in [-(plain_modulus - 1) / 2, "
                                      "(plain_modulus - 1) / 2] = [-" + std::to_string(bound) +
                                          ", " + std::to_string(bound) + "]"
                                    : "values: expected every value below plain_modulus " +
                                          std::to_string(t));
  }
  Buffer<u64> slots(dev, n);
  slots.zero();
  u64* o = slots.data();
  for_each(dev, count, VEIL_LAMBDA(std::size_t i) {
    const auto v = static_cast<std::int64_t>(src[i]);
    o[i] = is_signed && v < 0 ? t - static_cast<u64>(-v) : static_cast<u64>(src[i]);
  });
  return slots;
}
}  // namespace

BatchEncoder::BatchEncoder(ContextPtr ctx) : ctx_(std::move(ctx)) {
  if (ctx_->scheme() == SchemeType::ckks) {
    throw InvalidArgument("context: BatchEncoder needs a BFV or BGV context (use CKKSEncoder)");
  }
  // plain_ntt() throws a clear error when t does not enable batching.
  plain_base_ = RnsBase({ctx_->plain_ntt().prime(0)}, {0});
}

Plaintext BatchEncoder::encode(const std::vector<std::uint64_t>& values, const Device& dev) const {
  return encode(values.data(), values.size(), dev);
}

Plaintext BatchEncoder::encode(const std::uint64_t* values, std::size_t count,
                               const Device& dev) const {
  const std::size_t n = ctx_->n();
  const u64 t = ctx_->plain_modulus();
  if (count > n) {
    throw InvalidArgument("values: expected at most " + std::to_string(n) + " slots, got " +
                          std::to_string(count));
  }
  // The range check and the staging copy in one pass (detail::narrow_below: AVX-512 where present,
  // SSE2 elsewhere; the baseline build's scalar loop took ~1.5 ns a slot, 100 us at N = 2^16);
  // the offending slot is looked for only after a hit, and the uploaded words are then dropped.
  // With t < 2^32 (every practical plain modulus) the slots travel as 32-bit words: half the
  // bytes to stage on the host and to copy to the device.
  bool bad = false;
  Plaintext pt;
  auto encode_as = [&](auto word) {  // slots staged as words of word's type
    using S = decltype(word);
    Buffer<S> slots(dev, count);
    backend::upload_with(dev, slots.data(), count * sizeof(S), [&](void* host) {
      if constexpr (sizeof(S) == 4) {
        bad = !detail::narrow_below(static_cast<u32*>(host), values, count, t);
      } else {
        bad = !detail::copy_below(static_cast<u64*>(host), values, count, t);
      }
    });
    if (!bad) pt = encode_words(ctx_, plain_base_, slots.data(), count, dev);
  };
  if (t <= 0xffffffffu) {
    encode_as(u32{});
  } else {
    encode_as(u64{});
  }
  for (std::size_t i = 0; bad && i < count; ++i) {
    if (values[i] >= t) {
      // The value is plaintext data: the slot is named, the value not quoted.
      throw InvalidArgument("values: slot " + std::to_string(i) +
                            " holds a value >= plain_modulus, expected values below " +
                            std::to_string(t));
    }
  }
  return pt;
}

Plaintext BatchEncoder::encode_signed(const std::vector<std::int64_t>& values,
                                      const Device& dev) const {
  const std::size_t n = ctx_->n();
  const u64 t = ctx_->plain_modulus();
  const std::int64_t bound = static_cast<std::int64_t>((t - 1) / 2);
  if (values.size() > n) {
    throw InvalidArgument("values: expected at most " + std::to_string(n) + " slots, got " +
                          std::to_string(values.size()));
  }
  std::vector<u64> slots(n, 0);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::int64_t v = values[i];
    if (v > bound || v < -bound) {
      throw InvalidArgument("values: slot " + std::to_string(i) +
                            " holds a value outside the range, expected |value| <= "
                            "(plain_modulus - 1) / 2 = " + std::to_string(bound));
    }
    slots[i] = v >= 0 ? static_cast<u64>(v) : t - static_cast<u64>(-v);
  }
  return encode_words(ctx_, plain_base_, Buffer<u64>::upload(dev, slots));
}

std::vector<std::uint64_t> BatchEncoder::decode(const Plaintext& pt) const {
  return decode_words(ctx_, plain_base_, pt).to_host();
}

std::vector<std::int64_t> BatchEncoder::decode_signed(const Plaintext& pt) const {
  std::vector<u64> v = decode(pt);
  const u64 t = ctx_->plain_modulus();
  std::vector<std::int64_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[i] = v[i] > t / 2 ? -static_cast<std::int64_t>(t - v[i]) : static_cast<std::int64_t>(v[i]);
  }
  return out;
}

Plaintext BatchEncoder::encode_view(const ArrayView<const std::uint64_t>& values) const {
  values.check(values.device, ctx_->n(), true, "values");
  return encode_words(ctx_, plain_base_, slots_from_view(values.data, values.count, ctx_->n(),
                                            ctx_->plain_modulus(), values.device));
}

Plaintext BatchEncoder::encode_signed_view(const ArrayView<const std::int64_t>& values) const {
  values.check(values.device, ctx_->n(), true, "values");
  return encode_words(ctx_, plain_base_, slots_from_view(values.data, values.count, ctx_->n(),
                                            ctx_->plain_modulus(), values.device));
}

void BatchEncoder::decode_view(const Plaintext& pt, const ArrayView<std::uint64_t>& out) const {
  out.check(pt.device(), ctx_->n(), false, "out");
  const Buffer<u64> slots = decode_words(ctx_, plain_base_, pt);
  const u64* s = slots.data();
  std::uint64_t* o = out.data;
  for_each(pt.device(), ctx_->n(), VEIL_LAMBDA(std::size_t i) { o[i] = s[i]; });
  backend::synchronize(pt.device());  // the consumer (another framework) reads it next
}

void BatchEncoder::decode_signed_view(const Plaintext& pt, const ArrayView<std::int64_t>& out) const {
  out.check(pt.device(), ctx_->n(), false, "out");
  const Buffer<u64> slots = decode_words(ctx_, plain_base_, pt);
  const u64* s = slots.data();
  const u64 t = ctx_->plain_modulus();
  std::int64_t* o = out.data;
  for_each(pt.device(), ctx_->n(), VEIL_LAMBDA(std::size_t i) {
    o[i] = s[i] > t / 2 ? -static_cast<std::int64_t>(t - s[i]) : static_cast<std::int64_t>(s[i]);
  });
  backend::synchronize(pt.device());
}

}  // namespace veil
