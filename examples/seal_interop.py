"""Veil and Microsoft SEAL exchange keys and ciphertexts (SEAL 4.x's own byte format).

Shows, with SEAL itself through seal-python:

1. a Veil client and a SEAL server: Veil makes the keys and encrypts; SEAL loads Veil's
   parameters, relinearization and Galois keys and ciphertext, multiplies, relinearizes and
   rotates; Veil loads SEAL's result and decrypts it;
2. a SEAL client and a Veil server: SEAL makes the keys and encrypts; Veil builds a server
   context from SEAL's bytes (``veil.seal.keyed_context``: no secret key), computes, and SEAL
   decrypts Veil's result.

Both directions are checked against plaintext arithmetic mod t in numpy. The format and its
rules: docs/serialization.md and docs/seal_format.md.

Run it (needs ``pip install seal-python``, SEAL 4.4's Python bindings)::

    python examples/seal_interop.py

Parameters: BFV, N = 4096, SEAL's default 109-bit chain, a 20-bit batching t. About a second
on a CPU.
"""

from __future__ import annotations

import numpy as np
import seal  # seal-python

import veil

N = 4096


def rows_rolled(values: np.ndarray, steps: int) -> np.ndarray:
    """Both rows of the BFV slot matrix rotated left by ``steps``."""
    top, bottom = np.split(values, 2)
    return np.concatenate([np.roll(top, -steps), np.roll(bottom, -steps)])


def seal_ciphertext(sctx, data: bytes):
    ct = seal.Ciphertext()
    ct.load_bytes(sctx, bytes(data))
    return ct


def veil_client_seal_server() -> None:
    ctx = veil.bfv(poly_modulus_degree=N, plain_modulus=veil.PlainModulus.batching(N, 20),
                   galois_steps=[1], device="auto")
    t = ctx.plain_modulus
    x = np.arange(N) % 1000

    # SEAL reads Veil's parameters, evaluation keys and ciphertext.
    parms = seal.EncryptionParameters(seal.scheme_type.none)
    parms.load_bytes(veil.seal.save(ctx.context))
    sctx = seal.SEALContext(parms)
    assert sctx.parameters_set(), sctx.parameter_error_message()
    rk = sctx.from_relin_str(veil.seal.save(ctx.relin_keys))
    gk = sctx.from_galois_str(veil.seal.save(ctx.galois_keys))
    ct = seal_ciphertext(sctx, veil.seal.save(ctx.encrypt(x)))

    ev = seal.Evaluator(sctx)
    res = ev.rotate_rows(ev.relinearize(ev.multiply(ct, ct), rk), 1, gk)   # SEAL computes

    got = ctx.decrypt(veil.seal.load_ciphertext(res.to_string(), ctx), signed=False)
    assert np.array_equal(got, rows_rolled(x * x % t, 1))
    print("Veil keys -> SEAL evaluates (x * x, rotate_rows 1) -> Veil decrypts: exact")


def seal_client_veil_server() -> None:
    parms = seal.EncryptionParameters(seal.scheme_type.bfv)
    parms.set_poly_modulus_degree(N)
    parms.set_coeff_modulus(seal.CoeffModulus.BFVDefault(N))
    parms.set_plain_modulus(seal.PlainModulus.Batching(N, 20))
    sctx = seal.SEALContext(parms)
    keygen = seal.KeyGenerator(sctx)
    pk, rk = keygen.create_public_key(), keygen.create_relin_keys()
    gk = seal.GaloisKeys()
    keygen.create_galois_keys([1], gk)
    encoder = seal.BatchEncoder(sctx)
    t = parms.plain_modulus().value()
    x = np.arange(N) % 1000
    ct = seal.Encryptor(sctx, pk).encrypt(encoder.encode(x.astype(np.int64)))

    # Veil's server: SEAL's parameters and evaluation keys, no secret key.
    server = veil.seal.keyed_context(parms.to_bytes(), public_key=pk.to_string(),
                                     relin_keys=rk.to_string(), galois_keys=gk.to_string(),
                                     device="auto")
    assert not server.has_secret_key
    v = veil.seal.load_ciphertext(ct.to_string(), server)
    r = (v * v).rotate_rows(1) + v                                          # Veil computes
    print(f"Veil server on {server.device} computed", r)

    back = seal_ciphertext(sctx, veil.seal.save(r))
    got = np.array(encoder.decode_uint64(seal.Decryptor(sctx, keygen.secret_key()).decrypt(back)))
    assert np.array_equal(got, (rows_rolled(x * x % t, 1) + x) % t)
    print("SEAL keys -> Veil evaluates ((x * x) rotated + x) -> SEAL decrypts: exact")


def main() -> None:
    print(f"SEAL via seal-python; Veil {veil.__version__}")
    veil_client_seal_server()
    seal_client_veil_server()
    print("seal_interop: OK")


if __name__ == "__main__":
    main()
