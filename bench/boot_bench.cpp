// CKKS bootstrapping timed from C++ (no Python): the same preset chain, configuration and keys as
// veil.ckks(poly_modulus_degree=N, bootstrapping=...), median of CUDA-event timings after warm-up
// (bench_util.h). Beside bench/profile_boot_gpu.py, which times the same bootstrap through the
// Python API, it checks that bootstrapping costs the same from both (issue 23: within 3 %).
// Usage: veil_boot_bench DEVICE [WORD_BITS=32] [SLOTS=0 (full)] [RUNS=10] [LOG_N=16]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_util.h"
#include "veil/api/encryptor.h"
#include "veil/circuits/bootstrapper.h"
#include "veil/ckks/encoder.h"
#include "veil/rlwe/keygen.h"

using namespace veil;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: veil_boot_bench DEVICE [WORD_BITS] [SLOTS] [RUNS] [LOG_N] [pack]\n");
    return 2;
  }
  const Device dev = Device::parse(argv[1]);
  const int word_bits = argc > 2 ? std::atoi(argv[2]) : 32;
  circuits::BootstrapConfig config;
  config.slots = argc > 3 ? static_cast<std::size_t>(std::atoll(argv[3])) : 0;
  const int runs = argc > 4 ? std::atoi(argv[4]) : 10;
  const int log_n = argc > 5 ? std::atoi(argv[5]) : 16;
  config.pack_sparse = argc > 6 && std::string(argv[6]) == "pack";  // BootstrapConfig's
  const std::size_t n = std::size_t(1) << log_n;
  const SecurityLevel security = log_n == 16 ? SecurityLevel::tc128 : SecurityLevel::none;
  const circuits::BootstrapChain chain = circuits::preset_chain(n, security, config, word_bits);
  const ContextPtr ctx = Context::create(chain.parameters(n, word_bits), security);
  KeyGenerator kg(ctx, dev, 1);
  const SecretKey sk = kg.secret_key();
  const circuits::BootstrapParameters params(ctx, config, chain.scale);
  circuits::Bootstrapper bt(params, circuits::BootstrapKeys::generate(params, sk, std::nullopt, 2));
  const CKKSEncoder encoder(ctx);
  Encryptor enc(ctx, sk, 3);
  std::vector<std::complex<double>> z(n / 2);
  for (std::size_t i = 0; i < z.size(); ++i) z[i] = std::sin(0.001 * double(i));
  const Ciphertext x = enc.encrypt(encoder.encode(z, params.scale(), params.input_level(), dev));
  const double us = bench::median_us(dev, runs, [&] { (void)bt.bootstrap(x); });
  std::printf("C++ bootstrap: N = 2^%d, %d-bit words, %zu slots%s, %s: median %.3f ms over %d "
              "runs (graph: %s), %zu levels left; keys %.3f GiB + diagonals %.3f GiB\n", log_n,
              word_bits, params.slots(), config.pack_sparse ? " (pack_sparse)" : "",
              dev.str().c_str(), us / 1000.0, runs, bt.uses_graph() ? "yes" : "no",
              params.levels_left(), double(bt.keys().bytes()) / double(1 << 30),
              double(bt.plaintext_bytes()) / double(1 << 30));
  return 0;
}
