// veil._core's Encryptor (public or secret key) and Decryptor.
#include <nanobind/nanobind.h>

#include <string>

#include "bind.h"
#include "bind_common.h"
#include "veil/api/encryptor.h"
#include "veil/core/error.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

void bind_encryptor(nb::module_& m) {
  nb::class_<Encryptor>(m, "Encryptor")
      .def("__repr__", [](const Encryptor& o) { return "veil.Encryptor(" + context_repr(*o.context()).substr(5) + ")"; })
      .def("__init__", [](Encryptor* e, const Ctx& c, const PublicKey& k, nb::handle seed) {
             new (e) Encryptor(c, k, seed_arg(seed));
           }, "context"_a, "public_key"_a, "seed"_a.none() = nb::none())
      .def("__init__", [](Encryptor* e, const Ctx& c, const SecretKey& k, nb::handle seed) {
             new (e) Encryptor(c, k, seed_arg(seed));
           }, "context"_a, "secret_key"_a, "seed"_a.none() = nb::none())
      .def("encrypt", &Encryptor::encrypt, "plain"_a, nb::call_guard<Release>())
      .def("encrypt_zero", &Encryptor::encrypt_zero, nb::call_guard<Release>());

  nb::class_<Decryptor>(m, "Decryptor")
      .def("__repr__", [](const Decryptor& o) { return "veil.Decryptor(" + context_repr(*o.context()).substr(5) + ")"; })
      .def("__init__", [](Decryptor* d, const Ctx& c, const SecretKey& k) { new (d) Decryptor(c, k); },
           "context"_a, "secret_key"_a)
      .def("__init__", [](Decryptor*, const Ctx&, const PublicKey&) {
             throw TypeMismatch("secret_key: Decryptor needs a SecretKey, got a PublicKey");
           }, "context"_a, "secret_key"_a)
      .def("decrypt", &Decryptor::decrypt, "encrypted"_a, "check_noise"_a = true,
           nb::call_guard<Release>(),
           "Decrypts. BFV/BGV: ValueError naming `encrypted` when its noise budget is 0 (the "
           "result would be wrong) unless check_noise=False; ValueError when the ciphertext "
           "belongs to another key set.")
      .def_prop_rw("noise_flooding", &Decryptor::noise_flooding, [](Decryptor& d, nb::handle b) {
             d.set_noise_flooding(int_arg(b, "bits"));
           }, "CKKS: bits of uniform flooding noise added at decryption (IND-CPA-D; 0 = off).")
      .def("invariant_noise_budget", &Decryptor::invariant_noise_budget, "encrypted"_a,
           nb::call_guard<Release>());
}

}  // namespace veil::bind
