/* libstdc++'s std::sort, step for step, on (key, index) pairs packed in one int64 each
 * (key in the high 32 bits, compared alone with <), so that ties come out where PyTorch's
 * CPU sort (std::sort on (value, index) pairs) leaves them. ops/_stl_sort.py holds the
 * same steps in Python, and a NumPy replay for when this library is not built. */

#include <stdint.h>

typedef int64_t item;

#define LT(a, b) (((a) >> 32) < ((b) >> 32))

static void swap_items(item *a, item *b) {
    item t = *a;
    *a = *b;
    *b = t;
}

static void move_median_to_first(item *result, item *a, item *b, item *c) {
    if (LT(*a, *b)) {
        if (LT(*b, *c)) swap_items(result, b);
        else if (LT(*a, *c)) swap_items(result, c);
        else swap_items(result, a);
    } else if (LT(*a, *c)) swap_items(result, a);
    else if (LT(*b, *c)) swap_items(result, c);
    else swap_items(result, b);
}

static item *unguarded_partition(item *first, item *last, const item *pivot) {
    for (;;) {
        while (LT(*first, *pivot)) ++first;
        --last;
        while (LT(*pivot, *last)) --last;
        if (!(first < last)) return first;
        swap_items(first, last);
        ++first;
    }
}

static item *partition_pivot(item *first, item *last) {
    item *mid = first + (last - first) / 2;
    move_median_to_first(first, first + 1, mid, last - 1);
    return unguarded_partition(first + 1, last, first);
}

/* --- heap (the fallback when the depth budget is spent) --- */

static void push_heap(item *first, int64_t hole, int64_t top, item value) {
    int64_t parent = (hole - 1) / 2;
    while (hole > top && LT(first[parent], value)) {
        first[hole] = first[parent];
        hole = parent;
        parent = (hole - 1) / 2;
    }
    first[hole] = value;
}

static void adjust_heap(item *first, int64_t hole, int64_t len, item value) {
    const int64_t top = hole;
    int64_t second = hole;
    while (second < (len - 1) / 2) {
        second = 2 * (second + 1);
        if (LT(first[second], first[second - 1])) second--;
        first[hole] = first[second];
        hole = second;
    }
    if ((len & 1) == 0 && second == (len - 2) / 2) {
        second = 2 * (second + 1);
        first[hole] = first[second - 1];
        hole = second - 1;
    }
    push_heap(first, hole, top, value);
}

static void heap_sort(item *first, item *last) {  /* partial_sort(first, last, last) */
    int64_t len = last - first;
    if (len >= 2) {
        for (int64_t parent = (len - 2) / 2;; parent--) {
            adjust_heap(first, parent, len, first[parent]);
            if (parent == 0) break;
        }
    }
    while (last - first > 1) {
        --last;
        item value = *last;
        *last = *first;
        adjust_heap(first, 0, last - first, value);
    }
}

/* --- introsort, then the final insertion sort --- */

static int lg(int64_t n) {
    int k = 0;
    while (n >>= 1) k++;
    return k;
}

static void introsort_loop(item *first, item *last, int depth) {
    while (last - first > 16) {
        if (depth == 0) {
            heap_sort(first, last);
            return;
        }
        --depth;
        item *cut = partition_pivot(first, last);
        introsort_loop(cut, last, depth);
        last = cut;
    }
}

static void unguarded_linear_insert(item *last) {
    item val = *last;
    item *next = last - 1;
    while (LT(val, *next)) {
        *last = *next;
        last = next;
        --next;
    }
    *last = val;
}

static void insertion_sort(item *first, item *last) {
    if (first == last) return;
    for (item *i = first + 1; i != last; ++i) {
        if (LT(*i, *first)) {
            item val = *i;
            for (item *j = i; j != first; --j) *j = *(j - 1);
            *first = val;
        } else {
            unguarded_linear_insert(i);
        }
    }
}

void ember_stl_sort_rows(item *q, int64_t rows, int64_t n) {
    if (n < 2) return;
    for (int64_t r = 0; r < rows; r++) {
        item *first = q + r * n, *last = first + n;
        introsort_loop(first, last, lg(n) * 2);
        if (n > 16) {
            insertion_sort(first, first + 16);
            for (item *i = first + 16; i != last; ++i) unguarded_linear_insert(i);
        } else {
            insertion_sort(first, last);
        }
    }
}
