/* softmax_rows.h: what softmax.c and nll_softmax.c share, per row and per block of short
 * rows: the max (NaN skipped), the exp-sum in double lanes, and a block of sixteen rows
 * shorter than the lanes taken across the rows with each row's arithmetic unchanged.
 * Included inside a family's file, once per scalar_t (its scalar parts have no guard). */
#include "ember.h"
#include "ember_math.h"
#include "reduce.h"

/* The row's max, NaN skipped (lanes, so it vectorises; a max is exact in any order). */
static inline scalar_t FN(row_max)(const scalar_t *restrict x, int64_t n) {
    scalar_t m[EMBER_LANES];
    for (int k = 0; k < EMBER_LANES; k++) m[k] = -INFINITY;
    int64_t j = 0;
    for (; j + EMBER_LANES <= n; j += EMBER_LANES)
        for (int k = 0; k < EMBER_LANES; k++) m[k] = x[j + k] > m[k] ? x[j + k] : m[k];
    for (int k = 0; j + k < n; k++) m[k] = x[j + k] > m[k] ? x[j + k] : m[k];
    scalar_t best = m[0];
    for (int k = 1; k < EMBER_LANES; k++) best = m[k] > best ? m[k] : best;
    return best;
}

/* sum(exp(x - m)) in double lanes, exp(x - m) stored into e when e is not NULL. */
static inline double FN(row_expsum)(const scalar_t *restrict x, scalar_t *restrict e,
                                    int64_t n, scalar_t m) {
    double acc[EMBER_LANES] = {0};
    int64_t j = 0;
    if (e) {
        for (; j + EMBER_LANES <= n; j += EMBER_LANES)
            for (int k = 0; k < EMBER_LANES; k++) {
                const scalar_t v = ember_exp_t((scalar_t)(x[j + k] - m));
                e[j + k] = v;
                acc[k] += (double)v;
            }
        for (int k = 0; j + k < n; k++) {
            const scalar_t v = ember_exp_t((scalar_t)(x[j + k] - m));
            e[j + k] = v;
            acc[k] += (double)v;
        }
    } else {
        for (; j + EMBER_LANES <= n; j += EMBER_LANES)
            for (int k = 0; k < EMBER_LANES; k++)
                acc[k] += (double)ember_exp_t((scalar_t)(x[j + k] - m));
        for (int k = 0; j + k < n; k++) acc[k] += (double)ember_exp_t((scalar_t)(x[j + k] - m));
    }
    return ember_lanes_total(acc);
}

/* --- rows shorter than the lanes ---------------------------------------------------------
 * A classifier's ten scores: sixteen rows at a time, element j of each row a vector across
 * the rows, so that exp and the sums vectorise where a row alone is all tail. Each row's
 * arithmetic is the row loops' own: its max over j in order, its lanes (element j in lane j,
 * the others +0.0) totalled pairwise as ember_lanes_total totals them; so the bits are
 * theirs. */
#define SM_SR EMBER_LANES /* rows per block */

#ifndef EMBER_BLOCK_TOTAL
#define EMBER_BLOCK_TOTAL
/* tot[r] = the pairwise total of lanes t[.][r], in ember_lanes_total's order. */
static inline void ember_block_total(double t[EMBER_LANES][SM_SR], double tot[SM_SR]) {
    for (int w = EMBER_LANES / 2; w >= 1; w /= 2)
        for (int k = 0; k < w; k++)
            for (int r = 0; r < SM_SR; r++) t[k][r] += t[k + w][r];
    for (int r = 0; r < SM_SR; r++) tot[r] = t[0][r];
}
#endif

/* v[j][r] = element j of row r of `src` (rows of n), rows past `rows` read as 0. */
static inline void FN(load_block)(scalar_t v[EMBER_LANES][SM_SR], const scalar_t *src,
                                  int64_t n, int rows) {
    for (int r = 0; r < SM_SR; r++)
        for (int64_t j = 0; j < n; j++) v[j][r] = r < rows ? src[r * n + j] : (scalar_t)0;
}

static inline void FN(store_block)(scalar_t *dst, scalar_t v[EMBER_LANES][SM_SR], int64_t n,
                                   int rows) {
    for (int r = 0; r < rows; r++)
        for (int64_t j = 0; j < n; j++) dst[r * n + j] = v[j][r];
}

/* m[r] = row r's max as row_max takes it (NaN skipped; a lane holds -inf until it is set). */
static inline void FN(block_max)(scalar_t m[SM_SR], scalar_t v[EMBER_LANES][SM_SR], int64_t n) {
    for (int r = 0; r < SM_SR; r++) m[r] = v[0][r] > -INFINITY ? v[0][r] : -INFINITY;
    for (int64_t j = 1; j < n; j++)
        for (int r = 0; r < SM_SR; r++) {
            const scalar_t c = v[j][r] > -INFINITY ? v[j][r] : -INFINITY;
            m[r] = c > m[r] ? c : m[r];
        }
}

/* e[j][r] = exp(v - m) as row_expsum takes it, and tot[r] its lanes' total. */
static inline void FN(block_expsum)(scalar_t e[EMBER_LANES][SM_SR], double tot[SM_SR],
                                    scalar_t v[EMBER_LANES][SM_SR], const scalar_t m[SM_SR],
                                    int64_t n) {
    double t[EMBER_LANES][SM_SR];
    for (int k = 0; k < EMBER_LANES; k++)
        for (int r = 0; r < SM_SR; r++) t[k][r] = 0.0;
    for (int64_t j = 0; j < n; j++)
        for (int r = 0; r < SM_SR; r++) {
            e[j][r] = ember_exp_t((scalar_t)(v[j][r] - m[r]));
            t[j][r] = 0.0 + (double)e[j][r];
        }
    ember_block_total(t, tot);
}

/* log_softmax's outputs of a block, in v (with log: (v - m) - lse; else e / sum). */
static inline void FN(block_softmax)(scalar_t v[EMBER_LANES][SM_SR], int64_t n, int log) {
    scalar_t m[SM_SR], e[EMBER_LANES][SM_SR];
    double tot[SM_SR];
    FN(block_max)(m, v, n);
    FN(block_expsum)(e, tot, v, m, n);
    if (log) {
        scalar_t lse[SM_SR];
        for (int r = 0; r < SM_SR; r++) lse[r] = (scalar_t)ember_log((double)(scalar_t)tot[r]);
        for (int64_t j = 0; j < n; j++)
            for (int r = 0; r < SM_SR; r++) v[j][r] = (scalar_t)(v[j][r] - m[r]) - lse[r];
    } else {
        scalar_t s[SM_SR];
        for (int r = 0; r < SM_SR; r++) s[r] = (scalar_t)tot[r];
        for (int64_t j = 0; j < n; j++)
            for (int r = 0; r < SM_SR; r++) v[j][r] = e[j][r] / s[r];
    }
}

