/* nll_softmax.c: log_softmax's backward of nll_loss's backward (cross_entropy's) in one
 * pass, for compiled programs (ops/nll_softmax.py, graph/patterns.py). Written once against
 * scalar_t and FN(name); kernels.py compiles it for float and double. A family of its own,
 * so that a compiled classifier compiles this and not the whole softmax family. */
#include "softmax_rows.h"

/* Row r's gradient of the log-probabilities is c = coef[r * coef_step] at column target[r]
 * and 0 elsewhere (nll_loss's backward), so log_softmax's backward, dx = g - exp(out) s with
 * s = (scalar_t)sum(g), needs no g: s is 0.0 + c (the lanes' double sum, which turns -0.0
 * into +0.0) and each dx is computed as softmax_backward's log branch computes it, bit for
 * bit. A target outside [0, n) matches no column. With `logits`, the input is the
 * log_softmax's input x, and each out is computed in a register as sm_rows computes it. */
typedef struct {
    const scalar_t *in, *coef;
    const int64_t *target;
    scalar_t *dx;
    int64_t n, coef_step, ignore_index;
    int logits;
} FN(nllsm_args);

/* Row r's coefficient: 0 where its target is ignored (as nll_loss's backward zeroes it). */
#define NLLSM_COEF(a, r) \
    ((a)->target[r] == (a)->ignore_index ? (scalar_t)0 : (a)->coef[(r) * (a)->coef_step])

/* Rows shorter than the lanes, a block at a time (as sm_short). */
static void FN(nllsm_short)(const FN(nllsm_args) *a, int64_t lo, int64_t hi) {
    const int64_t n = a->n;
    scalar_t o[EMBER_LANES][SM_SR], dx[EMBER_LANES][SM_SR], c[SM_SR], s[SM_SR];
    for (int64_t b = lo; b < hi; b += SM_SR) {
        const int rows = (int)EMBER_MIN(SM_SR, hi - b);
        FN(load_block)(o, a->in + b * n, n, rows);
        if (a->logits) FN(block_softmax)(o, n, 1);
        for (int r = 0; r < SM_SR; r++) {
            c[r] = r < rows ? NLLSM_COEF(a, b + r) : (scalar_t)0;
            s[r] = (scalar_t)(0.0 + (double)c[r]);
        }
        for (int64_t j = 0; j < n; j++)
            for (int r = 0; r < SM_SR; r++)
                dx[j][r] = (scalar_t)0 - ember_exp_t(o[j][r]) * s[r];
        for (int r = 0; r < rows; r++) {
            const int64_t t = a->target[b + r];
            if (t >= 0 && t < n) dx[t][r] = c[r] - ember_exp_t(o[t][r]) * s[r];
        }
        FN(store_block)(a->dx + b * n, dx, n, rows);
    }
}

static void FN(nllsm_rows)(void *p, int64_t lo, int64_t hi) {
    const FN(nllsm_args) *a = p;
    const int64_t n = a->n;
    if (n < EMBER_LANES) {
        FN(nllsm_short)(a, lo, hi);
        return;
    }
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t c = NLLSM_COEF(a, r);
        const scalar_t s = (scalar_t)(0.0 + (double)c);
        const scalar_t *restrict y = a->in + r * n;
        scalar_t *restrict dx = a->dx + r * n;
        const int64_t t = a->target[r];
        if (a->logits) {
            const scalar_t m = FN(row_max)(y, n);
            const scalar_t lse =
                (scalar_t)ember_log((double)(scalar_t)FN(row_expsum)(y, NULL, n, m));
            for (int64_t j = 0; j < n; j++)
                dx[j] = (scalar_t)0 - ember_exp_t((scalar_t)((scalar_t)(y[j] - m) - lse)) * s;
            if (t >= 0 && t < n)
                dx[t] = c - ember_exp_t((scalar_t)((scalar_t)(y[t] - m) - lse)) * s;
        } else {
            for (int64_t j = 0; j < n; j++) dx[j] = (scalar_t)0 - ember_exp_t(y[j]) * s;
            if (t >= 0 && t < n) dx[t] = c - ember_exp_t(y[t]) * s;
        }
    }
}

/* Returns -1, or the first row whose target is outside [0, n) and not `ignore_index` (then
 * nothing is written). */
int64_t FN(nll_log_softmax_backward)(const scalar_t *in, const int64_t *target,
                                     const scalar_t *coef, int64_t coef_step, scalar_t *dx,
                                     int64_t rows, int64_t n, int64_t ignore_index,
                                     int logits) {
    for (int64_t r = 0; r < rows; r++)
        if ((target[r] < 0 || target[r] >= n) && target[r] != ignore_index) return r;
    FN(nllsm_args) a = {in, coef, target, dx, n, coef_step, ignore_index, logits};
    ember_parallel_for(FN(nllsm_rows), &a, rows, EMBER_MAX(1, 32768 / EMBER_MAX(n, 1)));
    return -1;
}

/* The same for the usual loss, no class weights and a 0-d incoming gradient g: the
 * coefficient is -g (reduction "sum") or -g over the rows not ignored ("mean"), rounded
 * as nll_loss's backward rounds it (one division in scalar_t; the count is exact below
 * 2^24 rows, which the caller checks). */
int64_t FN(nll_log_softmax_backward_reduced)(const scalar_t *in, const int64_t *target,
                                             const scalar_t *g, int mean, scalar_t *dx,
                                             int64_t rows, int64_t n, int64_t ignore_index,
                                             int logits) {
    int64_t kept = 0;
    for (int64_t r = 0; r < rows; r++) {
        if (target[r] == ignore_index) continue;
        if (target[r] < 0 || target[r] >= n) return r;
        kept++;
    }
    const scalar_t coef = mean ? (scalar_t)(-*g) / (scalar_t)kept : (scalar_t)(-*g);
    return FN(nll_log_softmax_backward)(in, target, &coef, 0, dx, rows, n, ignore_index,
                                        logits);
}
