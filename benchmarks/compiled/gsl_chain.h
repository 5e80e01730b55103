/*
 * What the two GSL chain programs share (gsl_rk8pd_chain.c: the right-hand side by LU,
 * gsl_rk8pd_chain_aba.c: by the O(n) articulated-body recursion): the command line
 *     PROGRAM T tol repeats [notrack] [counts]  < params
 *     PROGRAM rhs  < params      (prints f(y(0)): qd, then qdd)
 * and the output line T,tol,steps,seconds_per_run,e_H,y_1..y_2n[,accepted,rejected];
 * each program supplies its parameters' reader, its right-hand side and its energy.
 */
#ifndef GSL_CHAIN_H
#define GSL_CHAIN_H
#include "gsl_bench.h"

/* Reads the parameters from stdin into the program's chain C: 0, and n and y0 = (q(0),
 * qd(0)) set; else -1 (what it allocated is freed by the program after chain_main). */
typedef int (*chain_read_fn)(void *C, int *n, const double **y0);
typedef int (*chain_rhs_fn)(double t, const double y[], double f[], void *C);

/* The chain's values after n on stdin: the masses m, the lengths l (n each) and the start
 * y0 = (q(0), qdot(0)) (2n): 0, or -1 when one is missing. */
static int chain_read_values(int n, double *m, double *l, double *y0)
{
    for (int i = 0; i < n; i++) if (scanf("%lf", &m[i]) != 1) return -1;
    for (int i = 0; i < n; i++) if (scanf("%lf", &l[i]) != 1) return -1;
    for (int i = 0; i < 2 * n; i++) if (scanf("%lf", &y0[i]) != 1) return -1;
    return 0;
}

/* One run over [0, T] from y0 into y; if eH != NULL, the max relative energy error; if
 * counts != NULL, the accepted and rejected steps. */
static int chain_run(void *C, chain_rhs_fn rhs, energy_fn H, int n, const double *y0, double T,
                     double tol, long *steps, double *eH, double *y, unsigned long counts[2])
{
    gsl_odeiv2_system sys = {rhs, NULL, 2 * (size_t)n, C};
    memcpy(y, y0, sys.dimension * sizeof(double));
    return evolve(&sys, H, T, tol, y, steps, eH, counts);
}

/* The program's main: 0 on success, 1 if GSL fails, 2 on bad arguments or parameters. */
static int chain_main(int argc, char **argv, void *C, chain_read_fn read, chain_rhs_fn rhs,
                      energy_fn H)
{
    double T = 0, tol = 0;
    int repeats = 0, track = 0, counts_wanted = 0, rhs_only = argc == 2 && strcmp(argv[1], "rhs") == 0;
    if (argc >= 5 && strcmp(argv[argc - 1], "counts") == 0) { counts_wanted = 1; argc--; }
    if (!rhs_only && bench_args(argc, argv, " [counts] < params, or rhs < params", &T, &tol, &repeats, &track) != 0)
        return 2;
    int n = 0;
    const double *y0 = NULL;
    if (read(C, &n, &y0) != 0) {
        fprintf(stderr, "bad parameters on stdin (n g m_1..m_n l_1..l_n q(0) qd(0))\n");
        return 2;
    }
    int status = 0;
    long steps = 0;
    unsigned long counts[2] = {0, 0};
    double eH = NAN, best = 1e300, *y = malloc(2 * (size_t)n * sizeof(double));
    if (!y) status = 1;
    else if (rhs_only) {
        if (rhs(0.0, y0, y, C) != GSL_SUCCESS) status = 1;
        for (int i = 0; i < 2 * n && status == 0; i++) printf(i ? ",%.17g" : "%.17g", y[i]);
        if (status == 0) printf("\n");
    } else {
        /* the untimed pass: e_H if tracked, the step counts if asked for */
        if ((track || counts_wanted) &&
            chain_run(C, rhs, H, n, y0, T, tol, &steps, track ? &eH : NULL, y, counts) != 0)
            status = 1;
        for (int r = 0; r < repeats && status == 0; r++) {
            double t0 = now();
            if (chain_run(C, rhs, H, n, y0, T, tol, &steps, NULL, y, NULL) != 0) status = 1;
            double dt = now() - t0;
            if (dt < best) best = dt;
        }
        if (status == 0) {
            printf("%g,%g,%ld,%.6e,%.6e", T, tol, steps, best, eH);
            for (int i = 0; i < 2 * n; i++) printf(",%.17g", y[i]);
            if (counts_wanted) printf(",%lu,%lu", counts[0], counts[1]);
            printf("\n");
        }
    }
    if (status != 0) fprintf(stderr, "gsl integration failed\n");
    free(y);
    return status;
}
#endif
