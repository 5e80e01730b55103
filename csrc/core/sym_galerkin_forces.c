/*
 * sym_galerkin_forces.c -- the force terms of the Galerkin engine: the
 * discrete Lagrange-d'Alembert principle (Marsden & West 2001, Section 3.2;
 * Kane, Marsden, Ortiz & West 2000 for the midpoint/Newmark case;
 * Ober-Bloebaum, Junge & Marsden 2011 for forced Galerkin schemes).
 *
 * With a generalized force F(t, q, qdot), the discrete action of a step is
 * completed by the virtual work of F evaluated with the scheme's own
 * interpolating polynomial and quadrature,
 *
 *   sum_a F_d,a . delta Q_a,   F_d,a = h sum_i b_i B_ia F_i,
 *   F_i = F(t_j + x_i h, q_i, g_i),   q_i = sum_a B_ia Q_a,  g_i = sum_a D_ia Q_a / h,
 *
 * and delta sum_j L_d + sum_j sum_a F_d,a . delta Q_a = 0 for all variations
 * fixing the ends gives the forced discrete Euler-Lagrange equations: those
 * of sym_galerkin.c with the point forces f_i = 1/2 A_i^T g_i - grad V_i
 * replaced by f_i + F_i,
 *
 *   R_0 = p_j + sum_i b_i [ D_i0 P_i + h B_i0 (f_i + F_i) ] = 0,
 *   R_a = sum_i b_i [ D_ia P_i + h B_ia (f_i + F_i) ] = 0    (0 < a < s-1),
 *   p_{j+1} = p_j + h sum_i b_i (f_i + F_i)   (difference form: the sum of
 *             all the equations, since the rows of D sum to 0 and those of
 *             B to 1; the discrete forced Legendre transform
 *             p_{j+1} = dL_d/dQ_{s-1} + F_d,{s-1} at the root).
 *
 * For a cyclic coordinate c the conservative part f_{i,c} vanishes, so
 * p_{j+1,c} - p_{j,c} = h sum_i b_i F_{i,c}: the discrete momentum balance,
 * exact in floating point as well (the increment is computed as it is
 * reported in the impulse).  The Newton matrix gains, since q_i moves with
 * B_ib and g_i with D_ib / h,
 *
 *   dR_a/dQ_b += sum_i b_i [ h B_ia B_ib dF/dq_i + B_ia D_ib dF/dqdot_i ]
 *
 * (the slots of h B B (H - K) and B D A^T of the unforced matrix).  With
 * the Lobatto quadrature at the nodes the forced scheme is the Lobatto
 * IIIA-IIIB partitioned Runge-Kutta method applied to qdot = M^-1 p,
 * pdot = -dH/dq + F, so the order 2s - 2 is kept for smooth forces; the
 * midpoint rule keeps order 2 (measured: tests/model/test_forces.py).
 *
 * The discrete work of the forces over the step, with the same quadrature,
 *
 *   W_j = h sum_i b_i F_i . g_i,
 *
 * accumulates to the work that makes energy - work the conserved quantity
 * of the forced run (to the order of the scheme); the impulse
 * I_j = h sum_i b_i F_i is what p changes by along a cyclic coordinate.
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <string.h>

/* F (need SYM_FORCE_F) or its Jacobians (SYM_FORCE_DQ | SYM_FORCE_DV) at
 * every point (t_j + x_i h, q_i, g_i) of the current iterate.  dF/dq is not
 * needed at a point that coincides with the left node (it does not move)
 * unless `all` is set (the tangent map moves q_j too). */
int sym_gforce_points(sym_gwork *g, double h, unsigned need, int all)
{
    sym_fwork *fw = g->base.force;
    const int n = g->n, r = g->tab->r;
    const size_t nn = (size_t)n * (size_t)n;
    const double *x = g->base.method->table->x;
    for (int i = 0; i < r; i++) {
        unsigned nd = need;
        if (i == g->left_point && !all) nd &= ~(unsigned)SYM_FORCE_DQ;
        const int st = sym_force_eval(fw, g->base.t + x[i] * h, g->base.k, i, g->Qp + (size_t)i * n,
                                      g->Gp + (size_t)i * n, nd, fw->F + (size_t)i * n,
                                      fw->Fq + i * nn, fw->Fv + i * nn);
        if (st) return st;
    }
    return SYM_OK;
}

