/*
 * sym_galerkin_jac.c -- the derivatives of a Galerkin step at its root,
 * shared by the tangent of the unconstrained step (sym_galerkin_diag.c) and
 * that of the constrained one (sym_constraints_tangent.c): R_q, the
 * derivative of the step equations with respect to q at fixed increments,
 * and the momentum row P of dp1 (the formulas of sym_galerkin.c and
 * sym_galerkin_forces.c, differentiated); the explicit derivatives in h and
 * t (sym_galerkin_time_rhs), and the states at the force points with their
 * derivatives (sym_galerkin_point_column).
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <math.h>
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

/* The momentum row of the tangent: dp1 = dp + h du + P [dq; dX] with P
 * (n x (n + nu)) from dp1 = h sum_i b_i [ (H_i - K_i) dq_i + A_i^T dg_i ],
 * dq_i = dq + sum_a B_ia dX_a, dg_i = sum_a D_ia dX_a / h:
 *   P_q = h sum_i b_i (H_i - K_i),
 *   P_a = sum_i b_i [ h B_ia (H_i - K_i) + D_ia A_i^T ]   (a = 1..s-1). */
static void tangent_p(const sym_gwork *g, double h, double *P)
{
    const int n = g->n, s = g->tab->s, w = n + g->nu;
    const size_t nn = (size_t)n * (size_t)n;
    memset(P, 0, sizeof(double) * (size_t)n * w);
    for (int i = 0; i < g->tab->r; i++) {
        const double *A = g->Ap + i * nn, *H = g->Hp + i * nn, *K = g->Kp + i * nn;
        const double bi = g->tab->b[i];
        for (int c = 0; c < n; c++)
            for (int d = 0; d < n; d++) {
                const double hk = H[c * n + d] - K[c * n + d], at = A[d * n + c];
                double *row = P + (size_t)c * w;
                row[d] += bi * h * hk;
                for (int a = 1; a < s; a++)
                    row[n + (a - 1) * n + d] += bi * (h * g->tab->B[i][a] * hk +
                                                      g->tab->D[i][a] * at);
            }
    }
}

/* The step's Jacobians at its root X (every point evaluated with the second
 * derivatives, the force's Jacobians at every point): the kernel's Newton
 * matrix in g->J (not factorised), R_q and the momentum row P. */
int sym_galerkin_tangent_root(sym_gwork *g, const double *q, double h, double *Rq, double *P)
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
    tangent_p(g, h, P);
    if (g->base.force) sym_gforce_tangent(g, h, Rq, P);
    return SYM_OK;
}

/* dp_c + d(h sum_i b_i f_i)_c along (dq, dX), the force's term included:
 * dpc + row c of P times [dq; dX]. */
double sym_galerkin_tangent_dp(const sym_gwork *g, const double *P, int c, double dpc,
                               const double *dq, const double *dX)
{
    const int n = g->n, nu = g->nu;
    const double *row = P + (size_t)c * (size_t)(n + nu);
    double v = dpc;
    for (int d = 0; d < n; d++) v += row[d] * dq[d];
    for (int e = 0; e < nu; e++) v += row[n + e] * dX[e];
    return v;
}

/* The states at the r quadrature points and their derivative along one
 * direction: q_i = q + sum_{a>=1} B_ia X_a, qdot_i = g_i = sum_{a>=1} D_ia
 * X_a / h (sym_gk_general.h; the constrained step's nodes are the same,
 * sym_constraints.c), so dq_i = dq + sum_a B_ia dX_a, dqdot_i = sum_a D_ia
 * dX_a / h - g_i dh / h (dh: a variation of the step, 0 for any other);
 * written into column col of row (i, c) (q_i[c]) and (i, n + c) (qdot_i[c])
 * of pts, rows of stride ld.  With dq = q, dX = X and dh = 0 it gives the
 * states themselves. */
