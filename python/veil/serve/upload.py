"""What a client sends ``veil serve``, checked before anything is loaded: the framing of
ciphertexts, and key uploads (context bundles) validated field by field against the served
models' specs.

A key upload is ``ctx.to_bytes()``: a JSON description (``format``, ``scheme``, ``security``,
``key_set_id``, ``options``, ``blobs``) and the parameters and keys in Veil's format
(docs/serialization.md). :func:`plan_upload` reads the description and the 48-byte header and
descriptor of every key without decompressing or allocating anything, and returns what the
server will load: the models the upload fits, the Galois elements it holds and the bytes its keys
take once decompressed. The server then loads the keys against *its own* Context, with the
model's own scheme options, never the client's: nothing a client sends can change what another
client's session computes.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _core
from .. import _serialize as _ser

if TYPE_CHECKING:
    from .models import ServedModel

# ---- framing of ciphertexts -----------------------------------------------------------------
#: Magic of a frame of ciphertexts (request and response bodies).
FRAME_MAGIC = b"VEILCTS\x01"


def pack_frame(blobs: Iterable[bytes]) -> bytes:
    """``FRAME_MAGIC | u32 count | count x (u64 length | bytes)``: a request or response body."""
    blobs = [bytes(b) for b in blobs]
    parts = [FRAME_MAGIC, struct.pack("<I", len(blobs))]
    for b in blobs:
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    return b"".join(parts)


def unpack_frame(data, max_count: int) -> list[memoryview]:
    """Inverse of :func:`pack_frame`: the blobs (views into ``data``), 1..max_count of them.

    Raises:
        ValueError: wrong magic, a count of 0 or above ``max_count``, a length running past the
            end, or trailing bytes (the message names the field).
    """
    view = memoryview(data).cast("B")
    if len(view) < 12 or bytes(view[:8]) != FRAME_MAGIC:
        raise ValueError("frame: expected ciphertexts framed as b'VEILCTS\\x01' | u32 count | "
                         "count x (u64 length | bytes)")
    (count,) = struct.unpack_from("<I", view, 8)
    if not 1 <= count <= max_count:
        raise ValueError(f"count: expected 1..{max_count} ciphertexts, got {count}")
    pos, out = 12, []
    for i in range(count):
        item, pos = _ser.read_length_prefixed(view, pos, f"ciphertext {i}")
        out.append(item)
    if pos != len(view):
        raise ValueError(f"frame: {len(view) - pos} unexpected trailing bytes")
    return out


# ---- Veil-format headers (docs/serialization.md, "Veil's format") ---------------------------
_VEIL_MAGIC = b"VEIL"
_HEADER = 48
_FLAG_SEEDED, _FLAG_KEY_SET, _FLAG_PER_KEY = 1, 2, 16
#: Veil-format object types (header byte 6).
_TYPE_SECRET_KEY = 4
#: The entries loaded as keys (counted against the key budget), by their Veil object type; the
#: bootstrapping entries are those of veil._bootstrap.BUNDLE_BLOBS.
_KEY_TYPES = {"public_key": 5, "relin_keys": 6, "galois_keys": 7, "bootstrap_galois_keys": 7,
              "bootstrap_to_sparse": 8, "bootstrap_to_dense": 8, "bootstrap_config": 9}
_GALOIS_ENTRIES = ("galois_keys", "bootstrap_galois_keys")
#: The only entries a key upload may hold (a model accepts a subset: ServedModel.upload_entries),
#: and the only fields of its description.
_UPLOAD_BLOBS = ("parameters", "public_key", "relin_keys", "galois_keys", "bootstrap_config",
                 "bootstrap_galois_keys", "bootstrap_to_sparse", "bootstrap_to_dense")
_META_FIELDS = ("blobs", "format", "key_set_id", "options", "scheme", "security")
_KEY_SET_ID = re.compile(r"[0-9a-f]{32}")


def show(value: Any, limit: int = 40) -> str:
    """A client-supplied value for an error message: its JSON text, cut to ``limit``."""
    try:
        text = json.dumps(value, sort_keys=True)
    except (TypeError, ValueError):
        text = type(value).__name__
    return text if len(text) <= limit else text[:limit] + "..."


@dataclass(frozen=True)
class KeyBlob:
    """What a key's Veil header and descriptor say, read without loading the key.

    ``key_bytes`` is the size of its body once decompressed, with the uniform halves a seeded
    key regenerates counted too: the host words the loader allocates, and an upper bound on the
    device memory the key takes (64-bit words; 32-bit contexts take half).
    """

    name: str
    seeded: bool
    parameter_hash: int
    body_bytes: int
    key_bytes: int
    galois_elts: tuple[int, ...] = ()
    #: Each key's level (``KSwitchKey::level``) when the descriptor has one per key (flag bit
    #: 4); empty when every key serves every level.
    levels: tuple[int, ...] = ()


def read_key_blob(name: str, blob) -> KeyBlob:
    """Reads one key entry's header (and, for Galois keys, its list of elements).

    Raises:
        ValueError: not a Veil-format object of the type its entry names (a secret key included:
            :func:`check_upload` names that case first), or a header or descriptor that runs
            past the data (the message names the entry).
    """
    b = memoryview(blob).cast("B")
    if len(b) < _HEADER or bytes(b[:4]) != _VEIL_MAGIC:
        raise ValueError(f"{name}: not an object in Veil's format (expected the magic 'VEIL')")
    (version,) = struct.unpack_from("<H", b, 4)
    kind, flags = b[6], b[9]  # a secret key (type 4) fails the type check below
    if version != 1:
        raise ValueError(f"{name}: format version {version}, expected 1")
    if kind != _KEY_TYPES[name]:
        raise ValueError(f"{name}: the entry holds an object of type {kind}, expected "
                         f"{_KEY_TYPES[name]} (docs/serialization.md)")
    (param_hash,) = struct.unpack_from("<Q", b, 16)
    (desc_size,) = struct.unpack_from("<I", b, 24)
    (body,) = struct.unpack_from("<Q", b, 32)
    if desc_size > len(b) - _HEADER:
        raise ValueError(f"{name}: descriptor size {desc_size} runs past the end of the entry")
    seeded = bool(flags & _FLAG_SEEDED)
    elts: tuple[int, ...] = ()
    levels: tuple[int, ...] = ()
    if name in _GALOIS_ENTRIES:
        elts, levels, any_seeded = _galois_elements(b[_HEADER:_HEADER + desc_size],
                                                    bool(flags & _FLAG_KEY_SET), seeded, name,
                                                    bool(flags & _FLAG_PER_KEY))
        seeded = seeded or any_seeded
    return KeyBlob(name, seeded, param_hash, body, body * (2 if seeded else 1), elts, levels)


def _galois_elements(desc: memoryview, key_set: bool, seeded: bool,
                     name: str = "galois_keys",
                     per_key: bool = False) -> tuple[tuple[int, ...], tuple[int, ...], bool]:
    """The Galois elements listed by a Galois-keys descriptor, each key's level (empty without a
    descriptor per key) and whether any key is seeded:
    N (u64), the key-set id (u64, when flagged), count, dnum and limbs (u32 each), then per key
    its element (u32) and, when seeded, its 32-byte seed; with a descriptor per key (flag bit 4)
    its element, its level (u32) and a form byte (bit 0 seeded) before the seed."""
    pos = 8 + (8 if key_set else 0)
    if len(desc) < pos + 12:
        raise ValueError(f"{name}: descriptor too short")
    (count,) = struct.unpack_from("<I", desc, pos)
    pos += 12
    if not per_key:
        stride = 4 + (32 if seeded else 0)
        if count > (len(desc) - pos) // stride:
            raise ValueError(f"{name}: count {count} runs past the end of the descriptor")
        return tuple(struct.unpack_from("<I", desc, pos + i * stride)[0]
                     for i in range(count)), (), seeded
    if count > (len(desc) - pos) // 9:
        raise ValueError(f"{name}: count {count} runs past the end of the descriptor")
    elts, levels, any_seeded = [], [], False
    for _ in range(count):
        if pos + 9 > len(desc):
            raise ValueError(f"{name}: the keys' descriptors run past the end of the descriptor")
        elt, level = struct.unpack_from("<II", desc, pos)
        form = desc[pos + 8]
        pos += 9 + (32 if form & 1 else 0)
        elts.append(elt)
        levels.append(level)
        any_seeded = any_seeded or bool(form & 1)
    if pos > len(desc):
        raise ValueError(f"{name}: the keys' descriptors run past the end of the descriptor")
    return tuple(elts), tuple(levels), any_seeded


# ---- uploads ------------------------------------------------------------------------------------
def check_upload(data) -> tuple[dict, dict[str, memoryview], Any]:
    """Checks a key upload's structure *before* any key is loaded.

    Returns (meta, blobs, parameters). Raises ValueError naming what is wrong: not a bundle, a
    secret key inside (by name or by a Veil header of type "secret key" in any entry), an entry
    other than parameters/public_key/relin_keys/galois_keys, or unreadable parameters.
    """
    meta, blobs = _ser.unpack_bundle(data)
    if "secret_key" in blobs or any(
            len(b) >= 7 and bytes(b[:4]) == _VEIL_MAGIC and b[6] == _TYPE_SECRET_KEY
            for b in blobs.values()):
        raise ValueError("upload: contains a secret key; the server accepts evaluation keys only "
                         "(send ctx.to_bytes(), which leaves the secret key out)")
    extra = sorted(set(blobs) - set(_UPLOAD_BLOBS))
    if extra:
        raise ValueError(f"upload: unexpected entries {extra}; expected {list(_UPLOAD_BLOBS)}")
    if "parameters" not in blobs:
        raise ValueError("parameters: missing from the upload")
    try:
        params = _core.EncryptionParameters.from_bytes(bytes(blobs["parameters"]))
    except (ValueError, TypeError) as e:  # the loader names the field inside the object
        raise ValueError(f"parameters: {e}") from None
    return meta, blobs, params


def check_meta(meta: Mapping, model: ServedModel) -> None:
    """Every field of an upload's description against what ``model`` serves (its spec).

    Raises:
        ValueError: an unknown field, or a field whose value the model does not accept; the
            message names the field, the model's value and the upload's (cut short).
    """
    extra = sorted(set(meta) - set(_META_FIELDS))
    if extra:
        raise ValueError(f"meta: unexpected fields {show(extra)}; expected "
                         f"{list(_META_FIELDS)}")
    fmt = meta.get("format")
    if type(fmt) is not int or fmt != 1:
        raise ValueError(f"format: expected 1 (context bundle version 1), got {show(fmt)}")
    if meta.get("scheme") != model.scheme:
        raise ValueError(f"scheme: model {model.name!r} is {model.scheme!r}, the upload says "
                         f"{show(meta.get('scheme'))}")
    security = meta.get("security")
    if type(security) is not type(model.security) or security != model.security:
        raise ValueError(f"security: model {model.name!r} is served at {model.security}-bit "
                         f"security (GET /models), the upload says {show(security)}")
    options = meta.get("options")
    if not isinstance(options, dict) or options != model.options():
        raise ValueError(f"options: model {model.name!r} accepts exactly "
                         f"{show(model.options(), 80)}, the upload says {show(options, 80)}")
    kid = meta.get("key_set_id")
    if not isinstance(kid, str) or not _KEY_SET_ID.fullmatch(kid):
        raise ValueError("key_set_id: expected 32 lowercase hexadecimal digits "
                         f"(veil's key-set identity), got {show(kid)}")


@dataclass
class UploadPlan:
    """A checked key upload: what :meth:`Service.load_session` loads, and its cost.

    ``models`` are the served models the upload's description and parameters fit;
    ``key_bytes`` the decompressed size of its keys (:class:`KeyBlob`).
    """

    meta: dict
    blobs: dict[str, memoryview]
    models: list[str]
    keys: dict[str, KeyBlob] = field(default_factory=dict)

    @property
    def key_bytes(self) -> int:
        return sum(k.key_bytes for k in self.keys.values())

    @property
    def galois_elts(self) -> set[int]:
        """The Galois elements of the evaluation keys (entry ``galois_keys``)."""
        return self.elts("galois_keys")

    def elts(self, entry: str) -> set[int]:
        k = self.keys.get(entry)
        return set(k.galois_elts) if k is not None else set()


def plan_upload(data, models: Mapping[str, ServedModel]) -> UploadPlan:
    """Checks a key upload against the served ``models`` without loading a key.

    In order: the bundle's structure (:func:`check_upload`), the parameter hash (the models
    that match), every field of the description (:func:`check_meta`, against each of those
    models), each key's header (type, parameter hash, size) and the Galois elements: only those
    some fitting model uses are accepted.

    Raises:
        ValueError: the first problem found, naming the field.
    """
    meta, blobs, params = check_upload(data)
    h = int(params.parameter_hash)
    same = [m for m in models.values() if m.parameter_hash() == h]
    if not same:
        raise ValueError(f"parameters: hash {h:016x} matches no served model; GET /models lists "
                         "the parameters of each")
    fits, first_error = [], None
    for m in same:
        try:
            check_meta(meta, m)
            extra = sorted(set(blobs) - set(m.upload_entries()))
            if extra:
                raise ValueError(f"{extra[0]}: model {m.name!r} does not take this entry "
                                 f"(it takes {list(m.upload_entries())})")
            fits.append(m)
        except ValueError as e:
            first_error = first_error or e
    if not fits:
        assert first_error is not None
        raise first_error
    plan = UploadPlan(meta, blobs, [m.name for m in fits])
    for name in _KEY_TYPES:
        if name in blobs:
            k = read_key_blob(name, blobs[name])
            if k.parameter_hash != h:
                raise ValueError(f"{name}: saved under parameters {k.parameter_hash:016x}, the "
                                 f"upload's parameters are {h:016x}")
            plan.keys[name] = k
    # A served model may rotate at any level: its Galois keys must serve every level (keys of a
    # level, KSwitchKey::level, are for bootstrapping, whose loader checks them against its
    # parameters).
    evaluation = plan.keys.get("galois_keys")
    if evaluation is not None and evaluation.levels:
        top = len(params.coeff_modulus) - params.special_primes - 1
        low = [e for e, lv in zip(evaluation.galois_elts, evaluation.levels) if lv < top]
        if low:
            raise ValueError(f"galois_keys: the keys for elements {show(low, 60)} serve only the "
                             f"levels below {top}, the top; a served model may rotate at any "
                             "level (upload keys made without levels)")
    present = list(plan.keys)
    complete = [m for m in fits if not missing_keys(present, plan.galois_elts, m)]
    if not complete:
        raise ValueError(missing_keys(present, plan.galois_elts, fits[0]))
    plan.models = [m.name for m in complete]
    used: set[int] = set()
    for m in complete:
        used |= m.galois_elts()
    unused = sorted(plan.galois_elts - used)
    if unused:
        raise ValueError(f"galois_keys: elements {show(unused, 60)} are used by no model this "
                         f"upload fits ({plan.models}); upload only the keys GET /models lists "
                         "(veil.serve.context_from_spec makes exactly those)")
    boot_used: set[int] = set()
    for m in complete:
        if m.bootstrapping is not None:
            boot_used |= {int(e) for e in m.bootstrap_parameters().galois_elements}
    unused = sorted(plan.elts("bootstrap_galois_keys") - boot_used)
    if unused:
        raise ValueError(f"bootstrap_galois_keys: elements {show(unused, 60)} are used by the "
                         f"bootstrapping of no model this upload fits ({plan.models})")
    return plan


def missing_keys(present: Sequence[str], elts: set[int], model: ServedModel) -> str:
    """What ``model`` needs beyond the keys ``present`` (entry names) and the Galois elements
    ``elts``: a message naming the missing key, or ``""`` when nothing is missing."""
    if model.relin_keys and "relin_keys" not in present:
        return f"relin_keys: model {model.name!r} needs relinearization keys"
    if model.bootstrapping is not None:
        from .._bootstrap import BUNDLE_BLOBS

        for name in BUNDLE_BLOBS:
            if name not in present:
                return (f"{name}: model {model.name!r} bootstraps on the server and needs the "
                        "client's bootstrapping keys (veil.ckks(..., bootstrapping=...), "
                        "ctx.to_bytes())")
    lacking = sorted(model.galois_elts() - elts)
    if lacking:
        return f"galois_keys: model {model.name!r} needs Galois keys for {model.describe_elts(lacking)}"
    return ""
