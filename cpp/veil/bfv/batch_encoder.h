// BatchEncoder: N integers mod t <-> one plaintext polynomial (SEAL's BatchEncoder semantics).
// Slots form a 2 x N/2 matrix; rotate_rows cycles the rows by powers of the generator 3,
// rotate_columns swaps the rows (Galois element 2N - 1). Encoding is an inverse negacyclic NTT mod
// t after placing slot i at NTT index map[i] (Smart-Vercauteren packing; SEAL's
// matrix_reps_index_map). Requires t prime, t = 1 mod 2N.
#pragma once
#include <cstdint>
#include <vector>

#include "veil/backend/array_view.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// Encodes N integers mod t into one BFV/BGV plaintext and back (SEAL's BatchEncoder; slot
/// packing of Smart-Vercauteren, DCC 2014, via the CRT of X^N + 1 mod t).
class BatchEncoder {
 public:
  /// Builds the encoder over t's negacyclic NTT.
  /// @param ctx a BFV or BGV context whose plain_modulus enables batching.
  /// @throws InvalidArgument naming `context` for a CKKS context, or naming plain_modulus if it
  ///         does not enable batching.
  explicit BatchEncoder(ContextPtr ctx);
  /// The number of slots.
  /// @return N.
  std::size_t slot_count() const { return ctx_->n(); }
  /// The length of one of the two rows.
  /// @return N/2.
  std::size_t row_size() const { return ctx_->n() / 2; }

  /// values: at most N entries, each < t (missing slots are 0).
  /// @param values the slot values.
  /// @param dev the device the plaintext is made on.
  /// @return a coefficient-form plaintext of N coefficients mod t.
  /// @throws InvalidArgument naming `values` for more than N entries or an entry >= t.
  Plaintext encode(const std::vector<std::uint64_t>& values, const Device& dev = Device::cpu()) const;
  /// The same from `count` values in host memory at `values` (no intermediate host copy: one
  /// check pass, then backend::upload of the values and a zero fill of the missing slots).
  /// @param values host pointer to `count` values, each < t.
  /// @param count the number of values, at most N.
  /// @param dev the device the plaintext is made on.
  /// @return a coefficient-form plaintext of N coefficients mod t.
  /// @throws InvalidArgument naming `values` as above.
  Plaintext encode(const std::uint64_t* values, std::size_t count, const Device& dev) const;
  /// Signed values in [-(t-1)/2, (t-1)/2].
  /// @param values at most N slot values in that range (negative ones read mod t).
  /// @param dev the device the plaintext is made on.
  /// @return a coefficient-form plaintext of N coefficients mod t.
  /// @throws InvalidArgument naming `values` for more than N entries or one out of range.
  Plaintext encode_signed(const std::vector<std::int64_t>& values,
                          const Device& dev = Device::cpu()) const;
  /// N values in [0, t).
  /// @param pt a coefficient-form plaintext of this context (from encode or decrypt).
  /// @return the N slot values.
  /// @throws InvalidArgument naming `plain` (another context, or NTT form).
  std::vector<std::uint64_t> decode(const Plaintext& pt) const;
  /// N values centered into (-t/2, t/2].
  /// @param pt a coefficient-form plaintext of this context (from encode or decrypt).
  /// @return the N centered slot values.
  /// @throws InvalidArgument as decode.
  std::vector<std::int64_t> decode_signed(const Plaintext& pt) const;

  /// Encodes values in memory Veil does not own (a CuPy/PyTorch/JAX array reached through
  /// DLPack, or host memory) on their own device, with no copy through the host; the plaintext
  /// is created on values.device.
  /// @param values at most N values, each < t, on a device.
  /// @return a coefficient-form plaintext of N coefficients mod t, on values.device.
  /// @throws InvalidArgument naming `values` for more than N values or one >= t (without the
  ///         slot's index).
  Plaintext encode_view(const ArrayView<const std::uint64_t>& values) const;
  /// Signed values in [-(t-1)/2, (t-1)/2] on their device; see the unsigned overload.
  /// @param values at most N values in that range, on a device.
  /// @return a coefficient-form plaintext of N coefficients mod t, on values.device.
  /// @throws InvalidArgument naming `values` for more than N values or one out of range.
  Plaintext encode_signed_view(const ArrayView<const std::int64_t>& values) const;
  /// Decodes into `out`: exactly N values on pt.device(), in [0, t).
  /// @param pt a coefficient-form plaintext of this context.
  /// @param out N values on pt.device().
  /// @throws InvalidArgument naming `out` for a view on another device or of another length,
  ///         or as decode.
  void decode_view(const Plaintext& pt, const ArrayView<std::uint64_t>& out) const;
  /// Decodes into `out` (N values on pt.device()), centered into (-t/2, t/2].
  /// @param pt a coefficient-form plaintext of this context.
  /// @param out N values on pt.device().
  /// @throws InvalidArgument as decode_view.
  void decode_signed_view(const Plaintext& pt, const ArrayView<std::int64_t>& out) const;

 private:
  ContextPtr ctx_;
  RnsBase plain_base_;  // {t} with its NTT tables: built once, its device copy kept
};

}  // namespace veil
