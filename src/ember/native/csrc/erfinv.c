/* erfinv.c: erfinv of doubles, the C twin of the NumPy kernel `unary_math._erfinv64`, step
 * for step: Winitzki's closed form (a = 0.147), then three Halley steps on erf(x) = |y|, the
 * residual through erfc where |y| > 1/2 so that it keeps its digits near 1. Its erf, erfc
 * and exp are the C library's (the NumPy kernel's are ember's own fits and NumPy's exp), so
 * the two agree to a few ulps, not bit for bit. (Floats take ember_math.h's erfinvf.)
 * Elements are independent: they run on the thread pool.
 */
#ifndef EMBER_ERFINV_ONCE
#define EMBER_ERFINV_ONCE

#include <math.h>
#include <stdint.h>

#include "ember.h"

#define ERFINV_PI 3.14159265358979323846

/* exp(-x*x) with x*x split exactly (Veltkamp), as `unary_math._exp_neg_sq`. */
static inline double exp_neg_sq(double x) {
    const double t = x * 134217729.0;
    const double hi = t - (t - x);
    const double lo = x - hi;
    return exp(-hi * hi) * exp(-lo * (x + hi));
}

static double erfinv_d(double y) {
    const double ay = fabs(y), a = 0.147;
    const double ln = log((1.0 - ay) * (1.0 + ay));
    const double t = 2.0 / (ERFINV_PI * a) + ln / 2.0;
    double x = sqrt(sqrt(t * t - ln / a) - t);
    const int tail = ay > 0.5;
    const double c = 2.0 / sqrt(ERFINV_PI);
    for (int k = 0; k < 3; k++) {
        double xc = isnan(x) ? 0.0 : x; /* (nan_to_num, then clipped to [0, 6]) */
        xc = xc < 0.0 ? 0.0 : (xc > 6.0 ? 6.0 : xc);
        const double r = tail ? (1.0 - ay) - erfc(xc) : erf(xc) - ay;
        const double step = r / (c * exp_neg_sq(xc));
        x = xc - step / (1.0 + xc * step);
    }
    x = ay == 1.0 ? INFINITY : (ay > 1.0 ? NAN : x);
    return copysign(x, y);
}

static void erfinv_task(void *p, int64_t lo, int64_t hi) {
    const double *const *a = p;
    const double *x = a[0];
    double *y = (double *)a[1];
    for (int64_t i = lo; i < hi; i++) y[i] = erfinv_d(x[i]);
}

/* y[i] = erfinv(x[i]) for n doubles. */
void ember_erfinv_double(const double *x, double *y, int64_t n) {
    const double *a[2] = {x, y};
    ember_parallel_for(erfinv_task, (void *)a, n, 2048);
}

#endif
