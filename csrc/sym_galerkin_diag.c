/*
 * sym_galerkin_diag.c -- diagnostics of the Galerkin engine: the exact
 * tangent map of a step and the Newton system at given increments (the
 * formulas of sym_galerkin.c).
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <stdlib.h>
#include <string.h>

/* Minus the column of the step's equations moved by (dq, dp, du):
 * v = -(R_q dq + e(dp) + R_u du), where dR_0/dp = I (R_0 = p + ...) and the
 * other blocks do not see p; Ru = R_u du (sym_gforce_du), NULL: no force
 * variation. */
static void tangent_rhs(const sym_gwork *g, const double *Rq, const double *dq,
                        const double *dp, const double *Ru, double *v)
{
    const int n = g->n, s = g->tab->s;
    for (int a = 0; a <= s - 2; a++) {
        for (int c = 0; c < n; c++) {
            const size_t row = (size_t)a * n + c;
            double acc = a == 0 ? dp[c] : 0.0;
            if (Ru) acc += Ru[row];
            for (int d = 0; d < n; d++) acc += Rq[row * n + d] * dq[d];
            v[row] = -acc;
        }
    }
}

/* The unconstrained root's Jacobians, the Newton matrix factorised. */
static int tangent_setup(sym_gwork *g, const double *q, double h, double *Rq, double *P)
{
    const int st = sym_galerkin_tangent_root(g, q, h, Rq, P);
    if (st) return st;
    g->base.counts.factorizations++;
    return g->lu_factor(g->nu, g->J, g->piv, g->lu_work);
}

/*
 * Tangent map of the step just taken (implicit function theorem on the
 * converged step equations R(X; q, p) = 0): with R_q as above,
 *   dX = -J^{-1} (R_q dq + e(dp) + R_u du),  dq1 = dq + dX_{s-1},
 *   dp1 = dp + h du + P [dq; dX]   (tangent_p, and the force's terms),
 * applied to the k columns (dq, dp) of V, or (dq, dp, du) with ublocks
 * (du: a variation of the force held over the step, or of its values at the
 * r points; p1 = p + h sum_i b_i (f_i + F_i) gives the explicit
 * pu = h sum_i b_i du_i: sym_gforce_du).  J is the Newton
 * matrix at the root itself (not the chord's, nor Newton's last iterate), so D is exact
 * to the root's accuracy.  The Newton matrix the next step may reuse
 * (chord) is saved and put back; the points' evaluations and the force
 * values are the step's scratch, which the next step recomputes.  A
 * constrained step's is sym_gcon_tangent (sym_constraints_tangent.c).
 */
int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h, int k,
                         int ublocks, const double *V, double *out)
{
    sym_gwork *g = (sym_gwork *)w;
    const int n = g->n, s = g->tab->s, nu = g->nu;
    const size_t nnu = (size_t)nu * (size_t)nu;
    (void)p;
    if (g->con) return sym_gcon_tangent(g, q, p, h, k, ublocks, V, out);
    const size_t np = (size_t)n * (size_t)(n + nu), su = (size_t)(s - 1) * n;
    double *buf = malloc(sizeof(double) * (nnu + (size_t)nu * n + np + (size_t)nu + su +
                                           3 * (size_t)n) + sizeof(int) * (size_t)nu);
    if (!buf) return SYM_ENOMEM;
    double *Jsave = buf, *Rq = Jsave + nnu, *P = Rq + (size_t)nu * n, *dX = P + np,
           *dq = dX + nu, *dp = dq + n, *pu = dp + n, *Ru = pu + n;
    int *pivsave = (int *)(Ru + su);
    memcpy(Jsave, g->J, sizeof(double) * nnu);
    memcpy(pivsave, g->piv, sizeof(int) * (size_t)nu);
    const int st = tangent_setup(g, q, h, Rq, P);
    for (int col = 0; col < k && !st; col++) {
        for (int d = 0; d < n; d++) {
            dq[d] = V[(size_t)d * k + col];
            dp[d] = V[(size_t)(n + d) * k + col];
            pu[d] = 0.0;
        }
        if (ublocks) sym_gforce_du(g, h, ublocks, V, k, col, Ru, pu);
        tangent_rhs(g, Rq, dq, dp, ublocks ? Ru : NULL, dX);
        g->lu_solve(nu, g->J, g->piv, dX);
        for (int d = 0; d < n; d++) out[(size_t)d * k + col] = dq[d] + dX[(size_t)(s - 2) * n + d];
        for (int c = 0; c < n; c++)
            out[(size_t)(n + c) * k + col] =
                sym_galerkin_tangent_dp(g, P, c, dp[c] + pu[c], dq, dX);
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
