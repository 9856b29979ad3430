// CKKS bootstrapping timed from C++ (no Python): the same preset chain, configuration and keys as
// veil.ckks(poly_modulus_degree=N, bootstrapping=...), median of CUDA-event timings after warm-up
// (bench_util.h). Beside bench/profile_boot_gpu.py, which times the same bootstrap through the
// Python API, it checks that bootstrapping costs the same from both (issue 23: within 3 %).
// Usage: veil_boot_bench DEVICE [WORD_BITS=32] [SLOTS=0 (full)] [RUNS=10] [LOG_N=16] [pack]
// BOOT_AB="g0b1 g1b2 ..." times one bootstrapper per configuration in the same process, on the
// same keys and input (an A/B without a second key generation): gX turns the graph's concurrent
// branches off or on (backend::set_graph_branches), bY sets the BSGS branches
// (ckks::set_bsgs_branches), eZ sets VEIL_EVALMOD_EVEN=Z for the bootstrapper built (EvalMod's
// even form), dD the fused ModDown's most dropped primes (set_fused_mod_down_max_drop), kK the
// key-switching inner products' batched loads 0/1 (set_key_switch_batched_loads), mM ModUp's
// conversion kernel 0..3 (set_mod_up_kernel), cC the blocked conversions' kernel 0..3
// (set_conversion_kernel), fF the conversions' branch-free full rows 0/1
// (set_conversion_full_rows), nN the fused ModDown's narrow producer 0/1
// (set_fused_mod_down_narrow), lL the conversions' lazy Montgomery rows 0/1
// (set_conversion_montgomery), tT the conversions' log2 threads 15..20
// (set_conversion_log_threads), iI the tensor-core conversions' tiles a block 1/2/4
// (set_conversion_tc_tiles), aA the Galois keys (circuits::BootstrapKeyStorage, each set
// generated with the same seed): 0 every key at the top level, 1 every key compact
// (KSwitchKey::compact), 2 per-level keys (KSwitchKey::level; the default), 3 per-level keys
// with the cheapest made compact until keys + diagonals fit in BOOT_KEY_BUDGET GiB (default 6);
// settings not named keep their last value. Every configuration's output words are compared
// with the first configuration of the same EvalMod form and key family (0 and 2 are one: a
// per-level key is the projection of the top-level key): they must be equal (the branches
// change the schedule, not the arithmetic). BOOT_PHASES=1 also times each public step (SlotToCoeff, ModRaise,
// CoeffToSlot, EvalMod) replayed as its own graph (circuits::GraphReplay), median of RUNS.
// BOOT_REPEAT=K bootstraps the input K times in a row with each configuration (each output the
// next input) and prints the precision after 1, 2, 5, 10, ... K bootstraps: the drift that
// docs/guide/ckks.md bounds (at most K times one bootstrap's error).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <random>
#include <cstdlib>
#include <string>

