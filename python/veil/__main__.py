"""``python -m veil``: the ``veil`` command line (:func:`veil.cli.main`) without the console
script, e.g. ``python -m veil info`` or ``python -m veil demo --device cpu``."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
