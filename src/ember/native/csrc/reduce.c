/* reduce.c: sums down the columns of a C-order (rows, cols) array: a bias's gradient, a sum
 * over a batch's leading dims. Written once against scalar_t and FN(name); kernels.py
 * compiles it for float and double.
 *
 * Each column starts from +0.0 (add's identity: a column of -0.0 sums to +0.0) and adds its
 * rows in order, as NumPy reduces an outer dim (its inner loop runs along a row), so the
 * sums are NumPy's bits; blocks of columns go to the threads, and a block's running sums
 * stay in L1.
 */
#include "ember.h"

#define COLSUM_BLOCK 256

typedef struct {
    const scalar_t *x;
    scalar_t *out;
    int64_t rows, cols;
} FN(colsum_args);

static void FN(colsum_task)(void *p, int64_t lo, int64_t hi) {
    const FN(colsum_args) *a = p;
    const int64_t rows = a->rows, cols = a->cols;
    scalar_t acc[COLSUM_BLOCK];
    for (int64_t t = lo; t < hi; t++) {
        const int64_t c0 = t * COLSUM_BLOCK;
        const int64_t w = EMBER_MIN(COLSUM_BLOCK, cols - c0);
        const scalar_t *restrict x = a->x + c0;
        for (int64_t i = 0; i < w; i++) acc[i] = (scalar_t)0 + x[i];
        for (int64_t r = 1; r < rows; r++) {
            const scalar_t *restrict row = x + r * cols;
            for (int64_t i = 0; i < w; i++) acc[i] = acc[i] + row[i];
        }
        for (int64_t i = 0; i < w; i++) a->out[c0 + i] = acc[i];
    }
}

void FN(column_sums)(const scalar_t *x, scalar_t *out, int64_t rows, int64_t cols) {
    FN(colsum_args) a = {x, out, rows, cols};
    const int64_t blocks = (cols + COLSUM_BLOCK - 1) / COLSUM_BLOCK;
    ember_parallel_for(FN(colsum_task), &a, blocks,
                       EMBER_MAX(1, 32768 / EMBER_MAX(rows * COLSUM_BLOCK, 1)));
}
