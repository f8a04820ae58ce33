/* conv_columns.c: a convolution's columns, part of conv.c (included there, after its
 * geometry and row helpers): im2col and its adjoint col2im, the split planes of stride-1
 * and stride-2 2-d convolutions, and the forward's columns packed straight from those
 * planes into ember's own product. */

/* split (rows, 2, half) = each of `rows` rows of x (element step 1, w long, rows `rstep`
 * apart) as its even elements, then its odd ones; half = (w + 1) / 2. */
static void FN(split_rows)(const scalar_t *x, int64_t rstep, int64_t rows, int64_t w,
                           int64_t half, scalar_t *restrict split) {
    for (int64_t r = 0; r < rows; r++) {
        const scalar_t *restrict src = x + r * rstep;
        scalar_t *restrict e = split + r * 2 * half, *restrict o = e + half;
        for (int64_t k = 0; k < w / 2; k++) e[k] = src[2 * k], o[k] = src[2 * k + 1];
        if (w & 1) e[half - 1] = src[w - 1];
    }
}

/* im2col (below) where the last dim has stride 2 and x's elements are adjacent along it:
 * each (sample, channel) plane is first split into its rows' even and odd elements, so a
 * tap's row is one contiguous copy (the stride-2 gather done once per plane, not once per
 * tap). The same columns as the general loop. Answers 0 where it has no scratch. */
static int FN(im2col_stride2)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b,
                              int64_t c0, int64_t cg, scalar_t *cols) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD, *xs = p + G_XS;
    const int64_t L = out[0] * out[1] * out[2], ld = b * L, K = k[0] * k[1] * k[2];
    const int64_t half = (in[2] + 1) / 2, rows = in[0] * in[1];
    scalar_t *split = conv_scratch(rows * 2 * half, sizeof(scalar_t));
    if (!split) return 0;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t j = 0; j < b; j++) {
            const scalar_t *src = x + (n0 + j) * xs[0] + (c0 + cl) * xs[1];
            for (int64_t z = 0; z < in[0]; z++)
                FN(split_rows)(src + z * xs[2], xs[3], in[1], in[2], half,
                               split + z * in[1] * 2 * half);
            scalar_t *row = cols + cl * K * ld + j * L;
            for (int64_t t0 = 0; t0 < k[0]; t0++)
                for (int64_t t1 = 0; t1 < k[1]; t1++)
                    for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                        int64_t z0, z1, y0, y1, q0, q1;
                        conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                        conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                        conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                        /* input column 2 q + e, e = t2 dl - pad: element q + (e - par) / 2
                         * of the rows' parity-par half */
                        const int64_t e = t2 * dl[2] - pd[2], par = ((e % 2) + 2) % 2;
                        const int64_t off = (e - par) / 2 + par * half;
                        for (int64_t z = 0; z < out[0]; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = 0; y < out[1]; y++) {
                                scalar_t *restrict d = row + (z * out[1] + y) * out[2];
                                if (z < z0 || z >= z1 || y < y0 || y >= y1 || q0 == q1) {
                                    memset(d, 0, (size_t)out[2] * sizeof(scalar_t));
                                    continue;
                                }
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                const scalar_t *restrict s =
                                    split + (iz * in[1] + iy) * 2 * half + off;
                                for (int64_t q = 0; q < q0; q++) d[q] = 0;
                                memcpy(d + q0, s + q0, (size_t)(q1 - q0) * sizeof(scalar_t));
                                for (int64_t q = q1; q < out[2]; q++) d[q] = 0;
                            }
                        }
                    }
        }
    ember_scratch_free(split);
    return 1;
}

#ifndef EMBER_CONV_SPLIT
#define EMBER_CONV_SPLIT
/* A 2-d (or 1-d) convolution of stride s = 1 or 2 in both spatial dims, through each plane
 * copied inside margins of zeros (rows and columns all around) that hold every padded
 * position a tap reads, its rows split by stride 2 into their even and odd elements: then a
 * tap's row of columns is a fixed-length run of the split plane, with no bounds to test.
 * Row r of the plane (r < h) is split row top + r; its element s k + parity is at
 * parity * width + left + k. */
