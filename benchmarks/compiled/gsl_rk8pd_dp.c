/*
 * GSL's adaptive explicit Runge-Kutta Prince-Dormand 8(9) ("rk8pd") on the
 * nonlinear double pendulum of the TOP paper, written as Hamilton's equations
 *
 *     qdot = M(q)^{-1} p,   pdot = -grad V(q) + 1/2 qdot^T dM/dq qdot,
 *
 * M = [[a, b cos(q1-q2)], [b cos(q1-q2), d]], a = (m1+m2) l^2, b = m2 l^2,
 * d = m2 l^2, V = -(m1+m2) g l cos q1 - m2 g l cos q2, m1 = m2 = 1,
 * l = g/omega0^2, omega0 = 2 pi, q(0) = (pi/4, pi/3), p(0) = 0.
 *
 * The compiled high-order explicit reference for benchmarks/run.py (issues 6
 * and 8).  Usage:
 *     gsl_rk8pd_dp T tol repeats [notrack]
 * prints one CSV line: T,tol,steps,seconds_per_run,e_H,q1,q2,p1,p2 (at T)
 * where e_H = max over accepted steps of |H - H0|/|H0| (measured in a
 * separate, untimed pass; skipped with `notrack`, e_H and the state are then
 * those of the last timed run, e_H printed as nan) and seconds_per_run is the
 * minimum over `repeats` timed runs (no H evaluation inside the timed runs).
 */
#define _POSIX_C_SOURCE 199309L
#include "gsl_bench.h"

typedef struct { double a, b, d, A1, A2; } dp_params;   /* A1 = (m1+m2) g l, A2 = m2 g l */

static int rhs(double t, const double y[], double f[], void *vp)
{
    (void)t;
    const dp_params *P = vp;
    double s = sin(y[0] - y[1]), c = cos(y[0] - y[1]);
    double m12 = P->b * c, det = P->a * P->d - m12 * m12;
    double v1 = (P->d * y[2] - m12 * y[3]) / det;
    double v2 = (P->a * y[3] - m12 * y[2]) / det;
    f[0] = v1;
    f[1] = v2;
    /* 1/2 qdot^T dM/dq_1 qdot = -b s v1 v2, and +b s v1 v2 for q_2 */
    f[2] = -P->A1 * sin(y[0]) - P->b * s * v1 * v2;
    f[3] = -P->A2 * sin(y[1]) + P->b * s * v1 * v2;
    return GSL_SUCCESS;
}

static double energy(void *vp, const double y[])
{
    const dp_params *P = vp;
    double c = cos(y[0] - y[1]), m12 = P->b * c, det = P->a * P->d - m12 * m12;
    double v1 = (P->d * y[2] - m12 * y[3]) / det, v2 = (P->a * y[3] - m12 * y[2]) / det;
    return 0.5 * (y[2] * v1 + y[3] * v2) - P->A1 * cos(y[0]) - P->A2 * cos(y[1]);
}

/* One run over [0, T] from q(0) = (pi/4, pi/3), p(0) = 0; if eH != NULL, track the max
 * relative energy error. */
static int run(dp_params *P, double T, double tol, long *steps, double *eH, double yT[4])
{
    gsl_odeiv2_system sys = {rhs, NULL, 4, P};
    const double pi = acos(-1.0);
    yT[0] = pi / 4; yT[1] = pi / 3; yT[2] = 0.0; yT[3] = 0.0;
    return evolve(&sys, energy, T, tol, yT, steps, eH, NULL);
}

int main(int argc, char **argv)
{
    double T, tol;
    int repeats, track;
    if (bench_args(argc, argv, "", &T, &tol, &repeats, &track) != 0) return 2;
    const double g = 9.81, w0 = 2 * acos(-1.0), l = g / (w0 * w0);
    dp_params P = {2 * l * l, l * l, l * l, 2 * g * l, g * l};
    long steps = 0;
    double eH = NAN, yT[4], best = 1e300;
    if (track && run(&P, T, tol, &steps, &eH, yT) != 0) {
        fprintf(stderr, "gsl integration failed\n");
        return 1;
    }
    for (int r = 0; r < repeats; r++) {
        double t0 = now();
        if (run(&P, T, tol, &steps, NULL, yT) != 0) return 1;
        double dt = now() - t0;
        if (dt < best) best = dt;
    }
    printf("%g,%g,%ld,%.6e,%.6e,%.17g,%.17g,%.17g,%.17g\n", T, tol, steps, best, eH,
           yT[0], yT[1], yT[2], yT[3]);
    return 0;
}
