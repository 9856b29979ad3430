"""CKKS bootstrapping for the pythonic contexts: a thin layer over the C++ circuits layer
(``cpp/veil/circuits``, bound in :mod:`veil._core`), which holds the algorithms.

The pipeline (Cheon-Han-Kim-Kim-Song, Eurocrypt 2018), as ``circuits/bootstrapper.h`` runs it:
SlotToCoeff first (Chen-Chillotti-Song, Eurocrypt 2019) at the bottom of the chain, sparse-secret
encapsulation around ModRaise (Bossuat-Troncoso-Hubaux, eprint 2022/024, §5), SubSum for sparse
slots, CoeffToSlot at the top (factored special FFT, Han-Ki CT-RSA 2020; hoisted baby-step
giant-step products, Halevi-Shoup CRYPTO 2018), and EvalMod (a Chebyshev interpolant of the
scaled cosine and double angles with exact scales, Bossuat-Mouchet-Troncoso-Hubaux, Eurocrypt
2021). A ciphertext below the input level (spent into SlotToCoeff's levels or down to q_0) runs
the papers' original order instead (ModRaise, CoeffToSlot, EvalMod, SlotToCoeff): see
:class:`Bootstrapper`.

Levels, bottom up (:func:`bootstrap_chain`): q_0's block, SlotToCoeff's ``stc_levels``, the
user's levels, EvalMod's ``evalmod_depth`` and CoeffToSlot's ``cts_levels``. A refreshed
ciphertext comes back at ``output_level`` (the top of the user's levels) and may be multiplied
``levels_left`` times before it reaches ``input_level`` (the bottom of the user's levels), where
the next bootstrap starts.

This module arranges the C++ objects for the pythonic API (key generation with a progress bar,
lazy encoding of the transforms, serialization into context bundles); the Python implementation
it replaced is kept as the test oracle in ``tests/python/oracles``.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import _core
from ._base import generate_galois_keys

if TYPE_CHECKING:
    from ._ckks import CKKSContext


@dataclass(frozen=True)
class BootstrapConfig:
    """Bootstrapping parameters (defaults: full slots, Cheddar-like level budget); checked on
    construction (``circuits::BootstrapConfig::validate``).

    Attributes:
        slots: slots refreshed (a power of two <= N/2; default N/2, full slots). Sparse slots
            need a ciphertext whose N/2 slots repeat with this period: on a context that
            bootstraps them, a host vector of at most ``slots`` values is encoded repeated
            (``CKKSContext.encode``); a vector of all N/2 values must already repeat.
        cts_levels, stc_levels: levels (rescale blocks) of CoeffToSlot and SlotToCoeff, 1..16;
            more levels mean fewer rotations per level.
        k_range: K, the bound on |I| (EvalMod's interval is [-(K + 1), K + 1]); with h = 32 the
            coefficients of I have a standard deviation of about sqrt(h / 12) = 1.6, so K = 12
            is 7 standard deviations.
        evalmod_degree: degree of the Chebyshev interpolant of the scaled cosine (2..1023).
        double_angle: r, the number of double-angle steps (0..16).
        hamming_weight: h of the encapsulated sparse secret.
        pack_sparse: sparse slots (at most N/4) only: the real and imaginary parts go through
            one EvalMod side by side instead of two (Chen-Chillotti-Song, Eurocrypt 2019, §4.2),
            for one user level less (the mask that separates them again): ``levels_left`` is
            one smaller.

    Raises:
        ValueError naming the field (out of range), TypeError for a non-integer.
    """

    slots: int | None = None
    cts_levels: int = 3
    stc_levels: int = 3
    k_range: int = 12
    evalmod_degree: int = 31
    double_angle: int = 3
    hamming_weight: int = 32
    pack_sparse: bool = False

    def __post_init__(self) -> None:
        self.to_core()  # validates every field, naming it

    def to_core(self) -> _core.BootstrapConfig:
        """The same configuration as a ``veil._core.BootstrapConfig`` (slots None -> 0)."""
        return _core.BootstrapConfig(slots=self.slots, cts_levels=self.cts_levels,
                                     stc_levels=self.stc_levels, k_range=self.k_range,
                                     evalmod_degree=self.evalmod_degree,
                                     double_angle=self.double_angle,
                                     hamming_weight=self.hamming_weight,
                                     pack_sparse=self.pack_sparse)

    @classmethod
    def from_core(cls, c: _core.BootstrapConfig) -> BootstrapConfig:
        return cls(slots=c.slots or None, cts_levels=c.cts_levels, stc_levels=c.stc_levels,
                   k_range=c.k_range, evalmod_degree=c.evalmod_degree,
                   double_angle=c.double_angle, hamming_weight=c.hamming_weight,
                   pack_sparse=c.pack_sparse)

    @property
    def evalmod_depth(self) -> int:
        """Levels EvalMod consumes: the Chebyshev evaluation (ceil(log2(d + 1))) and the
        double-angle steps."""
        return int(self.to_core().evalmod_depth)

    @property
    def depth(self) -> int:
        """Levels bootstrapping consumes in all (CoeffToSlot, EvalMod, SlotToCoeff)."""
        return int(self.to_core().depth)


@dataclass(frozen=True)
class BootstrapChain:
    """A modulus chain for bootstrapping: :meth:`context_args` gives the matching
    :class:`veil.CKKSContext` arguments."""

    coeff_modulus: list  # bit sizes, special primes last
    rescale_groups: list
    special_primes: int
    alpha: int  # primes per key-switching digit
    scale: float
    user_levels: int

    @classmethod
    def from_core(cls, c: _core.BootstrapChain) -> BootstrapChain:
        return cls(list(c.coeff_modulus), list(c.rescale_groups), int(c.special_primes),
                   int(c.alpha), float(c.scale), int(c.user_levels))

    def context_args(self) -> dict:
        return {"coeff_modulus": self.coeff_modulus, "rescale_groups": self.rescale_groups,
                "special_primes": self.special_primes, "alpha": self.alpha, "scale": self.scale}


def bootstrap_chain(log_n: int, user_levels: int, config: BootstrapConfig = BootstrapConfig(),
                    word_bits: int = 64, special: int | None = None,
                    alpha: int | None = None) -> BootstrapChain:
    """A modulus chain for bootstrapping at N = 2^log_n with ``user_levels`` levels left after it
    (``circuits::bootstrap_chain``).

    From q_0 up: 55 bits, the SlotToCoeff levels (40 bits), ``user_levels`` levels of 40 bits,
    the EvalMod levels (60 bits), the CoeffToSlot levels (56 bits), then the special primes
    (60 bits); with ``word_bits=32``, blocks of ~30-bit primes of about those sizes (two per
    level, one per SlotToCoeff level). Why these sizes: the "CKKS bootstrapping" reference page,
    section "The chain" (docs/reference/bootstrap.md).

    Raises:
        ValueError naming ``word_bits`` (not 32 or 64), ``log_n`` (outside 10..17) or a config
        field.
    """
    return BootstrapChain.from_core(_core.bootstrap_chain(
        log_n, user_levels, _config(config).to_core(), word_bits, special, alpha))


def preset_chain(n: int, security: int | None, config: BootstrapConfig = BootstrapConfig(),
                 word_bits: int = 64) -> BootstrapChain:
    """:func:`bootstrap_chain` with as many user levels as the security bound allows
    (``security=None``, no bound: two user levels, for tests at small N). N = 2^16 at 128 bits:
    15 user levels with 64-bit words (nominal log2 QP = 1723 <= 1747), 13 with 32-bit words (1747).

    Raises:
        ValueError naming poly_modulus_degree when the bound leaves no user level.
    """
    return BootstrapChain.from_core(_core.preset_chain(n, security, _config(config).to_core(),
                                                       word_bits))


def _config(config) -> BootstrapConfig:
    if not isinstance(config, BootstrapConfig):
        raise TypeError(f"config: expected a veil.BootstrapConfig, got {type(config).__name__}")
    return config


#: The entries a bootstrapper adds to its context's bundle (``KeyedContext.to_bytes``), each one
#: Veil object (docs/serialization.md): its parameters (object type 9: configuration and Delta),
#: its Galois keys (type 7) and the two switching keys of sparse-secret encapsulation (type 8).
#: The relinearization keys are the context's own ``relin_keys`` entry.
BUNDLE_BLOBS = ("bootstrap_config", "bootstrap_galois_keys", "bootstrap_to_sparse",
                "bootstrap_to_dense")

#: The phases :meth:`Bootstrapper.bootstrap` times (``timings``), in the order they run for an
#: input at or above ``input_level``.
PHASES = ("slot_to_coeff", "modraise+subsum", "coeff_to_slot", "eval_mod")


class Bootstrapper:
    """Bootstraps ciphertexts of a :class:`veil.CKKSContext`: the pythonic face of
    ``veil._core.Bootstrapper`` (``circuits/bootstrapper.h``; see the module docstring).

    Built by ``CKKSContext.enable_bootstrapping`` (or ``veil.ckks(..., bootstrapping=True)``) on
    the client: generates the sparse secret's two switching keys and the Galois keys of every
    rotation the transforms use and of the conjugation (a progress bar follows them). A server
    gets the same object from ``veil.load_context(client.to_bytes())``: the keys and the
    configuration travel in the bundle, the secret key does not. The transforms' plaintext
    matrices are encoded on the first bootstrap (``plaintext_bytes``), so a context that only
    encrypts never pays for them.

    Levels (absolute, as ``ct.level``): a ciphertext is bootstrapped from ``input_level`` (higher
    ones are switched down) and comes back at ``output_level`` with its scale; ``levels_left``
    multiplications (rescales) lie between the two: the user's budget between bootstraps.
    ``encrypt`` on a bootstrapping context starts at ``output_level``: the levels above it belong
    to CoeffToSlot and EvalMod.

    A ciphertext spent below ``input_level`` (into SlotToCoeff's levels, down to q_0's top) is
    still refreshed, in the papers' original order (ModRaise, CoeffToSlot, EvalMod, then
    SlotToCoeff from ``output_level``): it comes back at ``low_output_level``, ``stc_levels``
    levels lower, with about log2(sqrt(slots)) fewer bits of precision (measured at N = 2^11,
    full slots: mean 25.5 -> 20.5 bits, worst slot 23.7 -> 16.7), because EvalMod's error on each
    coefficient is then spread over every slot by the final SlotToCoeff. That choice, rather
    than forbidding those levels, keeps them usable for a last computation before decryption
    and never leaves a ciphertext that cannot be refreshed; staying at or above ``input_level``
    keeps the full precision and every level. The second SlotToCoeff's matrices are encoded on
    the first such input.

    Memory at N = 2^16 (full slots): about 5.5 GiB of keys with 32-bit words (``key_bytes``),
    plus 1.2-1.4 GiB of plaintext matrices (``plaintext_bytes``; their diagonals repeat with the
    DFT factors' block size and are stored as one period). Each Galois key stores only the
    limbs and digits of the highest level it is used at (``per_level_keys``, default; the
    SlotToCoeff-only keys are a fraction of a top-level key; ``False`` gives every key every
    level, 6.2 GiB, the same words). ``compact_keys=True`` halves the Galois keys (2.8 GiB with
    32-bit words): each keeps its b_j only and the GPU's key-switching kernel regenerates its
    a_j from a seed (ChaCha12), at a cost in time that bench/RESULTS.md measures; the keys then
    differ from those of the same seed without it. ``max_key_bytes`` makes compact only the
    keys whose a_j are cheapest to regenerate, until the keys fit in that many bytes
    (``circuits::BootstrapKeyStorage``). Compact keys travel compact in ``to_bytes()``
    (expanded, twice the bytes, when saved with ``seeded=False``).

    Raises:
        ValueError naming the setting when the chain is too short or the slots invalid, or
        ``ctx`` when it holds no secret key.
    """

    def __init__(self, ctx: CKKSContext, config: BootstrapConfig = BootstrapConfig(),
                 seed: int | None = None, compact_keys: bool = False,
                 per_level_keys: bool = True, max_key_bytes: int | None = None):
        config = _config(config)
        if ctx.secret_key is None:
            raise ValueError("ctx: bootstrapping keys need the secret key (build them on the "
                             "client; a server loads them from the client's bundle)")
        params = _core.BootstrapParameters(ctx.context, config.to_core(), ctx.scale)
        # The keys as circuits::BootstrapKeys::generate makes them (equal word for word for the
        # same seed), the Galois keys one at a time so that a progress bar can follow.
        sparse = _core.KeyGenerator(ctx.context, ctx.device, None if seed is None else seed + 11,
                                    hamming_weight=config.hamming_weight)
        dense = _core.KeyGenerator(ctx.context, ctx.secret_key,
                                   None if seed is None else seed + 12)
        to_sparse = sparse.create_switching_key(ctx.secret_key, params.q0_level)
        to_dense = dense.create_switching_key(sparse.secret_key())
        del sparse
        elts = params.galois_elements
        levels = dict(zip(elts, params.galois_key_levels)) if per_level_keys else None
        compact: bool | set[int] = compact_keys
        if max_key_bytes is not None and (isinstance(max_key_bytes, bool)
                                          or not isinstance(max_key_bytes, int)
                                          or max_key_bytes <= 0):
            raise ValueError(f"max_key_bytes: expected a positive integer, got "
                             f"{max_key_bytes!r}")
        if not compact_keys and max_key_bytes is not None:
            chosen, _ = _core.BootstrapKeys.compact_choice(params, per_level_keys, max_key_bytes)
            compact = {e for e, c in zip(elts, chosen) if c}
        keys = generate_galois_keys(dense, elts, None, 0, "bootstrapping Galois keys",
                                    compact=compact, levels=levels)
        if keys is None:  # the conjugation key is always asked for
            raise AssertionError("bootstrapping: no Galois keys were made")
        self._attach(params, config, _core.BootstrapKeys.take(ctx._rlk(), keys, to_sparse,
                                                               to_dense))

    @classmethod
    def from_keys(cls, parameters: _core.BootstrapParameters, keys: _core.BootstrapKeys,
                  config: BootstrapConfig | None = None) -> Bootstrapper:
        """A bootstrapper around existing keys (a server's, loaded without the secret key).
        ``keys`` is moved in (left empty). Raises ValueError naming a missing or mismatched key
        (``circuits::BootstrapKeys::check``)."""
        keys.check(parameters)
        self = object.__new__(cls)
        self._attach(parameters, config or BootstrapConfig.from_core(parameters.config), keys)
        return self

    # ---- serialization (the context's bundle) ----------------------------------------------------
    def to_blobs(self, compression: str = "zstd", seeded: bool | None = None) -> dict[str, bytes]:
        """The bundle entries :data:`BUNDLE_BLOBS`, in Veil's format: the parameters, the Galois
        keys and the two switching keys (seeded halves unless ``seeded=False``; the dense ->
        sparse key is one of q_0's level, over q_0 P only). No secret material: a server rebuilds the bootstrapper from them and
        the context's relinearization keys (:meth:`from_blobs`)."""
        keys = self._key_set()
        return {
            "bootstrap_config": self.parameters.to_bytes(compression),
            "bootstrap_galois_keys": keys.galois_keys.to_bytes(compression, seeded),
            "bootstrap_to_sparse": keys.to_sparse.to_bytes(compression, None if seeded else seeded),
            "bootstrap_to_dense": keys.to_dense.to_bytes(compression, seeded),
        }

    @classmethod
    def from_blobs(cls, blobs: Mapping[str, Any], context: _core.Context, device: str,
                   relin_keys: _core.RelinKeys | None, max_bytes: int | None = None
                   ) -> Bootstrapper:
        """A bootstrapper from bundle entries (:meth:`to_blobs`) and the context's
        relinearization keys, without the secret key: how a server bootstraps for a client.
        Every object is loaded as hostile bytes (bounds before allocation, every field checked)
        onto ``device``, then the keys are checked against the parameters and each other (one
        key set, every Galois element the transforms use).

        Raises:
            ValueError naming the missing entry or the bad field (``bootstrap_config``,
            ``bootstrap_galois_keys``, ... or the key the check refuses).
        """
        missing = [name for name in BUNDLE_BLOBS if name not in blobs]
        if missing:
            raise ValueError(f"{missing[0]}: missing from the bundle (a bootstrapper needs "
                             f"{', '.join(BUNDLE_BLOBS)})")
        if relin_keys is None:
            raise ValueError("relin_keys: missing from the bundle (bootstrapping multiplies)")

        def load(name, loader, *args):
            try:
                return loader(blobs[name], context, *args, max_bytes)
            except ValueError as e:
                raise ValueError(f"{name}: {e}") from None

        params = load("bootstrap_config", _core.BootstrapParameters.from_bytes)
        gk = load("bootstrap_galois_keys", _core.GaloisKeys.from_bytes, device)
        to_sparse = load("bootstrap_to_sparse", _core.SwitchingKey.from_bytes, device)
        to_dense = load("bootstrap_to_dense", _core.SwitchingKey.from_bytes, device)
        keys = _core.BootstrapKeys.take(relin_keys, gk, to_sparse, to_dense)
        try:
            return cls.from_keys(params, keys)
        except ValueError as e:
            raise ValueError(f"bootstrap keys: {e}") from None

    def _attach(self, params: _core.BootstrapParameters, config: BootstrapConfig,
                keys: _core.BootstrapKeys) -> None:
        self.parameters = params
        self.config = config
        self._keys: _core.BootstrapKeys | None = keys
        self._impl: _core.Bootstrapper | None = None
        self._lock = threading.Lock()

    # ---- the C++ bootstrapper, built on first use ----------------------------------------------
    def _bootstrapper(self) -> _core.Bootstrapper:
        """The C++ bootstrapper; its transforms are encoded (and the keys moved in) on the first
        call."""
        with self._lock:
            if self._impl is None:
                assert self._keys is not None
                self._impl = _core.Bootstrapper.take(self.parameters, self._keys)
                self._keys = None
            return self._impl

    def _key_set(self) -> _core.BootstrapKeys:
        """The keys, wherever they are now (no encoding)."""
        with self._lock:
            keys = self._impl.keys if self._impl is not None else self._keys
            assert keys is not None
            return keys

    # ---- facts --------------------------------------------------------------------------------
    @property
    def slots(self) -> int:
        """n, the slots refreshed."""
        return int(self.parameters.slots)

    @property
    def N(self) -> int:
        """The ring degree N."""
        return int(self.parameters.poly_modulus_degree)

    @property
    def input_level(self) -> int:
        """Where bootstrapping starts (SlotToCoeff's top): the bottom of the user's levels."""
        return int(self.parameters.input_level)

    @property
    def output_level(self) -> int:
        """The level of a refreshed ciphertext: the top of the user's levels (below EvalMod)."""
        return int(self.parameters.output_level)

    @property
    def levels_left(self) -> int:
        """The multiplications (rescales) the user has between bootstraps: from
        ``output_level`` down to ``input_level``."""
        return int(self.parameters.levels_left)

    @property
    def low_output_level(self) -> int:
        """Where an input below ``input_level`` comes back (original order; class docstring)."""
        return int(self.parameters.low_output_level)

    @property
    def q0_level(self) -> int:
        """The top of q_0's block (ModRaise starts there)."""
        return int(self.parameters.q0_level)

    @property
    def q0(self) -> int:
        """q_0's block product (the exact integer)."""
        return math.prod(int(q) for q in self.parameters.context.coeff_modulus_at(self.q0_level))

    @property
    def scale(self) -> float:
        """Delta, the scale the pipeline runs at."""
        return float(self.parameters.scale)

    @property
    def evalmod_level(self) -> int:
        return int(self.parameters.evalmod_level)

    @property
    def evalmod_scale(self) -> float:
        return float(self.parameters.evalmod_scale)

    @property
    def gamma(self) -> float:
        """q_0 / (2 pi Delta): EvalMod's output scale Delta gamma is read as Delta."""
        return float(self.parameters.gamma)

    @property
    def rotation_steps(self) -> list[int]:
        """Signed rotation steps of the transforms and SubSum (the Galois keys' steps)."""
        return list(self.parameters.rotation_steps)

    @property
    def device(self) -> str:
        return str(self._key_set().galois_keys.device)

    @property
    def keys(self) -> _core.BootstrapKeys:
        """The keys (``veil._core.BootstrapKeys``; encodes the transforms first, so that the
        keys it returns stay where they are)."""
        return self._bootstrapper().keys

    @property
    def galois_keys(self) -> _core.GaloisKeys:
        return self.keys.galois_keys

    @property
    def to_sparse(self) -> _core.SwitchingKey:
        """The switching key from the dense to the sparse secret (modulo q_0 P only)."""
        return self.keys.to_sparse

    @property
    def to_dense(self) -> _core.SwitchingKey:
        """The switching key from the sparse secret back to the dense one."""
        return self.keys.to_dense

    # ---- bootstrapping --------------------------------------------------------------------------
    def bootstrap(self, ct: _core.Ciphertext, timings: dict | None = None) -> _core.Ciphertext:
        """Refreshes a raw ciphertext (``_core.Ciphertext``, size 2, level >= ``q0_level``) to
        ``output_level`` (``low_output_level`` for an input below ``input_level``), keeping its
        scale when it is within a factor 2^4 of the context's; another scale (the 2^50 that
        32-bit chains leave on every other level, say) is first brought to the context's by one
        constant product and rescale (one level) and comes back at the context's scale
        (``circuits::Bootstrapper::bootstrap``). ``timings`` (a dict) receives seconds per phase
        (:data:`PHASES`), synchronizing the device after each: for profiling only.

        Raises:
            ValueError naming ``ct`` (size, a level inside q_0's block below its top, a scale far
            from the context's with no level left to adjust it, another context or key set).
        """
        impl = self._bootstrapper()
        if timings is None:
            return impl.bootstrap(ct)
        mark = _Phases(impl.device, timings)
        x = impl.prepare(ct)
        low = x.level != self.input_level
        if not low:
            x = impl.slot_to_coeff(x)
            mark("slot_to_coeff")
        x = impl.mod_raise(x)
        mark("modraise+subsum")
        x = impl.coeff_to_slot(x)
        mark("coeff_to_slot")
        x = impl.eval_mod(x)
        mark("eval_mod")
        if low:
            x = impl.slot_to_coeff(x)
            mark("slot_to_coeff")
        x.scale = impl.output_scale(ct.scale)
        return x

    # ---- reporting ----------------------------------------------------------------------------
    def key_bytes(self) -> int:
        """Bytes of the bootstrapping keys on the device (Galois keys and the two switching
        keys; the relinearization key is the context's)."""
        return int(self._key_set().nbytes)

    def plaintext_bytes(self) -> int:
        """Bytes of the encoded transform matrices (encodes them if not yet done)."""
        return int(self._bootstrapper().plaintext_bytes)

    def __repr__(self) -> str:
        """Its shape (N, slots, levels, rotation keys, device): no key material."""
        p = self.parameters
        return (f"veil.Bootstrapper(N={self.N}, slots={p.slots}, "
                f"input_level={p.input_level}, output_level={p.output_level}, "
                f"levels_left={p.levels_left} (multiplications between bootstraps), "
                f"rotation_keys={len(p.galois_elements)}, device={self.device!r})")


class _Phases:
    """Accumulates seconds per phase into a dict (no-op without one)."""

    def __init__(self, device: str, out: dict | None):
        self.device, self.out = device, out
        self.t = time.perf_counter() if out is not None else 0.0

    def __call__(self, name: str) -> None:
        if self.out is None:
            return
        _core.synchronize(self.device)
        now = time.perf_counter()
        self.out[name] = self.out.get(name, 0.0) + (now - self.t)
        self.t = now


__all__ = ["PHASES", "BootstrapChain", "BootstrapConfig", "Bootstrapper", "bootstrap_chain",
           "preset_chain"]