typedef struct {
    int64_t s, top, rows, left, width, rstep, half;
} conv_split;

/* floor(v / s), s = 1 or 2, for any sign */
static inline int64_t conv_floor_s(int64_t v, int64_t s) {
    return s == 1 ? v : conv_floor2(v);
}

static int conv_split_plan(const int64_t *p, conv_split *g) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD;
    /* (one tap reads each input at most once: copying the plane first would not pay) */
    if (in[0] != 1 || k[0] != 1 || k[1] * k[2] == 1 || st[1] != st[2] || st[1] < 1 ||
        st[1] > 2)
        return 0;
    const int64_t s = g->s = st[1];
    /* taps read rows s y + e1 and columns s q + e2, e = t dl - pad */
    const int64_t e1lo = -pd[1], e1hi = (k[1] - 1) * dl[1] - pd[1];
    const int64_t e2lo = -pd[2], e2hi = (k[2] - 1) * dl[2] - pd[2];
    g->half = (in[2] + s - 1) / s;
    g->top = EMBER_MAX(0, -e1lo);
    g->rows = g->top + EMBER_MAX(in[1], s * (out[1] - 1) + e1hi + 1);
    /* half-row elements read: floor(e2lo / s) .. ow - 1 + floor(e2hi / s) */
    g->left = EMBER_MAX(0, -conv_floor_s(e2lo, s));
    g->width = g->left + EMBER_MAX(g->half, out[2] + conv_floor_s(e2hi, s));
    g->rstep = s * g->width;
    return 1;
}

/* Where tap (t1, t2)'s first output row reads in the split plane. */
static inline int64_t conv_split_tap(const int64_t *p, const conv_split *g, int64_t t1,
                                      int64_t t2) {
    const int64_t e1 = t1 * p[G_DIL + 1] - p[G_PAD + 1], e2 = t2 * p[G_DIL + 2] - p[G_PAD + 2];
    const int64_t k2 = conv_floor_s(e2, g->s);
    return (g->top + e1) * g->rstep + (e2 - g->s * k2) * g->width + g->left + k2;
}
#endif

/* d (oh rows of ow, contiguous) = oh runs of ow elements of s, `step` apart; inlined, so
 * that a constant ow becomes straight vector moves. */
static inline __attribute__((always_inline)) void FN(tap_rows)(
    scalar_t *restrict d, const scalar_t *restrict s, int64_t step, int64_t oh, int64_t ow) {
    for (int64_t y = 0; y < oh; y++)
        for (int64_t q = 0; q < ow; q++) d[y * ow + q] = s[y * step + q];
}

/* The adjoint of tap_rows: oh runs of ow elements of d, `step` apart, += s's rows. */
static inline __attribute__((always_inline)) void FN(tap_rows_add)(
    scalar_t *restrict d, int64_t step, const scalar_t *restrict s, int64_t oh, int64_t ow) {
    for (int64_t y = 0; y < oh; y++)
        for (int64_t q = 0; q < ow; q++) d[y * step + q] += s[y * ow + q];
}

/* The interior of split plane `split` (conv_split) = one (sample, channel) plane of x, rows
 * `rstep` apart, elements adjacent along a row; the margins are left as they are (zeros). */
static inline void FN(split_plane)(const scalar_t *src, int64_t rstep, int64_t h, int64_t w,
                                   const conv_split *g, scalar_t *split) {
    for (int64_t iy = 0; iy < h; iy++) {
        const scalar_t *restrict r = src + iy * rstep;
        scalar_t *restrict e = split + (g->top + iy) * g->rstep + g->left,
                           *restrict o = e + g->width;
        if (g->s == 1) {
            memcpy(e, r, (size_t)w * sizeof(scalar_t));
            continue;
        }
        for (int64_t q = 0; q < w / 2; q++) e[q] = r[2 * q], o[q] = r[2 * q + 1];
        if (w & 1) e[g->half - 1] = r[w - 1];
    }
}

/* im2col (below) through split planes (conv_split), x's elements adjacent along a row: the
 * same columns as the general loop. Answers 0 where it has no scratch. */
static int FN(im2col_split)(const scalar_t *x, const int64_t *p, const conv_split *g,
                            int64_t n0, int64_t b, int64_t c0, int64_t cg, scalar_t *cols) {
    const int64_t *k = p + G_K, *xs = p + G_XS;
    const int64_t h = p[G_IN + 1], w = p[G_IN + 2], oh = p[G_OUT + 1], ow = p[G_OUT + 2];
    const int64_t L = oh * ow, ld = b * L, K = k[1] * k[2], rstep = g->rstep;
    scalar_t *split = conv_scratch(g->rows * rstep, sizeof(scalar_t));
    if (!split) return 0;
    memset(split, 0, (size_t)(g->rows * rstep) * sizeof(scalar_t));
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t j = 0; j < b; j++) {
            FN(split_plane)(x + (n0 + j) * xs[0] + (c0 + cl) * xs[1], xs[3], h, w, g, split);
            scalar_t *row = cols + cl * K * ld + j * L;
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    const scalar_t *base = split + conv_split_tap(p, g, t1, t2);
                    switch (ow) { /* (fixed lengths: whole vector moves, no loop) */
                    case 8: FN(tap_rows)(row, base, g->s * rstep, oh, 8); break;
                    case 16: FN(tap_rows)(row, base, g->s * rstep, oh, 16); break;
                    default: FN(tap_rows)(row, base, g->s * rstep, oh, ow);
                    }
                }
        }
    ember_scratch_free(split);
    return 1;
}

/* col2im (below) through split planes (conv_split): each tap's columns added in order into
 * the split plane, then its interior written to dx's plane (overwritten, not added: dx
 * needs no zeroing). Each element sums the same terms in the same order as the general
 * loop, from zero (the same bits); padded positions land in the margins, never read.
 * Answers 0 where it has no scratch. */
static int FN(col2im_split)(const scalar_t *cols, const int64_t *p, const conv_split *g,
                            int64_t n0, int64_t b, int64_t c0, int64_t cg, scalar_t *dx) {
    const int64_t *k = p + G_K;
    const int64_t h = p[G_IN + 1], w = p[G_IN + 2], oh = p[G_OUT + 1], ow = p[G_OUT + 2];
    const int64_t L = oh * ow, ld = b * L, K = k[1] * k[2], rstep = g->rstep, c = p[G_C];
    scalar_t *split = conv_scratch(g->rows * rstep, sizeof(scalar_t));
    if (!split) return 0;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t j = 0; j < b; j++) {
            memset(split, 0, (size_t)(g->rows * rstep) * sizeof(scalar_t));
            const scalar_t *row = cols + cl * K * ld + j * L;
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    scalar_t *base = split + conv_split_tap(p, g, t1, t2);
                    switch (ow) { /* (as in im2col_split) */
                    case 8: FN(tap_rows_add)(base, g->s * rstep, row, oh, 8); break;
                    case 16: FN(tap_rows_add)(base, g->s * rstep, row, oh, 16); break;
                    default: FN(tap_rows_add)(base, g->s * rstep, row, oh, ow);
                    }
                }
            scalar_t *dst = dx + ((n0 + j) * c + c0 + cl) * h * w;
            for (int64_t iy = 0; iy < h; iy++) {
                scalar_t *restrict r = dst + iy * w;
                const scalar_t *restrict e = split + (g->top + iy) * rstep + g->left,
                                         *restrict o = e + g->width;
                if (g->s == 1) {
                    memcpy(r, e, (size_t)w * sizeof(scalar_t));
                    continue;
                }
                for (int64_t q = 0; q < w / 2; q++) r[2 * q] = e[q], r[2 * q + 1] = o[q];
                if (w & 1) r[w - 1] = e[g->half - 1];
            }
        }
    ember_scratch_free(split);
    return 1;
}

