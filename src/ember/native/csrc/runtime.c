/* runtime.c: ember's native thread pool.
 *
 * One pool per process, started lazily by the first parallel kernel. The calling thread
 * runs the first chunk itself, so a pool of n threads has n - 1 workers. Workers spin for a
 * short while after a job (a training step calls kernels back to back) and then sleep on a
 * condition variable. After fork() the child has no workers: a handler registered with
 * pthread_atfork resets the pool there (fresh locks, no threads), and the child's first
 * parallel kernel starts its own (so DataLoader workers may run native kernels).
 *
 * One parallel region at a time: a second Python thread that calls a kernel while the pool
 * is busy, or a task that calls a kernel, runs it serially on its own thread.
 *
 * Also here: OpenBLAS's parallel jobs run on the pool (its thread callback), and NumPy's
 * BLAS products, by address, for the kernels and for batches of products, and ember's own
 * float32 product (gemm.c) beside them.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "ember.h"

#define MAX_WORKERS 63
#define SPIN_ROUNDS 20000 /* polling before a worker sleeps: 0.02-0.2 ms, by processor */

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

static struct {
    pthread_mutex_t lock;  /* guards sleeping workers' wake-up */
    pthread_cond_t wake;
    pthread_mutex_t region; /* held by the thread running a parallel region */
    int threads;           /* wanted, caller included */
    int started;           /* workers running */
    atomic_long generation; /* bumped to publish a job */
    atomic_int pending;    /* chunks of the current job not yet finished */
    ember_task task;
    void *ctx;
    int64_t n;
    int parts;
    long born; /* the generation a new worker starts from (set before it is created) */
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
          1, 0, 0, 0, NULL, NULL, 0, 0, 0};

static _Thread_local int inside_region;

static void run_chunk(int part) {
    int64_t lo = pool.n * part / pool.parts, hi = pool.n * (part + 1) / pool.parts;
    if (lo < hi) pool.task(pool.ctx, lo, hi);
}

static void *worker(void *arg) {
    int me = (int)(intptr_t)arg; /* 1 .. started */
    long seen = pool.born;
    inside_region = 1;
    for (;;) {
        long now;
        int spins = 0;
        while ((now = atomic_load_explicit(&pool.generation, memory_order_acquire)) == seen &&
               spins < SPIN_ROUNDS) {
            CPU_RELAX();
            spins++;
        }
        if (now == seen) {
            pthread_mutex_lock(&pool.lock);
            while ((now = atomic_load(&pool.generation)) == seen)
                pthread_cond_wait(&pool.wake, &pool.lock);
            pthread_mutex_unlock(&pool.lock);
        }
        seen = now;
        if (me < pool.parts) {
            run_chunk(me);
            atomic_fetch_sub_explicit(&pool.pending, 1, memory_order_release);
        }
    }
    return NULL;
}

static void start_workers(int want) {
    pool.born = atomic_load(&pool.generation);
    while (pool.started < want && pool.started < MAX_WORKERS) {
        pthread_t t;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int ok = pthread_create(&t, &attr, worker, (void *)(intptr_t)(pool.started + 1)) == 0;
        pthread_attr_destroy(&attr);
        if (!ok) break;
        pool.started++;
    }
}

/* Runs chunks 0..parts-1 of n items, chunk 0 on the calling thread and chunk i on worker
 * i, and returns when all are done. The caller holds pool.region and has started at least
 * parts - 1 workers. */
static void run_region(ember_task task, void *ctx, int64_t n, int parts) {
    pool.task = task;
    pool.ctx = ctx;
    pool.n = n;
    pool.parts = parts;
    atomic_store(&pool.pending, parts - 1);
    pthread_mutex_lock(&pool.lock);
    atomic_fetch_add_explicit(&pool.generation, 1, memory_order_release);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    inside_region = 1;
    run_chunk(0);
    inside_region = 0;
    for (int spins = 0; atomic_load_explicit(&pool.pending, memory_order_acquire) > 0; spins++)
        if (spins < SPIN_ROUNDS) CPU_RELAX(); else sched_yield();
    pthread_mutex_unlock(&pool.region);
}

