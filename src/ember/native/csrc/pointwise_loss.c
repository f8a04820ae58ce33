/* pointwise_loss.c: the elementwise terms of the MSE, smooth L1 and Huber losses in one pass
 * (the NumPy kernels, ops/loss_ops.py, make three to seven), before the reduction, which
 * stays NumPy's. The NumPy kernels' arithmetic in their order, each Python number rounded to
 * scalar_t first as NumPy rounds a number next to an array, and no contraction: the same
 * bits. Contiguous operands of one shape; the work is split over ember's threads.
 *
 *   mse        d = a - b, d d
 *   smooth L1  d = |a - b|, (0.5 d) d / beta where d < beta, else d - (0.5 beta)
 *   Huber      d = |a - b|, (0.5 d) d where d < delta, else delta (d - (0.5 delta))
 *
 * (A NaN d fails the comparison and takes the second branch: NaN, as NumPy's select.)
 */
#include <math.h>

#include "ember.h"

#define EMBER_FABS_T(x) _Generic((x), float: fabsf, default: fabs)(x)

enum { EMBER_LOSS_MSE, EMBER_LOSS_SMOOTH_L1, EMBER_LOSS_HUBER };

typedef struct {
    const scalar_t *a, *b;
    scalar_t *out;
    int kind;
    scalar_t param, half_param; /* beta or delta, and 0.5 times it rounded once */
} FN(loss_args);

static void FN(loss_task)(void *p, int64_t lo, int64_t hi) {
    const FN(loss_args) *x = p;
    const scalar_t *restrict a = x->a, *restrict b = x->b;
    scalar_t *restrict out = x->out;
    const scalar_t half = (scalar_t)0.5, k = x->param, hk = x->half_param;
    if (x->kind == EMBER_LOSS_MSE) {
        for (int64_t i = lo; i < hi; i++) {
            const scalar_t d = a[i] - b[i];
            out[i] = d * d;
        }
    } else if (x->kind == EMBER_LOSS_SMOOTH_L1) {
        for (int64_t i = lo; i < hi; i++) {
            const scalar_t d = EMBER_FABS_T(a[i] - b[i]);
            out[i] = d < k ? half * d * d / k : d - hk;
        }
    } else {
        for (int64_t i = lo; i < hi; i++) {
            const scalar_t d = EMBER_FABS_T(a[i] - b[i]);
            out[i] = d < k ? half * d * d : k * (d - hk);
        }
    }
}

/* Returns -1 for an unknown kind (nothing written). */
int FN(pointwise_loss)(const scalar_t *a, const scalar_t *b, scalar_t *out, int64_t n, int kind,
                       double param) {
    if (kind < EMBER_LOSS_MSE || kind > EMBER_LOSS_HUBER) return -1;
    FN(loss_args) x = {a, b, out, kind, (scalar_t)param, (scalar_t)(0.5 * param)};
    /* (a few cycles an element: a second thread pays for its wake-up from 128K elements) */
    ember_parallel_for(FN(loss_task), &x, n, 1 << 17);
    return 0;
}
