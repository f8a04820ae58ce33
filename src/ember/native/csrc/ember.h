/* ember.h: what every native kernel of ember includes.
 *
 * Kernels are plain C11 over raw pointers, element strides and int64 sizes. A kernel that
 * can use both cores hands `ember_parallel_for` a task over a range of independent items
 * (channels, rows, batch entries); the runtime (runtime.c, loaded first with its symbols
 * global) splits the range over its threads. Nested calls and calls while another thread
 * uses the pool run serially, so a task may call other kernels.
 */
#ifndef EMBER_H
#define EMBER_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*ember_task)(void *ctx, int64_t lo, int64_t hi);

/* Run task(ctx, lo, hi) over [0, n) in chunks of at least `grain` items, one per thread. */
void ember_parallel_for(ember_task task, void *ctx, int64_t n, int64_t grain);
int ember_num_threads(void);

/* Scratch memory for a task: 64-byte aligned, reused across calls from the runtime's
 * buffer cache (buffers.c) rather than faulted in afresh; NULL when there is none. */
void *ember_scratch(size_t bytes);
void ember_scratch_free(void *p);

/* x * y + z rounded once (C's fma for the operands' type): the multiply-adds PyTorch's
 * vectorised kernels fuse (ops/_fma.py); -ffp-contract=off makes no others. */
#define EMBER_FMA_T(x, y, z) _Generic((x), float: fmaf, default: fma)(x, y, z)

#define EMBER_MIN(a, b) ((a) < (b) ? (a) : (b))
#define EMBER_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif
