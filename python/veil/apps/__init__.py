"""The demos, applications built on Veil's library, and their models.

* :mod:`veil.apps.demo`: encrypted logistic regression (BFV) on the Breast Cancer Wisconsin
  data (``veil demo``);
* :mod:`veil.apps.demo_ckks`: the same task in CKKS, with a polynomial sigmoid under encryption
  (``veil demo --scheme ckks``);
* :mod:`veil.apps.demo_train`: encrypted training, logistic regression by gradient descent on
  encrypted data with CKKS bootstrapping (``veil demo --scheme ckks --train``);
* :mod:`veil.apps.demo_xgboost`: encrypted XGBoost inference, gradient-boosted trees evaluated
  under BFV (``veil demo --model xgboost``), trained in a child interpreter by
  ``_xgb_train.py``.

The service (:mod:`veil.serve`) serves these models, and the CLI runs them. The library core
(``veil`` and its ``_*`` modules, :mod:`veil.seal`, :mod:`veil.distributed`) never imports this
subpackage: ``import veil`` loads none of it.
"""
