/* conv_winograd.c: Winograd's F(2x2, 3x3), part of conv.c (included there). */

/* --- Winograd F(2x2, 3x3): 3x3 stride-1 undilated ungrouped 2-d convolutions -----------
 *
 * Each 2x2 block of outputs comes from the 4x4 input tile under it: V = B^T d B per tile
 * and channel, U = G g G^T per kernel, and for each of the 16 positions of the 4x4
 * transform one product M = U (O x C) V (C x tiles) through BLAS, then Y = A^T M A. The
 * transforms are only additions (2.25x fewer multiplications than im2col), done in the
 * NumPy kernel's order (ops/_winograd.py): rows, then columns. A 2-d convolution here is
 * the 3-d one of conv_geo with its first spatial dim 1. The weight gradient is the
 * adjoint: dU = (A gy A^T) V^T per position, summed over tiles, and dw = G^T dU G. */

#ifndef EMBER_WINO_ONCE
#define EMBER_WINO_ONCE
static const double wino_g[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
#endif

/* The transforms' one-dimensional steps over n independent lanes (restrict parameters, so
 * that the compiler vectorises them once inlined): B^T of four rows, A^T of four, A of
 * two. */
static inline void FN(wino_bt)(const scalar_t *restrict d0, const scalar_t *restrict d1,
                               const scalar_t *restrict d2, const scalar_t *restrict d3,
                               scalar_t *restrict o0, scalar_t *restrict o1,
                               scalar_t *restrict o2, scalar_t *restrict o3, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        o0[k] = d0[k] - d2[k];
        o1[k] = d1[k] + d2[k];
        o2[k] = d2[k] - d1[k];
        o3[k] = d1[k] - d3[k];
    }
}

static inline void FN(wino_at)(const scalar_t *restrict m0, const scalar_t *restrict m1,
                               const scalar_t *restrict m2, const scalar_t *restrict m3,
                               scalar_t *restrict y0, scalar_t *restrict y1, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        scalar_t a = m0[k] + m1[k], b = m1[k] - m2[k];
        y0[k] = a + m2[k];
        y1[k] = b - m3[k];
    }
}

static inline void FN(wino_a)(const scalar_t *restrict z0, const scalar_t *restrict z1,
                              scalar_t *restrict e0, scalar_t *restrict e1,
                              scalar_t *restrict e2, scalar_t *restrict e3, int64_t n) {
    for (int64_t k = 0; k < n; k++) {
        e0[k] = z0[k];
        e1[k] = z0[k] + z1[k];
        e2[k] = z0[k] - z1[k];
        e3[k] = -z1[k];
    }
}

/* Even and odd elements of one input row, with the padding's zeros: e[k] = row[2k - lo],
 * o[k] = row[2k + 1 - lo], k < n (NULL line: a row of padding). */
static void FN(wino_split)(const scalar_t *line, int64_t step, int64_t w, int64_t lo,
                           int64_t n, scalar_t *restrict e, scalar_t *restrict o) {
    for (int64_t k = 0; k < n; k++) e[k] = 0, o[k] = 0;
    if (line == NULL) return;
    if (step == 1) { /* adjacent elements: pairs (line[2m], line[2m + 1]) in one loop */
        const int64_t h = lo / 2, odd = lo & 1;
        /* the pair's first goes to e (lo even) or o (odd), at m + h; its second to o at
         * m + h, or e at m + h + 1 */
        scalar_t *restrict a = (odd ? o : e) + h, *restrict b = (odd ? e + 1 : o) + h;
        const int64_t ma = EMBER_MIN((w + 1) / 2, n - h), mb = EMBER_MIN(w / 2, n - h - odd);
        const int64_t both = EMBER_MAX(0, EMBER_MIN(ma, mb));
        for (int64_t m = 0; m < both; m++) a[m] = line[2 * m], b[m] = line[2 * m + 1];
        for (int64_t m = both; m < ma; m++) a[m] = line[2 * m];
        for (int64_t m = both; m < mb; m++) b[m] = line[2 * m + 1];
        return;
    }
    for (int par = 0; par < 2; par++) {
        scalar_t *restrict dst = par ? o : e;
        /* 0 <= 2k + par - lo < w */
        int64_t k0 = lo - par > 0 ? (lo - par + 1) / 2 : 0;
        int64_t k1 = (w + lo - par + 1) / 2;
        if (k1 > n) k1 = n;
        const scalar_t *src = line + (2 * k0 + par - lo) * step;
        for (int64_t k = k0; k < k1; k++) dst[k] = src[(k - k0) * 2 * step];
    }
}

