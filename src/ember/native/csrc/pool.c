/* pool.c: 2-d and 3-d max pooling (values and argmax indices) and its backward, one plane
 * (batch entry x channel) per item of the pool. Written once against scalar_t and
 * FN(name); kernels.py compiles it for float and double.
 *
 * Forward, per output cell: the taps of its window that fall inside the input, in row-major
 * order; the running winner changes when a tap is greater or NaN (as PyTorch's CPU kernel
 * compares), so the first of equal maxima wins, the last NaN wins, and a window of -inf
 * (or of padding and -inf) points at its first tap inside the input. The value written is
 * the winner's, its index the winner's flat offset in the (unpadded) plane. The input is
 * read through element strides (plane, row, column; any sign), so transposed,
 * channels-last and flipped inputs need no copy.
 *
 * Backward: each plane zeroed, then every output cell's gradient added at its index in
 * flat order (windows may overlap), the order of NumPy's `np.add.at` in the NumPy twin, so
 * the sums are its bits.
 */
#include <math.h>

#include "ember.h"

typedef struct {
    const scalar_t *x;
    scalar_t *out;
    int64_t *index;
    int64_t c, sn, sc, sh, sw;  /* channels; element strides: batch, channel, row, column */
    int64_t h, w, oh, ow, kh, kw, th, tw, ph, pw, dh, dw;
    int64_t sd, d, od, kd, td, pd, dd;  /* depth (3-d): stride, size, output, window ... */
} FN(maxpool_args);

/* One output row (depth o, row i): the taps in row-major order (depth, row, column),
 * each over the run of cells whose column it reaches inside the input, as branch-free
 * selects (so the compiler vectorises them). */
static void FN(maxpool_row)(const FN(maxpool_args) *a, const scalar_t *x, int64_t o,
                            int64_t i, scalar_t *restrict best, int64_t *restrict at) {
    const int64_t ow = a->ow, w = a->w, tw = a->tw, sw = a->sw;
    const int64_t z0 = o * a->td - a->pd, y0 = i * a->th - a->ph;
    for (int64_t j = 0; j < ow; j++) {
        best[j] = -INFINITY;
        at[j] = -1;
    }
    for (int64_t kz = 0; kz < a->kd; kz++) {
        const int64_t z = z0 + kz * a->dd;
        if (z < 0 || z >= a->d) continue;
        for (int64_t ky = 0; ky < a->kh; ky++) {
            const int64_t y = y0 + ky * a->dh;
            if (y < 0 || y >= a->h) continue;
            for (int64_t kx = 0; kx < a->kw; kx++) {
                /* column of cell j: j * tw + c0, inside for j in [jlo, jhi) */
                const int64_t c0 = kx * a->dw - a->pw;
                const int64_t jlo = c0 >= 0 ? 0 : (-c0 + tw - 1) / tw;
                const int64_t jhi = w - c0 <= 0 ? 0 : EMBER_MIN(ow, (w - c0 + tw - 1) / tw);
                const scalar_t *src = x + z * a->sd + y * a->sh + c0 * sw;
                const int64_t base = (z * a->h + y) * w + c0, step = tw * sw;
                for (int64_t j = jlo; j < jhi; j++) {
                    const scalar_t v = src[j * step];
                    const int take = (v > best[j]) | (v != v) | (at[j] < 0);
                    best[j] = take ? v : best[j];
                    at[j] = take ? base + j * tw : at[j];
                }
            }
        }
    }
    /* (no tap inside the input: the NumPy twin's choice, the last tap) */
    const int64_t last = ((z0 + (a->kd - 1) * a->dd) * a->h + y0 + (a->kh - 1) * a->dh) * w +
                         (a->kw - 1) * a->dw - a->pw;
    for (int64_t j = 0; j < ow; j++)
        if (at[j] < 0) at[j] = last + j * tw;
}

static void FN(maxpool_task)(void *p, int64_t lo, int64_t hi) {
    const FN(maxpool_args) *a = p;
    const int64_t od = a->od, oh = a->oh, ow = a->ow, cells = od * oh * ow;
    for (int64_t plane = lo; plane < hi; plane++) {
        const scalar_t *x = a->x + (plane / a->c) * a->sn + (plane % a->c) * a->sc;
        scalar_t *out = a->out + plane * cells;
        int64_t *index = a->index + plane * cells;
        for (int64_t o = 0; o < od; o++)
            for (int64_t i = 0; i < oh; i++) {
                const int64_t row = (o * oh + i) * ow;
                FN(maxpool_row)(a, x, o, i, out + row, index + row);
            }
    }
}

static void FN(maxpool_run)(FN(maxpool_args) *a, int64_t planes) {
    const int64_t work = a->od * a->oh * a->ow * a->kd * a->kh * a->kw;
    ember_parallel_for(FN(maxpool_task), a, planes, EMBER_MAX(1, 8192 / (work + 1)));
}

/* p: n, c, the input's element strides (batch, channel, row, column), h, w, oh, ow,
 * kernel (kh, kw), stride, padding, dilation; out and index are contiguous
 * (n, c, oh, ow). */
