"""Hostile bytes through the Python API (issue 6, item 3): random mutations of valid objects of
every type, in Veil's format and SEAL's, must load or raise ValueError: never crash, hang or
raise anything else. A bounded property test (hypothesis); scripts/fuzz.sh runs the same loaders
under libFuzzer with ASan/UBSan for millions of inputs."""

from __future__ import annotations

import functools

import pytest
import veil
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from veil import _core


@functools.lru_cache(maxsize=1)
def corpus():
    ctx = veil.bfv(poly_modulus_degree=1024, coeff_modulus=[36, 37], plain_modulus=12289,
                   security=None, galois_steps=[1], device="cpu", seed=4)
    core = ctx.context
    pt = ctx.encode([1, 2, 3])
    ct = ctx.encrypt([1, 2, 3], symmetric=True).raw
    objs = {"plaintext": pt, "ciphertext": ct, "secret_key": ctx.secret_key,
            "public_key": ctx.public_key, "relin_keys": ctx.relin_keys,
            "galois_keys": ctx.galois_keys}
    veil_loaders = {name: (obj.to_bytes(), functools.partial(type(obj).from_bytes, context=core,
                                                             max_bytes=1 << 22))
                    for name, obj in objs.items()}
    veil_loaders["parameters"] = (core.params.to_bytes(), _core.EncryptionParameters.from_bytes)
    # switching keys (issue 23): full (seeded) and trimmed to level 0 (two Q primes needed)
    ks = veil.bfv(poly_modulus_degree=1024, coeff_modulus=[30, 30, 31], plain_modulus=12289,
                  security=None, device="cpu", seed=5, galois_steps=None, relin_keys=False)
    other = _core.KeyGenerator(ks.context, "cpu", 9)
    load_swk = functools.partial(_core.SwitchingKey.from_bytes, context=ks.context,
                                 max_bytes=1 << 22)
    veil_loaders["switching_key"] = (other.create_switching_key(ks.secret_key).to_bytes(),
                                     load_swk)
    veil_loaders["switching_key_trimmed"] = (
        other.create_switching_key(ks.secret_key, 0).to_bytes(), load_swk)
    # a Galois key set with a level and form per key: a key of level 0 and a compact one
    mixed = other.create_galois_keys_from_elts([ks.context.galois_elt_from_step(1)], False, [0])
    mixed.update(other.create_galois_keys_from_elts([ks.context.galois_elt_column], True))
    veil_loaders["galois_keys_per_key"] = (
        mixed.to_bytes(), functools.partial(_core.GaloisKeys.from_bytes, context=ks.context,
                                            max_bytes=1 << 22))
    # bootstrapping parameters on a bootstrapping chain (no keys needed)
    chain = veil.ckks.bootstrap_chain(11, 2)
    ck = veil.ckks(poly_modulus_degree=2048, security=None, device="cpu", seed=6,
                   galois_steps=None, relin_keys=False, **chain.context_args())
    params = _core.BootstrapParameters(ck.context, veil.BootstrapConfig(slots=32).to_core(),
                                       ck.scale)
    veil_loaders["bootstrap_parameters"] = (
        params.to_bytes(), functools.partial(_core.BootstrapParameters.from_bytes,
                                             context=ck.context))
    seal_loaders = {name: (veil.seal.save(obj, compression="zlib" if name == "galois_keys" else "none"),
                           functools.partial(getattr(veil.seal, "load_" + name), context=core))
                    for name, obj in objs.items()}
    seal_loaders["parameters"] = (veil.seal.save(core), veil.seal.load_parameters)
    bundle = (ctx.public().to_bytes(), veil.load_context)
    return {**{"veil_" + k: v for k, v in veil_loaders.items()},
            **{"seal_" + k: v for k, v in seal_loaders.items()}, "bundle": bundle}


NAMES = sorted(corpus())


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
@pytest.mark.parametrize("name", NAMES)
def test_mutated_objects_raise_only_value_error(name, data):
    blob, load = corpus()[name]
    b = bytearray(blob)
    kind = data.draw(st.sampled_from(["flip", "truncate", "insert", "header"]))
    if kind == "truncate":
        b = b[: data.draw(st.integers(0, len(b) - 1))]
    elif kind == "insert":
        at = data.draw(st.integers(0, len(b)))
        b[at:at] = data.draw(st.binary(min_size=1, max_size=16))
    else:
        limit = min(len(b), 160) if kind == "header" else len(b)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, limit - 1))
            b[i] ^= data.draw(st.integers(1, 255))
    try:
        load(bytes(b))
    except ValueError:
        pass