/* cols (cg K, b L) = the receptive fields of samples n0 .. n0+b, channels c0 .. c0+cg of x:
 * row (channel, tap), column (sample, output position); zeros where a tap reads padding. */
static void FN(im2col)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b, int64_t c0,
                       int64_t cg, scalar_t *cols) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD, *xs = p + G_XS;
    const int64_t L = out[0] * out[1] * out[2], ld = b * L;
    const int64_t step = st[2] * xs[4];
    conv_split g;
    if (xs[4] == 1 && conv_split_plan(p, &g) && FN(im2col_split)(x, p, &g, n0, b, c0, cg, cols))
        return;
    if (st[2] == 2 && xs[4] == 1 && k[0] * k[1] * k[2] > 1 &&
        FN(im2col_stride2)(x, p, n0, b, c0, cg, cols))
        return;
    scalar_t *row = cols;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    for (int64_t j = 0; j < b; j++) {
                        const scalar_t *src = x + (n0 + j) * xs[0] + (c0 + cl) * xs[1];
                        scalar_t *dst = row + j * L;
                        for (int64_t z = 0; z < out[0]; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = 0; y < out[1]; y++) {
                                scalar_t *d = dst + (z * out[1] + y) * out[2];
                                if (z < z0 || z >= z1 || y < y0 || y >= y1 || q0 == q1) {
                                    memset(d, 0, (size_t)out[2] * sizeof(scalar_t));
                                    continue;
                                }
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                const scalar_t *s = src + iz * xs[2] + iy * xs[3] +
                                                    (q0 * st[2] - pd[2] + t2 * dl[2]) * xs[4];
                                for (int64_t q = 0; q < q0; q++) d[q] = 0;
                                if (step == 1)
                                    memcpy(d + q0, s, (size_t)(q1 - q0) * sizeof(scalar_t));
                                else
                                    FN(row_copy)(d + q0, s, step, q1 - q0);
                                for (int64_t q = q1; q < out[2]; q++) d[q] = 0;
                            }
                        }
                    }
                }
}

/* dx (samples n0 .. n0+b, channels c0 .. c0+cg; contiguous) = the adjoint of im2col
 * applied to cols (cg K, b L): each tap's columns added at the positions it read, taps in
 * order, onto zeros. */
static void FN(col2im)(const scalar_t *cols, const int64_t *p, int64_t n0, int64_t b,
                       int64_t c0, int64_t cg, scalar_t *dx) {
    const int64_t *in = p + G_IN, *k = p + G_K, *out = p + G_OUT, *st = p + G_STRIDE,
                  *dl = p + G_DIL, *pd = p + G_PAD;
    const int64_t L = out[0] * out[1] * out[2], ld = b * L;
    const int64_t plane = in[0] * in[1] * in[2], c = p[G_C];
    conv_split g;
    if (conv_split_plan(p, &g) && FN(col2im_split)(cols, p, &g, n0, b, c0, cg, dx)) return;
    for (int64_t j = 0; j < b; j++)
        memset(dx + ((n0 + j) * c + c0) * plane, 0, (size_t)(cg * plane) * sizeof(scalar_t));
    const scalar_t *row = cols;
    for (int64_t cl = 0; cl < cg; cl++)
        for (int64_t t0 = 0; t0 < k[0]; t0++)
            for (int64_t t1 = 0; t1 < k[1]; t1++)
                for (int64_t t2 = 0; t2 < k[2]; t2++, row += ld) {
                    int64_t z0, z1, y0, y1, q0, q1;
                    conv_valid(out[0], in[0], st[0], pd[0], t0 * dl[0], &z0, &z1);
                    conv_valid(out[1], in[1], st[1], pd[1], t1 * dl[1], &y0, &y1);
                    conv_valid(out[2], in[2], st[2], pd[2], t2 * dl[2], &q0, &q1);
                    if (q0 == q1) continue;
                    for (int64_t j = 0; j < b; j++) {
                        scalar_t *dst = dx + ((n0 + j) * c + c0 + cl) * plane;
                        const scalar_t *src = row + j * L;
                        for (int64_t z = z0; z < z1; z++) {
                            const int64_t iz = z * st[0] - pd[0] + t0 * dl[0];
                            for (int64_t y = y0; y < y1; y++) {
                                const int64_t iy = y * st[1] - pd[1] + t1 * dl[1];
                                scalar_t *d = dst + (iz * in[1] + iy) * in[2] +
                                              q0 * st[2] - pd[2] + t2 * dl[2];
                                const scalar_t *s = src + (z * out[1] + y) * out[2];
                                FN(row_add)(d, st[2], s + q0, q1 - q0);
                            }
                        }
                    }
                }
}

