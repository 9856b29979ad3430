// veil_ntt_bench: every CUDA NTT kernel variant (ntt_cuda.cu) at HE-typical shapes, on 64-bit words
// and on 32-bit words (primes < 2^31), checked bit for bit against the CPU reference and timed
// beside a device-to-device copy of the same bytes.
//
// Per (variant, shape) one line: microseconds for forward, inverse and copy (CUDA events around one
// call, median of 50 after 5 warm-ups, on a fresh random input per shape), fwd/copy, and the
// forward time per call when 20 calls are queued back to back (host launch latency hidden, as in
// a pipeline of HE operations). A mismatch prints MISMATCH and exits 1. Without a GPU (or a CUDA
// build) the program checks the CPU reference (round trips) and exits 0 with a note.
// Usage: veil_ntt_bench [u32|u64] [variant ...]     (default: both words, all variants)
//        veil_ntt_bench cpu   the CPU kernels at each vector level this processor offers (scalar,
//                             AVX512F/DQ, AVX512-IFMA52): ns per butterfly, one limb, median of 15
//                             (run with OMP_NUM_THREADS=1), outputs checked equal across levels
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "veil/backend/buffer.h"
#include "veil/backend/device.h"
#include "veil/backend/memory.h"
#include "veil/backend/timer.h"
#include "veil/core/primes.h"
#include "veil/ring/ntt.h"
#include "veil/ring/ntt_simd.h"
#include "veil/ring/rns_base.h"

using namespace veil;

