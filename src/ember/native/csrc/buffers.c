/* buffers.c: a cache of large freed buffers, for NumPy's arrays (as its memory handler)
 * and for the kernels' scratch memory. Part of the runtime library (runtime.c includes it).
 *
 * Every ember op returns a fresh NumPy array, and a training step frees and reallocates
 * the same few tens of megabytes each time. glibc gives a large freed block back to the
 * OS (its own mapping, or the trimmed top of the heap), so the next step page-faults it in
 * again, zeroed by the kernel: thousands of faults a step. This handler keeps freed blocks
 * of BIG bytes or more, up to CAP bytes in all, and hands one back to the next request of
 * the same rounded size, already faulted in (or, with none of that size, the smallest
 * cached block of up to twice the size, as malloc would split a larger free chunk).
 * Smaller blocks go straight to malloc.
 *
 * A request that misses the cache frees cached blocks of other sizes only where the cache
 * would otherwise pass CAP. (Freeing as much as each miss asks for, to hold no more than
 * the program had live, was tried: in a training step the misses then evict the blocks
 * later requests need, every step, and the MNIST CNN step kept 2,000 faults a step; with
 * the cap it has under 100.)
 *
 * Blocks are plain malloc'd memory of a large request's size rounded up to whole pages
 * (realloc keeps that rounding), so a block freed with size s holds at least rounded(s)
 * bytes, and realloc and free of any of them by the C library stay valid.
 *
 * The cache's lock is only ever tried: a thread that finds it taken (another thread
 * allocating, or a child forked while a parent thread held it) uses malloc and free as if
 * there were no cache, so nothing here can block or deadlock.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define BIG ((size_t)64 << 10)
#define CAP ((size_t)512 << 20)
#define SLOTS 128 /* distinct sizes held at once */
#define DEPTH 8   /* blocks held per size */
#define PAGE ((size_t)4096)

typedef struct {
    size_t size; /* 0: free slot */
    int n;
    void *blocks[DEPTH];
} slot;

static slot cache[SLOTS];

static size_t held;         /* bytes in the cache */
static atomic_flag busy = ATOMIC_FLAG_INIT;
static unsigned evict_at;   /* where the next eviction starts (round robin) */
static atomic_long hits, misses;

static size_t rounded(size_t n) { return (n + PAGE - 1) & ~(PAGE - 1); }

/* A new block of r bytes; from 4 MiB, backed by huge pages where the kernel allows (as
 * NumPy's own handler asks for its large arrays). */
