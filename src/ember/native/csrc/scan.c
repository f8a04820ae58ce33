/* scan.c: running sums, products and extrema along one dim of a contiguous array, the C
 * twins of ops/scan.py's NumPy kernels (np.cumsum / np.cumprod with their carry dtype,
 * and cummax / cummin's values and indices). Written once against scalar_t and FN(name);
 * kernels.py compiles it for float and double.
 *
 * The array is read as (outer, n, inner): the scan runs along n. Each output is the carry
 * after its element, rounded to scalar_t (the first element's carry is that element): the
 * carry is a double (PyTorch's CPU scans carry
 * float32 in double) or, with `own`, scalar_t itself (MLX's scans), and the operations are
 * the NumPy kernel's in its order (one add or multiply per element, from the first element
 * or, `reverse`, from the last), so the bits are the NumPy kernel's.
 *
 * cummax / cummin: an element at least as large (small) as the carry, or a NaN, takes the
 * carry's place and its index (ties and NaNs take the latest index, as PyTorch's); after a
 * NaN only another NaN does. The value is the element itself (of -0.0 and 0.0, the
 * latest's sign).
 *
 * Work: rows of a scan along the last dim (inner 1) go ROWS at a time, their carries
 * independent chains; otherwise blocks of COLS columns carried side by side (a loop the
 * compiler vectorises). Rows or blocks run on the thread pool.
 */
#include <math.h>
#include <stdint.h>

#include "ember.h"

#ifndef EMBER_SCAN_ONCE
#define EMBER_SCAN_ONCE
#define SCAN_ROWS 8
#define SCAN_COLS 256
#define SCAN_GRAIN 16384 /* elements a task should have before the pool splits the work */

typedef struct {
    const void *x;
    void *out;
    int64_t *idx;
    int64_t outer, n, inner;
    int product, reverse, own, largest;
} scan_ctx;

/* How many tasks of (outer, n, inner): row groups for inner 1, else column blocks. */
static int64_t scan_tasks(const scan_ctx *c) {
    if (c->inner == 1) return (c->outer + SCAN_ROWS - 1) / SCAN_ROWS;
    return c->outer * ((c->inner + SCAN_COLS - 1) / SCAN_COLS);
}

static int64_t scan_grain(const scan_ctx *c) {
    int64_t per = c->inner == 1 ? SCAN_ROWS * c->n
                                : c->n * (c->inner < SCAN_COLS ? c->inner : SCAN_COLS);
    int64_t g = SCAN_GRAIN / (per > 0 ? per : 1);
    return g > 0 ? g : 1;
}
#endif

/* The running sum or product, carried in `acc_t`, from the first element itself (as
 * NumPy's accumulate: 0 + -0.0 would be +0.0); t is the task's group or block. */
#define SCAN_BODY(acc_t)                                                                  \
    do {                                                                                  \
        const int64_t n = c->n, inner = c->inner;                                         \
        const int64_t k0 = c->reverse ? n - 1 : 0;                                        \
        if (inner == 1) {                                                                 \
            const int64_t r0 = t * SCAN_ROWS;                                             \
            const int64_t rows = c->outer - r0 < SCAN_ROWS ? c->outer - r0 : SCAN_ROWS;   \
            acc_t acc[SCAN_ROWS];                                                         \
            for (int r = 0; r < rows; r++) {                                              \
                acc[r] = (acc_t)x[(r0 + r) * n + k0];                                     \
                out[(r0 + r) * n + k0] = (scalar_t)acc[r];                                \
            }                                                                             \
            for (int64_t s = 1; s < n; s++) {                                             \
                const int64_t k = c->reverse ? n - 1 - s : s;                             \
                for (int r = 0; r < rows; r++) {                                          \
                    const int64_t at = (r0 + r) * n + k;                                  \
                    acc[r] = c->product ? acc[r] * (acc_t)x[at] : acc[r] + (acc_t)x[at];  \
                    out[at] = (scalar_t)acc[r];                                           \
                }                                                                         \
            }                                                                             \
        } else {                                                                          \
            const int64_t blocks = (inner + SCAN_COLS - 1) / SCAN_COLS;                   \
            const int64_t o = t / blocks, j0 = (t % blocks) * SCAN_COLS;                  \
            const int64_t w = inner - j0 < SCAN_COLS ? inner - j0 : SCAN_COLS;            \
            acc_t acc[SCAN_COLS];                                                         \
            for (int64_t j = 0; j < w; j++) {                                             \
                acc[j] = (acc_t)x[(o * n + k0) * inner + j0 + j];                         \
                out[(o * n + k0) * inner + j0 + j] = (scalar_t)acc[j];                    \
            }                                                                             \
            for (int64_t s = 1; s < n; s++) {                                             \
                const int64_t k = c->reverse ? n - 1 - s : s;                             \
                const scalar_t *xr = x + (o * n + k) * inner + j0;                        \
                scalar_t *orow = out + (o * n + k) * inner + j0;                          \
                if (c->product)                                                           \
                    for (int64_t j = 0; j < w; j++) {                                     \
                        acc[j] = acc[j] * (acc_t)xr[j];                                   \
                        orow[j] = (scalar_t)acc[j];                                       \
                    }                                                                     \
                else                                                                      \
                    for (int64_t j = 0; j < w; j++) {                                     \
                        acc[j] = acc[j] + (acc_t)xr[j];                                   \
                        orow[j] = (scalar_t)acc[j];                                       \
                    }                                                                     \
            }                                                                             \
        }                                                                                 \
    } while (0)

