/* layer_norm.c: layer normalisation over the last n elements of each row, forward and
 * backward. Written once against scalar_t and FN(name); kernels.py compiles it for float
 * and double.
 *
 * x is contiguous (rows, n). Rows are independent tasks. Sums are in double over reduce.h's
 * 16 lanes (a fixed order); everything else is rounded to scalar_t as the NumPy kernels of
 * ops/layer_norm.py round it, so given the same statistics both give the same bits:
 *   forward:  mean = (scalar_t)(sum(x) / n); d = x - mean; var = (scalar_t)(sum(d^2) / n)
 *             with d^2 in double; rstd = 1 / sqrt(var + eps); xhat = d * rstd;
 *             out = fma(xhat, w, b) (one rounding, as PyTorch's kernel: ops/_fma.py)
 *   backward: gw = g * w, a = (scalar_t)(sum(gw) / n), b = (scalar_t)(sum((g xhat) w) / n),
 *             dx = ((gw - a) - xhat b) * rstd; dweight = sum over rows of g xhat and
 *             dbias = sum over rows of g, each column summed in double in row order (tasks
 *             of column blocks, so the order does not depend on the thread count).
 */
#include <math.h>

#include "ember.h"
#include "reduce.h"

#define LN_BLOCK 256 /* columns per task of the column sums */

typedef struct {
    const scalar_t *x, *weight, *bias;
    scalar_t *out, *xhat, *rstd;
    int64_t rows, n;
    double eps;
} FN(ln_args);

static void FN(ln_forward_task)(void *p, int64_t lo, int64_t hi) {
    const FN(ln_args) *a = p;
    const int64_t n = a->n;
    const scalar_t *restrict w = a->weight, *restrict b = a->bias;
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *restrict x = a->x + r * n;
        scalar_t *restrict out = a->out + r * n, *restrict xh = a->xhat + r * n;
        scalar_t mean, rstd;
        FN(row_mean_rstd)(x, n, a->eps, &mean, &rstd);
        for (int64_t j = 0; j < n; j++) xh[j] = (x[j] - mean) * rstd;
        if (w && b)
            for (int64_t j = 0; j < n; j++) out[j] = EMBER_FMA_T(xh[j], w[j], b[j]);
        else if (w)
            for (int64_t j = 0; j < n; j++) out[j] = xh[j] * w[j];
        else if (b)
            for (int64_t j = 0; j < n; j++) out[j] = xh[j] + b[j];
        else
            for (int64_t j = 0; j < n; j++) out[j] = xh[j];
        a->rstd[r] = rstd;
    }
}

void FN(ln_forward)(const scalar_t *x, const scalar_t *weight, const scalar_t *bias,
                    scalar_t *out, scalar_t *xhat, scalar_t *rstd, int64_t rows, int64_t n,
                    double eps) {
    FN(ln_args) a = {x, weight, bias, out, xhat, rstd, rows, n, eps};
    ember_parallel_for(FN(ln_forward_task), &a, rows, EMBER_MAX(1, 16384 / EMBER_MAX(n, 1)));
}

typedef struct {
    const scalar_t *g, *xhat, *rstd, *weight;
    scalar_t *dx, *dweight, *dbias;
    int64_t rows, n;
} FN(lnb_args);

static void FN(ln_dx_task)(void *p, int64_t lo, int64_t hi) {
    const FN(lnb_args) *a = p;
    const int64_t n = a->n;
    const scalar_t *restrict w = a->weight;
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *restrict g = a->g + r * n, *restrict xh = a->xhat + r * n;
        scalar_t *restrict dx = a->dx + r * n;
        double sa[EMBER_LANES] = {0}, sb[EMBER_LANES] = {0};
        int64_t j = 0;
        if (w) {
            for (; j + EMBER_LANES <= n; j += EMBER_LANES)
                for (int k = 0; k < EMBER_LANES; k++) {
                    const scalar_t gk = g[j + k], wk = w[j + k];
                    sa[k] += (double)(scalar_t)(gk * wk);
                    sb[k] += (double)(scalar_t)((scalar_t)(gk * xh[j + k]) * wk);
                }
            for (int k = 0; j + k < n; k++) {
                const scalar_t gk = g[j + k], wk = w[j + k];
                sa[k] += (double)(scalar_t)(gk * wk);
                sb[k] += (double)(scalar_t)((scalar_t)(gk * xh[j + k]) * wk);
            }
        } else {
            for (; j + EMBER_LANES <= n; j += EMBER_LANES)
                for (int k = 0; k < EMBER_LANES; k++) {
                    sa[k] += (double)g[j + k];
                    sb[k] += (double)(scalar_t)(g[j + k] * xh[j + k]);
                }
            for (int k = 0; j + k < n; k++) {
                sa[k] += (double)g[j + k];
                sb[k] += (double)(scalar_t)(g[j + k] * xh[j + k]);
            }
        }
        const scalar_t ma = (scalar_t)(ember_lanes_total(sa) / (double)n);
        const scalar_t mb = (scalar_t)(ember_lanes_total(sb) / (double)n);
        const scalar_t rs = a->rstd[r];
        if (w)
            for (j = 0; j < n; j++) dx[j] = (((scalar_t)(g[j] * w[j]) - ma) - xh[j] * mb) * rs;
        else
            for (j = 0; j < n; j++) dx[j] = ((g[j] - ma) - xh[j] * mb) * rs;
    }
}

static void FN(ln_columns_task)(void *p, int64_t lo, int64_t hi) {
    const FN(lnb_args) *a = p;
    const int64_t n = a->n;
    double sw[LN_BLOCK], sbias[LN_BLOCK];
    for (int64_t blk = lo; blk < hi; blk++) {
        const int64_t c0 = blk * LN_BLOCK, wdt = EMBER_MIN(LN_BLOCK, n - c0);
        for (int64_t i = 0; i < wdt; i++) sw[i] = sbias[i] = 0.0;
        for (int64_t r = 0; r < a->rows; r++) {
            const scalar_t *restrict g = a->g + r * n + c0, *restrict xh = a->xhat + r * n + c0;
            for (int64_t i = 0; i < wdt; i++) {
                sw[i] += (double)(scalar_t)(g[i] * xh[i]);
                sbias[i] += (double)g[i];
            }
        }
        for (int64_t i = 0; i < wdt; i++) {
            a->dweight[c0 + i] = (scalar_t)sw[i];
            a->dbias[c0 + i] = (scalar_t)sbias[i];
        }
    }
}

void FN(ln_backward)(const scalar_t *g, const scalar_t *xhat, const scalar_t *rstd,
                     const scalar_t *weight, scalar_t *dx, scalar_t *dweight, scalar_t *dbias,
                     int64_t rows, int64_t n) {
    FN(lnb_args) a = {g, xhat, rstd, weight, dx, dweight, dbias, rows, n};
    ember_parallel_for(FN(ln_dx_task), &a, rows, EMBER_MAX(1, 16384 / EMBER_MAX(n, 1)));
    const int64_t blocks = (n + LN_BLOCK - 1) / LN_BLOCK;
    ember_parallel_for(FN(ln_columns_task), &a, blocks,
                       EMBER_MAX(1, 16384 / EMBER_MAX(rows * LN_BLOCK, 1)));
}
