// The binding files of veil._core, one per class family. module.cpp calls them in this order:
// nanobind must know a class before a signature names it, and the generated stub
// (python/veil/_core.pyi) lists the classes and functions in the order they are registered.
#pragma once
#include <nanobind/nanobind.h>

namespace veil::bind {

// bind_backend.cpp
void bind_errors(nanobind::module_& m);      // Veil's C++ exceptions -> TypeError, ValueError, ...
void bind_backend(nanobind::module_& m);     // devices, threads, memory pool, Timer
void bind_interrupts(nanobind::module_& m);  // Ctrl-C in long C++ loops
// bind_params.cpp: EncryptionParameters, CoeffModulus, PlainModulus, Context
void bind_params(nanobind::module_& m);
// bind_data.cpp: Plaintext, Ciphertext
void bind_data(nanobind::module_& m);
// bind_keys.cpp: SecretKey, PublicKey, RelinKeys, GaloisKeys, SwitchingKey, KeyGenerator
void bind_keys(nanobind::module_& m);
// bind_encoders.cpp: BatchEncoder, CKKSEncoder
void bind_encoders(nanobind::module_& m);
// bind_encryptor.cpp: Encryptor, Decryptor
void bind_encryptor(nanobind::module_& m);
// bind_io.cpp
void bind_ciphertext_io(nanobind::module_& m);  // ciphertext_to_buffer/_to_bytes, ciphertext_info
void bind_seal(nanobind::module_& m);           // seal_*: SEAL 4.x's format
// bind_evaluator.cpp: Evaluator
void bind_evaluator(nanobind::module_& m);
// bind_bootstrap.cpp
void bind_bootstrap_config(nanobind::module_& m);  // BootstrapConfig, BootstrapChain, *_chain
// bind_circuits.cpp: linear transforms, the special FFT, polynomial evaluation, ScaleOps
void bind_circuits(nanobind::module_& m);
// bind_bootstrap.cpp
void bind_bootstrap(nanobind::module_& m);  // BootstrapParameters, BootstrapKeys, Bootstrapper
// bind_comparison.cpp: sign, compare, maximum, relu, inverse and square roots
void bind_comparison(nanobind::module_& m);

}  // namespace veil::bind