#include <sstream>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "veil/api/encryptor.h"
#include "veil/backend/graph.h"
#include "veil/ckks/bsgs.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/mod_down_ntt.h"
#include "veil/circuits/bootstrapper.h"
#include "veil/ckks/encoder.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/keyswitch.h"

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
  // BOOT_SEED (default 1) seeds the keys, the encryption and the input values.
  const char* seed_env = std::getenv("BOOT_SEED");
  const std::uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : 1;
  KeyGenerator kg(ctx, dev, seed);
  const SecretKey sk = kg.secret_key();
  const circuits::BootstrapParameters params(ctx, config, chain.scale);
  const circuits::BootstrapKeys keys =
      circuits::BootstrapKeys::generate(params, sk, std::nullopt, seed + 1);
  // Key sets by BOOT_AB's a token, made when a configuration asks: 0 every Galois key at the top
  // level (the keys before per-level storage), 1 every key compact, 2 per-level keys (the
  // default, `keys`), 3 per-level keys with the cheapest compact until keys + diagonals fit in
  // BOOT_KEY_BUDGET GiB (default 6).
  std::map<int, circuits::BootstrapKeys> key_sets;
  const CKKSEncoder encoder(ctx);
  Encryptor enc(ctx, sk, seed + 2);
  // Uniform real values in [-1, 1] (bench/profile_boot_gpu.py's input), tiled for sparse slots.
  std::vector<std::complex<double>> z(n / 2);
  {
    std::mt19937_64 rng(seed + 6);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (std::size_t i = 0; i < params.slots(); ++i) z[i] = u(rng);
    for (std::size_t i = params.slots(); i < z.size(); ++i) z[i] = z[i % params.slots()];
  }
  const Ciphertext x = enc.encrypt(encoder.encode(z, params.scale(), params.input_level(), dev));
  const Decryptor dec(ctx, sk);
  // Worst slot and mean error in bits (veil.ckks.precision: -log2 of the max / mean |error|).
  auto precision = [&](const Ciphertext& y) {
    const std::vector<std::complex<double>> got = encoder.decode(dec.decrypt(y));
    double worst = 0, sum = 0;
    for (std::size_t i = 0; i < z.size(); ++i) {
      const double e = std::abs(got[i] - z[i]);
      worst = std::max(worst, e);
      sum += e;
    }
    return std::make_pair(-std::log2(worst), -std::log2(sum / double(z.size())));
  };
  std::vector<std::string> configs;
  {
    const char* ab = std::getenv("BOOT_AB");
    std::istringstream in(ab ? ab : "");
    for (std::string t; in >> t;) configs.push_back(t);
    if (configs.empty()) configs.push_back("");  // the process's settings
  }
  // [EvalMod even][key family: full keys (a0, a2: the same words), all compact, mixed]
  std::vector<std::uint64_t> first_words[2][3];
  int key_form = 2;
  int status = 0;
  const char* phases_env = std::getenv("BOOT_PHASES");
  const bool phases = phases_env && std::string(phases_env) == "1";
  for (const std::string& cfg : configs) {
    if (!cfg.empty()) {
      // letter-number pairs: g (graph branches 0/1), b (BSGS branches), e (EvalMod's even form
      // 0/1), d (fused ModDown's most dropped primes), k (batched inner-product loads 0/1),
      // m (ModUp's conversion kernel 0..2), c (the blocked conversions' kernel 0..2), f (the
      // conversions' branch-free full rows 0/1), n (the fused ModDown's narrow producer 0/1),
      // l (the conversions' lazy Montgomery rows 0/1), t (their log2 threads), a (Galois
      // keys: 0 top level, 1 compact, 2 per level, 3 per level within a budget)
      std::size_t pos = 0;
      while (pos < cfg.size()) {
        const char key = cfg[pos++];
        std::size_t used = 0;
        long v = 0;
        try {
          v = std::stol(cfg.substr(pos), &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || std::string("gbedkmcfnltai").find(key) == std::string::npos) {
          std::fprintf(stderr,
                       "BOOT_AB: expected letter-number pairs (g, b, e, d, k, m, c, f, n, l, t, a, i), "
                       "got %s\n",
                       cfg.c_str());
          return 2;
        }
        pos += used;
        try {
          if (key == 'g') backend::set_graph_branches(v != 0);
          if (key == 'b') ckks::set_bsgs_branches(static_cast<std::size_t>(v));
          if (key == 'e') setenv("VEIL_EVALMOD_EVEN", v ? "1" : "0", 1);
          if (key == 'd') set_fused_mod_down_max_drop(static_cast<std::size_t>(v));
          if (key == 'k') set_key_switch_batched_loads(v != 0);
          if (key == 'm') set_mod_up_kernel(static_cast<int>(v));
          if (key == 'c') set_conversion_kernel(static_cast<int>(v));
          if (key == 'f') set_conversion_full_rows(v != 0);
          if (key == 'n') set_fused_mod_down_narrow(v != 0);
          if (key == 'l') set_conversion_montgomery(v != 0);
          if (key == 't') set_conversion_log_threads(static_cast<int>(v));
          if (key == 'i') set_conversion_tc_tiles(static_cast<int>(v));
          if (key == 'a') {
            if (v < 0 || v > 3) throw std::invalid_argument("a: expected 0..3");
            key_form = static_cast<int>(v);
          }
        } catch (const std::exception& ex) {
          std::fprintf(stderr, "BOOT_AB: %s (in %s)\n", ex.what(), cfg.c_str());
          return 2;
        }
      }
    }
    if (key_form != 2 && !key_sets.count(key_form)) {
      circuits::BootstrapKeyStorage storage;
      storage.per_level = key_form != 0;
      storage.compact = key_form == 1;
      if (key_form == 3) {
        const char* budget_env = std::getenv("BOOT_KEY_BUDGET");
        const double budget = budget_env ? std::atof(budget_env) : 6.0;
        const std::size_t diagonals = circuits::Bootstrapper(params, keys).plaintext_bytes();
        const std::size_t total = static_cast<std::size_t>(budget * double(1 << 30));
        if (total <= diagonals) {
          std::fprintf(stderr, "BOOT_KEY_BUDGET: %.3f GiB leaves nothing for the keys beside "
                               "%.3f GiB of diagonals\n", budget, double(diagonals) / (1 << 30));
          return 2;
        }
        storage.max_bytes = total - diagonals;
      }
      key_sets.emplace(key_form, circuits::BootstrapKeys::generate(params, sk, std::nullopt,
                                                                   seed + 1, storage));
    }
    const circuits::BootstrapKeys& used = key_form == 2 ? keys : key_sets.at(key_form);
    std::size_t compact_count = 0;
    for (const auto& [e, k] : used.galois_keys.keys()) compact_count += k.compact() ? 1 : 0;
    circuits::Bootstrapper bt(params, used);
    const double us = bench::median_us(dev, runs, [&] { (void)bt.bootstrap(x); });
    const Ciphertext y = bt.bootstrap(x);
    std::vector<std::uint64_t> words = y.buffer().to_host();
    const auto [min_bits, mean_bits] = precision(y);
    const char* same = "first";
    const int family = key_form == 1 ? 1 : (key_form == 3 ? 2 : 0);
    std::vector<std::uint64_t>& first = first_words[bt.evalmod().even() ? 1 : 0][family];
    if (first.empty()) {
      first = std::move(words);
    } else if (words == first) {
      same = "equal";
    } else {
      same = "DIFFERENT";
      status = 1;
    }
    std::printf("C++ bootstrap%s%s: N = 2^%d, %d-bit words, %zu slots%s, %s: median %.3f ms over "
                "%d runs (graph: %s, branches %s, bsgs %zu, EvalMod %s, fused ModDown <= %zu "
                "drops, narrow %s, inner product %s, ModUp kernel %d, conversion kernel %d, full "
                "rows %s, %s keys: %zu of %zu compact), "
                "%zu levels left, "
                "precision %.2f / %.2f bits (worst / mean); keys %.3f GiB + diagonals %.3f GiB; "
                "output words vs the first configuration: %s\n",
                cfg.empty() ? "" : " ", cfg.c_str(), log_n, word_bits, params.slots(),
                config.pack_sparse ? " (pack_sparse)" : "", dev.str().c_str(), us / 1000.0, runs,
                bt.uses_graph() ? "yes" : "no", backend::graph_branches() ? "on" : "off",
                ckks::bsgs_branches(), bt.evalmod().even() ? "even" : "in y",
                fused_mod_down_max_drop(), fused_mod_down_narrow() ? "on" : "off",
                key_switch_batched_loads() ? "batched" : "loop",
                mod_up_kernel(), conversion_kernel(), conversion_full_rows() ? "on" : "off",
                key_form == 0 ? "top-level" : "per-level", compact_count,
                used.galois_keys.keys().size(), params.levels_left(),
                min_bits, mean_bits, double(bt.keys().bytes()) / double(1 << 30),
                double(bt.plaintext_bytes()) / double(1 << 30), same);
    if (const char* rep = std::getenv("BOOT_REPEAT"); rep && std::atoi(rep) > 0) {
      const int rounds = std::atoi(rep);
      Ciphertext r = x;
      std::printf("  %d bootstraps in a row, worst / mean bits after k:", rounds);
      for (int k = 1; k <= rounds; ++k) {
        r = bt.bootstrap(r);
        if (k == 1 || k == 2 || k % 5 == 0 || k == rounds) {
          const auto [w, m] = precision(r);
          std::printf(" %d: %.2f / %.2f%s", k, w, m, k == rounds ? "" : ",");
        }
      }
      std::printf("\n");
    }
    if (phases) {  // each public step replayed as its own graph
      const Ciphertext s0 = bt.slot_to_coeff(x), s1 = bt.mod_raise(s0), s2 = bt.coeff_to_slot(s1);
      const std::pair<const char*, std::pair<const Ciphertext*, circuits::GraphReplay::Computation>>
          steps[] = {
              {"SlotToCoeff", {&x, [&](const Ciphertext& c) { return bt.slot_to_coeff(c); }}},
              {"ModRaise", {&s0, [&](const Ciphertext& c) { return bt.mod_raise(c); }}},
              {"CoeffToSlot", {&s1, [&](const Ciphertext& c) { return bt.coeff_to_slot(c); }}},
              {"EvalMod", {&s2, [&](const Ciphertext& c) { return bt.eval_mod(c); }}}};
      double sum = 0;
      std::printf("  phases (each its own graph, median ms):");
      for (const auto& [name, step] : steps) {
        circuits::GraphReplay replay;
        const double us =
            bench::median_us(dev, runs, [&] { (void)replay.run(*step.first, step.second); });
        const double ms = us / 1000.0;
        sum += ms;
        std::printf(" %s %.3f%s", name, ms, replay.active() ? "" : " (no graph)");
      }
      std::printf("; sum %.3f\n", sum);
    }
    std::fflush(stdout);
  }
  return status;
}
