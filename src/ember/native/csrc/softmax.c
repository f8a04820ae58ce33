/* softmax.c: softmax and log_softmax along one dim, forward and backward. Written once
 * against scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * The input is contiguous (outer, n, inner), reduced over n. inner == 1 (the last dim) goes
 * row by row: a row is read from memory once and its later passes hit the cache. inner > 1
 * goes a block of up to 256 columns at a time, vectorised across the columns.
 *
 * Arithmetic, with sums in double (fixed order: reduce.h's 16 lanes along a row; along a
 * column, in order of the reduced index) and every other step rounded to scalar_t as the
 * NumPy kernels of ops/softmax.py round it:
 *   softmax:      m = max(x); e = exp(x - m); out = e / (scalar_t)sum(e)
 *   log_softmax:  m = max(x); out = (x - m) - (scalar_t)log((scalar_t)sum(exp(x - m)))
 * (the sum rounded before its log, as a float sum is: a row whose sum rounds to 1 has a
 * log of 0, as PyTorch's and NumPy's do)
 *   softmax backward:      s = (scalar_t)sum(g out); dx = g out - out s
 *   log_softmax backward:  s = (scalar_t)sum(g); dx = g - exp(out) s
 * exp and log are ember_math.h's (float exp within 1 ulp, NumPy's within about as much).
 * The max ignores NaN, but a NaN in a row reaches every output of it through the sum, as
 * NumPy's NaN-propagating max does; so do +inf (inf - inf) and an all -inf row.
 */
#include <stdlib.h>

#include "softmax_rows.h"

#define SM_BLOCK 256 /* columns per task when inner > 1 */

typedef struct {
    const scalar_t *x, *g; /* forward: x; backward: g (gradient) and x = out */
    scalar_t *out;
    int64_t outer, n, inner;
    int log;
} FN(sm_args);

static void FN(sm_short)(const FN(sm_args) *a, int64_t lo, int64_t hi) {
    const int64_t n = a->n;
    scalar_t v[EMBER_LANES][SM_SR];
    for (int64_t b = lo; b < hi; b += SM_SR) {
        const int rows = (int)EMBER_MIN(SM_SR, hi - b);
        FN(load_block)(v, a->x + b * n, n, rows);
        FN(block_softmax)(v, n, a->log);
        FN(store_block)(a->out + b * n, v, n, rows);
    }
}

static void FN(sm_rows)(void *p, int64_t lo, int64_t hi) {
    const FN(sm_args) *a = p;
    const int64_t n = a->n;
    if (n < EMBER_LANES) {
        FN(sm_short)(a, lo, hi);
        return;
    }
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *restrict x = a->x + r * n;
        scalar_t *restrict out = a->out + r * n;
        const scalar_t m = FN(row_max)(x, n);
        if (a->log) {
            const scalar_t lse =
                (scalar_t)ember_log((double)(scalar_t)FN(row_expsum)(x, NULL, n, m));
            for (int64_t j = 0; j < n; j++) out[j] = (scalar_t)(x[j] - m) - lse;
        } else {
            const scalar_t s = (scalar_t)FN(row_expsum)(x, out, n, m);
            for (int64_t j = 0; j < n; j++) out[j] = out[j] / s;
        }
    }
}

