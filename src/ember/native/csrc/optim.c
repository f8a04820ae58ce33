/* optim.c: the fused optimizer updates (SGD, Adam/AdamW, Adadelta, RMSprop and Adagrad),
 * one pass over each parameter.
 * Written once against scalar_t and FN(name); kernels.py compiles it for float and double.
 *
 * Each update does, element by element, exactly the operations of its NumPy twin
 * (optim/sgd.py `_sgd_kernel`, optim/adam.py `_adam_kernel`) in the same order, which are
 * PyTorch's tensor ops': every Python number is rounded to scalar_t first, every product,
 * quotient, sum and square root is rounded once, and where PyTorch's kernel is a fused
 * multiply-add (`add_(x, alpha=)`, `addcmul_`, `lerp_`: ops/_fma.py) so is this one
 * (EMBER_FMA_T; nothing else is contracted), so the results are the NumPy kernels' bits,
 * in one pass instead of ten over memory.
 * Contiguous arrays only (the caller checks); elements split over the pool's threads.
 */
#include <math.h>

#include "ember.h"

#define EMBER_SQRT_T(x) _Generic((x), float: sqrtf, default: sqrt)(x)

typedef struct {
    scalar_t *p, *buf;
    const scalar_t *grad;
    scalar_t lr_neg, momentum, keep, wd;
    int has_momentum, nesterov, maximize, wd_on;
} FN(sgd_args);

static void FN(sgd_task)(void *a_, int64_t lo, int64_t hi) {
    const FN(sgd_args) *a = a_;
    scalar_t *restrict p = a->p, *restrict buf = a->buf;
    const scalar_t *restrict grad = a->grad;
    for (int64_t i = lo; i < hi; i++) {
        scalar_t g = a->maximize ? -grad[i] : grad[i];
        if (a->wd_on) g = EMBER_FMA_T(p[i], a->wd, g);
        if (a->has_momentum) {
            const scalar_t b = EMBER_FMA_T(g, a->keep, buf[i] * a->momentum);
            buf[i] = b;
            g = a->nesterov ? EMBER_FMA_T(b, a->momentum, g) : b;
        }
        p[i] = EMBER_FMA_T(g, a->lr_neg, p[i]);
    }
}

/* p += -lr * g, with g = grad (negated under maximize) + wd * p, and with momentum
 * buf = momentum * buf + (1 - dampening) g, g = buf (or g + momentum buf, nesterov). */
void FN(sgd_step)(scalar_t *p, const scalar_t *grad, scalar_t *buf, int64_t n, double lr,
                  double momentum, double dampening, double weight_decay, int nesterov,
                  int maximize) {
    FN(sgd_args) a = {p, buf, grad, (scalar_t)(-lr), (scalar_t)momentum,
                      (scalar_t)(1 - dampening), (scalar_t)weight_decay, momentum != 0,
                      nesterov, maximize, weight_decay != 0};
    ember_parallel_for(FN(sgd_task), &a, n, 1 << 14);
}

typedef struct {
    scalar_t *p, *m, *v, *vmax;
    const scalar_t *grad;
    scalar_t decay, wd, w1, w1_rest, beta2, one_minus_beta2, bc2, eps, step_size;
    int maximize, decoupled, wd_on, lerp_small;
} FN(adam_args);

/* One Adam step of elements [lo, hi); `amsgrad` a constant at each call site, so each
 * loop is compiled without the max. The flags are read into locals and every choice is a
 * select over both sides, so the loop vectorises (the chosen side's bits are unchanged). */