void ember_parallel_for(ember_task task, void *ctx, int64_t n, int64_t grain) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t most = (n + grain - 1) / grain;
    int parts = pool.threads < most ? pool.threads : (int)most;
    if (parts <= 1 || inside_region || pthread_mutex_trylock(&pool.region) != 0) {
        task(ctx, 0, n);
        return;
    }
    start_workers(parts - 1);
    if (pool.started < parts - 1) parts = pool.started + 1;
    run_region(task, ctx, n, parts);
}

void ember_set_num_threads(int n) {
    pool.threads = n < 1 ? 1 : (n > MAX_WORKERS + 1 ? MAX_WORKERS + 1 : n);
}

int ember_num_threads(void) { return pool.threads; }

/* The workers that exist (tests: a forked child starts with none). */
int ember_started_workers(void) { return pool.started; }

static void reset_in_child(void) {
    pthread_mutex_t fresh_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    pool.lock = fresh_lock;
    pool.region = fresh_lock;
    pool.wake = fresh_cond;
    pool.started = 0;
    atomic_store(&pool.pending, 0);
    inside_region = 0;
}

__attribute__((constructor)) static void install_fork_handler(void) {
    pthread_atfork(NULL, NULL, reset_in_child);
}

/* OpenBLAS's threads, on this pool. OpenBLAS (0.3.27 on) hands its parallel jobs to a
 * callback where one is set (`openblas_set_threads_callback_function`): NumPy's threaded
 * products then run OpenBLAS's own split, with its shared packed panels and so its exact
 * results, on ember's threads, which sleep soon after, where OpenBLAS's own busy-wait for
 * about 0.1 s after every call and take the cores from the kernels that follow.
 * OpenBLAS's jobs wait on each other's panels, so all of them must run at once: each on
 * its own thread, on the pool where it is free and large enough, else on threads made for
 * the call.
 *
 * A job's number picks OpenBLAS's per-thread buffer and status word, which it marks busy
 * while it runs. OpenBLAS's own idle threads watch the words 0 .. (their count - 1): one
 * that sees its word busy when its spinning time is up spins on instead of sleeping, so
 * jobs numbered from 0 would keep a spinning OpenBLAS thread (after a call made without
 * the callback) spinning through every product that follows, on a core the pool needs.
 * Jobs are numbered past OpenBLAS's threads' words, where its tables have room. */
static const int *blas_server_threads; /* OpenBLAS's `blas_num_threads` (its threads + 1) */
static int blas_table_size;            /* its MAX_THREADS: the length of those tables */

void ember_set_blas_jobs(const int *server_threads, int table_size) {
    blas_server_threads = server_threads;
    blas_table_size = table_size;
}

typedef void (*blas_dojob)(int job, void *data, int arg);
typedef struct {
    blas_dojob dojob;
    char *data;
    size_t size;
    int arg, first; /* first: the first job's number */
} blas_jobs;

static void run_blas_jobs(void *ctx, int64_t lo, int64_t hi) {
    const blas_jobs *j = ctx;
    for (int64_t i = lo; i < hi; i++)
        j->dojob(j->first + (int)i, j->data + (size_t)i * j->size, j->arg);
}

typedef struct {
    const blas_jobs *jobs;
    int job;
} blas_thread_arg;

/* The first job's number: past OpenBLAS's own threads' words where its tables have room. */
static int job_numbers(int numjobs) {
    int first = blas_server_threads ? *blas_server_threads - 1 : 0;
    return first < 0 || first + numjobs > blas_table_size ? 0 : first;
}

static void *blas_job_thread(void *arg) {
    const blas_thread_arg *t = arg;
    run_blas_jobs((void *)t->jobs, t->job, t->job + 1);
    return NULL;
}

static atomic_long blas_calls_on_pool, blas_calls_apart; /* (read by the tests) */

/* OpenBLAS's jobs on threads made for the call: where the pool is busy (another Python
 * thread's kernel) or cannot start enough workers, or the caller is one of its tasks. */
void ember_blas_jobs_apart(int sync, blas_dojob dojob, int numjobs, size_t size, void *data,
                           int arg) {
    (void)sync;
    blas_jobs j = {dojob, data, size, arg, job_numbers(numjobs)};
    pthread_t threads[MAX_WORKERS + 1];
    blas_thread_arg args[MAX_WORKERS + 1];
    int made = 0;
    atomic_fetch_add(&blas_calls_apart, 1);
    for (int i = 1; i < numjobs && i <= MAX_WORKERS; i++) {
        args[i] = (blas_thread_arg){&j, i};
        if (pthread_create(&threads[i], NULL, blas_job_thread, &args[i]) != 0) break;
        made = i;
    }
    /* (a job left without a thread would leave the others waiting on its panels: OpenBLAS
     * asks for at most the thread count it was given, which the system granted it) */
    run_blas_jobs(&j, 0, 1);
    for (int i = 1; i <= made; i++) pthread_join(threads[i], NULL);
}

