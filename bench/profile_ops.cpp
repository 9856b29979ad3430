// Stage-by-stage timing of BFV multiply + relinearize on one device (CUDA events on the GPU),
// next to a device-to-device copy of the same bytes: the numbers behind bench/NOTES.md.
// Usage: veil_profile [device] [N] [bits...]   e.g. veil_profile cuda 16384 54 54 54 54 54 54 54 60
// VEIL_WORD_BITS=32 or 64 fixes the word size (default: the context's automatic choice).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#include <algorithm>

#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/backend/timer.h"
#include "bench_util.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/keyswitch.h"

using namespace veil;
using veil::bench::median_us;

int main(int argc, char** argv) {
  const Device dev = Device::parse(argc > 1 ? argv[1] : "cuda");
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 16384;
  std::vector<int> bits;
  for (int i = 3; i < argc; ++i) bits.push_back(std::atoi(argv[i]));
  if (bits.empty()) bits = {54, 54, 54, 54, 54, 54, 54, 60};
  const int runs = dev.is_cuda() ? 50 : 5;
  for (const char* method : {"hps", "behz"}) {
    EncryptionParameters p(SchemeType::bfv);
    p.poly_modulus_degree = n;
    p.coeff_modulus = CoeffModulus::create(n, bits);
    p.plain_modulus = PlainModulus::batching(n, 20);
    p.mul_method = mul_method_from_string(method);
    if (const char* wb = std::getenv("VEIL_WORD_BITS")) p.word_bits = std::atoi(wb);  // 32 / 64
    if (p.word_bits == 32 && std::string(method) == "behz") continue;  // BEHZ: 64-bit words only
    auto ctx = Context::create(p, SecurityLevel::none);
    KeyGenerator kg(ctx, dev, 1);
    auto pk = kg.create_public_key();
    auto rlk = kg.create_relin_keys();
    BatchEncoder enc(ctx);
    Encryptor e(ctx, pk, 2);
    Evaluator ev(ctx);
    std::vector<u64> v(n, 5);
    auto a = e.encrypt(enc.encode(v, dev));
    auto b = e.encrypt(enc.encode(v, dev));
    auto c3 = ev.multiply(a, b);
    const std::size_t L = ctx->num_q();
    std::printf("== %s N=%zu, %zu Q primes + %zu special, device %s\n", method, n, L, ctx->num_p(),
                dev.str().c_str());
    WordBuffer scratch(dev, a.word_count(), a.word_bits());
    std::printf("copy of one ciphertext (%zu KiB)   %9.1f us\n", a.data().bytes(a.word_count()) / 1024,
                median_us(dev, runs, [&] {
                  copy_words(dev, scratch.data(), dev, a.data(), a.word_count());
                }));
    WordBuffer nt(dev, a.word_count(), a.word_bits());
    std::printf("NTT forward, 2 polys x %zu limbs    %9.1f us\n", L, median_us(dev, runs, [&] {
                  ntt_forward(dev, nt.data(), 2, ctx->base_q(L - 1), ctx->ntt());
                }));
    std::printf("NTT inverse, 2 polys x %zu limbs    %9.1f us\n", L, median_us(dev, runs, [&] {
                  ntt_inverse(dev, nt.data(), 2, ctx->base_q(L - 1), ctx->ntt());
                }));
    std::printf("add                                %9.1f us\n",
                median_us(dev, runs, [&] { ev.add(a, b); }));
    std::printf("multiply (tensor + rescale)        %9.1f us\n",
                median_us(dev, runs, [&] { ev.multiply(a, b); }));
    std::printf("relinearize                        %9.1f us\n",
                median_us(dev, runs, [&] { ev.relinearize(c3, rlk); }));
    std::printf("  mod_up (all digits + NTT)        %9.1f us\n", median_us(dev, runs, [&] {
                  key_switch_mod_up(*ctx, dev, L - 1, c3.poly(2), false);
                }));
    const KeySwitchDigits digits = key_switch_mod_up(*ctx, dev, L - 1, c3.poly(2), false);
    Ciphertext acc(c3);
    std::printf("  inner product + INTT + ModDown   %9.1f us\n", median_us(dev, runs, [&] {
                  key_switch_inner(*ctx, dev, L - 1, digits, rlk.key(), acc.poly(0), acc.poly(1),
                                   false);
                }));
    std::printf("multiply + relinearize             %9.1f us\n",
                median_us(dev, runs, [&] { ev.relinearize(ev.multiply(a, b), rlk); }));
  }
  return 0;
}