/* V (16, C, P) for samples n0 .. n0+b at tile offset 0 (P = b th tw): B^T d B of every
 * tile, a tile row at a time: its four input rows split into even and odd columns (so
 * every step below runs over whole rows of tiles), the rows' transform, then the
 * columns'. `rowbuf` holds 16 (tw + 1). */
static void FN(wino_input)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b,
                           scalar_t *v, scalar_t *rowbuf) {
    const int64_t c = p[G_C], h = p[G_IN + 1], w = p[G_IN + 2], *xs = p + G_XS;
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2];
    const int64_t th = (oh + 1) / 2, tw = (ow + 1) / 2, P = b * th * tw, half = tw + 1;
    const int64_t plo = p[G_PAD + 1], qlo = p[G_PAD + 2];
    scalar_t *re[4], *ro[4], *te[4], *to[4];
    for (int i = 0; i < 4; i++) {
        re[i] = rowbuf + i * half, ro[i] = rowbuf + (4 + i) * half;
        te[i] = rowbuf + (8 + i) * half, to[i] = rowbuf + (12 + i) * half;
    }
    for (int64_t j = 0; j < b; j++)
        for (int64_t ci = 0; ci < c; ci++) {
            const scalar_t *src = x + (n0 + j) * xs[0] + ci * xs[1];
            for (int64_t ty = 0; ty < th; ty++) {
                for (int i = 0; i < 4; i++) {
                    const int64_t iy = 2 * ty + i - plo;
                    FN(wino_split)(iy < 0 || iy >= h ? NULL : src + iy * xs[3], xs[4], w, qlo,
                                   half, re[i], ro[i]);
                }
                FN(wino_bt)(re[0], re[1], re[2], re[3], te[0], te[1], te[2], te[3], half);
                FN(wino_bt)(ro[0], ro[1], ro[2], ro[3], to[0], to[1], to[2], to[3], half);
                const int64_t at = (j * th + ty) * tw;
                for (int i = 0; i < 4; i++) /* a tile's columns: e[tx], o[tx], e[tx+1], o[tx+1] */
                    FN(wino_bt)(te[i], to[i], te[i] + 1, to[i] + 1,
                                v + ((4 * i + 0) * c + ci) * P + at,
                                v + ((4 * i + 1) * c + ci) * P + at,
                                v + ((4 * i + 2) * c + ci) * P + at,
                                v + ((4 * i + 3) * c + ci) * P + at, tw);
            }
        }
}

/* U (16, O, C) = G g G^T of every kernel, in double (G g, then times G^T), rounded once.
 * WINO_LANES kernels at a time, each step over the lanes (so that it vectorises); every
 * element's own arithmetic is the same whatever the grouping. Blocks of WINO_LANES kernels
 * are shared out to the kernel threads, 1024 kernels a task at least (measured, 128 -> 128
 * channels: 0.15 ms on one thread, 0.08 on two).
 * `wino_kernel_flipped` is the same transform of the input gradient's kernel, w's in and
 * out channels swapped and its taps reversed (`_flipped` in ops/_conv_kernels.py), read
 * from w (O, C, 3, 3) as it is: U (16, C, O), without the flipped copy. */
#ifndef WINO_LANES
#define WINO_LANES 64
#endif
typedef struct {
    const scalar_t *w;
    scalar_t *u;
    int64_t n, o; /* kernels; w's out channels (flipped: the product's in channels) */
    int flipped;
} FN(wino_kernel_args);