/* inner > 1: task t is block (t % blocks) of columns of outer slice (t / blocks). */
static void FN(sm_columns)(void *p, int64_t lo, int64_t hi) {
    const FN(sm_args) *a = p;
    const int64_t n = a->n, inner = a->inner, blocks = (inner + SM_BLOCK - 1) / SM_BLOCK;
    scalar_t m[SM_BLOCK];
    double acc[SM_BLOCK];
    scalar_t s[SM_BLOCK];
    for (int64_t t = lo; t < hi; t++) {
        const int64_t o = t / blocks, c0 = (t % blocks) * SM_BLOCK;
        const int64_t w = EMBER_MIN(SM_BLOCK, inner - c0);
        const scalar_t *x = a->x + o * n * inner + c0;
        scalar_t *out = a->out + o * n * inner + c0;
        for (int64_t i = 0; i < w; i++) {
            m[i] = -INFINITY;
            acc[i] = 0.0;
        }
        for (int64_t j = 0; j < n; j++) {
            const scalar_t *xr = x + j * inner;
            for (int64_t i = 0; i < w; i++) m[i] = xr[i] > m[i] ? xr[i] : m[i];
        }
        for (int64_t j = 0; j < n; j++) {
            const scalar_t *xr = x + j * inner;
            scalar_t *orow = out + j * inner;
            for (int64_t i = 0; i < w; i++) {
                const scalar_t v = ember_exp_t((scalar_t)(xr[i] - m[i]));
                if (!a->log) orow[i] = v;
                acc[i] += (double)v;
            }
        }
        if (a->log) {
            for (int64_t i = 0; i < w; i++) s[i] = (scalar_t)ember_log((double)(scalar_t)acc[i]);
            for (int64_t j = 0; j < n; j++) {
                const scalar_t *xr = x + j * inner;
                scalar_t *orow = out + j * inner;
                for (int64_t i = 0; i < w; i++) orow[i] = (scalar_t)(xr[i] - m[i]) - s[i];
            }
        } else {
            for (int64_t i = 0; i < w; i++) s[i] = (scalar_t)acc[i];
            for (int64_t j = 0; j < n; j++) {
                scalar_t *orow = out + j * inner;
                for (int64_t i = 0; i < w; i++) orow[i] = orow[i] / s[i];
            }
        }
    }
}

static void FN(sm_run)(ember_task rows, ember_task columns, FN(sm_args) *a) {
    if (a->inner == 1) {
        ember_parallel_for(rows, a, a->outer, EMBER_MAX(1, 32768 / EMBER_MAX(a->n, 1)));
    } else {
        const int64_t blocks = (a->inner + SM_BLOCK - 1) / SM_BLOCK;
        const int64_t per = a->n * EMBER_MIN(a->inner, SM_BLOCK);
        ember_parallel_for(columns, a, a->outer * blocks, EMBER_MAX(1, 32768 / EMBER_MAX(per, 1)));
    }
}

void FN(softmax_forward)(const scalar_t *x, scalar_t *out, int64_t outer, int64_t n,
                         int64_t inner, int log) {
    FN(sm_args) a = {x, NULL, out, outer, n, inner, log};
    FN(sm_run)(FN(sm_rows), FN(sm_columns), &a);
}

/* --- backward --------------------------------------------------------------------------- */

/* dot[j % LANES] += x[j] * y[j], in double (float products are exact there). */
static inline void FN(acc_dot)(double *restrict dot, const scalar_t *restrict x,
                               const scalar_t *restrict y, int64_t n) {
    int64_t j = 0;
    for (; j + EMBER_LANES <= n; j += EMBER_LANES)
        for (int k = 0; k < EMBER_LANES; k++) dot[k] += (double)x[j + k] * (double)y[j + k];
    for (int k = 0; j + k < n; k++) dot[k] += (double)x[j + k] * (double)y[j + k];
}

/* The backward of rows shorter than the lanes, a block at a time (as sm_short): s is the
 * lanes' total of g (log) or of g y, as acc_sum / acc_dot and ember_lanes_total take it. */