/* Whether sample n's channels c0.. of x are themselves the columns of a 1x1 stride-1
 * unpadded convolution: rows of L contiguous elements, one channel after another. */
static int FN(direct_columns)(const int64_t *p) {
    const int64_t *in = p + G_IN, *k = p + G_K, *st = p + G_STRIDE, *pd = p + G_PAD,
                  *xs = p + G_XS, *out = p + G_OUT;
    for (int i = 0; i < 3; i++)
        if (k[i] != 1 || st[i] != 1 || pd[i] != 0 || out[i] != in[i]) return 0;
    return p[G_CHUNK] == 1 && xs[4] == 1 && xs[3] == in[2] && xs[2] == in[1] * in[2] &&
           xs[1] == in[0] * in[1] * in[2];
}

/* --- forward's columns packed straight from split planes (G_PACKED) -------------------
 * Where ember's own product serves a split-plane convolution (conv_split), its panels of
 * columns are written from the planes of the chunk's samples and the group's channels as
 * the product asks for them: the columns are never stored whole, saving im2col's pass
 * over them and the product's copy of them into panels (a 64 -> 128 3x3 stride-2 forward
 * at 16x16, one thread: 2.8 -> 2.3 ms). The product's operands are the same numbers as
 * with im2col, in the same order: the same bits as ember's own product of the columns. */

#ifndef EMBER_CONV_RUNS
#define EMBER_CONV_RUNS
/* A run of a panel's columns along one output row of one sample: `len` columns from
 * `dst` in the panel, read from `src` onwards in the sample's plane of a channel. */
typedef struct {
    int64_t src, dst, len;
} conv_run;

/* The runs of each panel of the product's n columns (sample, then output position). The
 * same for every row of the columns: found once a product, not once a row. */
static void conv_panel_runs(int64_t n, int64_t L, int64_t ow, int64_t vstep,
                            int64_t sample_step, conv_run *runs, int64_t *first,
                            uint8_t *eight) {
    int64_t r = 0, panel = 0;
    for (int64_t p0 = 0; p0 < n; p0 += EMBER_PANEL, panel++) {
        const int64_t end = EMBER_MIN(p0 + EMBER_PANEL, n);
        first[panel] = r;
        eight[panel] = 1;
        for (int64_t j = p0; j < end; r++) {
            const int64_t sample = j / L, pos = j % L, q = pos % ow;
            const int64_t len = EMBER_MIN(ow - q, end - j);
            runs[r] = (conv_run){sample * sample_step + pos / ow * vstep + q, j - p0, len};
            eight[panel] &= len == 8;
            j += len;
        }
    }
    first[panel] = r;
}
#endif

typedef struct {
    const scalar_t *planes; /* (b, cg) split planes of `plane` elements each */
    int64_t plane, K;
    const int64_t *tap;   /* K offsets of each tap's first read in a plane */
    const conv_run *runs; /* every panel's runs, panel after panel */
    const int64_t *first; /* panel i's runs: first[i] .. first[i + 1] - 1 */
    const uint8_t *eight; /* panel i's runs are all 8 columns long */
} FN(packer);