static void FN(wino_kernel_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_kernel_args) *a = ctx;
    const int64_t n = a->n, o = a->o, c = n / (o > 0 ? o : 1);
    const scalar_t *w = a->w;
    double g[9][WINO_LANES], t[4][3][WINO_LANES];
    for (int64_t blk = lo; blk < hi; blk++) {
        const int64_t s = blk * WINO_LANES, m = EMBER_MIN(WINO_LANES, n - s);
        if (!a->flipped) {
            for (int64_t q = 0; q < m; q++)
                for (int tap = 0; tap < 9; tap++) g[tap][q] = w[(s + q) * 9 + tap];
        } else { /* kernel s + q is (ci, oi) = divmod(s + q, o): w[oi, ci] reversed */
            for (int64_t q = 0; q < m; q++) {
                const int64_t ci = (s + q) / o, oi = (s + q) % o;
                const scalar_t *k = w + (oi * c + ci) * 9;
                for (int tap = 0; tap < 9; tap++) g[tap][q] = k[8 - tap];
            }
        }
        for (int i = 0; i < 4; i++)
            for (int bb = 0; bb < 3; bb++)
                for (int64_t q = 0; q < m; q++)
                    t[i][bb][q] = wino_g[i][0] * g[bb][q] + wino_g[i][1] * g[3 + bb][q] +
                                  wino_g[i][2] * g[6 + bb][q];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                scalar_t *restrict dst = a->u + (4 * i + j) * n + s;
                for (int64_t q = 0; q < m; q++)
                    dst[q] = (scalar_t)(t[i][0][q] * wino_g[j][0] + t[i][1][q] * wino_g[j][1] +
                                        t[i][2][q] * wino_g[j][2]);
            }
    }
}

void FN(wino_kernel)(const scalar_t *w, scalar_t *u, int64_t o, int64_t c) {
    FN(wino_kernel_args) a = {w, u, o * c, o, 0};
    ember_parallel_for(FN(wino_kernel_task), &a, (o * c + WINO_LANES - 1) / WINO_LANES, 16);
}

void FN(wino_kernel_flipped)(const scalar_t *w, scalar_t *u, int64_t o, int64_t c) {
    FN(wino_kernel_args) a = {w, u, o * c, o, 1};
    ember_parallel_for(FN(wino_kernel_task), &a, (o * c + WINO_LANES - 1) / WINO_LANES, 16);
}

typedef struct {
    const scalar_t *x, *u, *b; /* b: the bias, or NULL */
    scalar_t *out;
    const int64_t *p;
    atomic_int *failed; /* bit 1: a task had no scratch; bit 2: a result is not finite */
} FN(wino_args);

/* Whether a[0 .. n) are all finite: their products with zero sum to zero (NaN where one
 * is inf or NaN; no overflow to mistake), summed in 16 independent lanes so that the
 * compiler vectorises the pass. */
static int FN(all_finite)(const scalar_t *restrict a, int64_t n) {
    scalar_t z[16] = {0}, t = 0;
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++) z[l] += a[i + l] * 0;
    for (; i < n; i++) t += a[i] * 0;
    for (int l = 0; l < 16; l++) t += z[l];
    return t == 0;
}

