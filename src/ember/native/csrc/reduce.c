/* reduce.c: sums, means, products, extrema and vector norms along one run of dims of a
 * C-order array, the C twins of the NumPy kernels of ops/reduce.py (np.add.reduce, np.mean,
 * np.prod), ops/extrema.py (amax / amin) and ops/stats.py (vector_norm of ord 1, 2, +-inf).
 * Written once against scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * The array is read as (outer, n, inner): each output reduces its n elements, in NumPy's
 * order for that layout, so the results are NumPy's bits:
 *
 * - inner > 1 (the reduced run is not the last dim): NumPy's inner loop runs along a row of
 *   outputs, so each output is its identity (+0.0 for a sum: a column of -0.0 sums to
 *   +0.0; 1 for a product) combined with its elements in order. Blocks of COLS columns are
 *   carried side by side (a loop the compiler vectorises, its running values in registers).
 * - inner == 1, a sum: NumPy adds each line pairwise (its `pairwise_sum`): fewer than 8
 *   elements in order; up to PW_BLOCK elements into 8 partial sums (element i feeding sum
 *   i % 8), combined ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)), the remainder added in order;
 *   longer lines split at n2 = n/2 rounded down to a multiple of 8, each half so summed and
 *   the halves added. The line's total is then added to +0.0. Up to LANES lines (or equal
 *   halves of a line) go through that tree together: their partial sums are independent
 *   vector chains, where one line alone would wait on each add's latency.
 * - inner == 1, a product: NumPy multiplies along the line in order from 1; LANES lines'
 *   running products are carried side by side.
 *
 * The norms' sums are of |v| (ord 1) or v * v (ord 2, then the square root): the values
 * NumPy sums after its np.abs and multiply passes, in the same order. A mean is the sum
 * divided by n in double, rounded to scalar_t (np.mean divides by an intp count, in double:
 * for float that rounds as a float division would).
 *
 * Extrema need no order: any NaN makes the result NaN, and a zero result is +0.0 for a
 * maximum when any element is +0.0 (else -0.0), -0.0 for a minimum when any element is
 * -0.0 (each found by a second look at the line, which only a line holding a NaN or an
 * infinity, or a zero result, takes): IEEE
 * 754-2019's maximum / minimum, which the NumPy kernels apply after np.maximum.reduce
 * (whose choice of zero follows its vector lanes, which differ by CPU).
 *
 * Row groups or column blocks run on the thread pool.
 */
#include "ember.h"

#ifndef EMBER_REDUCE_ONCE
#define EMBER_REDUCE_ONCE
#define COLS 64   /* columns carried side by side: their running values fit in registers */
#define LANES 8   /* lines reduced side by side (partial_sums and line_products name 8) */
#define PW_BLOCK 128
#define EXT_LANES 32 /* an extremum's running values along one line */
#define REDUCE_GRAIN 32768 /* elements a task should have before the pool splits the work */

/* ops/reduce.py's _REDUCE_OPS lists these codes */
enum { OP_SUM, OP_MEAN, OP_PROD, OP_SUM_ABS, OP_NORM2, OP_MAX, OP_MIN, OP_MAX_ABS, OP_MIN_ABS };
enum { MAP_NONE, MAP_ABS, MAP_SQUARE }; /* what a sum adds: v, |v| or v * v */

/* Whether an op is an extremum, and which way. */
static int is_extremum(int op) { return op >= OP_MAX; }
static int is_largest(int op) { return op == OP_MAX || op == OP_MAX_ABS; }

typedef struct {
    const void *x;
    void *out;
    int64_t outer, n, inner;
    int op;
} reduce_ctx;

#define ABS_T(v) _Generic((v), float: fabsf, default: fabs)(v)
#define SQRT_T(v) _Generic((v), float: sqrtf, default: sqrt)(v)
#define MAP_PLAIN(v) (v)
#define MAP_ABS_V(v) ABS_T(v)
#define MAP_SQ_V(v) ((v) * (v))
#define MAPPED(v, map) ((map) == MAP_ABS ? ABS_T(v) : (map) == MAP_SQUARE ? (v) * (v) : (v))

/* Each of the LANES lines' 8 partial sums of MAP(element) over its first `end` elements
 * (a multiple of 8, at least 8): element i into r[l][i % 8], in order. (The lines named one
 * by one: the compiler keeps them in registers, as it does not for an array of pointers.) */