void FN(maxpool2d)(const scalar_t *x, scalar_t *out, int64_t *index, const int64_t *p) {
    FN(maxpool_args) a = {x, out, index, p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8],
                          p[9], p[10], p[11], p[12], p[13], p[14], p[15], p[16], p[17],
                          0, 1, 1, 1, 1, 0, 1};
    FN(maxpool_run)(&a, p[0] * p[1]);
}

/* p: n, c, element strides (batch, channel, depth, row, column), d, h, w, od, oh, ow,
 * kernel (kd, kh, kw), stride, padding, dilation; out and index are contiguous
 * (n, c, od, oh, ow), index the winner's flat offset in its (d, h, w) plane. */
void FN(maxpool3d)(const scalar_t *x, scalar_t *out, int64_t *index, const int64_t *p) {
    FN(maxpool_args) a = {x, out, index, p[1], p[2], p[3], p[5], p[6], p[8], p[9], p[11],
                          p[12], p[14], p[15], p[17], p[18], p[20], p[21], p[23], p[24],
                          p[4], p[7], p[10], p[13], p[16], p[19], p[22]};
    FN(maxpool_run)(&a, p[0] * p[1]);
}

typedef struct {
    const scalar_t *g;
    const int64_t *index;
    scalar_t *dx;
    int64_t plane, cells;
    volatile int bad;
} FN(maxpool_back_args);

static void FN(maxpool_back_task)(void *p, int64_t lo, int64_t hi) {
    FN(maxpool_back_args) *a = p;
    const int64_t plane = a->plane;
    for (int64_t k = lo; k < hi; k++) {
        scalar_t *dx = a->dx + k * plane;
        const scalar_t *g = a->g + k * a->cells;
        const int64_t *index = a->index + k * a->cells;
        for (int64_t i = 0; i < plane; i++) dx[i] = 0;
        for (int64_t i = 0; i < a->cells; i++) {
            const int64_t at = index[i];
            if (at < 0 || at >= plane) {
                a->bad = 1;
                return;
            }
            dx[at] += g[i];
        }
    }
}

/* dx (planes, plane) = 0, then g's cells added at their indices, plane by plane. Answers
 * nonzero (dx then incomplete) where an index falls outside its plane: the caller leaves
 * that case to the NumPy twin, which wraps or raises as NumPy indexing does. */
int FN(maxpool_backward)(const scalar_t *g, const int64_t *index, scalar_t *dx,
                         int64_t planes, int64_t plane, int64_t cells) {
    FN(maxpool_back_args) a = {g, index, dx, plane, cells, 0};
    ember_parallel_for(FN(maxpool_back_task), &a, planes,
                       EMBER_MAX(1, 8192 / (plane + cells + 1)));
    return a.bad;
}

/* Adaptive max pooling: cell (i, j) of an (oh, ow) output takes rows
 * [floor(i h / oh), ceil((i + 1) h / oh)) and the columns likewise; the winner as above
 * (first of equal maxima, last NaN). p: n, c, element strides (batch, channel, row,
 * column), h, w, oh, ow. */
typedef struct {
    const scalar_t *x;
    scalar_t *out;
    int64_t *index;
    const int64_t *p;
} FN(adaptive_max_args);

static void FN(adaptive_max_task)(void *p_, int64_t lo, int64_t hi) {
    const FN(adaptive_max_args) *a = p_;
    const int64_t *p = a->p;
    const int64_t c = p[1], sn = p[2], sc = p[3], sh = p[4], sw = p[5];
    const int64_t h = p[6], w = p[7], oh = p[8], ow = p[9];
    for (int64_t plane = lo; plane < hi; plane++) {
        const scalar_t *x = a->x + (plane / c) * sn + (plane % c) * sc;
        scalar_t *out = a->out + plane * oh * ow;
        int64_t *index = a->index + plane * oh * ow;
        for (int64_t i = 0; i < oh; i++) {
            const int64_t y0 = i * h / oh, y1 = ((i + 1) * h + oh - 1) / oh;
            for (int64_t j = 0; j < ow; j++) {
                const int64_t x0 = j * w / ow, x1 = ((j + 1) * w + ow - 1) / ow;
                scalar_t best = -INFINITY;
                int64_t at = y0 * w + x0;
                for (int64_t y = y0; y < y1; y++) {
                    for (int64_t xx = x0; xx < x1; xx++) {
                        const scalar_t v = x[y * sh + xx * sw];
                        if (v > best || isnan(v)) {
                            best = v;
                            at = y * w + xx;
                        }
                    }
                }
                out[i * ow + j] = best;
                index[i * ow + j] = at;
            }
        }
    }
}

void FN(adaptive_maxpool2d)(const scalar_t *x, scalar_t *out, int64_t *index,
                            const int64_t *p) {
    FN(adaptive_max_args) a = {x, out, index, p};
    const int64_t work = p[6] * p[7] + p[8] * p[9];
    ember_parallel_for(FN(adaptive_max_task), &a, p[0] * p[1], EMBER_MAX(1, 8192 / (work + 1)));
}