static void FN(wino_forward_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t most = chunk * th * tw;
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *m = conv_scratch(16 * o * most, sizeof(scalar_t));
    scalar_t *rowbuf = conv_scratch(24 * (tw + 1), sizeof(scalar_t));
    if (!v || !m || !rowbuf) {
        atomic_fetch_or(a->failed, 1);
        goto done;
    }
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
        FN(wino_input)(a->x, p, n0, b, v, rowbuf);
        for (int k = 0; k < 16; k++)
            GEMM(0, 0, o, P, c, 1, a->u + k * o * c, c, v + k * c * P, P, 0, m + k * o * P, P);
        for (int64_t j = 0; j < b; j++)
            for (int64_t oi = 0; oi < o; oi++) {
                scalar_t *dst = a->out + ((n0 + j) * o + oi) * oh * ow;
                for (int64_t ty = 0; ty < th; ty++) {
                    const int64_t at = oi * P + (j * th + ty) * tw;
                    scalar_t *s0 = rowbuf, *s1 = rowbuf + 4 * tw, *y = rowbuf + 8 * tw;
                    for (int jj = 0; jj < 4; jj++) /* A^T m along the rows */
                        FN(wino_at)(m + jj * o * P + at, m + (4 + jj) * o * P + at,
                                    m + (8 + jj) * o * P + at, m + (12 + jj) * o * P + at,
                                    s0 + jj * tw, s1 + jj * tw, tw);
                    for (int i = 0; i < 2; i++) { /* and along the columns */
                        const scalar_t *q = i ? s1 : s0;
                        scalar_t *y0 = y + 2 * i * tw, *y1 = y0 + tw;
                        FN(wino_at)(q, q + tw, q + 2 * tw, q + 3 * tw, y0, y1, tw);
                        if (2 * ty + i >= oh) break;
                        scalar_t *row = dst + (2 * ty + i) * ow;
                        for (int64_t tx = 0; tx < ow / 2; tx++)
                            row[2 * tx] = y0[tx], row[2 * tx + 1] = y1[tx];
                        if (ow & 1) row[ow - 1] = y0[tw - 1];
                    }
                }
            }
        if (!FN(all_finite)(a->out + n0 * o * oh * ow, b * o * oh * ow))
            atomic_fetch_or(a->failed, 2);
        else if (a->b)
            FN(add_bias)(a->out + n0 * o * oh * ow, a->b, b, o, oh * ow);
    }
done:
    ember_scratch_free(v);
    ember_scratch_free(m);
    ember_scratch_free(rowbuf);
}

int FN(wino_forward)(const scalar_t *x, const scalar_t *u, const scalar_t *b, scalar_t *out,
                     const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_args) a = {x, u, b, out, p, &failed};
    const int64_t chunks = (p[G_N] + p[G_CHUNK] - 1) / p[G_CHUNK];
    ember_parallel_for(FN(wino_forward_task), &a, chunks, 1);
    return atomic_load(&failed);
}

typedef struct {
    const scalar_t *x, *gy;
    scalar_t *acc; /* parts x (16, O, C) */
    const int64_t *p;
    atomic_int *failed; /* set by a task whose scratch could not be had */
} FN(wino_wgrad_args);

