"""torch.func sweep of the reductions, scans, sorts and selections (the `reduce`, `pick` and
`scan` families, softmax, argmax, searchsorted, quantile, the histogram and counting ops):
jvp, vmap and vjp against torch."""

from __future__ import annotations

from tests.func.sweep import Case, make_tests

ND = "not differentiable: vmap only"
S = [(3, 4)]
SCALAR = [[()]]
EMPTY = [[(0, 4)]]


def _r(name, fn, domain="any", extra=(), **kw) -> Case:
    return Case(name, lambda m, x: fn(m, x), S, domain, extra=extra, **kw)


CASES = [
    _r("sum", lambda m, x: x.sum() + m.sum(x, dtype=m.float64), extra=SCALAR + EMPTY,
       complex=True),
    _r("sum_dims", lambda m, x: (x.sum(0), x.sum((0, 1), keepdim=True), x.sum(-1)),
       extra=EMPTY, complex=True),
    _r("nansum", lambda m, x: (m.nansum(x), m.nansum(x, 1)), extra=EMPTY),
    _r("mean", lambda m, x: x.mean(), complex=True),
    _r("mean_dims", lambda m, x: (x.mean(1), x.mean((0, 1), keepdim=True)), complex=True),
    _r("prod", lambda m, x: x.prod(), extra=SCALAR + EMPTY),
    _r("prod_dim", lambda m, x: (x.prod(1), x.prod(0, keepdim=True)), extra=EMPTY),
    _r("amax", lambda m, x: (x.amax(), x.amax(1), x.amax((0, 1), keepdim=True))),
    _r("amin", lambda m, x: (x.amin(), x.amin(0))),
    _r("max", lambda m, x: x.max() + m.max(x * 2)),
    _r("min", lambda m, x: x.min()),
    _r("any_all", lambda m, x: (m.any(x > 1), x.all(), (x > 0).any(1), (x > -1.5).all(0)),
       extra=SCALAR + EMPTY, jvp=ND, vjp=ND),
    # (the whole batch's truth under vmap, unbatched, as PyTorch's batch rule gives it)
    _r("is_all_true", lambda m, x: (m._is_all_true(x > -1.5), m._is_any_true(x > 1)),
       extra=SCALAR + EMPTY, jvp=ND, vjp=ND),
    _r("count_nonzero", lambda m, x: (m.count_nonzero(x > 0), m.count_nonzero(x > 0, 1)),
       extra=SCALAR + EMPTY, jvp=ND, vjp=ND),
    _r("hash_tensor", lambda m, x: (m.hash_tensor(x), x.hash_tensor(1, keepdim=True)),
       extra=SCALAR, jvp=ND, vjp=ND),
    _r("logsumexp", lambda m, x: (x.logsumexp(1), m.logsumexp(x, (0, 1), keepdim=True))),
    _r("var", lambda m, x: (x.var(), x.var(1), x.var(0, correction=0, keepdim=True))),
    _r("std", lambda m, x: (x.std(), x.std(1, unbiased=False))),
    _r("var_mean", lambda m, x: m.var_mean(x, 1) + m.std_mean(x, 0)),
    _r("linalg_vector_norm", lambda m, x: (m.linalg.vector_norm(x), x.norm(dim=1),
                                           m.linalg.vector_norm(x, 3, dim=0),
                                           m.linalg.vector_norm(x, float("inf"), dim=1),
                                           x.norm(p=1)), complex=True),
    _r("median", lambda m, x: x.median()),
    _r("nanmedian", lambda m, x: m.nanmedian(x)),
    # the pick family: values and the indices they came from
    _r("max_dim", lambda m, x: tuple(x.max(1)) + tuple(m.max(x, 0, keepdim=True))),
    _r("min_dim", lambda m, x: tuple(x.min(1))),
    _r("cummax", lambda m, x: tuple(m.cummax(x, 1))),
    _r("cummin", lambda m, x: tuple(m.cummin(x, 0))),
    _r("sort", lambda m, x: tuple(x.sort(1)) + tuple(m.sort(x, 0, descending=True))
       + (m.argsort(x, 1), m.msort(x)) + tuple(m.sort(x, stable=True, dim=1))),
    _r("topk", lambda m, x: tuple(x.topk(2, 1)) + tuple(m.topk(x, 2, 0, largest=False))),
    _r("kthvalue", lambda m, x: tuple(m.kthvalue(x, 2, 1))),
    _r("median_dim", lambda m, x: tuple(x.median(1))),
    _r("nanmedian_dim", lambda m, x: tuple(m.nanmedian(x, 0))),
    _r("mode", lambda m, x: tuple(m.mode(m.round(x), 1))),
    # scans
    _r("cumsum", lambda m, x: x.cumsum(1) + m.cumsum(x, 0), complex=True, extra=EMPTY),
    _r("cumprod", lambda m, x: x.cumprod(1) + m.cumprod(x, 0), extra=EMPTY),
    _r("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1)),
    # softmax and its derivative kernel (through a gradient)
    _r("softmax", lambda m, x: (x.softmax(1), m.log_softmax(x, 0),
                                m.nn.functional.softmax(x, -1, dtype=m.float64))),
    _r("softmax_backward_data",
       lambda m, x: m.func.grad(lambda y: (y.softmax(1) * y).sum())(x)
       + m.func.grad(lambda y: (y.log_softmax(0) * y).sum())(x)),
    _r("argextremum", lambda m, x: (x.argmax(), x.argmin(1), m.argmax(x, 0, keepdim=True)),
       jvp=ND, vjp=ND),
    _r("searchsorted", lambda m, x: (m.searchsorted(m.tensor([-1.0, 0.0, 0.5, 1.5]), x),
                                     m.bucketize(x, m.tensor([-1.0, 0.0, 1.0]), right=True)),
       jvp=ND, vjp=ND),
    _r("quantile", lambda m, x: (m.quantile(x, 0.3, dim=1), m.nanquantile(x, 0.6),
                                 m.quantile(x, m.tensor([0.2, 0.9], dtype=x.dtype), dim=0))),
    # a 0-d input reduced, scanned and sorted along its dim 0 / -1
    Case("dim_ops_0d", lambda m, x: (x.sum(0), x.mean(-1, keepdim=True), x.cumsum(0),
                                     x.logcumsumexp(0), x.max(0).values, x.softmax(0),
                                     x.sort(0).values, x.logsumexp(0), x.prod(0), x.amax(0)),
         [()]),
    _r("histc", lambda m, x: m.histc(x, bins=4, min=-2, max=2), jvp=ND, vjp=ND, extra=[]),
]


test_jvp, test_vmap, test_vjp = make_tests(CASES)
