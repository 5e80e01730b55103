/*
 * sym_eval.c -- a system's quantities through whichever callback slots it
 * has (eval_batch, eval, or the individual functions), with the central
 * finite-difference fallbacks for the second derivatives, and the energy
 * H(q, p) = 1/2 p^T M(q)^{-1} p + V(q).
 */
#include "symplectic.h"
#include "sym_linalg.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Evaluation through the callback slots                                */
/* ------------------------------------------------------------------ */
size_t sym_eval_scratch_size(const sym_system *sys)
{
    const size_t n = (size_t)sys->n;
    const size_t fd = n * n + 4u * n;
    return fd > sys->scratch_size ? fd : sys->scratch_size;
}

/* Central-difference step for coordinate value x: eps^(1/3) scaled. */
static double fd_step(double x)
{
    const double base = 6.0554544523933395e-06; /* cbrt(DBL_EPSILON) */
    double ax = fabs(x);
    return base * (ax > 1.0 ? ax : 1.0);
}

/* S <- (S + S^T) / 2 */
static void symmetrise(int n, double *S)
{
    for (int c = 0; c < n; c++)
        for (int d = c + 1; d < n; d++) {
            double v = 0.5 * (S[c * n + d] + S[d * n + c]);
            S[c * n + d] = S[d * n + c] = v;
        }
}

/* H(q,g)_{cd} = d/dq_d [ 1/2 (A(q,g)^T g)_c ], central differences of the
 * exact first derivative (error O(delta^2) ~ 1e-10 relative), symmetrised. */
static int fd_mass_hess(const sym_system *sys, const double *q, const double *g,
                        double *H, double *scratch)
{
    const int n = sys->n;
    double *qq = scratch, *A = qq + n, *fp = A + (size_t)n * n, *fm = fp + n;
    memcpy(qq, q, sizeof(double) * (size_t)n);
    for (int d = 0; d < n; d++) {
        const double dl = fd_step(q[d]);
        for (int sgn = 0; sgn < 2; sgn++) {
            double *f = sgn ? fm : fp;
            qq[d] = q[d] + (sgn ? -dl : dl);
            if (sys->mass_dir(qq, g, A, sys->params)) return SYM_ECALLBACK;
            for (int c = 0; c < n; c++) {
                double s = 0.0;
                for (int i = 0; i < n; i++) s += A[i * n + c] * g[i];
                f[c] = 0.5 * s;
            }
        }
        qq[d] = q[d];
        for (int c = 0; c < n; c++) H[c * n + d] = (fp[c] - fm[c]) / (2.0 * dl);
    }
    symmetrise(n, H);
    return SYM_OK;
}

/* hess V by central differences of grad V, symmetrised. */
static int fd_potential_hess(const sym_system *sys, const double *q,
                             double *K, double *scratch)
{
    const int n = sys->n;
    double *qq = scratch, *fp = qq + n, *fm = fp + n;
    memcpy(qq, q, sizeof(double) * (size_t)n);
    for (int d = 0; d < n; d++) {
        const double dl = fd_step(q[d]);
        qq[d] = q[d] + dl;
        if (sys->potential_grad(qq, fp, sys->params)) return SYM_ECALLBACK;
        qq[d] = q[d] - dl;
        if (sys->potential_grad(qq, fm, sys->params)) return SYM_ECALLBACK;
        qq[d] = q[d];
        for (int c = 0; c < n; c++) K[c * n + d] = (fp[c] - fm[c]) / (2.0 * dl);
    }
    symmetrise(n, K);
    return SYM_OK;
}