#define PARTIAL_SUMS(name, MAP)                                                               \
    static void FN(name)(const scalar_t *const *q, int64_t end, scalar_t r[LANES][8]) {       \
        const scalar_t *restrict q0 = q[0], *restrict q1 = q[1], *restrict q2 = q[2],         \
                       *restrict q3 = q[3], *restrict q4 = q[4], *restrict q5 = q[5],         \
                       *restrict q6 = q[6], *restrict q7 = q[7];                              \
        scalar_t r0[8], r1[8], r2[8], r3[8], r4[8], r5[8], r6[8], r7[8];                      \
        for (int j = 0; j < 8; j++) {                                                         \
            r0[j] = MAP(q0[j]), r1[j] = MAP(q1[j]), r2[j] = MAP(q2[j]), r3[j] = MAP(q3[j]);   \
            r4[j] = MAP(q4[j]), r5[j] = MAP(q5[j]), r6[j] = MAP(q6[j]), r7[j] = MAP(q7[j]);   \
        }                                                                                     \
        for (int64_t i = 8; i < end; i += 8)                                                  \
            for (int j = 0; j < 8; j++) {                                                     \
                r0[j] += MAP(q0[i + j]), r1[j] += MAP(q1[i + j]);                             \
                r2[j] += MAP(q2[i + j]), r3[j] += MAP(q3[i + j]);                             \
                r4[j] += MAP(q4[i + j]), r5[j] += MAP(q5[i + j]);                             \
                r6[j] += MAP(q6[i + j]), r7[j] += MAP(q7[i + j]);                             \
            }                                                                                 \
        for (int j = 0; j < 8; j++) {                                                         \
            r[0][j] = r0[j], r[1][j] = r1[j], r[2][j] = r2[j], r[3][j] = r3[j];               \
            r[4][j] = r4[j], r[5][j] = r5[j], r[6][j] = r6[j], r[7][j] = r7[j];               \
        }                                                                                     \
    }
#endif

PARTIAL_SUMS(partial_sums, MAP_PLAIN)
PARTIAL_SUMS(partial_abs_sums, MAP_ABS_V)
PARTIAL_SUMS(partial_square_sums, MAP_SQ_V)

/* LANES lines' products of their n elements, each in order from 1. */
static void FN(line_products)(const scalar_t *const *q, int64_t n, scalar_t *res) {
    const scalar_t *restrict q0 = q[0], *restrict q1 = q[1], *restrict q2 = q[2],
                   *restrict q3 = q[3], *restrict q4 = q[4], *restrict q5 = q[5],
                   *restrict q6 = q[6], *restrict q7 = q[7];
    scalar_t a0 = 1, a1 = 1, a2 = 1, a3 = 1, a4 = 1, a5 = 1, a6 = 1, a7 = 1;
    for (int64_t i = 0; i < n; i++) {
        a0 *= q0[i], a1 *= q1[i], a2 *= q2[i], a3 *= q3[i];
        a4 *= q4[i], a5 *= q5[i], a6 *= q6[i], a7 *= q7[i];
    }
    res[0] = a0, res[1] = a1, res[2] = a2, res[3] = a3;
    res[4] = a4, res[5] = a5, res[6] = a6, res[7] = a7;
}

/* NumPy's pairwise sum of the mapped elements of `nl` lines of length n at once
 * (nl <= LANES; line l starts at p[l]), into res[l]. */
