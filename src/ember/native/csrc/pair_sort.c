/* pair_sort.c: libstdc++'s `std::partial_sort`, `std::nth_element` and `std::sort`, step
 * for step, on (value, index) pairs of float32 / float64 rows, with ATen's comparators
 * (NaN before every number for the largest / descending, after them for the smallest /
 * ascending; 0.0 and -0.0 equivalent). Where values tie, which index comes out where is
 * whatever those steps leave, so they are the steps libstdc++ takes, one for one
 * (ops/_stl_sort.py holds the same steps in Python, the reference). Two users:
 * - topk: ATen's topk_impl_loop on every row (`std::partial_sort` when k * 64 <= n, else
 *   `std::nth_element` at k - 1 and, for a sorted result, `std::sort` of the first k - 1);
 * - sort: `std::sort` of whole rows, as PyTorch's unstable CPU sort leaves ties (and
 *   `_stl_sort.sort_rows` on integer rank keys, exact as doubles).
 * Rows are independent: they are shared out to the pool, and results do not depend on the
 * threads. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "ember.h"

#ifndef EMBER_PAIR_SORT_ONCE
#define EMBER_PAIR_SORT_ONCE
static inline int64_t topk_lg(int64_t n) { return 63 - __builtin_clzll((unsigned long long)n); }
#endif

typedef struct {
    scalar_t v;
    int64_t i;
} FN(pair);

#define PAIR FN(pair)
#define LT(x, y) FN(lt)((x).v, (y).v, largest)
#define SWAP(a, b)         \
    do {                   \
        const PAIR t_ = a; \
        a = b;             \
        b = t_;            \
    } while (0)

static inline int FN(lt)(scalar_t x, scalar_t y, int largest) {
    if (largest) return (isnan(x) && !isnan(y)) || x > y;
    return (!isnan(x) && isnan(y)) || x < y;
}

static void FN(move_median_to_first)(PAIR *q, int64_t result, int64_t a, int64_t b, int64_t c,
                                     int largest) {
    if (LT(q[a], q[b])) {
        if (LT(q[b], q[c])) SWAP(q[result], q[b]);
        else if (LT(q[a], q[c])) SWAP(q[result], q[c]);
        else SWAP(q[result], q[a]);
    } else if (LT(q[a], q[c])) SWAP(q[result], q[a]);
    else if (LT(q[b], q[c])) SWAP(q[result], q[c]);
    else SWAP(q[result], q[b]);
}

static int64_t FN(unguarded_partition)(PAIR *q, int64_t first, int64_t last, int64_t pivot,
                                       int largest) {
    for (;;) {
        while (LT(q[first], q[pivot])) first++;
        last--;
        while (LT(q[pivot], q[last])) last--;
        if (!(first < last)) return first;
        SWAP(q[first], q[last]);
        first++;
    }
}

static int64_t FN(partition_pivot)(PAIR *q, int64_t first, int64_t last, int largest) {
    const int64_t mid = first + (last - first) / 2;
    FN(move_median_to_first)(q, first, first + 1, mid, last - 1, largest);
    return FN(unguarded_partition)(q, first + 1, last, first, largest);
}

static void FN(unguarded_linear_insert)(PAIR *q, int64_t last, int largest) {
    const PAIR val = q[last];
    int64_t next = last - 1;
    while (LT(val, q[next])) {
        q[last] = q[next];
        last = next;
        next--;
    }
    q[last] = val;
}

static void FN(insertion_sort)(PAIR *q, int64_t first, int64_t last, int largest) {
    if (first == last) return;
    for (int64_t i = first + 1; i < last; i++) {
        if (LT(q[i], q[first])) {
            const PAIR val = q[i];
            memmove(q + first + 1, q + first, (size_t)(i - first) * sizeof(PAIR));
            q[first] = val;
        } else {
            FN(unguarded_linear_insert)(q, i, largest);
        }
    }
}

static void FN(push_heap)(PAIR *q, int64_t first, int64_t hole, int64_t top, PAIR value,
                          int largest) {
    int64_t parent = (hole - 1) / 2;
    while (hole > top && LT(q[first + parent], value)) {
        q[first + hole] = q[first + parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    q[first + hole] = value;
}

static void FN(adjust_heap)(PAIR *q, int64_t first, int64_t hole, int64_t len, PAIR value,
                            int largest) {
    const int64_t top = hole;
    int64_t second = hole;
    while (second < (len - 1) / 2) {
        second = 2 * (second + 1);
        if (LT(q[first + second], q[first + second - 1])) second--;
        q[first + hole] = q[first + second];
        hole = second;
    }
    if ((len & 1) == 0 && second == (len - 2) / 2) {
        second = 2 * (second + 1);
        q[first + hole] = q[first + second - 1];
        hole = second - 1;
    }
    FN(push_heap)(q, first, hole, top, value, largest);
}

static void FN(make_heap)(PAIR *q, int64_t first, int64_t last, int largest) {
    const int64_t len = last - first;
    if (len < 2) return;
    for (int64_t parent = (len - 2) / 2;; parent--) {
        FN(adjust_heap)(q, first, parent, len, q[first + parent], largest);
        if (parent == 0) return;
    }
}

static void FN(pop_heap)(PAIR *q, int64_t first, int64_t last, int64_t result, int largest) {
    const PAIR value = q[result];
    q[result] = q[first];
    FN(adjust_heap)(q, first, 0, last - first, value, largest);
}

static void FN(heap_select)(PAIR *q, int64_t first, int64_t middle, int64_t last, int largest) {
    FN(make_heap)(q, first, middle, largest);
    for (int64_t i = middle; i < last; i++)
        if (LT(q[i], q[first])) FN(pop_heap)(q, first, middle, i, largest);
}

static void FN(sort_heap)(PAIR *q, int64_t first, int64_t last, int largest) {
    while (last - first > 1) {
        last--;
        FN(pop_heap)(q, first, last, last, largest);
    }
}

static void FN(partial_sort)(PAIR *q, int64_t first, int64_t middle, int64_t last, int largest) {
    FN(heap_select)(q, first, middle, last, largest);
    FN(sort_heap)(q, first, middle, largest);
}

static void FN(nth_element)(PAIR *q, int64_t first, int64_t nth, int64_t last, int largest) {
    if (first == last || nth == last) return;
    int64_t depth = topk_lg(last - first) * 2;
    while (last - first > 3) {
        if (depth == 0) {
            FN(heap_select)(q, first, nth + 1, last, largest);
            SWAP(q[first], q[nth]);
            return;
        }
        depth--;
        const int64_t cut = FN(partition_pivot)(q, first, last, largest);
        if (cut <= nth) first = cut;
        else last = cut;
    }
    FN(insertion_sort)(q, first, last, largest);
}

static void FN(introsort_loop)(PAIR *q, int64_t first, int64_t last, int64_t depth,
                               int largest) {
    while (last - first > 16) {
        if (depth == 0) {
            FN(partial_sort)(q, first, last, last, largest);
            return;
        }
        depth--;
        const int64_t cut = FN(partition_pivot)(q, first, last, largest);
        FN(introsort_loop)(q, cut, last, depth, largest);
        last = cut;
    }
}

static void FN(sort)(PAIR *q, int64_t first, int64_t last, int largest) {
    if (first == last) return;
    FN(introsort_loop)(q, first, last, topk_lg(last - first) * 2, largest);
    if (last - first > 16) {
        FN(insertion_sort)(q, first, first + 16, largest);
        for (int64_t i = first + 16; i < last; i++) FN(unguarded_linear_insert)(q, i, largest);
    } else {
        FN(insertion_sort)(q, first, last, largest);
    }
}

typedef struct {
    const scalar_t *x; /* rows of n, contiguous */
    scalar_t *vals;    /* topk: rows of k (sort: NULL) */
    int64_t *idx;      /* topk: rows of k; sort: rows of n */
    int64_t n, k;      /* k == 0: std::sort of whole rows */
    int largest, sorted;
    atomic_int failed; /* set by a task that had no scratch memory */
} FN(rows_args);