static void FN(wino_weight_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_wgrad_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK], parts = p[G_PARTS];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t most = chunk * th * tw, chunks = (n + chunk - 1) / chunk;
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *d = conv_scratch(16 * o * most, sizeof(scalar_t));
    scalar_t *rowbuf = conv_scratch(24 * (tw + 1), sizeof(scalar_t));
    if (!v || !d || !rowbuf) {
        atomic_store(a->failed, 1);
        goto done;
    }
    for (int64_t part = lo; part < hi; part++) {
        scalar_t *acc = a->acc + part * 16 * o * c;
        const int64_t first = chunks * part / parts, last = chunks * (part + 1) / parts;
        for (int64_t ch = first; ch < last; ch++) {
            const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
            FN(wino_input)(a->x, p, n0, b, v, rowbuf);
            /* D = A z A^T of each 2x2 block z of gy (zeros past its end) */
            for (int64_t j = 0; j < b; j++)
                for (int64_t oi = 0; oi < o; oi++) {
                    const scalar_t *g = a->gy + ((n0 + j) * o + oi) * oh * ow;
                    for (int64_t ty = 0; ty < th; ty++) {
                        const int64_t at = oi * P + (j * th + ty) * tw;
                        scalar_t *z = rowbuf, *e = rowbuf + 4 * tw; /* z: 00, 01, 10, 11 */
                        for (int r = 0; r < 2; r++) {
                            scalar_t *restrict ze = z + 2 * r * tw, *restrict zo = ze + tw;
                            const scalar_t *row = g + (2 * ty + r) * ow;
                            for (int64_t tx = 0; tx < tw; tx++) ze[tx] = 0, zo[tx] = 0;
                            if (2 * ty + r >= oh) continue;
                            for (int64_t tx = 0; tx < ow / 2; tx++)
                                ze[tx] = row[2 * tx], zo[tx] = row[2 * tx + 1];
                            if (ow & 1) ze[tw - 1] = row[ow - 1];
                        }
                        for (int col = 0; col < 2; col++) { /* A z along the rows */
                            scalar_t *e0 = e + col * tw;
                            FN(wino_a)(z + col * tw, z + (2 + col) * tw, e0, e0 + 2 * tw,
                                       e0 + 4 * tw, e0 + 6 * tw, tw);
                        }
                        for (int i = 0; i < 4; i++) /* and along the columns */
                            FN(wino_a)(e + 2 * i * tw, e + (2 * i + 1) * tw,
                                       d + (4 * i) * o * P + at, d + (4 * i + 1) * o * P + at,
                                       d + (4 * i + 2) * o * P + at,
                                       d + (4 * i + 3) * o * P + at, tw);
                    }
                }
            for (int k = 0; k < 16; k++)
                GEMM(0, 1, o, c, P, 1, d + k * o * P, P, v + k * c * P, P, ch == first ? 0 : 1,
                     acc + k * o * c, c);
        }
        if (first == last) memset(acc, 0, (size_t)(16 * o * c) * sizeof(scalar_t));
    }
done:
    ember_scratch_free(v);
    ember_scratch_free(d);
    ember_scratch_free(rowbuf);
}

typedef struct {
    scalar_t *acc, *dw;
    const int64_t *p;
} FN(wino_finish_args);

/* Kernels [lo, hi) WINO_LANES at a time of wino_weight_finish: their partial sums added in
 * order into part 0, then G^T dU G. */
static void FN(wino_finish_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_finish_args) *f = ctx;
    const int64_t *p = f->p;
    const int64_t o = p[G_O], c = p[G_C], parts = p[G_PARTS], n = o * c, size = 16 * n;
    scalar_t *acc = f->acc, *dw = f->dw;
    double t[4][3][WINO_LANES], r[9][WINO_LANES];
    for (int64_t s = lo * WINO_LANES; s < EMBER_MIN(n, hi * WINO_LANES); s += WINO_LANES) {
        const int64_t m = EMBER_MIN(WINO_LANES, n - s);
        for (int64_t part = 1; part < parts; part++)
            for (int k = 0; k < 16; k++) {
                scalar_t *restrict dst = acc + k * n + s;
                const scalar_t *restrict src = acc + part * size + k * n + s;
                for (int64_t q = 0; q < m; q++) dst[q] += src[q];
            }
        for (int i = 0; i < 4; i++) {
            const scalar_t *a0 = acc + (4 * i) * n + s, *a1 = a0 + n, *a2 = a1 + n,
                           *a3 = a2 + n;
            for (int ib = 0; ib < 3; ib++)
                for (int64_t q = 0; q < m; q++)
                    t[i][ib][q] = (double)a0[q] * wino_g[0][ib] + (double)a1[q] * wino_g[1][ib] +
                                  (double)a2[q] * wino_g[2][ib] + (double)a3[q] * wino_g[3][ib];
        }
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++)
                for (int64_t q = 0; q < m; q++)
                    r[ia * 3 + ib][q] = wino_g[0][ia] * t[0][ib][q] + wino_g[1][ia] * t[1][ib][q] +
                                        wino_g[2][ia] * t[2][ib][q] + wino_g[3][ia] * t[3][ib][q];
        for (int64_t q = 0; q < m; q++)
            for (int tap = 0; tap < 9; tap++) dw[(s + q) * 9 + tap] = (scalar_t)r[tap][q];
    }
}

