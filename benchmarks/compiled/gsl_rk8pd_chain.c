/*
 * GSL's adaptive explicit Runge-Kutta Prince-Dormand 8(9) ("rk8pd") on the
 * planar n-link chain of point masses m_k on massless rods l_k (absolute
 * angles q_k from the downward vertical), written as the Euler-Lagrange
 * equations solved for the accelerations at every right-hand-side call:
 *
 *     M(q) qdd = r(q, qd),   M_ij = a_ij cos(q_i - q_j),   a_ij = l_i l_j mu_max(i,j),
 *     r_i = -sum_j a_ij sin(q_i - q_j) qd_j^2 - g mu_i l_i sin q_i,
 *
 * mu_i = sum_{k >= i} m_k.  (From L = 1/2 qd^T M qd + g sum_i mu_i l_i cos q_i:
 * d/dt (M qd)_i - dL/dq_i gives sum_j M_ij qdd_j + sum_j a_ij sin(q_i - q_j) qd_j^2
 * + g mu_i l_i sin q_i = 0.)  M is assembled from n sines and cosines
 * (cos(q_i - q_j) = c_i c_j + s_i s_j) and factorised by LU with partial
 * pivoting (n^3/3 multiply-adds), then solved by forward and back substitution.
 *
 * The compiled explicit reference with a general dense mass matrix for
 * benchmarks/run.py (section 10) and benchmarks/chain_baselines.py.  Usage:
 *     gsl_rk8pd_chain T tol repeats [notrack] [counts]  < params
 *     gsl_rk8pd_chain rhs  < params      (prints f(y(0)): qd, then qdd)
 * params (whitespace separated): n, g, m_1..m_n, l_1..l_n, q_1(0)..q_n(0), qd_1(0)..qd_n(0).
 * Prints one CSV line: T,tol,steps,seconds_per_run,e_H,y_1..y_2n (state at T)
 * where e_H = max over accepted steps of |H - H0|/|H0| (an untimed pass; skipped
 * with `notrack`, e_H then nan) and seconds_per_run is the minimum over
 * `repeats` timed runs (no H evaluation inside the timed runs).  With `counts`,
 * two more fields at the end: the accepted and the rejected (step size
 * decreased and retried) steps of the last run, from GSL's evolve object
 * (count, failed_steps).
 */
#define _POSIX_C_SOURCE 199309L
#include "gsl_chain.h"

typedef struct {
    int n;
    double g;
    double *m, *l, *mu, *y0;      /* mu_i = sum_{k>=i} m_k; y0 = (q(0), qd(0)) */
    double *s, *c, *M;            /* workspace: sin q, cos q, M (n x n) */
    int *piv;
} chain_t;

/* In-place LU factorisation with partial pivoting of the n x n row-major A,
 * then the solution of A x = b in b.  Returns -1 on a zero pivot. */
static int lu_solve(int n, double *A, int *piv, double *b)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(A[i * n + k]) > fabs(A[p * n + k])) p = i;
        piv[k] = p;
        if (A[p * n + k] == 0.0) return -1;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = A[k * n + j]; A[k * n + j] = A[p * n + j]; A[p * n + j] = t;
            }
        for (int i = k + 1; i < n; i++) {
            double f = (A[i * n + k] /= A[k * n + k]);
            for (int j = k + 1; j < n; j++) A[i * n + j] -= f * A[k * n + j];
        }
    }
    for (int k = 0; k < n; k++) {                 /* b <- P b, then L y = b */
        double t = b[k]; b[k] = b[piv[k]]; b[piv[k]] = t;
    }
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) b[i] -= A[i * n + j] * b[j];
    for (int i = n - 1; i >= 0; i--) {            /* U x = y */
        for (int j = i + 1; j < n; j++) b[i] -= A[i * n + j] * b[j];
        b[i] /= A[i * n + i];
    }
    return 0;
}

/* sin q, cos q and M(q) into the workspace. */
static void assemble(chain_t *C, const double *q)
{
    const int n = C->n;
    for (int i = 0; i < n; i++) { C->s[i] = sin(q[i]); C->c[i] = cos(q[i]); }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int k = i > j ? i : j;
            C->M[i * n + j] = C->l[i] * C->l[j] * C->mu[k] * (C->c[i] * C->c[j] + C->s[i] * C->s[j]);
        }
}

static int rhs(double t, const double y[], double f[], void *vp)
{
    (void)t;
    chain_t *C = vp;
    const int n = C->n;
    const double *q = y, *qd = y + n;
    assemble(C, q);
    for (int i = 0; i < n; i++) {
        double acc = -C->g * C->mu[i] * C->l[i] * C->s[i];
        for (int j = 0; j < n; j++) {
            int k = i > j ? i : j;
            acc -= C->l[i] * C->l[j] * C->mu[k] * (C->s[i] * C->c[j] - C->c[i] * C->s[j]) * qd[j] * qd[j];
        }
        f[n + i] = acc;
        f[i] = qd[i];
    }
    return lu_solve(n, C->M, C->piv, f + n) == 0 ? GSL_SUCCESS : GSL_EBADFUNC;
}

/* H = 1/2 qd^T M qd - g sum_i mu_i l_i cos q_i */
static double energy(void *vp, const double y[])
{
    chain_t *C = vp;
    const int n = C->n;
    assemble(C, y);
    double T = 0, V = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) T += 0.5 * y[n + i] * C->M[i * n + j] * y[n + j];
        V -= C->g * C->mu[i] * C->l[i] * C->c[i];
    }
    return T + V;
}

static int read_params(chain_t *C)
{
    if (scanf("%d %lf", &C->n, &C->g) != 2 || C->n < 1 || C->n > 4096) return -1;
    const int n = C->n;
    double *block = calloc((size_t)n * (n + 7), sizeof(double));
    C->piv = calloc((size_t)n, sizeof(int));
    C->m = block;                 /* owner of the block: freed by the caller in every case */
    if (!block || !C->piv) return -1;
    C->l = block + n; C->mu = block + 2 * n; C->y0 = block + 3 * n;
    C->s = block + 5 * n; C->c = block + 6 * n; C->M = block + 7 * n;
    if (chain_read_values(n, C->m, C->l, C->y0) != 0) return -1;
    for (int i = n - 1; i >= 0; i--) C->mu[i] = C->m[i] + (i + 1 < n ? C->mu[i + 1] : 0.0);
    return 0;
}

/* chain_main's reader: read_params, then n and y0 */
static int read_chain(void *vp, int *n, const double **y0)
{
    chain_t *C = vp;
    if (read_params(C) != 0) return -1;
    *n = C->n;
    *y0 = C->y0;
    return 0;
}

int main(int argc, char **argv)
{
    chain_t C = {0};
    const int status = chain_main(argc, argv, &C, read_chain, rhs, energy);
    free(C.m); free(C.piv);
    return status;
}