/* The callback OpenBLAS is given (native/blas.py). */
void ember_blas_jobs(int sync, blas_dojob dojob, int numjobs, size_t size, void *data,
                     int arg) {
    if (numjobs <= 1) {
        blas_jobs j = {dojob, data, size, arg, job_numbers(1)};
        run_blas_jobs(&j, 0, numjobs);
        return;
    }
    if (!inside_region && numjobs - 1 <= MAX_WORKERS &&
        pthread_mutex_trylock(&pool.region) == 0) {
        start_workers(numjobs - 1);
        if (pool.started >= numjobs - 1) {
            blas_jobs j = {dojob, data, size, arg, job_numbers(numjobs)};
            atomic_fetch_add(&blas_calls_on_pool, 1);
            run_region(run_blas_jobs, &j, numjobs, numjobs);
            return;
        }
        pthread_mutex_unlock(&pool.region);
    }
    ember_blas_jobs_apart(sync, dojob, numjobs, size, data, arg);
}

/* How many of OpenBLAS's calls ran on the pool, and on threads made for them. */
long ember_blas_calls(int apart) {
    return atomic_load(apart ? &blas_calls_apart : &blas_calls_on_pool);
}

/* BLAS: NumPy's own matrix product, handed over by address when the runtime loads
 * (native/blas.py finds it), so that kernels multiply with the library NumPy multiplies
 * with. Called from inside parallel regions with that library held to one thread. */
typedef void (*sgemm64_t)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                          int64_t, const float *, int64_t, float, float *, int64_t);
typedef void (*dgemm64_t)(int, int, int, int64_t, int64_t, int64_t, double, const double *,
                          int64_t, const double *, int64_t, double, double *, int64_t);
typedef void (*sgemm32_t)(int, int, int, int, int, int, float, const float *, int,
                          const float *, int, float, float *, int);
typedef void (*dgemm32_t)(int, int, int, int, int, int, double, const double *, int,
                          const double *, int, double, double *, int);
static void *blas_s, *blas_d;
static int blas_ilp64;

void ember_set_blas(void *sgemm, void *dgemm, int ilp64) {
    blas_s = sgemm;
    blas_d = dgemm;
    blas_ilp64 = ilp64;
}

int ember_has_blas(void) { return blas_s != NULL && blas_d != NULL; }

#define CBLAS_ROW_MAJOR 101
#define CBLAS_TRANS(t) ((t) ? 112 : 111)