/* dw (O, C, 3, 3) = G^T dU G, dU the sum in order of the `parts` partial sums (acc);
 * WINO_LANES kernels at a time, as `wino_kernel`, shared out to the pool (each kernel's
 * arithmetic is the same on any thread). */
void FN(wino_weight_finish)(scalar_t *acc, scalar_t *dw, const int64_t *p) {
    FN(wino_finish_args) f = {acc, dw, p};
    const int64_t blocks = (p[G_O] * p[G_C] + WINO_LANES - 1) / WINO_LANES;
    ember_parallel_for(FN(wino_finish_task), &f, blocks, 16);
}

int FN(wino_weight_grad)(const scalar_t *x, const scalar_t *gy, scalar_t *acc,
                          const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_wgrad_args) a = {x, gy, acc, p, &failed};
    ember_parallel_for(FN(wino_weight_task), &a, p[G_PARTS], 1);
    return atomic_load(&failed);
}

/* --- Winograd on narrow planes: the same transforms, channels last ---------------------
 *
 * Where a row holds few tiles, a tile row is too short a loop; so the chunk is first copied
 * channels last (b, 2 th + 2, 2 tw + 2, C, the padding's zeros around), every transform
 * runs over a tile's channels (V and M are (16, P, C) and (16, P, O)), and the output and
 * the output gradient are transposed on the way out and in. */

/* xp (b, hp, wp, C) = samples n0.. of x padded, channels last; hp, wp = 2 th + 2, 2 tw + 2.
 * Writes the same positions for every chunk: the caller zeroes xp once, for the padding. */
static void FN(wino_last_pad)(const scalar_t *x, const int64_t *p, int64_t n0, int64_t b,
                              int64_t hp, int64_t wp, scalar_t *xp) {
    const int64_t c = p[G_C], h = p[G_IN + 1], w = p[G_IN + 2], *xs = p + G_XS;
    const int64_t plo = p[G_PAD + 1], qlo = p[G_PAD + 2];
    const int64_t y1 = EMBER_MIN(h, hp - plo), x1 = EMBER_MIN(w, wp - qlo);
    for (int64_t j = 0; j < b; j++)
        for (int64_t iy = 0; iy < y1; iy++) /* row iy: (C, x1) -> (x1, C) */
            FN(transpose)(x + (n0 + j) * xs[0] + iy * xs[3], xs[1], xs[4],
                          xp + ((j * hp + iy + plo) * wp + qlo) * c, c, c, x1);
}

/* V (16, P, C): B^T d B of every tile of xp, over the channels. */
static void FN(wino_last_input)(const scalar_t *xp, int64_t b, int64_t th, int64_t tw,
                                int64_t hp, int64_t wp, int64_t c, scalar_t *v,
                                scalar_t *t) {
    const int64_t P = b * th * tw;
    for (int64_t j = 0; j < b; j++)
        for (int64_t ty = 0; ty < th; ty++)
            for (int64_t tx = 0; tx < tw; tx++) {
                const int64_t pp = (j * th + ty) * tw + tx;
                const scalar_t *base = xp + ((j * hp + 2 * ty) * wp + 2 * tx) * c;
                for (int s = 0; s < 4; s++) { /* B^T along the rows, column s */
                    const scalar_t *d0 = base + s * c;
                    FN(wino_bt)(d0, d0 + wp * c, d0 + 2 * wp * c, d0 + 3 * wp * c, t + s * c,
                                t + (4 + s) * c, t + (8 + s) * c, t + (12 + s) * c, c);
                }
                for (int i = 0; i < 4; i++) { /* and along the columns */
                    const scalar_t *e0 = t + 4 * i * c;
                    scalar_t *v0 = v + ((4 * i) * P + pp) * c;
                    FN(wino_bt)(e0, e0 + c, e0 + 2 * c, e0 + 3 * c, v0, v0 + P * c,
                                v0 + 2 * P * c, v0 + 3 * P * c, c);
                }
            }
}