void sym_galerkin_point_column(const sym_gwork *g, const double *dq, const double *dX,
                               double dh, double h, double *pts, int col, int ld)
{
    const int n = g->n, s = g->tab->s, r = g->tab->r;
    for (int i = 0; i < r; i++)
        for (int c = 0; c < n; c++) {
            double vb = dq ? dq[c] : 0.0, vd = dh != 0.0 ? -g->Gp[(size_t)i * n + c] * dh : 0.0;
            for (int a = 1; a < s; a++) {
                vb += g->tab->B[i][a] * dX[(size_t)(a - 1) * n + c];
                vd += g->tab->D[i][a] * dX[(size_t)(a - 1) * n + c];
            }
            pts[((size_t)i * 2 * n + c) * ld + col] = vb;
            pts[((size_t)i * 2 * n + n + c) * ld + col] = vd / h;
        }
}

/* The explicit terms of sym_galerkin_time_tangent (sym_galerkin_diag.c,
 * whose header comment has the formulas), shared with the constrained
 * step's sym_gcon_time_tangent. */
int sym_galerkin_time_rhs(sym_gwork *g, double h, double *Ft, double *dh, double *dt,
                          double *ph, double *pt)
{
    const int n = g->n, s = g->tab->s, r = g->tab->r, nu = g->nu;
    const size_t nn = (size_t)n * (size_t)n;
    const double *x = g->base.method->table->x;
    sym_fwork *fw = g->base.force;
    int st = SYM_OK;
    memset(Ft, 0, sizeof(double) * (size_t)r * n);
    memset(dh, 0, sizeof(double) * (size_t)nu);
    memset(dt, 0, sizeof(double) * (size_t)nu);
    memset(ph, 0, sizeof(double) * (size_t)n);
    memset(pt, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < r && !st && fw; i++) {     /* dF_i/dt, central differences */
        const double ti = g->base.t + x[i] * h, e = 6.0554544523933395e-06 * (fabs(ti) + 1.0);
        const double *qi = g->Qp + (size_t)i * n, *gi = g->Gp + (size_t)i * n;
        st = sym_force_eval(fw, ti + e, g->base.k, i, qi, gi, SYM_FORCE_F, fw->fp, NULL, NULL);
        if (!st) st = sym_force_eval(fw, ti - e, g->base.k, i, qi, gi, SYM_FORCE_F, fw->fm, NULL,
                                     NULL);
        for (int c = 0; c < n && !st; c++)
            Ft[(size_t)i * n + c] = (fw->fp[c] - fw->fm[c]) / (2.0 * e);
    }
    for (int i = 0; i < r && !st; i++) {
        const double *M = g->Mp + i * nn, *A = g->Ap + i * nn, *gi = g->Gp + (size_t)i * n;
        const double *dV = g->dVp + (size_t)i * n, bi = g->tab->b[i];
        for (int c = 0; c < n; c++) {
            double Pc = 0.0, kap = 0.0, fvg = 0.0;
            for (int k = 0; k < n; k++) {
                Pc += M[c * n + k] * gi[k];
                kap += 0.5 * A[k * n + c] * gi[k];
                if (fw) fvg += fw->Fv[i * nn + c * n + k] * gi[k];
            }
            const double Fc = fw ? fw->F[(size_t)i * n + c] : 0.0, ftc = Ft[(size_t)i * n + c];
            /* h B_ia times this is row a's explicit h-term besides -D_ia P_i / h */
            const double eh = (kap - dV[c] + Fc) - 2.0 * kap + h * x[i] * ftc - fvg;
            ph[c] += bi * eh;
            pt[c] += bi * h * ftc;
            for (int a = 0; a <= s - 2; a++) {
                dh[(size_t)a * n + c] -= bi * (-g->tab->D[i][a] * Pc / h + g->tab->B[i][a] * eh);
                dt[(size_t)a * n + c] -= bi * h * g->tab->B[i][a] * ftc;
            }
        }
    }
    return st;
}