int sym_eval(const sym_system *sys, const double *q, const double *g,
             unsigned need, const sym_eval_out *out, double *scratch)
{
    const int n = sys->n;
    const size_t nn = (size_t)n * (size_t)n;
    void *par = sys->params;

    if (sys->eval_batch) {
        const unsigned nd = need;
        return sys->eval_batch(1, q, g, &nd, out, par, sys->scratch_size ? scratch : NULL)
                   ? SYM_ECALLBACK : SYM_OK;
    }
    if (sys->eval) {
        const int rc = sys->eval(q, g, need, out, par, sys->scratch_size ? scratch : NULL);
        /* SYM_ECHART (a built-in at a singularity of its coordinates) passes
         * through; any other nonzero return is a callback's failure */
        return rc == SYM_ECHART ? SYM_ECHART : rc ? SYM_ECALLBACK : SYM_OK;
    }

    if (need & SYM_NEED_M)
        if (sys->mass(q, out->M, par)) return SYM_ECALLBACK;
    if (need & SYM_NEED_A) {
        if (sys->mass_dir) {
            if (sys->mass_dir(q, g, out->A, par)) return SYM_ECALLBACK;
        } else {
            memset(out->A, 0, sizeof(double) * nn);
        }
    }
    if (need & SYM_NEED_H) {
        if (sys->mass_hess_dir) {
            if (sys->mass_hess_dir(q, g, out->H, par)) return SYM_ECALLBACK;
        } else if (sys->mass_dir) {
            int st = fd_mass_hess(sys, q, g, out->H, scratch);
            if (st) return st;
        } else {
            memset(out->H, 0, sizeof(double) * nn);
        }
    }
    if (need & SYM_NEED_V) {
        if (!sys->potential) return SYM_EINVAL;
        if (sys->potential(q, out->V, par)) return SYM_ECALLBACK;
    }
    if (need & SYM_NEED_DV)
        if (sys->potential_grad(q, out->dV, par)) return SYM_ECALLBACK;
    if (need & SYM_NEED_D2V) {
        if (sys->potential_hess) {
            if (sys->potential_hess(q, out->d2V, par)) return SYM_ECALLBACK;
        } else {
            int st = fd_potential_hess(sys, q, out->d2V, scratch);
            if (st) return st;
        }
    }
    return SYM_OK;
}

int sym_eval_points(const sym_system *sys, int npts, const double *Q,
                    const double *G, const unsigned *need, const sym_eval_out *out,
                    double *scratch)
{
    const size_t n = (size_t)sys->n;
    if (sys->eval_batch)
        return sys->eval_batch(npts, Q, G, need, out, sys->params,
                               sys->scratch_size ? scratch : NULL) ? SYM_ECALLBACK : SYM_OK;
    for (int k = 0; k < npts; k++) {
        const int st = sym_eval(sys, Q + (size_t)k * n, G ? G + (size_t)k * n : NULL, need[k],
                                &out[k], scratch);
        if (st) return st;
    }
    return SYM_OK;
}

size_t sym_energy_scratch_size(const sym_system *sys)
{
    const size_t n = (size_t)sys->n;
    return n * n + n + sym_eval_scratch_size(sys);
}

/* H = 1/2 p^T M^{-1} p + V = 1/2 |L^{-1} p|^2 + V with M = L L^T. */
int sym_energy(const sym_system *sys, const double *q, const double *p,
               double *H, double *scratch)
{
    const int n = sys->n;
    double *M = scratch, *z = M + (size_t)n * n, *rest = z + n;
    double V = 0.0;
    sym_eval_out out = {0};
    out.M = M;
    out.V = &V;
    int st = sym_eval(sys, q, NULL, SYM_NEED_M | SYM_NEED_V, &out, rest);
    if (st) return st;
    st = sym_cholesky(n, M);
    if (st) return st;
    double kin = 0.0;
    for (int i = 0; i < n; i++) {
        double s = p[i];
        for (int k = 0; k < i; k++) s -= M[i * n + k] * z[k];
        z[i] = s / M[i * n + i];
        kin += z[i] * z[i];
    }
    *H = 0.5 * kin + V;
    return isfinite(*H) ? SYM_OK : SYM_ENONFINITE;
}

int sym_symmetric(int n, const double *A, int *i, int *j)
{
    double big = 0.0, worst = 0.0;
    const size_t nn = (size_t)n * (size_t)n;
    for (size_t k = 0; k < nn; k++)
        if (fabs(A[k]) > big) big = fabs(A[k]);
    int wi = -1, wj = -1;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) {
            const double d = fabs(A[(size_t)a * n + b] - A[(size_t)b * n + a]);
            if (d > SYM_SYMMETRY_RTOL * big && d > worst) {
                worst = d;
                wi = a;
                wj = b;
            }
        }
    if (i) *i = wi;
    if (j) *j = wj;
    return wi < 0;
}
