// Stage-by-stage timing of CKKS operations on one device (CUDA events on the GPU), next to a
// device-to-device copy of the same bytes: the numbers behind bench/NOTES.md for issue 7.
// Usage: veil_profile_ckks DEVICE SHAPE [LIMBS]
//   SHAPE: bootparam_40 (Cheddar's 32-bit shape: 23x30 + 16x29 + 4x30 + 4x25 bits, 12 x 31-bit
//          special primes, dnum 4), bootparam_40_64bit (50 + 12x40 + 13x55, 7 x 56 special) or
//          phantom6 (60 + 29x40 + 6x60, Phantom's row with six special primes), seal14 or seal13
//          (N = 2^14, 60 + 7x40 + 60, or N = 2^13, 60 + 2x40 + 60, one special prime: the CPU
//          rows against SEAL).
//   LIMBS: RNS limbs of the timed ciphertexts (default: the top level).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/backend/timer.h"
#include "bench_util.h"
#include "veil/ckks/encoder.h"
#include "veil/ring/ntt.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/keyswitch.h"

using namespace veil;
using veil::bench::median_us;

namespace {

std::vector<int> repeat(int count, int bits) { return std::vector<int>(count, bits); }

EncryptionParameters shape(const std::string& name) {
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 65536;
  std::vector<int> bits;
  auto add = [&](int count, int b) {
    const auto r = repeat(count, b);
    bits.insert(bits.end(), r.begin(), r.end());
  };
  if (name == "bootparam_40") {
    add(23, 30), add(16, 29), add(4, 30), add(4, 25), add(12, 31);
    p.special_primes = 12;
    p.rescale_groups = {2};
    for (int i = 0; i < 13; ++i) p.rescale_groups.insert(p.rescale_groups.end(), {1, 2});
    p.rescale_groups.insert(p.rescale_groups.end(), {2, 2, 2});
  } else if (name == "bootparam_40_64bit") {
    add(1, 50), add(12, 40), add(13, 55), add(7, 56);
    p.special_primes = 7;
  } else if (name == "seal14" || name == "seal13") {  // SEAL-like chains, one special prime
    p.poly_modulus_degree = name == "seal14" ? 16384 : 8192;  // 60 + 7x40 + 60, 60 + 2x40 + 60
    add(1, 60), add(name == "seal14" ? 7 : 2, 40), add(1, 60);
    p.special_primes = 1;
  } else if (name == "phantom6") {
    add(1, 60), add(29, 40), add(6, 60);
    p.special_primes = 6;
  } else {
    std::fprintf(stderr, "unknown shape %s\n", name.c_str());
    std::exit(2);
  }
  p.coeff_modulus = CoeffModulus::create(p.poly_modulus_degree, bits);
  p.alpha = p.special_primes;
  return p;
}
}  // namespace

