"""Trains the XGBoost model of :mod:`veil.apps.demo_xgboost` in a separate interpreter.

Run as a script (``python _xgb_train.py``), never imported by the package: it imports xgboost
before anything else. xgboost's wheel carries its own OpenMP runtime, and on the GPU machine
(xgboost-cpu 3.4.1, Python 3.12) building a DMatrix after ``veil._core`` had loaded the system
libgomp crashed with a segmentation fault (bench/RESULTS.md), while the reverse order
worked. Training in a child process keeps the two runtimes apart whatever the import order.

stdin: an ``.npz`` with ``x`` (n, d) float64, ``y`` (n,), ``x_check`` (m, d) float64 and
``params`` (a JSON string: ``params`` for ``xgboost.train`` and ``rounds``).
stdout: JSON ``{"model": <the booster's JSON model>, "margins": [m floats], "version": str}``.
"""

import io
import json
import sys

import xgboost as xgb  # first: see the module docstring

import numpy as np


def main() -> int:
    data = np.load(io.BytesIO(sys.stdin.buffer.read()), allow_pickle=False)
    cfg = json.loads(str(data["params"]))
    dtrain = xgb.DMatrix(np.asarray(data["x"], dtype=np.float64), label=np.asarray(data["y"]))
    booster = xgb.train(cfg["params"], dtrain, num_boost_round=int(cfg["rounds"]))
    margins = booster.predict(xgb.DMatrix(np.asarray(data["x_check"], dtype=np.float64)),
                              output_margin=True)
    out = {
        "model": json.loads(booster.save_raw(raw_format="json")),
        "margins": [float(v) for v in margins],
        "version": xgb.__version__,
    }
    sys.stdout.write(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
