// veil._core's keys: SecretKey, PublicKey, RelinKeys, GaloisKeys, SwitchingKey (each with its
// serialization, bind_io.h) and the KeyGenerator that makes them.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "bind_io.h"
#include "veil/core/error.h"
#include "veil/rlwe/keygen.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

namespace {

std::size_t galois_bytes(const GaloisKeys& k) {
  std::size_t b = 0;
  for (const auto& [e, key] : k.keys()) b += key.buffer().bytes();
  return b;
}

}  // namespace

void bind_keys(nb::module_& m) {
  auto sk_cls = nb::class_<SecretKey>(m, "SecretKey")
      .def_prop_ro("device", [](const SecretKey& k) { return k.device().str(); })
      .def_prop_ro("nbytes", [](const SecretKey& k) { return k.buffer().bytes(); })
      .def("__repr__", [](const SecretKey& k) { return key_repr("SecretKey", k, k.buffer().bytes()); })
      .def_prop_ro("key_set_id", &SecretKey::key_id)
      .def("to", [](const SecretKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>())
      .def("data", [](const SecretKey& k) { return to_numpy(k.buffer().to_host()); });
  def_serialization<SecretKey>(sk_cls, "secret_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_secret_key(v, c, d, o);
  }, /*picklable=*/false);
  auto pk_cls = nb::class_<PublicKey>(m, "PublicKey")
      .def_prop_ro("device", [](const PublicKey& k) { return k.device().str(); })
      .def_prop_ro("nbytes", [](const PublicKey& k) { return k.buffer().bytes(); })
      .def("__repr__", [](const PublicKey& k) { return key_repr("PublicKey", k, k.buffer().bytes()); })
      .def_prop_ro("key_set_id", &PublicKey::key_id)
      .def("to", [](const PublicKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>())
      .def("data", [](const PublicKey& k) { return to_numpy(k.buffer().to_host()); });
  def_serialization<PublicKey>(pk_cls, "public_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_public_key(v, c, d, o);
  });
  auto rk_cls = nb::class_<RelinKeys>(m, "RelinKeys")
      .def_prop_ro("device", [](const RelinKeys& k) { return k.device().str(); })
      .def_prop_ro("nbytes", [](const RelinKeys& k) { return k.key().buffer().bytes(); })
      .def("__repr__", [](const RelinKeys& k) { return key_repr("RelinKeys", k, k.key().buffer().bytes()); })
      .def_prop_ro("key_set_id", &RelinKeys::key_id)
      .def("to", [](const RelinKeys& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>())
      .def_prop_ro("compact", [](const RelinKeys& k) { return k.key().compact(); },
                   "Whether the key stores its b_j only (create_relin_keys(compact=True)).")
      .def("data", [](const RelinKeys& k) { return to_numpy(k.key().buffer().to_host()); },
           "The stored words: ``[dnum][2][L+k][N]`` (b_j, a_j), or ``[dnum][L+k][N]`` (the b_j) "
           "for a compact key.");
  def_serialization<RelinKeys>(rk_cls, "relin_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_relin_keys(v, c, d, o);
  });
  auto gk_cls = nb::class_<GaloisKeys>(m, "GaloisKeys")
      .def_prop_ro("device", [](const GaloisKeys& k) { return k.device().str(); })
      .def_prop_ro("nbytes", &galois_bytes, "Bytes of all keys on their device.")
      .def("__len__", [](const GaloisKeys& k) { return k.keys().size(); })
      .def("__repr__", [](const GaloisKeys& k) {
             return key_repr("GaloisKeys", k, galois_bytes(k), ", keys=" + std::to_string(k.keys().size()));
           })
      .def("update", [](GaloisKeys& k, const GaloisKeys& other) {
             if (!k.context() || !other.context() ||
                 k.context()->parameter_hash() != other.context()->parameter_hash()) {
               throw InvalidArgument("other: Galois keys of another context");
             }
             if (other.device() != k.device()) {
               throw InvalidArgument("other: Galois keys on " + other.device().str() + ", expected " + k.device().str());
             }
             for (const auto& [e, key] : other.keys()) {
               if (!k.has_key(e)) k.insert(e, key);
             }
           }, "other"_a,
           "Adds the keys of `other` (same context, device and key set) that this set lacks. "
           "ValueError naming `other` otherwise.")
      .def_prop_ro("key_set_id", &GaloisKeys::key_id)
      .def("has_key", [](const GaloisKeys& k, nb::handle e) {
            return k.has_key(static_cast<u32>(u64_arg(e, "galois_elt", 0, UINT32_MAX)));
          }, "galois_elt"_a)
      .def_prop_ro("galois_elts", [](const GaloisKeys& k) {
            std::vector<u32> e;
            for (const auto& [g, _] : k.keys()) e.push_back(g);
            return e;
          })
      .def_prop_ro("levels", [](const GaloisKeys& k) {
            std::map<u32, std::size_t> out;
            for (const auto& [g, key] : k.keys()) out[g] = key.level();
            return out;
          }, "Each key's level (element -> the highest level it serves; KSwitchKey::level).")
      .def_prop_ro("compact_elts", [](const GaloisKeys& k) {
            std::vector<u32> e;
            for (const auto& [g, key] : k.keys()) {
              if (key.compact()) e.push_back(g);
            }
            return e;
          }, "The elements whose keys are compact (KSwitchKey::compact).")
      .def("to", [](const GaloisKeys& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>());
  def_serialization<GaloisKeys>(gk_cls, "galois_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_galois_keys(v, c, d, o);
  });

  auto swk_cls = nb::class_<SwitchingKey>(
      m, "SwitchingKey", "A key switching ciphertexts from one secret key to another.");
  def_serialization<SwitchingKey>(
      swk_cls, "switching_key",
      [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
        return io::load_switching_key(v, c, d, o);
      });
  swk_cls
      .def_prop_ro("device", [](const SwitchingKey& k) { return k.device().str(); })
      .def_prop_ro("key_set_id", &SwitchingKey::key_id)
      .def_prop_ro("from_key_set_id", &SwitchingKey::from_key_id)
      .def_prop_ro("max_level", &SwitchingKey::max_level)
      .def_prop_ro("nbytes", [](const SwitchingKey& k) { return k.key().buffer().bytes(); })
      .def("__repr__", [](const SwitchingKey& k) {
             return key_repr("SwitchingKey", k, k.key().buffer().bytes(), ", max_level=" + std::to_string(k.max_level()));
           })
      .def("to", [](const SwitchingKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>());

  nb::class_<KeyGenerator>(m, "KeyGenerator",
                           "Generates the secret key on `device`; seed=None draws from the OS.")
      .def("__repr__", [](const KeyGenerator& k) { return "veil.KeyGenerator(" + context_repr(*k.context()).substr(5) + ")"; })
      .def("__init__", [](KeyGenerator* k, const Ctx& c, const std::string& d, nb::handle seed,
                          nb::handle hw) {
             const auto s = seed_arg(seed);
             const Device dev = dev_of(d);
             const std::size_t h = size_arg(hw, "hamming_weight");
             Release r;
             new (k) KeyGenerator(c, dev, s, h);
           }, "context"_a, "device"_a = "cpu", "seed"_a.none() = nb::none(),
           "hamming_weight"_a = 0,
           "hamming_weight > 0 samples a sparse ternary secret with exactly that many nonzero "
           "coefficients (CKKS bootstrapping's encapsulated secret).")
      .def("__init__", [](KeyGenerator* k, const Ctx& c, const SecretKey& sk, nb::handle seed) {
             const auto s = seed_arg(seed);
             Release r;
             new (k) KeyGenerator(c, sk, s);
           }, "context"_a, "secret_key"_a, "seed"_a.none() = nb::none())
      .def("secret_key", &KeyGenerator::secret_key)
      .def("create_public_key", &KeyGenerator::create_public_key, nb::call_guard<Release>())
      .def("create_relin_keys", &KeyGenerator::create_relin_keys, "compact"_a = false,
           nb::call_guard<Release>(),
           "Switches s^2 to s. compact: the key stores its b_j only and regenerates its a_j "
           "where they are read (half the bytes; KSwitchKey::compact).")
      .def("create_galois_keys", [](const KeyGenerator& k, nb::handle steps_in, bool cols) {
             if (steps_in.is_none()) {
               Release r;
               return k.create_galois_keys();
             }
             auto steps = list_arg(steps_in, "steps", "integers", [](nb::handle x) { return int_arg(x, "steps"); });
             Release r;
             return k.create_galois_keys(steps, cols);
           }, "steps"_a.none() = nb::none(), "include_columns"_a = true,
           "Keys for the given rotation steps (default: every power of two, both directions) "
           "and the column swap.")
      .def("create_switching_key", [](const KeyGenerator& k, const SecretKey& from, nb::handle lv) {
             const std::size_t level = lv.is_none() ? static_cast<std::size_t>(-1)
                                                    : size_arg(lv, "max_level");
             Release r;
             return k.create_switching_key(from, level);
           }, "from_key"_a, "max_level"_a.none() = nb::none(),
           "A key switching ciphertexts under `from_key` to this generator's secret, for levels "
           "<= max_level (default: all; lower levels keep only Q_max_level and P limbs).")
      .def("create_galois_keys_from_elts", [](const KeyGenerator& k, nb::handle e, bool compact,
                                              nb::handle lv) {
             auto elts = list_arg(e, "galois_elts", "integers", [](nb::handle x) {
               return static_cast<std::uint32_t>(u64_arg(x, "galois_elts", 0, UINT32_MAX));
             });
             std::vector<std::size_t> levels;
             if (!lv.is_none()) {
               levels = list_arg(lv, "levels", "integers", [](nb::handle x) { return size_arg(x, "levels"); });
             }
             Release r;
             return k.create_galois_keys_from_elts(elts, compact, levels);
           }, "galois_elts"_a, "compact"_a = false, "levels"_a.none() = nb::none(),
           "Keys for explicit Galois elements; compact: each stores its b_j only (half the "
           "bytes; KSwitchKey::compact); levels: None, or one level per element (the key serves "
           "levels <= it and stores only their limbs and digits; KSwitchKey::level).");
}

}  // namespace veil::bind
