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

/* Column of the step's equations moved by (dq, dp): v = R_q dq + e(dp),
 * where dR_0/dp = I (R_0 = p + ...) and the other blocks do not see p. */
static void tangent_rhs(const sym_gwork *g, const double *Rq, const double *dq,
                        const double *dp, double *v)
{
    const int n = g->n, nu = g->nu;
    for (int i = 0; i < nu; i++) {
        double acc = i < n ? dp[i] : 0.0;
        for (int d = 0; d < n; d++) acc += Rq[(size_t)i * n + d] * dq[d];
        v[i] = -acc;
    }
}

/* The step's Jacobians at its root X (every point evaluated with the second
 * derivatives, the force's Jacobians at every point): the kernel's Newton
 * matrix in g->J (not factorised), and R_q. */
int sym_galerkin_tangent_root(sym_gwork *g, const double *q, double h, double *Rq)
{
    g->k.form_points(g, q, h);
    const unsigned all = SYM_NEED_M | SYM_NEED_A | SYM_NEED_H | SYM_NEED_DV | SYM_NEED_D2V;
    int st = SYM_OK;
    for (int i = 0; i < g->tab->r && !st; i++) st = sym_galerkin_eval_point(g, i, all);
    const unsigned fall = SYM_FORCE_F | SYM_FORCE_DQ | SYM_FORCE_DV;
    if (!st && g->base.force) st = sym_gforce_points(g, h, fall, 1);
    if (!st) st = g->k.jacobian(g, h);
    if (st) return st;
    if (g->base.force) sym_gforce_jacobian(g, h);
    tangent_rq(g, h, Rq);
    if (g->base.force) sym_gforce_tangent_rq(g, h, Rq);
    return SYM_OK;
}

/* dp_c + d(h sum_i b_i f_i)_c along (dq, dX), with the force's term. */
double sym_galerkin_tangent_dp(const sym_gwork *g, double h, int c, double dpc,
                               const double *dq, const double *dX)
{
    return dpc + h * tangent_dp(g, h, c, dq, dX) +
           (g->base.force ? sym_gforce_tangent_dp(g, h, c, dq, dX) : 0.0);
}

/* The unconstrained root's Jacobians, the Newton matrix factorised. */
static int tangent_setup(sym_gwork *g, const double *q, double h, double *Rq)
{
    const int st = sym_galerkin_tangent_root(g, q, h, Rq);
    if (st) return st;
    g->base.counts.factorizations++;
    return g->lu_factor(g->nu, g->J, g->piv, g->lu_work);
}

/*
 * Tangent map of the step just taken (implicit function theorem on the
 * converged step equations R(X; q, p) = 0): with R_q as above,
 *   dX = -J^{-1} (R_q dq + e(dp)),  dq1 = dq + dX_{s-1},
 *   dp1 = dp + (tangent_dp) [+ the force's term],
 * applied to the k columns (dq, dp) of V.  J is the Newton matrix at the
 * root itself (not the chord's, nor Newton's last iterate), so D is exact
 * to the root's accuracy.  The Newton matrix the next step may reuse
 * (chord) is saved and put back; the points' evaluations and the force
 * values are the step's scratch, which the next step recomputes.  A
 * constrained step's is sym_gcon_tangent (sym_constraints_tangent.c).
 */
int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h, int k,
                         const double *V, double *out)
{
    sym_gwork *g = (sym_gwork *)w;
    const int n = g->n, s = g->tab->s, nu = g->nu;
    const size_t nnu = (size_t)nu * (size_t)nu;
    (void)p;
    if (g->con) return sym_gcon_tangent(g, q, p, h, k, V, out);
    double *buf = malloc(sizeof(double) * (nnu + (size_t)nu * n + (size_t)nu + 2 * (size_t)n) +
                         sizeof(int) * (size_t)nu);
    if (!buf) return SYM_ENOMEM;
    double *Jsave = buf, *Rq = Jsave + nnu, *dX = Rq + (size_t)nu * n, *dq = dX + nu,
           *dp = dq + n;
    int *pivsave = (int *)(dp + n);
    memcpy(Jsave, g->J, sizeof(double) * nnu);
    memcpy(pivsave, g->piv, sizeof(int) * (size_t)nu);
    const int st = tangent_setup(g, q, h, Rq);
    for (int col = 0; col < k && !st; col++) {
        for (int d = 0; d < n; d++) {
            dq[d] = V[(size_t)d * k + col];
            dp[d] = V[(size_t)(n + d) * k + col];
        }
        tangent_rhs(g, Rq, dq, dp, dX);
        g->lu_solve(nu, g->J, g->piv, dX);
        for (int d = 0; d < n; d++) out[(size_t)d * k + col] = dq[d] + dX[(size_t)(s - 2) * n + d];
        for (int c = 0; c < n; c++)
            out[(size_t)(n + c) * k + col] = sym_galerkin_tangent_dp(g, h, c, dp[c], dq, dX);
    }
    memcpy(g->J, Jsave, sizeof(double) * nnu);
    memcpy(g->piv, pivsave, sizeof(int) * (size_t)nu);
    free(buf);
    return st;
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
