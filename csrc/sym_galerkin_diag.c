/*
 * sym_galerkin_diag.c -- diagnostics of the Galerkin engine: the exact
 * tangent map of a step and the Newton system at given increments (the
 * formulas of sym_galerkin.c).
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <stdlib.h>
#include <string.h>

/* R_q = dR/dq at fixed increments (nu x n): moving q moves every node, so
 *   dR_a/dq = sum_b dR_a/dQ_b = sum_i b_i [ D_ia A_i + h B_ia (H_i - K_i) ]
 * (rows of B sum to 1, rows of D to 0). */
static void tangent_rq(const sym_gwork *g, double h, double *Rq)
{
    const int n = g->n, s = g->tab->s, r = g->tab->r;
    const size_t nn = (size_t)n * (size_t)n;
    memset(Rq, 0, sizeof(double) * (size_t)g->nu * n);
    for (int i = 0; i < r; i++) {
        const double *A = g->Ap + i * nn, *H = g->Hp + i * nn, *K = g->Kp + i * nn;
        for (int a = 0; a <= s - 2; a++) {
            const double cA = g->tab->b[i] * g->tab->D[i][a];
            const double cH = g->tab->b[i] * h * g->tab->B[i][a];
            double *Ra = Rq + (size_t)a * n * n;
            for (int c = 0; c < n; c++)
                for (int d = 0; d < n; d++)
                    Ra[c * n + d] += cA * A[c * n + d] + cH * (H[c * n + d] - K[c * n + d]);
        }
    }
}

/* Component c of dp1 = h sum_i b_i [ (H_i - K_i) dq_i + A_i^T dg_i ] with
 * dq_i = dq + sum_a B_ia dX_a, dg_i = sum_a D_ia dX_a / h. */
static double tangent_dp(const sym_gwork *g, double h, int c, const double *dq, const double *dX)
{
    const int n = g->n, s = g->tab->s;
    const size_t nn = (size_t)n * (size_t)n;
    double acc = 0.0;
    for (int i = 0; i < g->tab->r; i++) {
        const double *Ai = g->Ap + i * nn;
        const double *Hc = g->Hp + i * nn + c * n, *Kc = g->Kp + i * nn + c * n;
        double sum = 0.0;
        for (int d = 0; d < n; d++) {
            double dqd = dq[d], dgd = 0.0;
            for (int a = 1; a < s; a++) {
                dqd += g->tab->B[i][a] * dX[(size_t)(a - 1) * n + d];
                dgd += g->tab->D[i][a] * dX[(size_t)(a - 1) * n + d];
            }
            sum += (Hc[d] - Kc[d]) * dqd + Ai[d * n + c] * dgd / h;
        }
        acc += g->tab->b[i] * sum;
    }
    return acc;
}

/*
 * Tangent map of a converged step (implicit function theorem): with R_q as
 * above and dR_0/dp = I, dX = -J^{-1}(R_q dq + R_p dp), dq1 = dq + dX_{s-1},
 * dp1 = dp + (tangent_dp).  Column `col` of D is the image of the unit
 * perturbation (dq, dp) = e_col.
 */
int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h,
                         double *q1, double *p1, double *D, sym_step_info *info)
{
    sym_gwork *g = (sym_gwork *)w;
    const int n = g->n, s = g->tab->s, nu = g->nu, m = 2 * n;
    if (g->con) return SYM_ENOTCONSTRAINED;
    int st = sym_galerkin_step(w, q, p, h, q1, p1, NULL, info);
    if (st) return st;
    /* Full evaluation of every point at the converged increments (the
     * left node needs H and K here, unlike in Newton). */
    g->k.form_points(g, q, h);
    const unsigned all = SYM_NEED_M | SYM_NEED_A | SYM_NEED_H | SYM_NEED_DV | SYM_NEED_D2V;
    for (int i = 0; i < g->tab->r; i++) {
        st = sym_galerkin_eval_point(g, i, all);
        if (st) return st;
    }
    const unsigned fall = SYM_FORCE_F | SYM_FORCE_DQ | SYM_FORCE_DV;
    if (g->base.force && (st = sym_gforce_points(g, h, fall, 1))) return st;
    g->newton.lu_valid = 0;
    st = g->k.jacobian(g, h);
    if (!st && g->base.force) sym_gforce_jacobian(g, h);
    if (!st) {
        g->base.counts.factorizations++;
        st = g->lu_factor(nu, g->J, g->piv, g->lu_work);
    }
    if (st) return st;
    double *Rq = malloc(sizeof(double) * ((size_t)nu * n + (size_t)nu + (size_t)n));
    if (!Rq) return SYM_ENOMEM;
    double *dX = Rq + (size_t)nu * n, *dq = dX + nu;
    tangent_rq(g, h, Rq);
    if (g->base.force) sym_gforce_tangent_rq(g, h, Rq);
    for (int col = 0; col < m; col++) {
        for (int k = 0; k < n; k++) dq[k] = (col == k) ? 1.0 : 0.0;
        for (int k = 0; k < nu; k++) {
            double v = (col < n) ? Rq[(size_t)k * n + col] : 0.0;
            if (col >= n && k == col - n) v += 1.0;    /* R_0 = p + ... */
            dX[k] = -v;
        }
        g->lu_solve(nu, g->J, g->piv, dX);
        for (int k = 0; k < n; k++)
            D[(size_t)k * m + col] = dq[k] + dX[(size_t)(s - 2) * n + k];
        for (int c = 0; c < n; c++)
            D[(size_t)(n + c) * m + col] =
                ((col == n + c) ? 1.0 : 0.0) + h * tangent_dp(g, h, c, dq, dX) +
                (g->base.force ? sym_gforce_tangent_dp(g, h, c, dq, dX) : 0.0);
    }
    free(Rq);
    return SYM_OK;
}

int sym_galerkin_newton_system(sym_work *w, const double *q, const double *p, double h,
                               const double *X, double *R, double *J)
{
    sym_gwork *g = (sym_gwork *)w;
    /* the Newton system's size: (s-1) n, or (s-1)(n + m) constrained */
    const size_t nu = (size_t)g->newton.nu;
    double rnorm, rscale;
    int st = SYM_OK;
    g->prev_valid = 0;
    g->newton.lu_valid = 0;
    if (g->left_point >= 0) st = sym_galerkin_left_cache(g, q);
    if (st) return st;
    g->q = q;
    g->p = p;
    g->h = h;
    if (g->con && (st = sym_gcon_start(g))) return st;
    memcpy(g->X, X, sizeof(double) * nu);
    g->k.form_points(g, q, h);
    st = sym_galerkin_eval_points(g, g->need_full);
    if (!st && g->base.force)
        st = sym_gforce_points(g, h, SYM_FORCE_F | SYM_FORCE_DQ | SYM_FORCE_DV, 0);
    if (st) return st;
    rscale = g->k.residual(g, p, h, &rnorm);
    if (g->con && (st = sym_gcon_residual(g, &rnorm, &rscale))) return st;
    st = g->k.jacobian(g, h);
    if (!st && g->base.force) sym_gforce_jacobian(g, h);
    if (!st && g->con) st = sym_gcon_jacobian(g);
    if (R) memcpy(R, g->R, sizeof(double) * nu);
    if (J) memcpy(J, g->con ? sym_gcon_matrix(g) : g->J, sizeof(double) * nu * nu);
    return st;
}