static void *fresh(size_t r) {
    void *p = malloc(r);
#ifdef MADV_HUGEPAGE
    if (p && r >= ((size_t)4 << 20)) {
        uintptr_t lo = ((uintptr_t)p + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
        uintptr_t hi = ((uintptr_t)p + r) & ~(uintptr_t)(PAGE - 1);
        if (hi > lo) madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
    }
#endif
    return p;
}

static slot *find(size_t r) {
    slot *s = &cache[(r / PAGE) % SLOTS];
    for (int i = 0; i < SLOTS; i++, s = s + 1 == cache + SLOTS ? cache : s + 1)
        if (s->size == r) return s;
    return NULL;
}

/* The slot of the smallest cached blocks of r to 2r bytes, or NULL: a request with no block
 * of its own size takes one of those (as malloc would split a larger free chunk), so the
 * cache does not make a program's first pass through its sizes hold more than malloc. */
static slot *larger(size_t r) {
    slot *best = NULL;
    for (int i = 0; i < SLOTS; i++) {
        slot *s = &cache[i];
        if (s->n > 0 && s->size > r && s->size < 2 * r && (!best || s->size < best->size))
            best = s;
    }
    return best;
}

/* Free cached blocks of sizes other than r, at least `want` bytes' worth (lock held). */
static void evict(size_t want, size_t r) {
    for (int i = 0; i < SLOTS && want > 0 && held > 0; i++) {
        slot *s = &cache[evict_at++ % SLOTS];
        while (s->n > 0 && s->size != r && want > 0) {
            free(s->blocks[--s->n]);
            held -= s->size;
            want = want > s->size ? want - s->size : 0;
        }
        if (s->n == 0) s->size = 0;
    }
}

/* A cached block for a request of r (rounded) bytes, or NULL. */
static void *cached(size_t r) {
    if (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) return NULL;
    slot *s = find(r);
    if (s == NULL || s->n == 0) s = larger(r);
    void *p = NULL;
    if (s) {
        p = s->blocks[--s->n];
        held -= s->size;
        if (s->n == 0) s->size = 0;
    } else if (held + r > CAP) {
        evict(held + r - CAP, r);
    }
    atomic_flag_clear_explicit(&busy, memory_order_release);
    atomic_fetch_add_explicit(p ? &hits : &misses, 1, memory_order_relaxed);
    return p;
}

static void *take(size_t size) {
    const size_t r = rounded(size);
    void *p = cached(r);
    return p ? p : fresh(r);
}

/* A block of at least `size` bytes (from the cache where size >= BIG); give it back with
 * ember_buffer_give and the same size. */
void *ember_buffer_take(size_t size) { return size >= BIG ? take(size) : malloc(size); }

static void give(void *ptr, size_t size);

void ember_buffer_give(void *ptr, size_t size) { give(ptr, size); }

/* Scratch memory for a kernel: 64-byte aligned, from the cache; the block and its size sit
 * in the 16 bytes before the pointer returned. */
void *ember_scratch(size_t bytes) {
    const size_t total = bytes + 80;
    char *raw = ember_buffer_take(total);
    if (raw == NULL) return NULL;
    char *p = (char *)(((uintptr_t)raw + 16 + 63) & ~(uintptr_t)63);
    ((void **)p)[-2] = raw;
    ((size_t *)p)[-1] = total;
    return p;
}

void ember_scratch_free(void *p) {
    if (p) give(((void **)p)[-2], ((size_t *)p)[-1]);
}

/* NumPy's PyDataMem_Handler, version 1 (numpy/ndarraytypes.h): a name, a version, then
 * the allocator's context and four functions. */
typedef struct {
    char name[127];
    uint8_t version;
    void *ctx;
    void *(*malloc)(void *, size_t);
    void *(*calloc)(void *, size_t, size_t);
    void *(*realloc)(void *, void *, size_t);
    void (*free)(void *, void *, size_t);
} numpy_handler;

/* The handler NumPy had before (its default, with its own cache of tiny blocks): blocks
 * under BIG bytes go to it, so small arrays cost what they cost without ember's. */
static numpy_handler *before;

void ember_buffers_fall_back_to(numpy_handler *h) { before = h; }

static void *buffers_malloc(void *ctx, size_t size) {
    (void)ctx;
    if (size >= BIG) return take(size);
    return before ? before->malloc(before->ctx, size) : malloc(size);
}

static void *buffers_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    if (elsize && nelem > SIZE_MAX / elsize) return NULL;
    const size_t size = nelem * elsize;
    if (size < BIG)
        return before ? before->calloc(before->ctx, nelem, elsize) : calloc(nelem, elsize);
    /* (a miss asks calloc, whose fresh pages the OS zeroes when first touched) */
    const size_t r = rounded(size);
    void *p = cached(r);
    return p ? memset(p, 0, size) : calloc(1, r);
}

/* (a large block keeps its rounded size, so that freeing it may cache it; every block,
 * ours or the handler's before, is the C library's: realloc takes any of them) */
static void *buffers_realloc(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (size < BIG && before) return before->realloc(before->ctx, ptr, size);
    return realloc(ptr, size >= BIG ? rounded(size) : size);
}

static void buffers_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    if (size < BIG && before)
        before->free(before->ctx, ptr, size);
    else
        give(ptr, size);
}

static void give(void *ptr, size_t size) {
    if (ptr == NULL) return;
    const size_t r = rounded(size);
    if (size < BIG || held + r > CAP ||
        atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) {
        free(ptr);
        return;
    }
    slot *s = find(r);
    if (s == NULL) { /* a free slot, probing from the size's own */
        slot *t = &cache[(r / PAGE) % SLOTS];
        for (int i = 0; i < SLOTS && s == NULL; i++, t = t + 1 == cache + SLOTS ? cache : t + 1)
            if (t->size == 0) s = t;
        if (s) s->size = r, s->n = 0;
    }
    if (s && s->n < DEPTH) {
        s->blocks[s->n++] = ptr;
        held += r;
        ptr = NULL;
    }
    atomic_flag_clear_explicit(&busy, memory_order_release);
    free(ptr);
}

numpy_handler ember_buffers_handler = {
    "ember_buffers", 1, NULL, buffers_malloc, buffers_calloc, buffers_realloc, buffers_free};

/* (bytes held, hits, misses) for tests and the benchmarks */
void ember_buffers_stats(int64_t *out) {
    out[0] = (int64_t)held;
    out[1] = atomic_load(&hits);
    out[2] = atomic_load(&misses);
}

/* Give every cached block back to the C library. Answers 0 if the cache was busy. */
int ember_buffers_release(void) {
    if (atomic_flag_test_and_set_explicit(&busy, memory_order_acquire)) return 0;
    for (int i = 0; i < SLOTS; i++) {
        while (cache[i].n > 0) free(cache[i].blocks[--cache[i].n]);
        cache[i].size = 0;
    }
    held = 0;
    atomic_flag_clear_explicit(&busy, memory_order_release);
    return 1;
}