static void FN(wino_last_forward_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t hp = 2 * th + 2, wp = 2 * tw + 2, most = chunk * th * tw;
    scalar_t *xp = conv_scratch(chunk * hp * wp * c, sizeof(scalar_t));
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *m = conv_scratch(16 * o * most, sizeof(scalar_t));
    scalar_t *y = conv_scratch(chunk * oh * ow * o, sizeof(scalar_t));
    scalar_t *t = conv_scratch(17 * EMBER_MAX(c, o), sizeof(scalar_t));
    if (!xp || !v || !m || !y || !t) {
        atomic_fetch_or(a->failed, 1);
        goto done;
    }
    memset(xp, 0, (size_t)(chunk * hp * wp * c) * sizeof(scalar_t)); /* (the padding) */
    for (int64_t ch = lo; ch < hi; ch++) {
        const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
        FN(wino_last_pad)(a->x, p, n0, b, hp, wp, xp);
        FN(wino_last_input)(xp, b, th, tw, hp, wp, c, v, t);
        for (int k = 0; k < 16; k++)
            GEMM(0, 1, P, o, c, 1, v + k * P * c, c, a->u + k * o * c, c, 0, m + k * P * o, o);
        for (int64_t pp = 0; pp < P; pp++) {
            const int64_t j = pp / (th * tw), ty = pp / tw % th, tx = pp % tw;
            for (int jj = 0; jj < 4; jj++) { /* A^T m along the rows */
                const scalar_t *m0 = m + (jj * P + pp) * o;
                FN(wino_at)(m0, m0 + 4 * P * o, m0 + 8 * P * o, m0 + 12 * P * o, t + jj * o,
                            t + (4 + jj) * o, o);
            }
            for (int i = 0; i < 2 && 2 * ty + i < oh; i++) { /* and along the columns */
                const scalar_t *q0 = t + 4 * i * o;
                scalar_t *y0 = y + ((j * oh + 2 * ty + i) * ow + 2 * tx) * o;
                /* (a last odd column's second output lands in the row's spare slot) */
                FN(wino_at)(q0, q0 + o, q0 + 2 * o, q0 + 3 * o, y0,
                            2 * tx + 1 < ow ? y0 + o : t + 16 * EMBER_MAX(c, o), o);
            }
        }
        for (int64_t j = 0; j < b; j++) /* (b, oh ow, O) -> out (b, O, oh ow) */
            FN(transpose)(y + j * oh * ow * o, o, 1, a->out + (n0 + j) * o * oh * ow, oh * ow,
                          oh * ow, o);
        if (!FN(all_finite)(a->out + n0 * o * oh * ow, b * o * oh * ow))
            atomic_fetch_or(a->failed, 2);
        else if (a->b)
            FN(add_bias)(a->out + n0 * o * oh * ow, a->b, b, o, oh * ow);
    }
done:
    ember_scratch_free(xp);
    ember_scratch_free(v);
    ember_scratch_free(m);
    ember_scratch_free(y);
    ember_scratch_free(t);
}

int FN(wino_last_forward)(const scalar_t *x, const scalar_t *u, const scalar_t *b,
                          scalar_t *out, const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_args) a = {x, u, b, out, p, &failed};
    const int64_t chunks = (p[G_N] + p[G_CHUNK] - 1) / p[G_CHUNK];
    ember_parallel_for(FN(wino_last_forward_task), &a, chunks, 1);
    return atomic_load(&failed);
}

