#include "veil/io/serialize_circuits.h"

#include <cmath>
#include <optional>
#include <string>

#include "veil/io/serialize_detail.h"

namespace veil::io {

using namespace detail;

Bytes save(const circuits::BootstrapParameters& p, const SaveOptions& o) {
  Encoded e = start(ObjectType::bootstrap_parameters, p.context(), "parameters");
  const circuits::BootstrapConfig& c = p.config();
  ByteWriter w(e.descriptor);
  w.f64(p.scale());
  for (std::size_t v : {c.slots, c.cts_levels, c.stc_levels, c.k_range, c.evalmod_degree,
                        c.double_angle, c.hamming_weight}) {
    w.u32(static_cast<std::uint32_t>(v));
  }
  if (c.pack_sparse) w.u32(1);  // optional field: configurations without it load as before
  return frame(e, o);
}

circuits::BootstrapParameters load_bootstrap_parameters(ByteView in, const ContextPtr& ctx,
                                                        const LoadOptions& o) {
  if (!ctx) throw InvalidArgument("context: expected a Context");
  Framed f = open(in, ObjectType::bootstrap_parameters, ctx.get());
  ByteReader r(f.descriptor, "bootstrap parameters");
  if (f.h.seeded) r.fail("flags", "bootstrap parameters are never seeded");
  if (f.h.key_set) r.fail("flags", "bootstrap parameters belong to no key set");
  check_n(r, *ctx);
  const double scale = r.f64("scale");
  if (!std::isfinite(scale) || scale < 2.0) r.fail("scale", "expected a finite scale >= 2");
  circuits::BootstrapConfig c;
  c.slots = r.u32("slots");
  c.cts_levels = r.u32("cts_levels");
  c.stc_levels = r.u32("stc_levels");
  c.k_range = r.u32("k_range");
  c.evalmod_degree = r.u32("evalmod_degree");
  c.double_angle = r.u32("double_angle");
  c.hamming_weight = r.u32("hamming_weight");
  if (r.remaining() != 0) {
    if (r.u32("pack_sparse") != 1) r.fail("pack_sparse", "expected 1 when present");
    c.pack_sparse = true;
  }
  r.expect_end();
  // The fields' own checks first (each names its field), then the checksum: every field is
  // bounded by validate() before BootstrapParameters builds anything from it.
  std::optional<circuits::BootstrapParameters> p;
  try {
    c.validate(ctx->n());
    p.emplace(ctx, c, scale);
  } catch (const InvalidArgument& e) {  // the field's own message, said of these bytes
    throw InvalidArgument(std::string("bootstrap parameters: ") + e.what());
  }
  read_body(f, 0, o);  // no body; checks the sizes and the CRC
  return std::move(*p);
}

}  // namespace veil::io
