/* select.c: np.where(cond, a, b) for operands of one 4- or 8-byte dtype, on their bits.
 *
 * NumPy's `where` branches on every element, so an unpredictable mask costs several times
 * the memory traffic; this loop loads both sides and blends them with a mask made from the
 * condition, y ^ ((x ^ y) & -c), which the compiler vectorises for either width (it keeps
 * `c ? x : y` on 8-byte words as a branch). It moves bits, never values, so it serves any dtype of the width (float,
 * int, complex64 in the double-width unit) and keeps NaN payloads and -0.0 as they are.
 * The condition is a C-order bool array of the result's size; each of `a` and `b` is
 * either that size, C-order, or one element broadcast over it (`*_full` = 0).
 * Compiled per dtype like every family: the float unit moves 4-byte words, the double
 * unit 8-byte ones.
 */
#include <stdint.h>

#include "ember.h"

#define SELECT_CAT_(a, b) a##b
#define SELECT_CAT(a, b) SELECT_CAT_(a, b)
#define select_bits_of_float uint32_t
#define select_bits_of_double uint64_t
typedef SELECT_CAT(select_bits_of_, scalar_t) FN(bits_t);

/* x where c (0 or 1), else y */
#define BLEND(c, x, y) ((y) ^ (((x) ^ (y)) & -(FN(bits_t))((c) != 0)))

typedef struct {
    const uint8_t *cond;
    const FN(bits_t) *a, *b;
    FN(bits_t) *out;
    int a_full, b_full;
} FN(select_args);

static void FN(select_task)(void *p, int64_t lo, int64_t hi) {
    const FN(select_args) *s = p;
    const uint8_t *restrict c = s->cond;
    const FN(bits_t) *restrict a = s->a, *restrict b = s->b;
    FN(bits_t) *restrict out = s->out;
    if (s->a_full && s->b_full) {
        for (int64_t i = lo; i < hi; i++) {
            FN(bits_t) x = a[i], y = b[i];
            out[i] = BLEND(c[i], x, y);
        }
    } else if (s->a_full) {
        const FN(bits_t) y = b[0];
        for (int64_t i = lo; i < hi; i++) {
            FN(bits_t) x = a[i];
            out[i] = BLEND(c[i], x, y);
        }
    } else if (s->b_full) {
        const FN(bits_t) x = a[0];
        for (int64_t i = lo; i < hi; i++) {
            FN(bits_t) y = b[i];
            out[i] = BLEND(c[i], x, y);
        }
    } else {
        const FN(bits_t) x = a[0], y = b[0];
        for (int64_t i = lo; i < hi; i++) out[i] = BLEND(c[i], x, y);
    }
}

void FN(select)(const uint8_t *cond, const void *a, int a_full, const void *b, int b_full,
                void *out, int64_t n) {
    FN(select_args) s = {cond, a, b, out, a_full, b_full};
    ember_parallel_for(FN(select_task), &s, n, 1 << 16);
}
