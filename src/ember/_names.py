"""The name ember prints before `Size`, dtypes and `tensor(...)` reprs.

`ember.compat.install()` switches it to "torch" so that unmodified PyTorch
programs print exactly what they print under PyTorch.
"""

prefix = "ember"