static inline __attribute__((always_inline)) void FN(run_copy)(scalar_t *restrict d,
        const scalar_t *restrict s, int64_t len) {
    for (int64_t q = 0; q < len; q++) d[q] = s[q];
}

static void FN(pack_columns)(const void *ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
                             void *out) {
    const FN(packer) *c = ctx;
    scalar_t *bp = out;
    for (int64_t jr = 0; jr < nc; jr += EMBER_PANEL, bp += kc * EMBER_PANEL) {
        const int64_t nr = EMBER_MIN(EMBER_PANEL, nc - jr), panel = (j0 + jr) / EMBER_PANEL;
        const conv_run *run = c->runs + c->first[panel];
        const int64_t runs = c->first[panel + 1] - c->first[panel];
        const int eight = c->eight[panel];
        for (int64_t k = 0; k < kc; k++) {
            const int64_t r = k0 + k;
            const scalar_t *base = c->planes + r / c->K * c->plane + c->tap[r % c->K];
            scalar_t *d = bp + k * EMBER_PANEL;
            if (eight) /* (whole vector moves) */
                for (int64_t u = 0; u < runs; u++)
                    FN(run_copy)(d + run[u].dst, base + run[u].src, 8);
            else
                for (int64_t u = 0; u < runs; u++)
                    FN(run_copy)(d + run[u].dst, base + run[u].src, run[u].len);
            for (int64_t j = nr; j < EMBER_PANEL; j++) d[j] = 0;
        }
    }
}

/* out's rows for the chunk (res: og x b L, rows ldc apart) = wg times the columns of
 * samples n0 .. n0+b, channels c0 .. c0+cg, packed from split planes. `planes` holds
 * b cg planes whose margins are zero. Nonzero where the product could not run. */
static int FN(packed_forward)(const scalar_t *x, const int64_t *p, const conv_split *g,
                              int64_t n0, int64_t b, int64_t c0, int64_t cg, int64_t og,
                              const scalar_t *wg, scalar_t *planes, scalar_t *res,
                              int64_t ldc) {
    const int64_t *xs = p + G_XS;
    const int64_t h = p[G_IN + 1], w = p[G_IN + 2], k1 = p[G_K + 1], k2 = p[G_K + 2];
    const int64_t plane = g->rows * g->rstep, K = k1 * k2, ow = p[G_OUT + 2];
    const int64_t L = p[G_OUT + 1] * ow, n = b * L, panels = (n + EMBER_PANEL - 1) / EMBER_PANEL;
    int64_t tap[K];
    for (int64_t t = 0; t < K; t++) tap[t] = conv_split_tap(p, g, t / k2, t % k2);
    conv_run *runs = ember_scratch(sizeof(conv_run) * (size_t)(n + panels));
    int64_t *first = ember_scratch(sizeof(int64_t) * (size_t)(panels + 1));
    uint8_t *eight = ember_scratch((size_t)panels);
    int failed = !runs || !first || !eight;
    if (!failed) {
        conv_panel_runs(n, L, ow, g->s * g->rstep, cg * plane, runs, first, eight);
        for (int64_t j = 0; j < b; j++)
            for (int64_t cl = 0; cl < cg; cl++)
                FN(split_plane)(x + (n0 + j) * xs[0] + (c0 + cl) * xs[1], xs[3], h, w, g,
                                planes + (j * cg + cl) * plane);
        const FN(packer) pk = {planes, plane, K, tap, runs, first, eight};
        failed = FN(ember_packed_product)(og, n, cg * K, wg, cg * K, FN(pack_columns), &pk,
                                          res, ldc);
    }
    ember_scratch_free(runs);
    ember_scratch_free(first);
    ember_scratch_free(eight);
    return failed;
}
