/* libm_maps.c: the C library's own functions mapped over contiguous arrays, y[i] = f(x[i])
 * (and y[i] = pow(x[i], e[i])), compiled for float (expf, lgammaf ... through <tgmath.h>)
 * and double.
 *
 * PyTorch's scalar special-function kernels (Cephes' Bessel, gamma, zeta, erfcx) call the
 * C library's exp, log, sin, lgamma ..., whose last bits glibc does not always round
 * correctly: ops/_cephes_*.py replay those kernels and need the same bits, which these
 * loops give without a Python call per element (ops/_cephes_bessel.libm). Serial on
 * purpose: lgamma writes the global signgam.
 */
#include <stdint.h>
#include <tgmath.h>

#define LIBM_MAP(fname)                                                                    \
    void FN(libm_##fname)(const scalar_t *x, scalar_t *y, int64_t n) {                     \
        for (int64_t i = 0; i < n; i++) y[i] = fname(x[i]);                                 \
    }

LIBM_MAP(exp)
LIBM_MAP(log)
LIBM_MAP(sin)
LIBM_MAP(cos)
LIBM_MAP(tan)
LIBM_MAP(lgamma)
LIBM_MAP(log1p)
LIBM_MAP(expm1)
LIBM_MAP(erf)
LIBM_MAP(erfc)

#undef LIBM_MAP

void FN(libm_pow)(const scalar_t *x, const scalar_t *e, scalar_t *y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = pow(x[i], e[i]);
}
