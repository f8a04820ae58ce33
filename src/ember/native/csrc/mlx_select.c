/* mlx_select.c: the native twin of ember.mlx's `_nth_element` (mlx/core/_nth_element.py):
 * the introselect of GCC's libstdc++ `std::nth_element`, which MLX's CPU partition /
 * argpartition / topk run on every line, replayed step for step on positions into the line
 * (median-of-three pivot moved to the front, unguarded partition, heap select once the
 * depth limit is spent, insertion sort below four elements), with MLX's comparisons: NaN
 * greater than everything, and for argpartition ties broken by the smaller position.
 * Values arrive as doubles (exact for every MLX dtype but 64-bit integers past 2**53, which
 * the caller keeps on the Python twin). Lines are split over the kernel threads.
 */
#include "ember.h"

#ifndef MLX_SELECT_ONCE
#define MLX_SELECT_ONCE
typedef struct {
    const double *v;
    int by_index;
} sel_cmp;

static inline int sel_less(const sel_cmp *c, int64_t a, int64_t b) {
    const double x = c->v[a], y = c->v[b];
    if (x != x)
        return 0;
    if (y != y)
        return 1;
    return x < y || (c->by_index && x == y && a < b);
}

static void sel_adjust_heap(int64_t *p, int64_t first, int64_t hole, int64_t n, int64_t value,
                            const sel_cmp *c) {
    const int64_t top = hole;
    int64_t child = hole;
    while (child < (n - 1) / 2) {
        child = 2 * (child + 1);
        if (sel_less(c, p[first + child], p[first + child - 1]))
            child--;
        p[first + hole] = p[first + child];
        hole = child;
    }
    if (n % 2 == 0 && child == (n - 2) / 2) {
        child = 2 * (child + 1);
        p[first + hole] = p[first + child - 1];
        hole = child - 1;
    }
    int64_t parent = (hole - 1) / 2;
    while (hole > top && sel_less(c, p[first + parent], value)) {
        p[first + hole] = p[first + parent];
        hole = parent;
        parent = (parent - 1) / 2;
    }
    p[first + hole] = value;
}

static void sel_heap_select(int64_t *p, int64_t first, int64_t middle, int64_t last,
                            const sel_cmp *c) {
    const int64_t n = middle - first;
    if (n >= 2)
        for (int64_t parent = (n - 2) / 2; parent >= 0; parent--)
            sel_adjust_heap(p, first, parent, n, p[first + parent], c);
    for (int64_t i = middle; i < last; i++)
        if (sel_less(c, p[i], p[first])) {
            const int64_t value = p[i];
            p[i] = p[first];
            sel_adjust_heap(p, first, 0, n, value, c);
        }
}

static void sel_median_to_first(int64_t *p, int64_t result, int64_t a, int64_t b, int64_t c_,
                                const sel_cmp *c) {
    int64_t pick;
    if (sel_less(c, p[a], p[b]))
        pick = sel_less(c, p[b], p[c_]) ? b : (sel_less(c, p[a], p[c_]) ? c_ : a);
    else
        pick = sel_less(c, p[a], p[c_]) ? a : (sel_less(c, p[b], p[c_]) ? c_ : b);
    const int64_t t = p[result];
    p[result] = p[pick];
    p[pick] = t;
}

static int64_t sel_partition_pivot(int64_t *p, int64_t first, int64_t last, const sel_cmp *c) {
    const int64_t mid = first + (last - first) / 2;
    sel_median_to_first(p, first, first + 1, mid, last - 1, c);
    const int64_t pivot = p[first];
    int64_t lo = first + 1, hi = last;
    for (;;) {
        while (sel_less(c, p[lo], pivot))
            lo++;
        hi--;
        while (sel_less(c, pivot, p[hi]))
            hi--;
        if (lo >= hi)
            return lo;
        const int64_t t = p[lo];
        p[lo] = p[hi];
        p[hi] = t;
        lo++;
    }
}

static void sel_insertion_sort(int64_t *p, int64_t first, int64_t last, const sel_cmp *c) {
    for (int64_t i = first + 1; i < last; i++) {
        const int64_t value = p[i];
        if (sel_less(c, value, p[first])) {
            for (int64_t j = i; j > first; j--)
                p[j] = p[j - 1];
            p[first] = value;
            continue;
        }
        int64_t j = i;
        while (sel_less(c, value, p[j - 1])) {
            p[j] = p[j - 1];
            j--;
        }
        p[j] = value;
    }
}

static int sel_log2(int64_t n) { /* floor(log2(n)), n >= 1 */
    int k = 0;
    while (n > 1) {
        n >>= 1;
        k++;
    }
    return k;
}

/* p: the positions 0..n-1 of line v, left in std::nth_element's order for kth */
static void sel_nth_element(const double *v, int64_t *p, int64_t n, int64_t kth, int by_index) {
    for (int64_t i = 0; i < n; i++)
        p[i] = i;
    if (n == 0 || kth == n)
        return;
    const sel_cmp c = {v, by_index};
    int64_t first = 0, last = n;
    int depth = 2 * sel_log2(n);
    while (last - first > 3) {
        if (depth == 0) {
            sel_heap_select(p, first, kth + 1, last, &c);
            const int64_t t = p[first];
            p[first] = p[kth];
            p[kth] = t;
            return;
        }
        depth--;
        const int64_t cut = sel_partition_pivot(p, first, last, &c);
        if (cut <= kth)
            first = cut;
        else
            last = cut;
    }
    sel_insertion_sort(p, first, last, &c);
}
#endif

typedef struct {
    const double *v;
    int64_t *p;
    int64_t n, kth;
    int by_index;
} FN(sel_args);

static void FN(sel_task)(void *ctx, int64_t lo, int64_t hi) {
    const FN(sel_args) *a = ctx;
    for (int64_t r = lo; r < hi; r++)
        sel_nth_element(a->v + r * a->n, a->p + r * a->n, a->n, a->kth, a->by_index);
}

/* each of `rows` contiguous lines of n values: its positions in nth_element's order */
void FN(mlx_nth_element_rows)(const double *v, int64_t *p, int64_t rows, int64_t n,
                              int64_t kth, int by_index) {
    FN(sel_args) a = {v, p, n, kth, by_index};
    ember_parallel_for(FN(sel_task), &a, rows, 1);
}