void ember_gemm_f32(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                    float *c, int64_t ldc) {
    if (blas_ilp64)
        ((sgemm64_t)blas_s)(CBLAS_ROW_MAJOR, CBLAS_TRANS(ta), CBLAS_TRANS(tb), m, n, k, alpha,
                            a, lda, b, ldb, beta, c, ldc);
    else
        ((sgemm32_t)blas_s)(CBLAS_ROW_MAJOR, CBLAS_TRANS(ta), CBLAS_TRANS(tb), (int)m, (int)n,
                            (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

void ember_gemm_f64(int ta, int tb, int64_t m, int64_t n, int64_t k, double alpha,
                    const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                    double *c, int64_t ldc) {
    if (blas_ilp64)
        ((dgemm64_t)blas_d)(CBLAS_ROW_MAJOR, CBLAS_TRANS(ta), CBLAS_TRANS(tb), m, n, k, alpha,
                            a, lda, b, ldb, beta, c, ldc);
    else
        ((dgemm32_t)blas_d)(CBLAS_ROW_MAJOR, CBLAS_TRANS(ta), CBLAS_TRANS(tb), (int)m, (int)n,
                            (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* Large products shared out to the pool by matrices or blocks of rows or columns of C,
 * each a BLAS call on its own thread (BLAS held to one thread by the caller). ember's
 * threads sleep soon after the job, where BLAS's own threads would busy-wait on after their
 * product and take the cores from the kernels that follow. */
typedef struct {
    int ta, tb, dbl, cols;                         /* cols: blocks of columns, not rows */
    int64_t m, n, k, lda, ldb, ldc, block, blocks; /* blocks: blocks per matrix */
    int64_t sa, sb, sc;                            /* batch strides, in items */
    const char *a, *b;
    char *c;
} gemm_job;

/* Rows (or columns) lo..hi of C of matrix i of the batch: one BLAS call. */
static void gemm_block(const gemm_job *j, int64_t i, int64_t lo, int64_t hi) {
    const size_t item = j->dbl ? sizeof(double) : sizeof(float);
    int64_t m = j->m, n = j->n, at = 0, bt = 0, ct;
    if (j->cols) { /* columns lo.. of op(B): columns of B, or rows of B stored transposed */
        n = hi - lo;
        bt = j->tb ? lo * j->ldb : lo;
        ct = lo;
    } else {       /* rows lo.. of op(A): rows of A, or columns of A stored transposed */
        m = hi - lo;
        at = j->ta ? lo : lo * j->lda;
        ct = lo * j->ldc;
    }
    const char *a = j->a + (size_t)(i * j->sa + at) * item;
    const char *b = j->b + (size_t)(i * j->sb + bt) * item;
    char *c = j->c + (size_t)(i * j->sc + ct) * item;
    if (j->dbl)
        ember_gemm_f64(j->ta, j->tb, m, n, j->k, 1, (const double *)a, j->lda,
                       (const double *)b, j->ldb, 0, (double *)c, j->ldc);
    else
        ember_gemm_f32(j->ta, j->tb, m, n, j->k, 1, (const float *)a, j->lda,
                       (const float *)b, j->ldb, 0, (float *)c, j->ldc);
}

/* Units lo..hi of (matrix, block), in order: one call per matrix they touch. */
static void gemm_units(void *ctx, int64_t lo, int64_t hi) {
    const gemm_job *j = ctx;
    const int64_t size = j->cols ? j->n : j->m;
    for (int64_t u = lo; u < hi;) {
        const int64_t i = u / j->blocks, first = u % j->blocks;
        const int64_t last = EMBER_MIN(j->blocks, first + (hi - u));
        gemm_block(j, i, first * j->block, EMBER_MIN(last * j->block, size));
        u += last - first;
    }
}

/* A batch of products C[i] = op(A[i]) op(B[i]), batch strides in items (0: one matrix
 * for every i). The pool takes whole matrices where they share out evenly (a multiple of
 * the threads, or many of them), else blocks of 16 rows or columns (whole blocks of the
 * BLAS kernels'): columns where C is wider than tall, so that each thread packs its part
 * of the larger operand B and all of the smaller A, not all of B. */
void ember_gemm_batched(int dbl, int ta, int tb, int64_t batch, int64_t m, int64_t n,
                        int64_t k, const void *a, int64_t lda, int64_t sa, const void *b,
                        int64_t ldb, int64_t sb, void *c, int64_t ldc, int64_t sc) {
    const int whole = batch % pool.threads == 0 || batch >= 4 * pool.threads;
    const int cols = !whole && n > m;
    const int64_t size = cols ? n : m, block = whole ? EMBER_MAX(m, 1) : 16;
    gemm_job j = {ta, tb, dbl, cols, m, n, k, lda, ldb, ldc, block,
                  (size + block - 1) / block, sa, sb, sc, a, b, c};
    ember_parallel_for(gemm_units, &j, batch * j.blocks, 1);
}

#include "buffers.c" /* (the buffer cache: NumPy's handler and kernels' scratch) */
#include "gemm.c"    /* (ember's own float32 product, for AVX-512 CPUs) */

/* The product the kernels use: ember's own float32 product where `own` (the kernel's plan,
 * from native/blas.py's rule), else BLAS's, which also serves where the own product's
 * scratch memory could not be had. */
void ember_product_f32(int own, int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                       float *c, int64_t ldc) {
    if (!own || ember_own_gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc))
        ember_gemm_f32(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void ember_product_f64(int own, int ta, int tb, int64_t m, int64_t n, int64_t k,
                       double alpha, const double *a, int64_t lda, const double *b,
                       int64_t ldb, double beta, double *c, int64_t ldc) {
    (void)own; /* (no float64 product of ember's own) */
    ember_gemm_f64(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
