"""Result layouts of the spatial ops as torch's, where the plain paths (kept plans, array
kernels) and the ops' own paths meet the layouts that are two things at once: size-1 dims
(any stride), one-channel or 1x1-plane tensors that read as channels-last by their strides,
and permuted 3-d inputs of the padding gathers."""

import numpy as np
import torch

import ember

SHAPES = [(1, 1, 3, 1), (1, 3, 1, 4), (2, 1, 1, 5), (1, 1, 1, 1), (1, 2, 3, 3)]


def _cases(shape):
    def cl(lib):  # (the same values stored channels-last: ambiguous where C or H W is 1)
        return lib.arange(float(np.prod(shape))).reshape(shape[0], *shape[2:], shape[1]) \
            .permute(0, 3, 1, 2)

    def rm(lib):
        return lib.arange(float(np.prod(shape))).reshape(shape)

    def perm3(lib):
        return lib.arange(float(np.prod(shape[1:]))).reshape(shape[1:]).permute(1, 0, 2)

    for mode in ("reflect", "replicate", "circular", "constant"):
        pads = tuple(min(1, s - 1) if mode == "reflect" else 1
                     for s in reversed(shape[2:]) for _ in range(2))
        yield f"pad {mode}", lambda lib, F, m=mode, p=pads: F.pad(rm(lib), p, mode=m)
        yield f"pad {mode} 3-d permuted", \
            lambda lib, F, m=mode, p=pads: F.pad(perm3(lib), p[:2], mode=m)
    yield "pad replicate channels-last", lambda lib, F: F.pad(cl(lib), (1, 1, 1, 1),
                                                               mode="replicate")
    for name, src in (("row-major", rm), ("channels-last", cl)):
        yield f"avg_pool2d {name}", lambda lib, F, s=src: F.avg_pool2d(s(lib), 1)
        yield f"max_pool2d {name}", lambda lib, F, s=src: F.max_pool2d(s(lib), 1)
        yield f"adaptive_avg_pool2d {name}", \
            lambda lib, F, s=src: F.adaptive_avg_pool2d(s(lib), 1)
        yield f"interpolate nearest {name}", \
            lambda lib, F, s=src: F.interpolate(s(lib), scale_factor=2)
        yield f"interpolate bilinear {name}", \
            lambda lib, F, s=src: F.interpolate(s(lib), scale_factor=2, mode="bilinear")
        yield f"batch_norm {name}", lambda lib, F, s=src: F.batch_norm(
            s(lib), lib.zeros(shape[1]), lib.ones(shape[1]))


def test_spatial_results_are_laid_out_as_torchs():
    for shape in SHAPES:
        for name, fn in _cases(shape):
            for _ in range(2):  # (the second call takes the kept plan)
                got = fn(ember, ember.nn.functional)
                want = fn(torch, torch.nn.functional)
                assert got.shape == want.shape, (shape, name)
                assert got.stride() == want.stride(), (shape, name, got.stride(),
                                                       want.stride())
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6,
                                           err_msg=f"{shape} {name}")


def test_group_norm_refuses_one_value_a_group_as_torch():
    for shape, groups in [((1, 1, 1, 1), 1), ((1, 2, 1, 1), 2), ((1, 4), 4), ((1, 3, 1), 2),
                          ((1, 2, 1, 1), 1), ((2, 2), 2)]:
        try:
            torch.nn.functional.group_norm(torch.ones(shape), groups)
        except ValueError as e:
            try:
                ember.nn.functional.group_norm(ember.ones(shape), groups)
            except ValueError as mine:
                assert str(mine) == str(e)
            else:
                raise AssertionError(f"{shape} {groups}: not refused")
        else:
            out = ember.nn.functional.group_norm(ember.ones(shape), groups)
            assert out.shape == shape
