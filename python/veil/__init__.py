"""Veil: homomorphic encryption (BFV, BGV, CKKS) on NVIDIA GPUs, with the same code on the CPU.

Two levels of API:

* SEAL-style classes (``EncryptionParameters``, ``Context``, ``KeyGenerator``, ``BatchEncoder``,
  ``Encryptor``, ``Decryptor``, ``Evaluator``) from the C++ core, for full control.
* A pythonic layer: ``ctx = veil.bfv(poly_modulus_degree=16384, plain_modulus=65537)`` returns a
  context holding keys; ``ctx.encrypt(numpy_array)`` gives a ciphertext supporting ``+ - *``,
  ``rotate`` and friends, ``len(ct)``; ``ct.decrypt()`` (or ``ctx.decrypt(ct)``) returns its
  values as numpy; ``veil.load(data, ctx)`` reads any Veil object back.
"""

from __future__ import annotations

import os as _os

# OpenMP threads of the CPU backend sleep instead of spinning between parallel regions: spinning
# collapses throughput when the machine is oversubscribed (measured 7-20x slower on a loaded
# 2-core machine). Set OMP_WAIT_POLICY=active before importing veil to override.
_os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from . import (
    _core,
    _enc_tensor_io,  # noqa: F401  (installs the tensor bytes and ctx.encrypt(ndim >= 2))
    seal,
)
from ._base import KeyedContext, load
from ._bootstrap import BootstrapConfig, Bootstrapper
from ._ckks import CKKSCiphertext, CKKSContext, ckks, precision
from ._conv import avg_pool2d, conv2d, im2col_encrypt, max_pool2d
from ._core import (
    BatchEncoder,
    CKKSEncoder,
    CoeffModulus,
    Context,
    Decryptor,
    EncryptionParameters,
    Encryptor,
    Evaluator,
    GaloisKeys,
    KeyGenerator,
    PlainModulus,
    Plaintext,
    PublicKey,
    RelinKeys,
    SecretKey,
    Timer,
)
from ._core import (
    Ciphertext as RawCiphertext,
)
from ._device import default_device, device_info, resolve_device
from ._enc_tensor import PACKING, EncryptedTensor
from ._errors import DepthError
from ._integer import BFVContext, BGVContext, Ciphertext, IntegerContext, bfv, bgv
from ._params import KeyMemoryWarning
from ._tensor import EncodedMatrix, matmul_steps, sum_steps

load_context = KeyedContext.from_bytes

__version__ = _core.__version__

__all__ = [
    "PACKING",
    "BFVContext",
    "BGVContext",
    "BatchEncoder",
    "BootstrapConfig",
    "Bootstrapper",
    "CKKSCiphertext",
    "CKKSContext",
    "CKKSEncoder",
    "Ciphertext",
    "CoeffModulus",
    "Context",
    "Decryptor",
    "DepthError",
    "EncodedMatrix",
    "EncryptedTensor",
    "EncryptionParameters",
    "Encryptor",
    "Evaluator",
    "GaloisKeys",
    "IntegerContext",
    "KeyGenerator",
    "KeyMemoryWarning",
    "KeyedContext",
    "PlainModulus",
    "Plaintext",
    "PublicKey",
    "RawCiphertext",
    "RelinKeys",
    "SecretKey",
    "Timer",
    "avg_pool2d",
    "bfv",
    "bgv",
    "ckks",
    "conv2d",
    "default_device",
    "device_info",
    "im2col_encrypt",
    "load",
    "load_context",
    "matmul_steps",
    "max_pool2d",
    "precision",
    "resolve_device",
    "seal",
    "sum_steps",
]
