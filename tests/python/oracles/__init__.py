"""Oracles for the C++ circuits layer: the Python implementations it replaced (bootstrapping,
polynomial evaluation, CKKS alignment), kept as they were so that tests/python/test_circuits.py
can compare the two word for word."""
