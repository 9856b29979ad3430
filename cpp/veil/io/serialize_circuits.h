// Veil's format (serialize.h) for what a server needs, besides the keys, to rebuild a CKKS
// bootstrapper without the secret key: the bootstrapping parameters (object type 9), i.e. the
// configuration (circuits::BootstrapConfig) and Delta, bound to the context by its parameter
// hash. The keys travel as a RelinKeys, a GaloisKeys and two SwitchingKey objects
// (docs/serialization.md, "Bootstrapping keys"); circuits::BootstrapKeys gathers them.
#pragma once
#include "veil/circuits/bootstrap_parameters.h"
#include "veil/io/serialize.h"

namespace veil::io {

/// Descriptor: N, Delta (f64), then slots (0 = N/2), cts_levels, stc_levels, k_range,
/// evalmod_degree, double_angle, hamming_weight (u32 each), then pack_sparse (u32 1) only when
/// set; no body.
/// @throws InvalidArgument naming `parameters` when empty.
/// @param p the parameters (object type 9).
/// @param o the compression and level (the object has no body).
/// @return the bytes.
Bytes save(const circuits::BootstrapParameters& p, const SaveOptions& o = {});
/// Loads and rebuilds the parameters on `ctx`: the header as every object's (type, scheme,
/// parameter hash, sizes), N, every configuration field (BootstrapConfig::validate against N),
/// Delta (finite, >= 2), and the chain (BootstrapParameters' own checks).
/// @throws InvalidArgument naming the field ("bootstrap parameters: <field>: ...").
/// @param in the bytes (exactly one object).
/// @param ctx the CKKS context the parameters were made for.
/// @param o the size cap.
/// @return the rebuilt parameters.
circuits::BootstrapParameters load_bootstrap_parameters(ByteView in, const ContextPtr& ctx,
                                                        const LoadOptions& o = {});

}  // namespace veil::io
