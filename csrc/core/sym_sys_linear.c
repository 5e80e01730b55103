/*
 * sym_sys_linear.c -- the quadratic Lagrangian with constant matrices
 * (a built-in system, defined through sym_sysdef.h).
 */
#include "sym_sysdef.h"
#include "sym_linalg.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* linear: L = 1/2 qdot^T M qdot - 1/2 q^T K q, constant M (SPD), K   */
/* params: M (n*n, row-major), K (n*n)                                 */
/* ------------------------------------------------------------------ */
typedef struct { int n; double *M, *K; } linear_par;

static int linear_eval(const double *q, const double *g, unsigned need,
                       const sym_eval_out *o, void *params, double *scratch)
{
    const linear_par *P = params;
    const int n = P->n;
    const size_t nn = (size_t)n * (size_t)n;
    (void)g; (void)scratch;
    if (need & SYM_NEED_M) memcpy(o->M, P->M, sizeof(double) * nn);
    sym_zero_AH(need, o, n);
    if (need & SYM_NEED_D2V) memcpy(o->d2V, P->K, sizeof(double) * nn);
    if (need & (SYM_NEED_V | SYM_NEED_DV)) {
        double v = 0.0;
        for (int i = 0; i < n; i++) {
            double s = 0.0;
            for (int j = 0; j < n; j++) s += P->K[i * n + j] * q[j];
            if (need & SYM_NEED_DV) o->dV[i] = s;
            v += q[i] * s;
        }
        if (need & SYM_NEED_V) o->V[0] = 0.5 * v;
    }
    return 0;
}

/* M and K symmetric (the one rule, sym_symmetric), before anything is allocated */
static int linear_check(int n, const double *par)
{
    const size_t nn = (size_t)n * (size_t)n;
    if (!sym_symmetric(n, par, NULL, NULL) || !sym_symmetric(n, par + nn, NULL, NULL))
        return SYM_ESYSTEM;
    return SYM_OK;
}

/* The block holds M, K and room for the Cholesky factor that checks M > 0. */
static int linear_fill(int n, const double *par, void *params)
{
    const size_t nn = (size_t)n * (size_t)n;
    linear_par *P = params;
    P->n = n;
    P->M = (double *)(P + 1);
    P->K = P->M + nn;
    memcpy(P->M, par, sizeof(double) * 2 * nn);
    double *L = P->K + nn;   /* Cholesky check of M */
    memcpy(L, P->M, sizeof(double) * nn);
    if (sym_cholesky(n, L)) return SYM_EMASS;
    return SYM_OK;
}

/* 1 <= n <= SYM_MAX_DOF; the block holds M, K and the factor (3 n^2 doubles) */
SYM_BUILTIN_MAKE(sym_sys_linear,
                 .n_min = 1, .n_max = SYM_MAX_DOF, .npar = 2 * (size_t)n * (size_t)n,
                 .check = linear_check, .fill = linear_fill,
                 .bytes = sizeof(linear_par) + 3 * (size_t)n * (size_t)n * sizeof(double),
                 .eval = linear_eval, .flags = SYM_SYS_CONSTANT_MASS)
