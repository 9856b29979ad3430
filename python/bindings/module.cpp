// veil._core: the nanobind extension exposing Veil's C++ API (SEAL-style lower level), one
// binding file per class family (bind.h lists them). The pythonic layer lives in python/veil/.
#include <nanobind/nanobind.h>

#include "bind.h"

namespace nb = nanobind;
using namespace veil::bind;

NB_MODULE(_core, m) {
  m.doc() = "Veil: homomorphic encryption on NVIDIA GPUs and CPUs (C++ core)";
  bind_errors(m);
  m.attr("__version__") = VEIL_VERSION;
  // Registration order: each class before the signatures that name it (see bind.h).
  bind_backend(m);
  bind_params(m);
  bind_data(m);
  bind_ciphertext_io(m);
  bind_keys(m);
  bind_encoders(m);
  bind_encryptor(m);
  bind_seal(m);
  bind_evaluator(m);
  bind_bootstrap_config(m);  // the circuits layer, after the classes it uses
  bind_circuits(m);
  bind_bootstrap(m);         // after LinearTransform, which Bootstrapper returns
  bind_comparison(m);        // sign, max, inverse, sqrt
  bind_interrupts(m);
}