/* J_ab += sum_i b_i [ h B_ia B_ib Fq_i + B_ia D_ib Fv_i ],
 * a = 0..s-2 (rows), b = 1..s-1 (unknowns). */
void sym_gforce_jacobian(sym_gwork *g, double h)
{
    const sym_fwork *fw = g->base.force;
    const sym_gtab *t = g->tab;
    const int n = g->n, s = t->s, r = t->r, nu = g->nu;
    const size_t nn = (size_t)n * (size_t)n;
    const int wq = (fw->jac & SYM_FORCE_DQ) != 0, wv = (fw->jac & SYM_FORCE_DV) != 0;
    for (int i = 0; i < r; i++) {
        const double *Fq = fw->Fq + i * nn, *Fv = fw->Fv + i * nn;
        for (int a = 0; a <= s - 2; a++) {
            if (t->B[i][a] == 0.0) continue;
            for (int b = 1; b <= s - 1; b++) {
                const double cq = wq && i != g->left_point ? h * t->b[i] * t->B[i][a] * t->B[i][b]
                                                           : 0.0;
                const double cv = wv ? t->b[i] * t->B[i][a] * t->D[i][b] : 0.0;
                if (cq == 0.0 && cv == 0.0) continue;
                double *Jb = g->J + (size_t)a * n * nu + (size_t)(b - 1) * n;
                for (int c = 0; c < n; c++)
                    for (int d = 0; d < n; d++)
                        Jb[(size_t)c * nu + d] += cq * Fq[c * n + d] + cv * Fv[c * n + d];
            }
        }
    }
}

/* After a final Newton update dX (the points were evaluated before it):
 * F_i and f_i += Fq_i dq_i + Fv_i dg_i, dq_i = sum_a B_ia dX_a,
 * dg_i = sum_a D_ia dX_a / h (first order, as sym_galerkin.c does for the
 * conservative part; the Jacobians are those of the last factorisation). */
void sym_gforce_correct(sym_gwork *g, double h)
{
    sym_fwork *fw = g->base.force;
    const sym_gtab *t = g->tab;
    const int n = g->n, s = t->s, r = t->r;
    const size_t nn = (size_t)n * (size_t)n;
    double *dq = fw->fp, *dg = fw->fm;
    for (int i = 0; i < r; i++) {
        for (int k = 0; k < n; k++) {
            double vq = 0.0, vg = 0.0;
            for (int a = 1; a < s; a++) {
                const double d = g->dX[(size_t)(a - 1) * n + k];
                vq += t->B[i][a] * d;
                vg += t->D[i][a] * d;
            }
            dq[k] = vq;
            dg[k] = vg / h;
        }
        const double *Fq = fw->Fq + i * nn, *Fv = fw->Fv + i * nn;
        const int moves = i != g->left_point && (fw->jac & SYM_FORCE_DQ);
        const int vel = (fw->jac & SYM_FORCE_DV) != 0;
        for (int c = 0; c < n; c++) {
            double v = 0.0;
            for (int k = 0; k < n; k++) {
                if (moves) v += Fq[c * n + k] * dq[k];
                if (vel) v += Fv[c * n + k] * dg[k];
            }
            fw->F[(size_t)i * n + c] += v;
            g->f[(size_t)i * n + c] += v;
        }
    }
}

/* The work W = h sum_i b_i F_i . g_i and impulse I = h sum_i b_i F_i of the
 * accepted step (g_i from the final increments). */
