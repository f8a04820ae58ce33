"""A seeded differential fuzzer: random calls over ember's op catalogue, each run in ember
and in PyTorch on the same inputs, classified as equal / same-exception / different /
crash / hang (`python -m fuzz --n 20000 --seed 0`).

PyTorch is the oracle only; the fuzzer imports it but ember never does.
"""