static void FN(pairwise)(const scalar_t *const *p, int nl, int64_t n, int map, scalar_t *res) {
    if (n < 8) {
        for (int l = 0; l < nl; l++) {
            scalar_t s = (scalar_t)-0.0;
            for (int64_t i = 0; i < n; i++) s += MAPPED(p[l][i], map);
            res[l] = s;
        }
        return;
    }
    if (n <= PW_BLOCK) {
        /* (all LANES chains run; lines past nl repeat line 0 and are dropped) */
        const scalar_t *q[LANES];
        for (int l = 0; l < LANES; l++) q[l] = p[l < nl ? l : 0];
        scalar_t r[LANES][8];
        const int64_t end = n - n % 8;
        if (map == MAP_ABS)
            FN(partial_abs_sums)(q, end, r);
        else if (map == MAP_SQUARE)
            FN(partial_square_sums)(q, end, r);
        else
            FN(partial_sums)(q, end, r);
        for (int l = 0; l < nl; l++) {
            scalar_t s = ((r[l][0] + r[l][1]) + (r[l][2] + r[l][3])) +
                         ((r[l][4] + r[l][5]) + (r[l][6] + r[l][7]));
            for (int64_t i = end; i < n; i++) s += MAPPED(q[l][i], map);
            res[l] = s;
        }
        return;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    const scalar_t *q[LANES] = {0};
    if (n2 == n - n2 && 2 * nl <= LANES) { /* equal halves: all 2 nl of them together */
        scalar_t s[LANES];
        for (int l = 0; l < nl; l++) {
            q[l] = p[l];
            q[nl + l] = p[l] + n2;
        }
        FN(pairwise)(q, 2 * nl, n2, map, s);
        for (int l = 0; l < nl; l++) res[l] = s[l] + s[nl + l];
        return;
    }
    scalar_t a[LANES], b[LANES];
    for (int l = 0; l < nl; l++) q[l] = p[l] + n2;
    FN(pairwise)(p, nl, n2, map, a);
    FN(pairwise)(q, nl, n - n2, map, b);
    for (int l = 0; l < nl; l++) res[l] = a[l] + b[l];
}

/* A better value than the running extremum's. (A NaN never is: a NaN is found apart, by
 * sums of v - v, which only a NaN or an infinity make NaN, and then a look for a NaN.) */
#define BETTER_MAX(v, m) ((v) > (m))
#define BETTER_MIN(v, m) ((v) < (m))

/* Whether any of the n elements (at stride `step`) is a NaN. */
static int FN(has_nan)(const scalar_t *x, int64_t n, int64_t step) {
    for (int64_t i = 0; i < n; i++)
        if (x[i * step] != x[i * step]) return 1;
    return 0;
}

/* The sign of an extremum that came to zero: +0.0 for a maximum if any of the n elements
 * (at stride `step`; |v| for `absolute`) is +0.0, -0.0 for a minimum if any is -0.0. */
static scalar_t FN(signed_zero)(const scalar_t *x, int64_t n, int64_t step, int largest,
                                int absolute) {
    for (int64_t i = 0; i < n; i++) {
        const scalar_t v = absolute ? ABS_T(x[i * step]) : x[i * step];
        if (v == 0 && (signbit(v) != 0) != largest) return v;
    }
    return largest ? (scalar_t)-0.0 : (scalar_t)0.0;
}

/* An extremum's value from its running value m over the n elements at x (stride `step`)
 * and the sum `nan_hint` of their v - v: NaN if one is a NaN, a zero signed by the rule. */
static scalar_t FN(extremum_value)(scalar_t m, scalar_t nan_hint, const scalar_t *x, int64_t n,
                                   int64_t step, int largest, int absolute) {
    if (nan_hint != nan_hint && FN(has_nan)(x, n, step)) return (scalar_t)NAN;
    return m == 0 ? FN(signed_zero)(x, n, step, largest, absolute) : m;
}

/* Running extrema m[j] and sums u[j] of v - v down the w columns of an (n, inner) block at
 * x (|v| for the _abs variants). Lines use these too, as rows of EXT_LANES. (The running
 * values through restrict pointers, one function per variant: so the compiler vectorises
 * the loop, which it does not for the same values in a local array.) */
#define DOWN_EXTREMA(name, LOAD, BETTER)                                                  \
    static __attribute__((noinline)) void FN(name)(                                       \
        const scalar_t *restrict x, int64_t n, int64_t inner, int64_t w,                  \
        scalar_t *restrict m, scalar_t *restrict u) {                                     \
        for (int64_t k = 0; k < n; k++) {                                                 \
            const scalar_t *restrict row = x + k * inner;                                 \
            for (int64_t j = 0; j < w; j++) {                                             \
                const scalar_t v = LOAD(row[j]);                                          \
                m[j] = BETTER(v, m[j]) ? v : m[j];                                        \
                u[j] += v - v;                                                            \
            }                                                                             \
        }                                                                                 \
    }
DOWN_EXTREMA(down_max, MAP_PLAIN, BETTER_MAX)
DOWN_EXTREMA(down_min, MAP_PLAIN, BETTER_MIN)
DOWN_EXTREMA(down_max_abs, ABS_T, BETTER_MAX)
DOWN_EXTREMA(down_min_abs, ABS_T, BETTER_MIN)

/* `op`'s running extrema and v - v sums down a block (DOWN_EXTREMA). */
static void FN(down_extrema)(const scalar_t *x, int64_t n, int64_t inner, int64_t w, int op,
                             scalar_t *m, scalar_t *u) {
    const int largest = is_largest(op);
    for (int64_t j = 0; j < w; j++) {
        m[j] = largest ? (scalar_t)-INFINITY : (scalar_t)INFINITY;
        u[j] = 0;
    }
    if (op == OP_MAX) FN(down_max)(x, n, inner, w, m, u);
    else if (op == OP_MIN) FN(down_min)(x, n, inner, w, m, u);
    else if (op == OP_MAX_ABS) FN(down_max_abs)(x, n, inner, w, m, u);
    else FN(down_min_abs)(x, n, inner, w, m, u);
}

/* The extremum of one line of n elements (|v| for the _ABS ops): its whole rows of
 * EXT_LANES as a block's columns, their extrema combined, then the rest. */
static scalar_t FN(line_extremum)(const scalar_t *x, int64_t n, int op) {
    const int largest = is_largest(op), absolute = op == OP_MAX_ABS || op == OP_MIN_ABS;
    scalar_t m[EXT_LANES], u[EXT_LANES];
    const int64_t rows = n / EXT_LANES;
    FN(down_extrema)(x, rows, EXT_LANES, EXT_LANES, op, m, u);
    scalar_t best = m[0], hint = 0;
    for (int j = 1; j < EXT_LANES; j++)
        best = (largest ? BETTER_MAX(m[j], best) : BETTER_MIN(m[j], best)) ? m[j] : best;
    for (int j = 0; j < EXT_LANES; j++) hint += u[j];
    for (int64_t i = rows * EXT_LANES; i < n; i++) {
        const scalar_t v = absolute ? ABS_T(x[i]) : x[i];
        best = (largest ? BETTER_MAX(v, best) : BETTER_MIN(v, best)) ? v : best;
        hint += v - v;
    }
    return FN(extremum_value)(best, hint, x, n, 1, largest, absolute);
}

/* Lines [t * LANES, ...) of a reduction along the last dim (inner 1). */
static void FN(lines)(const reduce_ctx *c, int64_t t) {
    const scalar_t *x = c->x;
    scalar_t *out = c->out;
    const int64_t n = c->n, l0 = t * LANES;
    const int nl = (int)EMBER_MIN(LANES, c->outer - l0);
    const scalar_t *q[LANES] = {0};
    scalar_t s[LANES];
    if (is_extremum(c->op)) {
        for (int l = 0; l < nl; l++) out[l0 + l] = FN(line_extremum)(x + (l0 + l) * n, n, c->op);
        return;
    }
    if (c->op == OP_PROD) {
        for (int l = 0; l < LANES; l++) q[l] = x + (l0 + (l < nl ? l : 0)) * n;
        FN(line_products)(q, n, s);
        for (int l = 0; l < nl; l++) out[l0 + l] = s[l];
        return;
    }
    const int map = c->op == OP_SUM_ABS ? MAP_ABS : c->op == OP_NORM2 ? MAP_SQUARE : MAP_NONE;
    for (int l = 0; l < nl; l++) q[l] = x + (l0 + l) * n;
    FN(pairwise)(q, nl, n, map, s);
    for (int l = 0; l < nl; l++) {
        const scalar_t total = (scalar_t)0 + s[l];
        out[l0 + l] = c->op == OP_MEAN    ? (scalar_t)((double)total / (double)n)
                      : c->op == OP_NORM2 ? SQRT_T(total)
                                          : total;
    }
}

/* The running values of w <= COLS columns of a (n, inner) block at x, into acc: the sum
 * of mapped elements from +0.0 or the product from 1, in order. */
static void FN(column_block)(const scalar_t *x, int64_t n, int64_t inner, int64_t w, int op,
                             scalar_t *acc) {
    const int prod = op == OP_PROD;
    const int map = op == OP_SUM_ABS ? MAP_ABS : op == OP_NORM2 ? MAP_SQUARE : MAP_NONE;
    for (int64_t j = 0; j < w; j++) acc[j] = prod ? (scalar_t)1 : (scalar_t)0;
#define COLUMN_LOOP(W, STEP)                                                    \
    for (int64_t k = 0; k < n; k++) {                                           \
        const scalar_t *restrict row = x + k * inner;                           \
        for (int64_t j = 0; j < (W); j++) acc[j] = STEP;                        \
    }
#define COLUMN_OPS(W)                                                           \
    if (prod) COLUMN_LOOP(W, acc[j] * row[j])                                   \
    else if (map == MAP_ABS) COLUMN_LOOP(W, acc[j] + ABS_T(row[j]))             \
    else if (map == MAP_SQUARE) COLUMN_LOOP(W, acc[j] + row[j] * row[j])        \
    else COLUMN_LOOP(W, acc[j] + row[j])
    if (w == COLS) { /* (a constant width: the running values stay in registers) */
        COLUMN_OPS(COLS)
    } else {
        COLUMN_OPS(w)
    }
}

/* The extrema of w <= COLS columns of a (n, inner) block at x, into out. */
static void FN(column_extrema)(const scalar_t *x, int64_t n, int64_t inner, int64_t w, int op,
                               scalar_t *out) {
    const int largest = is_largest(op), absolute = op == OP_MAX_ABS || op == OP_MIN_ABS;
    scalar_t m[COLS], u[COLS];
    if (w == COLS) { /* (a constant width: the running values stay in registers) */
        for (int j = 0; j < COLS; j++) {
            m[j] = largest ? (scalar_t)-INFINITY : (scalar_t)INFINITY;
            u[j] = 0;
        }
#define FULL_BLOCK(LOAD, BETTER)                                   \
    for (int64_t k = 0; k < n; k++) {                              \
        const scalar_t *restrict row = x + k * inner;              \
        for (int j = 0; j < COLS; j++) {                           \
            const scalar_t v = LOAD(row[j]);                       \
            m[j] = BETTER(v, m[j]) ? v : m[j];                     \
            u[j] += v - v;                                         \
        }                                                          \
    }
        if (op == OP_MAX) FULL_BLOCK(MAP_PLAIN, BETTER_MAX)
        else if (op == OP_MIN) FULL_BLOCK(MAP_PLAIN, BETTER_MIN)
        else if (op == OP_MAX_ABS) FULL_BLOCK(ABS_T, BETTER_MAX)
        else FULL_BLOCK(ABS_T, BETTER_MIN)
    } else {
        FN(down_extrema)(x, n, inner, w, op, m, u);
    }
    for (int64_t j = 0; j < w; j++)
        out[j] = FN(extremum_value)(m[j], u[j], x + j, n, inner, largest, absolute);
}

/* Column block t (of outer index t / blocks) of a reduction along a middle dim. */
static void FN(columns)(const reduce_ctx *c, int64_t t) {
    const int64_t n = c->n, inner = c->inner;
    const int64_t blocks = (inner + COLS - 1) / COLS;
    const int64_t o = t / blocks, j0 = (t % blocks) * COLS;
    const int64_t w = EMBER_MIN(COLS, inner - j0);
    const scalar_t *x = (const scalar_t *)c->x + o * n * inner + j0;
    scalar_t *out = (scalar_t *)c->out + o * inner + j0;
    if (is_extremum(c->op)) {
        FN(column_extrema)(x, n, inner, w, c->op, out);
        return;
    }
    scalar_t acc[COLS];
    FN(column_block)(x, n, inner, w, c->op, acc);
    for (int64_t j = 0; j < w; j++)
        out[j] = c->op == OP_MEAN    ? (scalar_t)((double)acc[j] / (double)n)
                 : c->op == OP_NORM2 ? SQRT_T(acc[j])
                                     : acc[j];
}

static void FN(reduce_task)(void *p, int64_t lo, int64_t hi) {
    const reduce_ctx *c = p;
    for (int64_t t = lo; t < hi; t++) {
        if (c->inner == 1)
            FN(lines)(c, t);
        else
            FN(columns)(c, t);
    }
}

/* out[o, j] = the reduction `op` (OP_*) of x[o, :, j] over its n elements, for a C-order
 * x of shape (outer, n, inner) with n >= 1. */
void FN(ember_reduce)(const scalar_t *x, scalar_t *out, int64_t outer, int64_t n, int64_t inner,
                      int op) {
    reduce_ctx c = {x, out, outer, n, inner, op};
    int64_t tasks, per;
    if (inner == 1) {
        tasks = (outer + LANES - 1) / LANES;
        per = LANES * n;
    } else {
        tasks = outer * ((inner + COLS - 1) / COLS);
        per = n * EMBER_MIN(inner, COLS);
    }
    ember_parallel_for(FN(reduce_task), &c, tasks, EMBER_MAX(1, REDUCE_GRAIN / EMBER_MAX(per, 1)));
}