static void FN(rows_task)(void *ctx, int64_t lo, int64_t hi) {
    FN(rows_args) *a = ctx;
    const int64_t n = a->n, k = a->k;
    const int largest = a->largest;
    PAIR *q = ember_scratch(sizeof(PAIR) * (size_t)n);
    if (!q) {
        atomic_store(&a->failed, 1);
        return;
    }
    for (int64_t r = lo; r < hi; r++) {
        const scalar_t *row = a->x + r * n;
        for (int64_t j = 0; j < n; j++) q[j] = (PAIR){row[j], j};
        if (k == 0) {
            FN(sort)(q, 0, n, largest);
            for (int64_t j = 0; j < n; j++) a->idx[r * n + j] = q[j].i;
            continue;
        }
        if (k * 64 <= n) {
            FN(partial_sort)(q, 0, k, n, largest);
        } else {
            FN(nth_element)(q, 0, k - 1, n, largest);
            if (a->sorted) FN(sort)(q, 0, k - 1, largest);
        }
        for (int64_t j = 0; j < k; j++) {
            a->idx[r * k + j] = q[j].i;
            a->vals[r * k + j] = row[q[j].i];
        }
    }
    ember_scratch_free(q);
}

static int FN(rows)(FN(rows_args) *a, int64_t rows) {
    atomic_init(&a->failed, 0);
    /* (a row's work grows with n: about 64 K comparisons a task) */
    ember_parallel_for(FN(rows_task), a, rows, EMBER_MAX(1, 65536 / EMBER_MAX(a->n, 1)));
    return atomic_load(&a->failed);
}

/* vals, idx (rows, k) = the top k of each row of x (rows, n), 0 < k <= n. Nonzero where a
 * thread had no scratch memory. */
int FN(ember_topk)(const scalar_t *x, scalar_t *vals, int64_t *idx, int64_t rows, int64_t n,
                   int64_t k, int largest, int sorted) {
    FN(rows_args) a = {x, vals, idx, n, k, largest, sorted};
    return FN(rows)(&a, rows);
}

/* order (rows, n) = the indices of each row of x (rows, n) in the order `std::sort` leaves
 * them, ascending or descending. Nonzero where a thread had no scratch memory. */
int FN(ember_sort_rows)(const scalar_t *x, int64_t *order, int64_t rows, int64_t n,
                        int descending) {
    FN(rows_args) a = {x, NULL, order, n, 0, descending, 1};
    return FN(rows)(&a, rows);
}

#undef PAIR
#undef LT
#undef SWAP
