/* math_maps.c: ember_math.h's functions mapped over contiguous arrays, y[i] = f(x[i]).
 * Written once against scalar_t and FN(name) (compiled for float and double).
 *
 * These entry points are how tests/native/test_ember_math.py sweeps the header's functions
 * over millions of inputs, and the loops the vectoriser report names (they must vectorise
 * for the header's functions to be usable in hot loops). For double, GCC 12 cannot tell
 * that a store of y[i] does not alias erf's coefficient table, which it reads by gathers,
 * and left the loop scalar (1.5 ms for 131072 float64 erfs); `GCC ivdep` says there is no
 * such dependence. The range is split over the
 * kernel threads in chunks of at least 16384 elements.
 */
#include "ember.h"
#include "ember_math.h"

typedef struct {
    const scalar_t *x;
    scalar_t *y;
} FN(map_args);

#define EMBER_MAP(fname, expr)                                                             \
    static void FN(fname##_task)(void *p, int64_t lo, int64_t hi) {                        \
        const FN(map_args) *a = p;                                                          \
        const scalar_t *restrict x = a->x;                                                 \
        scalar_t *restrict y = a->y;                                                       \
        _Pragma("GCC ivdep") /* (erf's table gathers: no store of y can reach it) */      \
        for (int64_t i = lo; i < hi; i++) {                                                \
            const scalar_t v = x[i];                                                       \
            y[i] = (expr);                                                                 \
        }                                                                                  \
    }                                                                                      \
    void FN(fname)(const scalar_t *x, scalar_t *y, int64_t n) {                            \
        FN(map_args) a = {x, y};                                                           \
        ember_parallel_for(FN(fname##_task), &a, n, 16384);                                \
    }

EMBER_MAP(map_exp, ember_exp_t(v))
EMBER_MAP(map_expm1, ember_expm1_t(v))
EMBER_MAP(map_log, ember_log_t(v))
EMBER_MAP(map_log1p, ember_log1p_t(v))
EMBER_MAP(map_tanh, ember_tanh_t(v))
EMBER_MAP(map_erf, ember_erf_t(v))
EMBER_MAP(map_erfc, ember_erfc_t(v))
EMBER_MAP(map_sigmoid, ember_sigmoid_t(v))

#undef EMBER_MAP

#ifndef EMBER_MAP_FLOAT_ONLY
#define EMBER_MAP_FLOAT_ONLY /* (float only: the unit may hold both dtypes' functions) */

/* y[i] = expr of v = x[i], for float arrays only, in chunks of at least `grain` */
#define EMBER_MAP_F32(fname, expr, grain)                                                  \
    static void fname##_task(void *p, int64_t lo, int64_t hi) {                            \
        const float *const *a = p;                                                         \
        const float *restrict x = a[0];                                                    \
        float *restrict y = (float *)a[1];                                                 \
        for (int64_t i = lo; i < hi; i++) {                                                \
            const float v = x[i];                                                          \
            y[i] = (expr);                                                                 \
        }                                                                                  \
    }                                                                                      \
    void fname##_f32(const float *x, float *y, int64_t n) {                                \
        const float *a[2] = {x, y};                                                        \
        ember_parallel_for(fname##_task, (void *)a, n, grain);                             \
    }

EMBER_MAP_F32(map_erfinv, ember_erfinvf(v), 4096)
/* log2 and log10 of a float: the double log times the constant, rounded once (relative
 * error below 3e-16 before that rounding, so the float is correctly rounded unless the
 * double lies within a few of its ulps of a float tie; exact powers of 2 and 10 come out
 * as their integers). Not for double, where that product is a few ulps off. */
EMBER_MAP_F32(map_log2, (float)(ember_log((double)v) * EMBER_LOG2E), 16384)
EMBER_MAP_F32(map_log10, (float)(ember_log((double)v) * 0x1.bcb7b1526e50ep-2), 16384)

#undef EMBER_MAP_F32
#endif