static void FN(wino_last_weight_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(wino_wgrad_args) *a = ctx;
    const int64_t *p = a->p;
    const int64_t c = p[G_C], o = p[G_O], n = p[G_N], chunk = p[G_CHUNK], parts = p[G_PARTS];
    const int64_t oh = p[G_OUT + 1], ow = p[G_OUT + 2], th = (oh + 1) / 2, tw = (ow + 1) / 2;
    const int64_t hp = 2 * th + 2, wp = 2 * tw + 2, most = chunk * th * tw;
    const int64_t chunks = (n + chunk - 1) / chunk;
    scalar_t *xp = conv_scratch(chunk * hp * wp * c, sizeof(scalar_t));
    scalar_t *v = conv_scratch(16 * c * most, sizeof(scalar_t));
    scalar_t *d = conv_scratch(16 * o * most, sizeof(scalar_t));
    /* gy chunk channels last, one zero row and column past its end: (b, 2th, 2tw, O) */
    scalar_t *gl = conv_scratch(chunk * 4 * th * tw * o, sizeof(scalar_t));
    scalar_t *t = conv_scratch(16 * EMBER_MAX(c, o), sizeof(scalar_t));
    if (!xp || !v || !d || !gl || !t) {
        atomic_store(a->failed, 1);
        goto done;
    }
    /* the padding, and gl's row and column past gy's end: the same zeros for every chunk */
    memset(xp, 0, (size_t)(chunk * hp * wp * c) * sizeof(scalar_t));
    memset(gl, 0, (size_t)(chunk * 4 * th * tw * o) * sizeof(scalar_t));
    for (int64_t part = lo; part < hi; part++) {
        scalar_t *acc = a->acc + part * 16 * o * c;
        const int64_t first = chunks * part / parts, last = chunks * (part + 1) / parts;
        for (int64_t ch = first; ch < last; ch++) {
            const int64_t n0 = ch * chunk, b = EMBER_MIN(chunk, n - n0), P = b * th * tw;
            FN(wino_last_pad)(a->x, p, n0, b, hp, wp, xp);
            FN(wino_last_input)(xp, b, th, tw, hp, wp, c, v, t);
            for (int64_t j = 0; j < b; j++)
                for (int64_t yy = 0; yy < oh; yy++) /* row yy: (O, ow) -> (ow, O) */
                    FN(transpose)(a->gy + (n0 + j) * o * oh * ow + yy * ow, oh * ow, 1,
                                  gl + ((j * 2 * th + yy) * 2 * tw) * o, o, o, ow);
            for (int64_t pp = 0; pp < P; pp++) {
                const int64_t j = pp / (th * tw), ty = pp / tw % th, tx = pp % tw;
                const scalar_t *z00 = gl + ((j * 2 * th + 2 * ty) * 2 * tw + 2 * tx) * o;
                const scalar_t *z01 = z00 + o, *z10 = z00 + 2 * tw * o, *z11 = z10 + o;
                for (int col = 0; col < 2; col++) /* A z along the rows */
                    FN(wino_a)(col ? z01 : z00, col ? z11 : z10, t + col * o, t + (2 + col) * o,
                               t + (4 + col) * o, t + (6 + col) * o, o);
                for (int i = 0; i < 4; i++) { /* and along the columns */
                    scalar_t *d0 = d + ((4 * i) * P + pp) * o;
                    FN(wino_a)(t + 2 * i * o, t + (2 * i + 1) * o, d0, d0 + P * o,
                               d0 + 2 * P * o, d0 + 3 * P * o, o);
                }
            }
            for (int k = 0; k < 16; k++)
                GEMM(1, 0, o, c, P, 1, d + k * P * o, o, v + k * P * c, c, ch == first ? 0 : 1,
                     acc + k * o * c, c);
        }
        if (first == last) memset(acc, 0, (size_t)(16 * o * c) * sizeof(scalar_t));
    }
done:
    ember_scratch_free(xp);
    ember_scratch_free(v);
    ember_scratch_free(d);
    ember_scratch_free(gl);
    ember_scratch_free(t);
}

int FN(wino_last_weight_grad)(const scalar_t *x, const scalar_t *gy, scalar_t *acc,
                               const int64_t *p) {
    atomic_int failed = 0;
    FN(wino_wgrad_args) a = {x, gy, acc, p, &failed};
    ember_parallel_for(FN(wino_last_weight_task), &a, p[G_PARTS], 1);
    return atomic_load(&failed);
}
