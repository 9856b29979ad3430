// The rescaling structure of a CKKS modulus chain, as the circuits see it: the levels where a
// rescale block ends ("tops"), the product of primes each rescale divides by, and the moves
// between neighbouring tops. With SEAL's one-prime blocks every level is a top; with the blocks
// of two ~30-bit primes of 32-bit-word chains (EncryptionParameters::rescale_groups) only the
// last level of each block is.
#pragma once
#include <cstddef>
#include <vector>

#include "veil/ckks/ckks_tables.h"
#include "veil/rlwe/context.h"

namespace veil::circuits {

/// The rescale blocks of a CKKS context (EncryptionParameters::rescale_groups): where each
/// ends, what each rescale divides by and where it lands. Immutable; the block products are
/// the exact integer products rounded once to a double (detail::exact_product), as the Python
/// implementation computes them.
class RescaleChain {
 public:
  /// Reads the context's rescale blocks and computes every block product.
  /// @param ctx a CKKS context.
  /// @throws InvalidArgument naming `context` when it is empty or not CKKS.
  explicit RescaleChain(ContextPtr ctx);

  /// @return the context.
  const ContextPtr& context() const { return ctx_; }
  /// The levels where a rescale block ends, from q_0's block up: the levels a rescale lands on
  /// ([number of blocks]; tops()[0] is the top of q_0's block).
  /// @return the tops, ascending.
  const std::vector<std::size_t>& tops() const { return tops_; }
  /// The product of the primes a rescale from `level` divides by (q_{t+1} ... q_level with
  /// t = below(level)), as the double nearest to the exact integer product.
  /// @param level a level above q_0's block.
  /// @return D, the block product (~2^40..2^60 for one or two primes).
  /// @throws InvalidArgument naming `level` when it lies in q_0's block or above the top level.
  double block_product(std::size_t level) const;
  /// The level a rescale from `level` lands on (ckks::rescale_target).
  /// @param level a level of the chain.
  /// @return the top of the block below `level`'s block.
  /// @throws InvalidArgument naming `encrypted` when `level` lies in q_0's block, or `level`
  ///         above the top level.
  std::size_t below(std::size_t level) const { return ckks::rescale_target(*ctx_, level); }
  /// The block top whose rescale lands on `level`.
  /// @param level a block top below the highest.
  /// @return the top of the next block up.
  /// @throws InvalidArgument naming `level` when no rescale lands there.
  std::size_t above(std::size_t level) const;
  /// The highest top at or below `level`.
  /// @param level a level of the chain.
  /// @return the top (level itself when it is one).
  /// @throws InvalidArgument naming `ct` when `level` lies inside q_0's block below its top.
  std::size_t top_at_or_below(std::size_t level) const;
  /// The index of `level` in tops().
  /// @param level a block top.
  /// @return i with tops()[i] == level.
  /// @throws InvalidArgument naming `level` if it is no top.
  std::size_t top_index(std::size_t level) const;

 private:
  ContextPtr ctx_;
  std::vector<std::size_t> tops_;
  std::vector<double> products_;       // [num_q]: block_product per level (0 inside q_0's block)
  std::vector<std::ptrdiff_t> above_;  // [num_q]: the top landing on each level, or -1
};

}  // namespace veil::circuits
