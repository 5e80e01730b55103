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

/* The unconstrained root's Jacobians, the Newton matrix factorised: on the
 * chain's O(n) path by the elimination over the joints at the root
 * (sym_galerkin_tree.c; its n columns then cost O(n^2) in all, not the LU's
 * O(n^3)), else by LU. */
static int tangent_setup(sym_gwork *g, const double *q, double h, double *Rq, double *P)
{
    const int st = sym_galerkin_tangent_root(g, q, h, Rq, P);
    if (st) return st;
    g->base.counts.factorizations++;
    if (SYM_TREE_ON(g)) {   /* at the root's points, which tangent_root formed */
        sym_gtree_points(g);
        return sym_gtree_factor(g, h);
    }
    return g->lu_factor(g->nu, g->J, g->piv, g->lu_work);
}

/* The factors the next step may reuse (chord) while a tangent uses the
 * workspace's: the dense LU (J, its pivots), or on the O(n) path the
 * per-joint factors (one block from U to the kinetic scratch) and the sign
 * of det J; fac_doubles of them at fac_start, kept aside and put back. */
static size_t fac_doubles(sym_gwork *g)
{
    size_t k = (size_t)g->nu * (size_t)g->nu;
    if (SYM_TREE_ON(g)) (void)sym_gtree_factors(g, &k);
    return k;
}

static double *fac_start(sym_gwork *g)
{
    size_t k;
    return SYM_TREE_ON(g) ? sym_gtree_factors(g, &k) : g->J;
}

/* v <- J^{-1} v with the root's factors of tangent_setup */
static void root_solve(sym_gwork *g, double *v)
{
    if (SYM_TREE_ON(g))
        sym_gtree_solve(g, v);
    else
        g->lu_solve(g->nu, g->J, g->piv, v);
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
/* sym_galerkin_tangent, and with pts (not NULL) the point states and their
 * derivative along the same k columns (columns 0 .. k of each row of stride
 * ld: sym_galerkin_point_tangent) */
static int galerkin_tangent(sym_gwork *g, const double *q, double h, int k, int ublocks,
                            const double *V, double *out, double *pts, int ld)
{
    const int n = g->n, s = g->tab->s, nu = g->nu;
    const size_t nnu = fac_doubles(g);
    double *const fac = fac_start(g);
    const int sign = g->tree.sign;
    const size_t np = (size_t)n * (size_t)(n + nu), su = (size_t)(s - 1) * n;
    double *buf = malloc(sizeof(double) * (nnu + (size_t)nu * n + np + (size_t)nu + su +
                                           3 * (size_t)n) + sizeof(int) * (size_t)nu);
    if (!buf) return SYM_ENOMEM;
    double *Jsave = buf, *Rq = Jsave + nnu, *P = Rq + (size_t)nu * n, *dX = P + np,
           *dq = dX + nu, *dp = dq + n, *pu = dp + n, *Ru = pu + n;
    int *pivsave = (int *)(Ru + su);
    memcpy(Jsave, fac, sizeof(double) * nnu);
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
        root_solve(g, dX);
        if (pts) sym_galerkin_point_column(g, dq, dX, 0.0, h, pts, col + 1, ld);
        for (int d = 0; d < n; d++) out[(size_t)d * k + col] = dq[d] + dX[(size_t)(s - 2) * n + d];
        for (int c = 0; c < n; c++)
            out[(size_t)(n + c) * k + col] =
                sym_galerkin_tangent_dp(g, P, c, dp[c] + pu[c], dq, dX);
    }
    if (pts && !st) sym_galerkin_point_column(g, q, g->X, 0.0, h, pts, 0, ld);
    memcpy(fac, Jsave, sizeof(double) * nnu);
    memcpy(g->piv, pivsave, sizeof(int) * (size_t)nu);
    g->tree.sign = sign;
    free(buf);
    return st;
}

int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h, int k,
                         int ublocks, const double *V, double *out)
{
    sym_gwork *g = (sym_gwork *)w;
    if (g->con) return sym_gcon_tangent(g, q, p, h, k, ublocks, V, out, NULL, 0);
    return galerkin_tangent(g, q, h, k, ublocks, V, out, NULL, 0);
}

int sym_galerkin_point_tangent(sym_work *w, const double *q, const double *p, double h, int k,
                               int ublocks, const double *V, double *out, double *pts, int ld)
{
    sym_gwork *g = (sym_gwork *)w;
    if (g->con) return sym_gcon_tangent(g, q, p, h, k, ublocks, V, out, pts, ld);
    return galerkin_tangent(g, q, h, k, ublocks, V, out, pts, ld);
}

/* The diagnostics' start: no history, the step's (q, p, h), the
 * constraints at q, the unknowns X; the left node's cache where the dense
 * kernels read it (dense: the assembled system, whatever path the steps take) */
static int diag_start(sym_gwork *g, const double *q, const double *p, double h, const double *X,
                      int dense)
{
    int st = SYM_OK;
    g->prev_valid = 0;
    g->newton.lu_valid = 0;
    if (g->left_point >= 0 && (dense || !SYM_TREE_ON(g))) st = sym_galerkin_left_cache(g, q);
    if (st) return st;
    g->q = q;
    g->p = p;
    g->h = h;
    if (g->con && (st = sym_gcon_start(g))) return st;
    memcpy(g->X, X, sizeof(double) * (size_t)g->newton.nu);
    return SYM_OK;
}