static void FN(scan_task)(void *p, int64_t lo, int64_t hi) {
    const scan_ctx *c = p;
    const scalar_t *x = c->x;
    scalar_t *out = c->out;
    for (int64_t t = lo; t < hi; t++) {
        if (c->own)
            SCAN_BODY(scalar_t);
        else
            SCAN_BODY(double);
    }
}

/* Whether v takes the carry's place (cummax: v >= carry; cummin: v <= carry; a NaN v
 * always, a NaN carry only for another NaN). */
#define SCAN_TAKES(v, carry, largest) \
    ((v) != (v) || ((carry) == (carry) && ((largest) ? (v) >= (carry) : (v) <= (carry))))

static void FN(extreme_task)(void *p, int64_t lo, int64_t hi) {
    const scan_ctx *c = p;
    const scalar_t *x = c->x;
    scalar_t *out = c->out;
    int64_t *idx = c->idx;
    const int64_t n = c->n, inner = c->inner;
    const int largest = c->largest;
    for (int64_t t = lo; t < hi; t++) {
        if (inner == 1) {
            const int64_t r0 = t * SCAN_ROWS;
            const int64_t rows = c->outer - r0 < SCAN_ROWS ? c->outer - r0 : SCAN_ROWS;
            for (int r = 0; r < rows; r++) {
                const scalar_t *xr = x + (r0 + r) * n;
                scalar_t *orow = out + (r0 + r) * n;
                int64_t *irow = idx + (r0 + r) * n;
                scalar_t carry = xr[0];
                int64_t at = 0;
                for (int64_t k = 0; k < n; k++) {
                    const scalar_t v = xr[k];
                    if (SCAN_TAKES(v, carry, largest)) {
                        carry = v;
                        at = k;
                    }
                    orow[k] = carry;
                    irow[k] = at;
                }
            }
        } else {
            const int64_t blocks = (inner + SCAN_COLS - 1) / SCAN_COLS;
            const int64_t o = t / blocks, j0 = (t % blocks) * SCAN_COLS;
            const int64_t w = inner - j0 < SCAN_COLS ? inner - j0 : SCAN_COLS;
            const scalar_t *x0 = x + o * n * inner + j0;
            scalar_t *o0 = out + o * n * inner + j0;
            int64_t *i0 = idx + o * n * inner + j0;
            for (int64_t j = 0; j < w; j++) {
                o0[j] = x0[j];
                i0[j] = 0;
            }
            for (int64_t k = 1; k < n; k++) {
                const scalar_t *xr = x0 + k * inner, *prev = o0 + (k - 1) * inner;
                scalar_t *orow = o0 + k * inner;
                const int64_t *iprev = i0 + (k - 1) * inner;
                int64_t *irow = i0 + k * inner;
                for (int64_t j = 0; j < w; j++) {
                    const scalar_t v = xr[j], carry = prev[j];
                    const int take = SCAN_TAKES(v, carry, largest);
                    orow[j] = take ? v : carry;
                    irow[j] = take ? k : iprev[j];
                }
            }
        }
    }
}

/* out = the running sum (product) of x, (outer, n, inner), along n. */
void FN(ember_scan)(const scalar_t *x, scalar_t *out, int64_t outer, int64_t n, int64_t inner,
                    int product, int reverse, int own) {
    scan_ctx c = {x, out, NULL, outer, n, inner, product, reverse, own, 0};
    if (outer <= 0 || n <= 0 || inner <= 0) return;
    ember_parallel_for(FN(scan_task), &c, scan_tasks(&c), scan_grain(&c));
}

/* out, idx = the running maximum (minimum) of x and where it was, along n. */
void FN(ember_scan_extreme)(const scalar_t *x, scalar_t *out, int64_t *idx, int64_t outer,
                            int64_t n, int64_t inner, int largest) {
    scan_ctx c = {x, out, idx, outer, n, inner, 0, 0, 0, largest};
    if (outer <= 0 || n <= 0 || inner <= 0) return;
    ember_parallel_for(FN(extreme_task), &c, scan_tasks(&c), scan_grain(&c));
}