static inline void FN(adam_range)(const FN(adam_args) *a, int64_t lo, int64_t hi,
                                  const int amsgrad) {
    scalar_t *restrict p = a->p, *restrict m = a->m, *restrict v = a->v;
    scalar_t *restrict vmax = a->vmax;
    const scalar_t *restrict grad = a->grad;
    const int maximize = a->maximize, lerp_small = a->lerp_small;
    const int decay_on = a->wd_on && a->decoupled, l2_on = a->wd_on && !a->decoupled;
    const scalar_t decay = a->decay, wd = a->wd, w1 = a->w1, w1_rest = a->w1_rest;
    const scalar_t beta2 = a->beta2, one_minus_beta2 = a->one_minus_beta2, bc2 = a->bc2;
    const scalar_t eps = a->eps, step_size = a->step_size;
    for (int64_t i = lo; i < hi; i++) {
        const scalar_t gi = grad[i];
        scalar_t g = maximize ? -gi : gi;
        const scalar_t p0 = p[i];
        const scalar_t pi = decay_on ? p0 * decay : p0;
        g = l2_on ? EMBER_FMA_T(p0, wd, g) : g;
        /* exp_avg.lerp_(g, w1), PyTorch's two-sided formula */
        const scalar_t m0 = m[i];
        const scalar_t d = g - m0;
        const scalar_t mi = lerp_small ? EMBER_FMA_T(w1, d, m0) : EMBER_FMA_T(-d, w1_rest, g);
        m[i] = mi;
        /* exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2) */
        scalar_t vi = EMBER_FMA_T(one_minus_beta2 * g, g, v[i] * beta2);
        v[i] = vi;
        if (amsgrad) {
            scalar_t mx = vmax[i];
            mx = (mx != mx) ? mx : (vi != vi) ? vi : (mx >= vi ? mx : vi);  /* np.maximum */
            vmax[i] = mx;
            vi = mx;
        }
        const scalar_t denom = EMBER_SQRT_T(vi) / bc2 + eps;
        p[i] = pi + (mi * step_size) / denom;
    }
}

static void FN(adam_task)(void *a_, int64_t lo, int64_t hi) {
    const FN(adam_args) *a = a_;
    if (a->vmax)
        FN(adam_range)(a, lo, hi, 1);
    else
        FN(adam_range)(a, lo, hi, 0);
}

/* Adam's step (AdamW with `decoupled`); bc2 = sqrt(1 - beta2^t) and step_size =
 * -lr / (1 - beta1^t) come from the caller, computed in double as the NumPy kernel's. */
void FN(adam_step)(scalar_t *p, const scalar_t *grad, scalar_t *m, scalar_t *v,
                   scalar_t *vmax, int64_t n, double lr, double beta1, double beta2,
                   double eps, double weight_decay, int decoupled, int maximize, double bc2,
                   double step_size) {
    const scalar_t w1 = (scalar_t)(1 - beta1);
    FN(adam_args) a = {p, m, v, vmax, grad, (scalar_t)(1 - lr * weight_decay),
                       (scalar_t)weight_decay, w1, (scalar_t)1 - w1, (scalar_t)beta2,
                       (scalar_t)(1 - beta2), (scalar_t)bc2, (scalar_t)eps,
                       (scalar_t)step_size, maximize, decoupled, weight_decay != 0,
                       fabs(w1) < 0.5};
    ember_parallel_for(FN(adam_task), &a, n, 1 << 14);
}

typedef struct {
    scalar_t *p, *sq, *acc;
    const scalar_t *grad;
    scalar_t rho, one_minus, eps, wd, lr_neg;
    int maximize, wd_on;
} FN(adadelta_args);

static void FN(adadelta_task)(void *a_, int64_t lo, int64_t hi) {
    const FN(adadelta_args) *a = a_;
    scalar_t *restrict p = a->p, *restrict sq = a->sq, *restrict acc = a->acc;
    const scalar_t *restrict grad = a->grad;
    for (int64_t i = lo; i < hi; i++) {
        scalar_t g = a->maximize ? -grad[i] : grad[i];
        if (a->wd_on) g = EMBER_FMA_T(p[i], a->wd, g);
        const scalar_t s = EMBER_FMA_T(a->one_minus * g, g, sq[i] * a->rho);
        sq[i] = s;
        const scalar_t std = EMBER_SQRT_T(s + a->eps);
        const scalar_t delta = (EMBER_SQRT_T(acc[i] + a->eps) / std) * g;
        acc[i] = EMBER_FMA_T(a->one_minus * delta, delta, acc[i] * a->rho);
        p[i] = EMBER_FMA_T(delta, a->lr_neg, p[i]);
    }
}

/* Adadelta (optim/rmsprop.py `_adadelta_kernel`): v = rho v + (1 - rho) g^2,
 * delta = sqrt(u + eps) / sqrt(v + eps) g, u = rho u + (1 - rho) delta^2, p -= lr delta. */
void FN(adadelta_step)(scalar_t *p, const scalar_t *grad, scalar_t *sq, scalar_t *acc,
                       int64_t n, double lr, double rho, double eps, double weight_decay,
                       int maximize) {
    FN(adadelta_args) a = {p, sq, acc, grad, (scalar_t)rho, (scalar_t)(1 - rho),
                           (scalar_t)eps, (scalar_t)weight_decay, (scalar_t)(-lr), maximize,
                           weight_decay != 0};
    ember_parallel_for(FN(adadelta_task), &a, n, 1 << 14);
}