int sym_galerkin_newton_system(sym_work *w, const double *q, const double *p, double h,
                               const double *X, double *R, double *J)
{
    sym_gwork *g = (sym_gwork *)w;
    /* the Newton system's size: (s-1) n, or (s-1)(n + m) constrained */
    const size_t nu = (size_t)g->newton.nu;
    double rnorm, rscale;
    int st = diag_start(g, q, p, h, X, 1);
    if (st) return st;
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

/* The residual, direction and sign through the step's own Newton layer
 * (sym_galerkin.c's residual, factor and solve: the O(n) path where the
 * step takes it), at increments X -- the diagnostic of sym_newton_direction. */
int sym_galerkin_newton_direction(sym_work *w, const double *q, const double *p, double h,
                                  const double *X, double *R, double *rnorm, double *b, int *sign)
{
    sym_gwork *g = (sym_gwork *)w;
    const size_t nu = (size_t)g->newton.nu;
    double rscale;
    int st = diag_start(g, q, p, h, X, 0);
    if (!st) st = sym_galerkin_newton_ops.residual(g, rnorm, &rscale);
    if (!st) st = sym_galerkin_newton_ops.factor(g);
    if (st) return st;
    memcpy(R, g->R, sizeof(double) * nu);
    sym_galerkin_newton_ops.solve(g, b);
    *sign = g->con ? 0 : SYM_TREE_ON(g) ? g->tree.sign : sym_lu_det_sign((int)nu, g->J, g->piv);
    return SYM_OK;
}

/*
 * The step's derivative with respect to its size h and its start time t
 * (the duration of a transcription whose duration is free: the nodes t_k =
 * k h move with h).  At fixed (q, p), held inputs and increments X, the
 * points q_i do not move with h while g_i = sum_a D_ia X_a / h does, so
 * P_i = M_i g_i and the kinetic part kappa_i = 1/2 A_i^T g_i of f_i (linear
 * and quadratic in g) scale as 1/h and 1/h^2, and
 *   dR_a/dh = sum_i b_i [ -D_ia P_i / h + B_ia (f_i + F_i) - 2 B_ia kappa_i
 *                         + h B_ia (x_i dF_i/dt - Fv_i g_i / h) ],
 *   dR_a/dt = h sum_i b_i B_ia dF_i/dt,
 * the same rows of the explicit momentum p1 = p + h sum_i b_i (f_i + F_i)
 * summed over a, and dX = -J^{-1} dR (J the Newton matrix at the root),
 * dq1 = dX_{s-1}, dp1 = explicit + P [0; dX] (the momentum row).  dF/dt
 * is a central difference of the force in t (zero for forces that do not
 * depend on t: a held input, damping), the rest exact.  out: 2 x 2n,
 * d(q1, p1)/dh then d(q1, p1)/dt; pts (NULL: not wanted): the same two
 * derivatives of the point states (point_column) in columns 0 and 1 of
 * rows of stride ld.  A constrained step's is sym_gcon_time_tangent
 * (sym_constraints_tangent.c), on the explicit terms of
 * sym_galerkin_time_rhs; leaves the workspace as sym_galerkin_tangent does.
 */
int sym_galerkin_time_tangent(sym_work *w, const double *q, const double *p, double h,
                              double *out, double *pts, int ld)
{
    sym_gwork *g = (sym_gwork *)w;
    const int n = g->n, s = g->tab->s, r = g->tab->r, nu = g->nu;
    (void)p;
    if (g->con) return sym_gcon_time_tangent(g, q, h, out, pts, ld);
    const size_t nnu = fac_doubles(g);
    double *const fac = fac_start(g);
    const int sign = g->tree.sign;
    const size_t np = (size_t)n * (size_t)(n + nu);
    double *buf = malloc(sizeof(double) * (nnu + (size_t)nu * n + np + 2 * (size_t)nu +
                                           (size_t)r * n + 3 * (size_t)n) +
                         sizeof(int) * (size_t)nu);
    if (!buf) return SYM_ENOMEM;
    double *Jsave = buf, *Rq = Jsave + nnu, *P = Rq + (size_t)nu * n, *dh = P + np,
           *dt = dh + nu, *Ft = dt + nu, *ph = Ft + (size_t)r * n, *pt = ph + n, *zero = pt + n;
    int *pivsave = (int *)(zero + n);
    memcpy(Jsave, fac, sizeof(double) * nnu);
    memcpy(pivsave, g->piv, sizeof(int) * (size_t)nu);
    memset(zero, 0, sizeof(double) * (size_t)n);
    int st = tangent_setup(g, q, h, Rq, P);
    if (!st) st = sym_galerkin_time_rhs(g, h, Ft, dh, dt, ph, pt);
    if (!st) {
        root_solve(g, dh);
        root_solve(g, dt);
        if (pts) {
            sym_galerkin_point_column(g, NULL, dh, 1.0, h, pts, 0, ld);
            sym_galerkin_point_column(g, NULL, dt, 0.0, h, pts, 1, ld);
        }
        const size_t m = 2 * (size_t)n;
        for (int d = 0; d < n; d++) {
            out[d] = dh[(size_t)(s - 2) * n + d];
            out[m + d] = dt[(size_t)(s - 2) * n + d];
            out[n + d] = sym_galerkin_tangent_dp(g, P, d, ph[d], zero, dh);
            out[m + n + d] = sym_galerkin_tangent_dp(g, P, d, pt[d], zero, dt);
        }
    }
    memcpy(fac, Jsave, sizeof(double) * nnu);
    memcpy(g->piv, pivsave, sizeof(int) * (size_t)nu);
    g->tree.sign = sign;
    free(buf);
    return st;
}