static void FN(smb_short)(const FN(sm_args) *a, int64_t lo, int64_t hi) {
    const int64_t n = a->n;
    scalar_t y[EMBER_LANES][SM_SR], g[EMBER_LANES][SM_SR], s[SM_SR];
    double t[EMBER_LANES][SM_SR], tot[SM_SR];
    for (int64_t b = lo; b < hi; b += SM_SR) {
        const int rows = (int)EMBER_MIN(SM_SR, hi - b);
        FN(load_block)(y, a->x + b * n, n, rows);
        FN(load_block)(g, a->g + b * n, n, rows);
        for (int k = 0; k < EMBER_LANES; k++)
            for (int r = 0; r < SM_SR; r++) t[k][r] = 0.0;
        if (a->log) {
            for (int64_t j = 0; j < n; j++)
                for (int r = 0; r < SM_SR; r++) t[j][r] = 0.0 + (double)g[j][r];
        } else {
            for (int64_t j = 0; j < n; j++)
                for (int r = 0; r < SM_SR; r++)
                    t[j][r] = 0.0 + (double)g[j][r] * (double)y[j][r];
        }
        ember_block_total(t, tot);
        for (int r = 0; r < SM_SR; r++) s[r] = (scalar_t)tot[r];
        if (a->log) {
            for (int64_t j = 0; j < n; j++)
                for (int r = 0; r < SM_SR; r++)
                    g[j][r] = g[j][r] - ember_exp_t(y[j][r]) * s[r];
        } else {
            for (int64_t j = 0; j < n; j++)
                for (int r = 0; r < SM_SR; r++) g[j][r] = g[j][r] * y[j][r] - y[j][r] * s[r];
        }
        FN(store_block)(a->out + b * n, g, n, rows);
    }
}

static void FN(smb_rows)(void *p, int64_t lo, int64_t hi) {
    const FN(sm_args) *a = p;
    const int64_t n = a->n;
    if (n < EMBER_LANES) {
        FN(smb_short)(a, lo, hi);
        return;
    }
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *restrict y = a->x + r * n, *restrict g = a->g + r * n;
        scalar_t *restrict dx = a->out + r * n;
        double acc[EMBER_LANES] = {0};
        if (a->log) {
            FN(acc_sum)(acc, g, n);
            const scalar_t s = (scalar_t)ember_lanes_total(acc);
            for (int64_t j = 0; j < n; j++) dx[j] = g[j] - ember_exp_t(y[j]) * s;
        } else {
            FN(acc_dot)(acc, g, y, n);
            const scalar_t s = (scalar_t)ember_lanes_total(acc);
            for (int64_t j = 0; j < n; j++) dx[j] = g[j] * y[j] - y[j] * s;
        }
    }
}

static void FN(smb_columns)(void *p, int64_t lo, int64_t hi) {
    const FN(sm_args) *a = p;
    const int64_t n = a->n, inner = a->inner, blocks = (inner + SM_BLOCK - 1) / SM_BLOCK;
    double acc[SM_BLOCK];
    scalar_t s[SM_BLOCK];
    for (int64_t t = lo; t < hi; t++) {
        const int64_t o = t / blocks, c0 = (t % blocks) * SM_BLOCK;
        const int64_t w = EMBER_MIN(SM_BLOCK, inner - c0);
        const int64_t at = o * n * inner + c0;
        const scalar_t *y = a->x + at, *g = a->g + at;
        scalar_t *dx = a->out + at;
        for (int64_t i = 0; i < w; i++) acc[i] = 0.0;
        for (int64_t j = 0; j < n; j++) {
            const scalar_t *gr = g + j * inner, *yr = y + j * inner;
            if (a->log)
                for (int64_t i = 0; i < w; i++) acc[i] += (double)gr[i];
            else
                for (int64_t i = 0; i < w; i++) acc[i] += (double)gr[i] * (double)yr[i];
        }
        for (int64_t i = 0; i < w; i++) s[i] = (scalar_t)acc[i];
        for (int64_t j = 0; j < n; j++) {
            const scalar_t *gr = g + j * inner, *yr = y + j * inner;
            scalar_t *d = dx + j * inner;
            if (a->log)
                for (int64_t i = 0; i < w; i++) d[i] = gr[i] - ember_exp_t(yr[i]) * s[i];
            else
                for (int64_t i = 0; i < w; i++) d[i] = gr[i] * yr[i] - yr[i] * s[i];
        }
    }
}

void FN(softmax_backward)(const scalar_t *g, const scalar_t *out, scalar_t *dx, int64_t outer,
                          int64_t n, int64_t inner, int log) {
    FN(sm_args) a = {out, g, dx, outer, n, inner, log};
    FN(sm_run)(FN(smb_rows), FN(smb_columns), &a);
}