namespace {

struct Shape {
  int log_n;
  std::size_t limbs, polys;
};
// (N, limbs x polys): BFV/CKKS ciphertexts from 2^12 to 2^17, a 4-polynomial batch, and the
// key-switching ModUp batch (32 limbs x 31 digits in one call).
const Shape kShapes[] = {{12, 3, 2},  {13, 5, 2},  {14, 7, 2},   {14, 14, 4}, {15, 16, 2},
                         {16, 31, 2}, {16, 36, 2}, {16, 32, 31}, {17, 20, 2}};
// 32-bit words: the same ciphertext shapes, and Cheddar's bootparam_40 (N = 2^16, 47 Q primes
// of 25..30 bits, 59 with the 12 special primes; a ModUp batch of 4 digits x 59 limbs).
const Shape kShapes32[] = {{12, 3, 2},  {13, 5, 2},  {14, 7, 2},  {14, 14, 4}, {15, 16, 2},
                           {16, 31, 2}, {16, 47, 2}, {16, 59, 4}, {17, 20, 2}};

struct Setup {
  std::size_t n;
  std::vector<Modulus> moduli;
  NttTables tables;
  RnsBase base;
};

// Distinct NTT primes of mixed sizes (64-bit words: 30..61 bits, the lazy bounds are tightest at
// 61 bits; 32-bit words: 25..31 bits, tightest at 31).
Setup make_setup(int log_n, std::size_t limbs, bool word32 = false) {
  const std::size_t n = std::size_t(1) << log_n;
  const int bits64[] = {61, 50, 60, 40, 55, 36, 59, 45, 30, 58};
  const int bits32[] = {30, 31, 29, 30, 28, 31, 30, 25, 29, 30};
  std::vector<u64> primes;
  for (std::size_t l = 0; l < limbs; ++l) {
    const int b = word32 ? bits32[l % 10] : bits64[l % 10];
    primes.push_back(generate_ntt_primes(b, n, 1, primes)[0]);
  }
  std::vector<Modulus> moduli(primes.begin(), primes.end());
  NttTables tables(n, moduli);
  std::vector<u32> ids;
  for (std::size_t l = 0; l < limbs; ++l) ids.push_back(u32(l));
  RnsBase base(moduli, ids);
  return Setup{n, moduli, std::move(tables), std::move(base)};
}

template <class W = u64>
std::vector<W> random_input(const Setup& s, std::size_t polys, std::mt19937_64& rng) {
  const std::size_t limbs = s.moduli.size();
  std::vector<W> v(polys * limbs * s.n);
  for (std::size_t k = 0; k < v.size(); ++k) v[k] = W(rng() % s.moduli[(k / s.n) % limbs].value);
  return v;
}

[[maybe_unused]] double median_us(const Device& dev, int warm, int runs, int calls,
                                  const std::function<void()>& f) {
  for (int i = 0; i < warm; ++i) f();
  Timer timer(dev);
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    timer.start();
    for (int c = 0; c < calls; ++c) f();
    t.push_back(timer.stop() * 1000.0 / calls);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Index of the first difference, or -1.
template <class W>
[[maybe_unused]] long first_diff(const std::vector<W>& a, const std::vector<W>& b) {
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (a[k] != b[k]) return long(k);
  }
  return -1;
}

int cpu_only(const char* why) {
  std::printf("veil_ntt_bench: %s; checking the CPU reference only\n", why);
  std::mt19937_64 rng(1);
  const Device cpu = Device::cpu();
  for (const Shape& sh : kShapes) {
    if (sh.polys > 4) continue;  // the CPU check keeps to ciphertext-sized shapes
    const Setup s = make_setup(sh.log_n, sh.limbs);
    const std::vector<u64> in = random_input(s, sh.polys, rng);
    std::vector<u64> v = in;
    ntt_forward(cpu, v.data(), sh.polys, s.base, s.tables);
    ntt_inverse(cpu, v.data(), sh.polys, s.base, s.tables);
    if (v != in) {
      std::printf("MISMATCH: CPU round trip N=2^%d %zux%zu\n", sh.log_n, sh.limbs, sh.polys);
      return 1;
    }
    std::printf("CPU round trip ok: N=2^%d %zu limbs x %zu polys\n", sh.log_n, sh.limbs, sh.polys);
  }
  std::printf("note: no GPU timings (run on a machine with a CUDA GPU)\n");
  return 0;
}

// The CPU NTT per vector level: forward and inverse ns per butterfly ((N/2) log2 N of them) on
// one limb of a prime of `bits` bits, median of 15 after a warm-up; 1 when two levels disagree.
int cpu_bench() {
  using detail::CpuSimd;
  const CpuSimd top = detail::cpu_simd_detected();
  std::printf("veil_ntt_bench cpu: detected %s; ns per butterfly, one limb, median of 15\n",
              detail::cpu_simd_name(top));
  std::printf("%-6s %-5s %-11s %8s %8s\n", "N", "bits", "level", "fwd_ns", "inv_ns");
  std::mt19937_64 rng(7);
  const Device cpu = Device::cpu();
  for (int log_n : {12, 13, 14, 15, 16}) {
    for (int bits : {60, 40}) {
      const std::size_t n = std::size_t(1) << log_n;
      const u64 q = generate_ntt_primes(bits, n, 1, {})[0];
      const std::vector<Modulus> moduli = {Modulus(q)};
      const NttTables tables(n, moduli);
      const RnsBase base(moduli, std::vector<u32>{0});
      std::vector<u64> in(n);
      for (u64& x : in) x = rng() % q;
      std::vector<u64> first;
      for (int level = 0; level <= static_cast<int>(top); ++level) {
        detail::set_cpu_simd(level);
        std::vector<u64> v = in;
        ntt_forward(cpu, v.data(), 1, base, tables);
        if (first.empty()) first = v;
        if (v != first) {
          std::printf("MISMATCH: level %d N=2^%d %d bits\n", level, log_n, bits);
          return 1;
        }
        std::vector<double> fwd, inv;
        for (int r = 0; r < 16; ++r) {
          Timer t(cpu);
          t.start();
          ntt_forward(cpu, v.data(), 1, base, tables);
          fwd.push_back(t.stop() * 1e-3);
          t.start();
          ntt_inverse(cpu, v.data(), 1, base, tables);
          inv.push_back(t.stop() * 1e-3);
        }
        if (v != first) {  // each repetition was a forward and an inverse of first
          std::printf("MISMATCH: round trip at level %d N=2^%d %d bits\n", level, log_n, bits);
          return 1;
        }
        const double bf = double(n) / 2 * log_n;
        auto med = [](std::vector<double> x) {
          x.erase(x.begin());
          std::sort(x.begin(), x.end());
          return x[x.size() / 2];
        };
        std::printf("2^%-4d %-5d %-11s %8.3f %8.3f\n", log_n, bits,
                    detail::cpu_simd_name(static_cast<CpuSimd>(level)), med(fwd) * 1e9 / bf,
                    med(inv) * 1e9 / bf);
      }
      detail::set_cpu_simd(-1);
    }
  }
  return 0;
}

#if VEIL_HAVE_CUDA
// Checks and times every variant on every shape for words W; 1 on a mismatch.
template <class W, std::size_t kCount>
int bench_word(const Device& gpu, const std::vector<int>& variants, const Shape (&shapes)[kCount],
               std::mt19937_64& rng) {
  const Device cpu = Device::cpu();
  for (const Shape& sh : shapes) {
    const Setup s = make_setup(sh.log_n, sh.limbs, sizeof(W) == 4);
    const std::size_t words = sh.polys * sh.limbs * s.n;
    // Reference: forward of A, inverse of B (both random, reduced).
    const std::vector<W> a = random_input<W>(s, sh.polys, rng),
                         b = random_input<W>(s, sh.polys, rng);
    std::vector<W> fa = a, ib = b;
    ntt_forward(cpu, fa.data(), sh.polys, s.base, s.tables);
    ntt_inverse(cpu, ib.data(), sh.polys, s.base, s.tables);
    Buffer<W> data(gpu, words), scratch(gpu, words);
    const std::vector<W> fresh = random_input<W>(s, sh.polys, rng);
    for (int v : variants) {
      detail::set_ntt_variant(v);
      backend::copy(gpu, data.data(), cpu, a.data(), words * sizeof(W));
      ntt_forward(gpu, data.data(), sh.polys, s.base, s.tables);
      long d = first_diff(data.to_host(), fa);
      if (d < 0) {
        backend::copy(gpu, data.data(), cpu, b.data(), words * sizeof(W));
        ntt_inverse(gpu, data.data(), sh.polys, s.base, s.tables);
        d = first_diff(data.to_host(), ib);
        if (d >= 0) d = -2 - d;
      }
      if (d != -1) {
        const bool fwd = d >= 0;
        const std::size_t k = std::size_t(fwd ? d : -2 - d);
        std::printf("MISMATCH: variant %d (%s) %s N=2^%d %zux%zu: poly %zu limb %zu index %zu\n", v,
                    detail::ntt_variant_name(v), fwd ? "forward" : "inverse", sh.log_n, sh.limbs,
                    sh.polys, k / (sh.limbs * s.n), (k / s.n) % sh.limbs, k % s.n);
        return 1;
      }
      backend::copy(gpu, data.data(), cpu, fresh.data(), words * sizeof(W));
      const double fwd = median_us(
          gpu, 5, 50, 1, [&] { ntt_forward(gpu, data.data(), sh.polys, s.base, s.tables); });
      const double inv = median_us(
          gpu, 5, 50, 1, [&] { ntt_inverse(gpu, data.data(), sh.polys, s.base, s.tables); });
      const double cp = median_us(gpu, 5, 50, 1, [&] {
        backend::copy(gpu, scratch.data(), gpu, data.data(), words * sizeof(W));
      });
      const double fwd_q = median_us(
          gpu, 2, 10, 20, [&] { ntt_forward(gpu, data.data(), sh.polys, s.base, s.tables); });
      char shape[32];
      std::snprintf(shape, sizeof shape, "%zux%zu", sh.limbs, sh.polys);
      std::printf("%d:%-10s u%-3d 2^%-4d %-7s %7.1f %8.1f %8.1f %8.1f %6.2f %8.1f\n", v,
                  detail::ntt_variant_name(v), int(8 * sizeof(W)), sh.log_n, shape,
                  words * sizeof(W) / 1e6, fwd, inv, cp, fwd / cp, fwd_q);
      std::fflush(stdout);
    }
  }
  return 0;
}

#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "cpu") return cpu_bench();
#if !VEIL_HAVE_CUDA
  (void)argc;
  (void)argv;
  return cpu_only("this build has no CUDA backend");
#else
  if (cuda_device_count() == 0) return cpu_only("no CUDA device");
  const Device gpu(Device::Kind::cuda, 0);
  std::vector<int> variants;
  bool w32 = true, w64 = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "u32" || a == "u64") {
      w32 = a == "u32";
      w64 = a == "u64";
    } else {
      variants.push_back(std::atoi(argv[i]));
    }
  }
  if (variants.empty()) {
    for (int v = 0; v < detail::ntt_variant_count(); ++v) variants.push_back(v);
  }
  const CudaDeviceInfo info = cuda_device_info(0);
  std::printf("veil_ntt_bench on %s (%d SMs); default variant %d (%s); us = median of 50\n",
              info.name.c_str(), info.multiprocessors, detail::ntt_variant(),
              detail::ntt_variant_name(detail::ntt_variant()));
  std::printf("%-12s %-4s %-6s %-7s %7s %8s %8s %8s %6s %8s\n", "variant", "word", "N", "limbsxp",
              "MB", "fwd_us", "inv_us", "copy_us", "f/copy", "fwd_q_us");
  std::mt19937_64 rng(2026);
  if (w64 && bench_word<u64>(gpu, variants, kShapes, rng) != 0) return 1;
  if (w32 && bench_word<u32>(gpu, variants, kShapes32, rng) != 0) return 1;
  detail::set_ntt_variant(-1);
  std::printf("all variants bit-identical to the CPU reference\n");
  return 0;
#endif
}
