/* scatter.c: scatter_add and index_add in C, the twins of ops/index.py's
 * `_scatter_add_kernel` and index_ops.py's index_add (np.add.at both). Written once
 * against scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * out[..., index[p], ...] += src[p] for every position p of the index, in the index's
 * row-major order, as np.add.at goes: each target receives its sums in the same order, so
 * the bits are the NumPy kernel's. One thread: targets repeat across any split of p.
 * An index outside [0, size) stops the kernel (it answers 1; the caller's NumPy kernel
 * then says what was wrong).
 */
#include <stdint.h>

#include "ember.h"

#ifndef EMBER_SCATTER_ONCE
#define EMBER_SCATTER_ONCE
#define SCATTER_MAX_DIMS 64
#endif

/* out: row-major of shape oshape; index and src: row-major of shape ishape (ndim >= 1). */
int FN(ember_scatter_add)(scalar_t *out, const int64_t *oshape, const int64_t *index,
                          const scalar_t *src, const int64_t *ishape, int ndim, int dim) {
    if (ndim < 1 || ndim > SCATTER_MAX_DIMS) return 1;
    int64_t ostride[SCATTER_MAX_DIMS], coord[SCATTER_MAX_DIMS];
    int64_t outer = 1;
    ostride[ndim - 1] = 1;
    for (int d = ndim - 2; d >= 0; d--) ostride[d] = ostride[d + 1] * oshape[d + 1];
    for (int d = 0; d < ndim - 1; d++) {
        outer *= ishape[d];
        coord[d] = 0;
    }
    const int64_t inner = ishape[ndim - 1], size = oshape[dim], step = ostride[dim];
    if (inner == 0) return 0;
    for (int64_t o = 0; o < outer; o++) {
        int64_t base = 0;
        for (int d = 0; d < ndim - 1; d++)
            if (d != dim) base += coord[d] * ostride[d];
        const int64_t *ip = index + o * inner;
        const scalar_t *sp = src + o * inner;
        if (dim == ndim - 1) {
            for (int64_t j = 0; j < inner; j++) {
                const int64_t k = ip[j];
                if (k < 0 || k >= size) return 1;
                out[base + k] += sp[j];
            }
        } else {
            for (int64_t j = 0; j < inner; j++) {
                const int64_t k = ip[j];
                if (k < 0 || k >= size) return 1;
                out[base + k * step + j] += sp[j];
            }
        }
        for (int d = ndim - 2; d >= 0; d--) { /* the next row of the index */
            if (++coord[d] < ishape[d]) break;
            coord[d] = 0;
        }
    }
    return 0;
}

/* index_add: out (outer, size, inner) += src (outer, n, inner) at rows index[0..n) of the
 * middle dim, index entry after entry (np.add.at's order for each target); every index
 * checked first. */
int FN(ember_index_add)(scalar_t *out, int64_t outer, int64_t size, int64_t inner,
                        const int64_t *index, int64_t n, const scalar_t *src) {
    for (int64_t i = 0; i < n; i++)
        if (index[i] < 0 || index[i] >= size) return 1;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < n; i++) {
            scalar_t *dst = out + (o * size + index[i]) * inner;
            const scalar_t *s = src + (o * n + i) * inner;
            for (int64_t j = 0; j < inner; j++) dst[j] += s[j];
        }
    return 0;
}
