/*
 * What the GSL benchmark programs share: the clock and the command line
 *     PROGRAM T tol repeats [notrack]
 * (T > 0 the horizon, tol > 0 GSL's rtol = atol, repeats >= 1 timed runs; `notrack`
 * skips the untimed pass that measures the energy error), and the integration loop.
 */
#ifndef GSL_BENCH_H
#define GSL_BENCH_H
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC seconds: the same definition as Python's time.perf_counter on Linux. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Parse the command line; 0 on success, else a usage message (naming `extra`) and -1. */
static int bench_args(int argc, char **argv, const char *extra, double *T, double *tol, int *repeats,
                      int *track)
{
    *track = argc == 4;
    if (argc == 4 || (argc == 5 && strcmp(argv[4], "notrack") == 0)) {
        *T = atof(argv[1]);
        *tol = atof(argv[2]);
        *repeats = atoi(argv[3]);
        if (*T > 0 && *tol > 0 && *repeats >= 1) return 0;
    }
    fprintf(stderr, "usage: %s T tol repeats [notrack]%s (T, tol > 0, repeats >= 1)\n", argv[0], extra);
    return -1;
}

/* The energy H(y) of a state, for the energy error. */
typedef double (*energy_fn)(void *params, const double *y);

/* Integrate sys over [0, T] from y (overwritten by the state at T) with GSL's rk8pd under
 * rtol = atol = tol (first trial step 1e-3).  *steps: accepted steps; if eH != NULL, *eH =
 * max over accepted steps of |H - H0| / |H0|; if counts != NULL, GSL's accepted and rejected
 * step counts (its evolve `count` is every trial step).  Returns 0, or -1 if GSL fails. */
static int evolve(gsl_odeiv2_system *sys, energy_fn H, double T, double tol, double *y, long *steps,
                  double *eH, unsigned long counts[2])
{
    gsl_odeiv2_step *s = gsl_odeiv2_step_alloc(gsl_odeiv2_step_rk8pd, sys->dimension);
    gsl_odeiv2_control *c = gsl_odeiv2_control_y_new(tol, tol);
    gsl_odeiv2_evolve *e = gsl_odeiv2_evolve_alloc(sys->dimension);
    int status = (s && c && e) ? GSL_SUCCESS : GSL_ENOMEM;
    double t = 0.0, h = 1e-3, H0 = eH ? H(sys->params, y) : 0.0, worst = 0.0;
    long k = 0;
    while (status == GSL_SUCCESS && t < T) {
        status = gsl_odeiv2_evolve_apply(e, c, s, sys, &t, T, &h, y);
        if (status != GSL_SUCCESS) break;
        k++;
        if (eH) {
            double r = fabs(H(sys->params, y) - H0) / fabs(H0);
            if (r > worst) worst = r;
        }
    }
    if (counts) {
        counts[0] = e ? e->count - e->failed_steps : 0;
        counts[1] = e ? e->failed_steps : 0;
    }
    if (e) gsl_odeiv2_evolve_free(e);
    if (c) gsl_odeiv2_control_free(c);
    if (s) gsl_odeiv2_step_free(s);
    *steps = k;
    if (eH) *eH = worst;
    return status == GSL_SUCCESS ? 0 : -1;
}
#endif