void sym_gforce_work(sym_gwork *g, double h)
{
    sym_fwork *fw = g->base.force;
    const sym_gtab *t = g->tab;
    const int n = g->n, s = t->s, r = t->r;
    double work = 0.0;
    memset(fw->impulse, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < r; i++) {
        const double *F = fw->F + (size_t)i * n;
        double dot = 0.0;
        for (int k = 0; k < n; k++) {
            double v = 0.0;
            for (int a = 1; a < s; a++) v += t->D[i][a] * g->X[(size_t)(a - 1) * n + k];
            dot += F[k] * (v / h);
            fw->impulse[k] += t->b[i] * F[k];
        }
        work += t->b[i] * dot;
        fw->pw_x[i] = g->base.method->table->x[i];
        fw->pw_b[i] = t->b[i];
        fw->pw_P[i] = dot;
        memcpy(fw->pw_F + (size_t)i * n, F, sizeof(double) * (size_t)n);
    }
    for (int k = 0; k < n; k++) fw->impulse[k] *= h;
    fw->work = h * work;
}

/* The tangent map's force terms (sym_galerkin_jac.c): R_q (nu x n) +=
 * h sum_i b_i B_ia Fq_i (moving q moves every point), and the momentum row
 * P (n x (n + nu)) of dp1 += h sum_i b_i [ Fq_i dq_i + Fv_i dg_i ] with
 * dq_i = dq + sum_a B_ia dX_a, dg_i = sum_a D_ia dX_a / h:
 *   P_q += h sum_i b_i Fq_i,   P_a += sum_i b_i [ h B_ia Fq_i + D_ia Fv_i ]. */
void sym_gforce_tangent(const sym_gwork *g, double h, double *Rq, double *P)
{
    const sym_fwork *fw = g->base.force;
    const sym_gtab *t = g->tab;
    const int n = g->n, s = t->s, r = t->r, w = n + g->nu;
    const size_t nn = (size_t)n * (size_t)n;
    for (int i = 0; i < r; i++) {
        const double *Fq = fw->Fq + i * nn, *Fv = fw->Fv + i * nn;
        for (int a = 0; a <= s - 2; a++) {
            const double c = h * t->b[i] * t->B[i][a];
            if (c == 0.0) continue;
            double *Ra = Rq + (size_t)a * nn;
            for (size_t e = 0; e < nn; e++) Ra[e] += c * Fq[e];
        }
        for (int c = 0; c < n; c++)
            for (int d = 0; d < n; d++) {
                double *row = P + (size_t)c * w;
                const double fq = Fq[c * n + d], fv = Fv[c * n + d];
                row[d] += h * t->b[i] * fq;
                for (int a = 1; a < s; a++)
                    row[n + (a - 1) * n + d] += t->b[i] * (h * t->B[i][a] * fq + t->D[i][a] * fv);
            }
    }
}

/* The step equations' derivative along a variation of the held force
 * (column `col` of V, 2n + ublocks n rows by k, the u rows after (dq, dp)):
 * a value u_i at point i enters block a as h b_i B_ia u_i and the momentum
 * p1 = p + h sum_i b_i (f_i + F_i) as h b_i u_i, so
 *   Ru_a = h sum_i b_i B_ia du_i  (a = 0..s-2, into Ru: (s-1) n),
 *   pu   = h sum_i b_i du_i       (n),
 * with du_i = du for a force held over the step (ublocks 1) and du_i the
 * point's own variation for ublocks = r. */
void sym_gforce_du(const sym_gwork *g, double h, int ublocks, const double *V, int k, int col,
                   double *Ru, double *pu)
{
    const sym_gtab *t = g->tab;
    const int n = g->n, s = t->s, r = t->r;
    memset(Ru, 0, sizeof(double) * (size_t)(s - 1) * (size_t)n);
    memset(pu, 0, sizeof(double) * (size_t)n);
    for (int i = 0; i < r; i++) {
        const double *du = V + (size_t)(2 * n + (ublocks > 1 ? i * n : 0)) * (size_t)k + col;
        const double hb = h * t->b[i];
        for (int d = 0; d < n; d++) {
            const double v = hb * du[(size_t)d * k];
            pu[d] += v;
            for (int a = 0; a <= s - 2; a++) Ru[(size_t)a * n + d] += t->B[i][a] * v;
        }
    }
}