int main(int argc, char** argv) {
  const Device dev = Device::parse(argc > 1 ? argv[1] : "cuda");
  const std::string name = argc > 2 ? argv[2] : "bootparam_40";
  const auto ctx = Context::create(shape(name), SecurityLevel::none);
  const std::size_t limbs = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : ctx->max_level() + 1;
  const std::size_t level = limbs - 1;
  const std::size_t n = ctx->n();
  // VEIL_PROFILE_RUNS: timed runs per stage (1 under a kernel profiler).
  const char* runs_env = std::getenv("VEIL_PROFILE_RUNS");
  const int runs = runs_env ? std::atoi(runs_env) : (dev.is_cuda() ? 50 : 3);
  KeyGenerator kg(ctx, dev, 1);
  const PublicKey pk = kg.create_public_key();
  const RelinKeys rlk = kg.create_relin_keys();
  const GaloisKeys gk = kg.create_galois_keys({1}, false);
  const CKKSEncoder enc(ctx);
  Encryptor e(ctx, pk, 2);
  const Evaluator ev(ctx);
  std::vector<double> v(n / 2, 0.5);
  const double scale = std::ldexp(1.0, 40);
  const Ciphertext a = e.encrypt(enc.encode(v, scale, level, dev));
  const Ciphertext b = e.encrypt(enc.encode(v, scale, level, dev));
  const Ciphertext c3 = ev.multiply(a, b);
  const Ciphertext c2 = ev.relinearize(c3, rlk);
  std::printf("== CKKS %s N=%zu, %zu limbs (level %zu) + %zu special, dnum %zu, %d-bit words, %s\n",
              name.c_str(), n, limbs, level, ctx->num_p(), ctx->key_switch(level).dnum,
              ctx->word_bits(), dev.str().c_str());
  WordBuffer scratch(dev, a.word_count(), a.word_bits());
  std::printf("copy of one ciphertext (%zu KiB)     %9.1f us\n", a.data().bytes(a.word_count()) / 1024,
              median_us(dev, runs, [&] {
                copy_words(dev, scratch.data(), dev, a.data(), a.word_count());
              }));
  WordBuffer nt = a.buffer().clone();
  std::printf("NTT forward, 2 polys x %zu limbs     %9.1f us\n", limbs, median_us(dev, runs, [&] {
                ntt_forward(dev, nt.data(), 2, ctx->base_q(level), ctx->ntt());
              }));
  std::printf("NTT inverse, 2 polys x %zu limbs     %9.1f us\n", limbs, median_us(dev, runs, [&] {
                ntt_inverse(dev, nt.data(), 2, ctx->base_q(level), ctx->ntt());
              }));
  std::printf("add                                  %9.1f us\n",
              median_us(dev, runs, [&] { ev.add(a, b); }));
  std::printf("multiply (tensor)                    %9.1f us\n",
              median_us(dev, runs, [&] { ev.multiply(a, b); }));
  std::printf("relinearize                          %9.1f us\n",
              median_us(dev, runs, [&] { ev.relinearize(c3, rlk); }));
  std::printf("  mod_up (INTT, convert, NTT)        %9.1f us\n", median_us(dev, runs, [&] {
                key_switch_mod_up(*ctx, dev, level, c3.poly(2), true);
              }));
  const KeySwitchDigits digits = key_switch_mod_up(*ctx, dev, level, c3.poly(2), true);
  Ciphertext acc(c2);
  std::printf("  inner product + ModDown (+acc)     %9.1f us\n", median_us(dev, runs, [&] {
                key_switch_inner(*ctx, dev, level, digits, rlk.key(), acc.poly(0), acc.poly(1),
                                 true);
              }));
  std::printf("rescale_to_next                      %9.1f us\n",
              median_us(dev, runs, [&] { ev.rescale_to_next(c2); }));
  std::printf("rotate_vector(1)                     %9.1f us\n",
              median_us(dev, runs, [&] { ev.rotate_vector(a, 1, gk); }));
  std::printf("multiply + relinearize               %9.1f us\n",
              median_us(dev, runs, [&] { ev.relinearize(ev.multiply(a, b), rlk); }));
  std::printf("multiply + relinearize + rescale     %9.1f us\n", median_us(dev, runs, [&] {
                ev.rescale_to_next(ev.relinearize(ev.multiply(a, b), rlk));
              }));
  std::printf("  fused: multiply_relinearize_rescale %9.1f us\n", median_us(dev, runs, [&] {
                ev.multiply_relinearize_rescale(a, b, rlk);
              }));
  std::printf("relinearize_rescale (fused)          %9.1f us\n",
              median_us(dev, runs, [&] { ev.relinearize_rescale(c3, rlk); }));
  // The host's cost of a small operation from C++ (issue 25, item 3; bench/small_ops.py measures
  // it through Python): `calls` back-to-back calls timed on the host clock (no synchronization
  // inside), and the GPU span of the same calls (CUDA events around the loop) per call.
  if (dev.is_cuda()) {
    const int calls = 2000;
    auto host_and_span = [&](const char* what, const std::function<void()>& f) {
      for (int i = 0; i < 20; ++i) f();
      veil::Timer timer(dev);
      timer.start();
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < calls; ++i) f();
      const auto t1 = std::chrono::steady_clock::now();
      const double span_us = timer.stop() * 1000.0 / calls;
      const double host_us = std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
      std::printf("%-36s host %6.2f us/call, GPU span %6.2f us/call, one call %6.2f us\n", what,
                  host_us, span_us, median_us(dev, runs, f));
    };
    Ciphertext acc2(a);
    const Plaintext unit = enc.encode(v, 1.0, level, dev);
    const Decryptor dec(ctx, kg.secret_key());
    host_and_span("add_inplace", [&] { ev.add_inplace(acc2, b); });
    host_and_span("add", [&] { (void)ev.add(a, b); });
    host_and_span("multiply_plain_inplace", [&] { ev.multiply_plain_inplace(acc2, unit); });
    host_and_span("decrypt", [&] { (void)dec.decrypt(a); });
    host_and_span("encode", [&] { (void)enc.encode(v, scale, level, dev); });
  }
  return 0;
}