typedef struct {
    scalar_t *p, *sq, *avg, *buf;
    const scalar_t *grad;
    scalar_t alpha, one_minus, w1, w1_rest, eps, wd, momentum, lr_neg;
    int maximize, wd_on, lerp_small, lr_one, accumulate;
} FN(rms_args);

/* One RMSprop / Adagrad step of [lo, hi): `centered` (grad_avg) and `momentum` (buf)
 * constants at each call site, everything else read into locals and chosen by selects, so
 * that each variant's loop vectorises (as adam_range). */
static inline void FN(rms_range)(const FN(rms_args) *a, int64_t lo, int64_t hi,
                                 const int centered, const int momentum) {
    scalar_t *restrict p = a->p, *restrict sq = a->sq, *restrict avg = a->avg;
    scalar_t *restrict buf = a->buf;
    const scalar_t *restrict grad = a->grad;
    const int maximize = a->maximize, wd_on = a->wd_on, accumulate = a->accumulate;
    const int lerp_small = a->lerp_small, lr_one = a->lr_one;
    const scalar_t alpha = a->alpha, one_minus = a->one_minus, w1 = a->w1;
    const scalar_t w1_rest = a->w1_rest, eps = a->eps, wd = a->wd, mom = a->momentum;
    const scalar_t lr_neg = a->lr_neg;
    for (int64_t i = lo; i < hi; i++) {
        const scalar_t gi = grad[i], p0 = p[i];
        scalar_t g = maximize ? -gi : gi;
        g = wd_on ? EMBER_FMA_T(p0, wd, g) : g;
        const scalar_t s0 = sq[i];
        /* addcmul_(g, g, value=1) (Adagrad) or mul_(alpha).addcmul_(g, g, value=1 - alpha) */
        const scalar_t s = accumulate ? EMBER_FMA_T(g, g, s0)
                                      : EMBER_FMA_T(one_minus * g, g, s0 * alpha);
        sq[i] = s;
        scalar_t d;
        if (centered) {
            /* grad_avg.lerp_(g, 1 - alpha), then sqrt(v.addcmul(grad_avg, grad_avg, -1)) */
            const scalar_t a0 = avg[i];
            const scalar_t diff = g - a0;
            const scalar_t m = lerp_small ? EMBER_FMA_T(w1, diff, a0)
                                          : EMBER_FMA_T(-diff, w1_rest, g);
            avg[i] = m;
            d = EMBER_SQRT_T(EMBER_FMA_T(-m, m, s));
        } else {
            d = EMBER_SQRT_T(s);
        }
        d = d + eps;
        if (momentum) {
            const scalar_t b = buf[i] * mom + g / d;
            buf[i] = b;
            p[i] = EMBER_FMA_T(b, lr_neg, p0);
        } else {
            /* addcdiv_(g, d, value=-lr): the value times g first, then the quotient */
            p[i] = p0 + (lr_one ? g : g * lr_neg) / d;
        }
    }
}

static void FN(rms_task)(void *a_, int64_t lo, int64_t hi) {
    const FN(rms_args) *a = a_;
    if (a->avg && a->buf)
        FN(rms_range)(a, lo, hi, 1, 1);
    else if (a->avg)
        FN(rms_range)(a, lo, hi, 1, 0);
    else if (a->buf)
        FN(rms_range)(a, lo, hi, 0, 1);
    else
        FN(rms_range)(a, lo, hi, 0, 0);
}

/* RMSprop (v = alpha v + (1 - alpha) g^2) or, with `accumulate`, Adagrad (v += g^2, lr
 * already this step's); optim/rmsprop.py `_rms_kernel`. grad_avg (centered) and the
 * momentum buffer are NULL when unused. */
void FN(rms_step)(scalar_t *p, const scalar_t *grad, scalar_t *sq, scalar_t *avg,
                  scalar_t *buf, int64_t n, double lr, double alpha, double eps,
                  double weight_decay, double momentum, int accumulate, int maximize) {
    const scalar_t w1 = (scalar_t)(1 - alpha);
    FN(rms_args) a = {p, sq, avg, buf, grad, (scalar_t)alpha, w1, w1, (scalar_t)1 - w1,
                      (scalar_t)eps, (scalar_t)weight_decay,
                      (scalar_t)momentum, (scalar_t)(-lr), maximize, weight_decay != 0,
                      fabs(w1) < 0.5, -lr == 1, accumulate};
    ember_parallel_for(FN(rms_task), &a, n, 1 << 14);
}
