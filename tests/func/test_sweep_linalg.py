"""torch.func sweep of the matrix products and linear algebra (matmul, addmm, einsum, cross,
trace, the fft, inv, det, slogdet, solve, pinv, cholesky, matrix_exp, qr, svd, eigh, eig, lu): jvp,
vmap and vjp against torch. Factorisations are compared through what does not depend on
their sign or phase conventions (singular values, |U|, the product back), except where both
frameworks run the same LAPACK routine."""

from __future__ import annotations

from tests.func.sweep import Case, make_tests

ND = "not differentiable: vmap only"
LA = 100  # float32 slack: a factorisation's rounding differs from torch's


def _spd(m, a):
    """A well-conditioned Hermitian positive-definite matrix made from `a`."""
    n = a.shape[-2]
    return a @ a.mH + n * m.eye(n, dtype=a.dtype)


def _wc(m, a):
    """`a` shifted away from singular."""
    return a + 3 * m.eye(a.shape[-1], dtype=a.dtype)


def _la(name, fn, shapes=((3, 3),), **kw) -> Case:
    return Case(name, fn, [tuple(s) for s in shapes], slack=kw.pop("slack", LA),
                complex=kw.pop("complex", True), **kw)


def _svd(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return s, u.abs(), vh.abs(), (u * s.unsqueeze(-2)) @ vh


def _eigh(m, a):
    w, v = m.linalg.eigh(a + a.mH)
    return w, v.abs(), m.linalg.eigvalsh(a + a.mH, UPLO="U")


def _eig(m, a):
    w, v = m.linalg.eig(_wc(m, a))
    # sort the eigenvalues by real part, then compare values only (vectors' phases are free)
    return m.linalg.eigvals(_wc(m, a)).abs().sort().values, w.real.sort().values


CASES = [
    _la("matmul", lambda m, x, y: (x @ y, m.mm(x, y), m.matmul(x[0], y), m.mv(x, y[:, 0]),
                                   m.dot(x[0], y[:, 0]), m.outer(x[0], y[0]),
                                   m.vdot(x[0], y[:, 0])), [(3, 4), (4, 2)], slack=10),
    _la("matmul_empty", lambda m, x, y: (x @ y, m.mm(x.mT, x)), [(0, 4), (4, 2)]),
    _la("bmm", lambda m, x, y: (m.bmm(x, y), m.baddbmm(x @ y, x, y, alpha=0.5),
                                x @ y[0]), [(2, 3, 4), (2, 4, 2)], slack=10),
    _la("addmm", lambda m, b, x, y: (m.addmm(b, x, y), m.addmm(b[0], x, y, beta=0.5, alpha=2),
                                     m.nn.functional.linear(x, y.mT, b[0]),
                                     m.addmv(b[:, 0], x, y[:, 0])),
        [(3, 2), (3, 4), (4, 2)], slack=10),
    _la("einsum", lambda m, x, y: (m.einsum("ij,jk->ik", x, y), m.einsum("ij->j", x),
                                   m.einsum("ij,ij->i", x, y.mT), m.tensordot(x, y, 1),
                                   m.kron(x[:2, :2], y[:2])), [(3, 4), (4, 3)], slack=10),
    _la("linalg_cross", lambda m, x, y: (m.linalg.cross(x, y), m.cross(x, y, dim=1)),
        [(2, 3), (2, 3)]),
    _la("trace", lambda m, x: (m.trace(x), x.trace()), [(3, 4)]),
    _la("fft", lambda m, x: (m.fft.fft(x), m.fft.ifft(x, n=6), m.fft.rfft(x.real),
                             m.fft.irfft(m.fft.rfft(x.real), n=4), m.fft.fft2(x),
                             m.fft.fftn(x, dim=(0,)), m.fft.hfft(x, n=5)), [(3, 4)], slack=10),
    _la("linalg_inv", lambda m, a: (m.linalg.inv(_wc(m, a)), m.inverse(_wc(m, a)))),
    _la("linalg_det", lambda m, a: (m.linalg.det(_wc(m, a)), m.det(a))),
    _la("linalg_slogdet", lambda m, a: tuple(m.linalg.slogdet(_wc(m, a)))
        + (m.logdet(_spd(m, a)),)),
    _la("linalg_solve", lambda m, a, b: (m.linalg.solve(_wc(m, a), b),
                                         m.linalg.solve(_wc(m, a), b[:, 0]),
                                         m.linalg.solve(_wc(m, a), b.mT, left=False)),
        [(3, 3), (3, 2)]),
    _la("linalg_pinv", lambda m, a: (m.linalg.pinv(a), m.linalg.pinv(_spd(m, a),
                                                                     hermitian=True)),
        [(3, 2)], complex=False),
    _la("linalg_cholesky", lambda m, a: (m.linalg.cholesky(_spd(m, a)),
                                         m.linalg.cholesky(_spd(m, a), upper=True))),
    _la("linalg_matrix_exp", lambda m, a: (m.linalg.matrix_exp(a), m.matrix_exp(0.1 * a[:1, :1]),
                                           m.linalg.matrix_exp(4 * a))),
    _la("linalg_qr", lambda m, a: tuple(m.linalg.qr(a)) + tuple(m.linalg.qr(a[:, :2])),
        [(3, 3)]),
    _la("linalg_qr_each", lambda m, a: (m.linalg.qr(a).Q * 1, m.linalg.qr(a).R * 1,
                                        m.linalg.qr(a[:, :2]).Q * 1), [(3, 3)]),
    _la("linalg_svd", _svd, [(3, 2)]),
    _la("linalg_eigh", _eigh),
    _la("linalg_eig", _eig, complex=False),
    _la("linalg_lu_factor", lambda m, a: tuple(m.linalg.lu_factor(_wc(m, a)))
        + tuple(m.linalg.lu(_wc(m, a)))),
    _la("linalg_ldl", lambda m, a, b: (m.linalg.ldl_factor(a).LD,
                                       m.linalg.ldl_solve(*m.linalg.ldl_factor(_wc(m, a)), b)),
        [(3, 3), (3, 2)], complex=False, jvp=ND, vjp=ND),
    _la("matrix_norms", lambda m, a: (m.linalg.matrix_norm(a), m.linalg.norm(a, "nuc"),
                                      m.linalg.matrix_norm(a, 2)), [(3, 3)], complex=False),
    _la("cdist", lambda m, a, b: (m.cdist(a, b), m.cdist(a, b, p=1), m.cdist(a, b, p=3)),
        [(3, 2), (4, 2)],
        complex=False, jvp="torch has no forward-mode rule for _cdist_forward"),
]


test_jvp, test_vmap, test_vjp = make_tests(CASES)
