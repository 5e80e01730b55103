/*
 * sym_galerkin_stree.c -- the Galerkin step's Newton linear algebra in O(n)
 * for the spatial "tree" built-in (URDF trees of revolute and prismatic
 * joints, sym_sys_tree.c), behind the same points / factor / solve /
 * kinetic energy as the chain's (sym_galerkin_tree.c, whose header has the
 * step's equations and the elimination).  Issue 50's design, its checks and
 * its flop model: benchmarks/prototypes/linear_time_newton/DESIGN.md
 * (sections 1 and 2.1, "spatial").
 *
 * One point (q, g) in O(n) (sym_tree_point): world-frame spatial vectors at
 * the origin, axes S_j, twists V_j = V_p + S_j g_j, subtree momenta h_j,
 *   P_j = S_j . h_j,  f_j = -h_j . a_j + S_j . G_j,  a_j = S_j x V_p,
 * G_j the subtree's gravity wrench (c x g_w, m g_w) (c = sum m x).
 *
 * Its linearisation, per point, in the body variables (x: motion cross,
 * x*: force cross, s x* = -(s x)^T):
 *   forward y_j = (dth_j, dV_j) (12):  dth_j = dth_p + S_j dq_j,
 *     dV_j = dV_p - (S_j g_j) x dth_p + S_j dg_j, i.e. y_j = T_j y_p + u dq + v dg,
 *     T_j = [[1, 0], [-crm(S_j g_j), 1]], u = (S_j, 0), v = (0, S_j);
 *   backward z_j = (dh_j, dc_j) (9), z_j = sum_c z_c + W_j y_j with
 *     W_j y = (dth x* (I V) - I (dth x V) + I dV,  (I dth)_{3..5})
 *     (dc: the linear part of the subtree's d(m x));
 *   outputs dP_j = S_j . dh_j + dth_p . (S_j x* h_j),
 *     df_j = -a_j . dh_j + (g_w x w_j) . dc_j + dth_p . S_j x* (G_j - V_p x* h_j)
 *            + dV_p . (S_j x* h_j).
 * Stacked over the r points (F = 12 r, Bk = 9 r) the Newton system is the
 * tree-structured
 *   Y_j = T_j Y_p + U_j x_j,  Z_j = sum_c Z_c + W_j Y_j,
 *   Aa_j Z_j + Ab_j Y_p + N_j x_j = rhs_j,
 * U_j (F x m): rows (i, th) S_j B_ib, (i, V) S_j D_ib / h (column b - 1);
 * Aa_j (m x Bk): row a, (i, .) b_i D_ia (S_j, 0) + h b_i B_ia (-a_j, g_w x w_j);
 * Ab_j (m x F): row a, (i, .) b_i D_ia (S x* h, 0)
 *              + h b_i B_ia (S x* (G - V_p x* h), S x* h);
 * N_j: a diagonal damping d_j (F = held - d_j g_j) adds
 *   N_ab = -d_j sum_i h b_i B_ia D_ib / h.
 * Elimination leaf to root (children have larger indices, parent(j) < j):
 *   Psi_j = W_j + sum_c Phi_c,  D_j = Aa Psi U + N,  E = Aa Psi T + Ab,
 *   G_j = D_j^{-1} E,  Phi_j = Psi T - (Psi U) G_j;
 * solve: psi_j = sum_c phi_c, t_j = D_j^{-1} (rhs_j - Aa psi_j),
 *   phi_j = (Psi U) t_j + psi_j;  root to leaf x_j = t_j - G_j Y_p,
 *   Y_j = T_j Y_p + U_j x_j.  det J = prod_j det D_j (the branch check's sign).
 * Cost per joint: Psi U and Aa (Psi T) from U's and Aa's structure point by
 * point (U's column b is S_i B_ib, S_i D_ib / h; Aa's row a is b_i D_ia (S_i,
 * 0) + h b_i B_ia (-a_i, g_w x w_i)): Bk (12 r + 2 r m) and 30 F r + 4 m r F
 * flops; Psi T about 60 r Bk; the rank-m update (Psi U) G, 2 m Bk F, leads:
 * about 50 kflop for lobatto5 (F = 60, Bk = 45, m = 4), against the dense
 * LU's (2/3)(m n)^3 for the whole step -- the path wins only on long chains
 * (the crossover: benchmarks/results/spatial_tree_solver.md).
 *
 * The plausibility test's kinetic energy by the articulated-body recursion
 * (sym_tree_kinetic, O(n)).
 */
#include "sym_forces.h"
#include "sym_gwork.h"
#include "sym_sysdef.h"

#include <math.h>
#include <string.h>

#define SM (SYM_MAX_NODES - 1)   /* m, the most unknowns per joint */

/* per joint of the factors: U^T, G (m x F each), Aa, (Psi U)^T (m x Bk
 * each), D^{-1} (m x m), S_j g_ij (6 r) */
static size_t fac_joint(int s, int r)
{
    const size_t m = (size_t)s - 1, F = 12 * (size_t)r, Bk = 9 * (size_t)r;
    return 2 * m * F + 2 * m * Bk + m * m + 6 * (size_t)r;
}

/* doubles of the path for s nodes, r points and n joints: the points'
 * records (r n SYM_TR_SIZE), the passes' scratch, the factors, Psi (Bk F a
 * joint), the solve's psi (Bk) and Y (F) a joint, the kinetic recursion's
 * 50 n, the parents and the "started" marks that the factorisation and the
 * solve each reset (2 n ints) */
double sym_stree_size(int s, int r, int n)
{
    const double dn = n, F = 12.0 * r, Bk = 9.0 * r;
    return dn * r * SYM_TR_SIZE + (double)sym_tree_scratch(n) + dn * (double)fac_joint(s, r) +
           dn * (Bk * F + Bk + F + 50.0) + (double)sym_int_doubles(2 * (size_t)n);
}

void sym_stree_layout(sym_gwork *g, double *buf)
{
    sym_gtree *t = &g->tree;
    const size_t n = (size_t)g->n, r = (size_t)g->tab->r, F = 12 * r, Bk = 9 * r;
    t->srec = buf;
    t->sscr = t->srec + r * n * SYM_TR_SIZE;
    t->sfac = t->sscr + sym_tree_scratch(g->n);
    t->spsi = t->sfac + n * fac_joint(g->tab->s, g->tab->r);
    t->sphi = t->spsi + n * Bk * F;
    t->sY = t->sphi + n * Bk;
    t->skin = t->sY + n * F;
    t->spar = (int *)(t->skin + 50 * n);
    t->sstart = t->spar + n;
}

/* P_i, f_i and grad V_i at every point (Qp, Gp), the bodies' records kept
 * for the factorisation; with a force (sym_gtree_force: held values, a
 * diagonal damping D) F_i = held - D g_i into the force's F and f_i. */
void sym_stree_points(sym_gwork *g)
{
    sym_gtree *t = &g->tree;
    const int n = g->n, r = g->tab->r;
    g->base.counts.evaluations += r;
    for (int i = 0; i < r; i++) {
        const size_t o = (size_t)i * (size_t)n;
        sym_tree_point(g->base.sys, g->Qp + o, g->Gp + o, t->sscr,
                       t->srec + o * SYM_TR_SIZE, g->P + o, g->f + o, g->dVp + o);
        if (g->base.force) {
            double *Fi = g->base.force->F + o, *f = g->f + o;
            const double *gv = g->Gp + o;
            sym_force_held(g->base.force, g->base.k, i, Fi);
            if (t->damped)
                for (int j = 0; j < n; j++) Fi[j] -= t->dd[j] * gv[j];
            for (int j = 0; j < n; j++) f[j] += Fi[j];
        }
    }
}

double sym_stree_kinetic(sym_gwork *g, const double *q, const double *p)
{
    return sym_tree_kinetic(g->base.sys, q, p, g->tree.sscr, g->tree.skin);
}

/* ------------------------------------------------------------------ */
/* Spatial algebra (world frame at O; s = (w, v), f = (n, f))           */
/* ------------------------------------------------------------------ */
SYM_INLINE void c3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* s x t = (w_s x w_t, w_s x v_t + v_s x w_t) */
SYM_INLINE void mx6(const double *s, const double *t, double *o)
{
    double a[3], b[3];
    c3(s, t, o);
    c3(s, t + 3, a);
    c3(s + 3, t, b);
    for (int e = 0; e < 3; e++) o[3 + e] = a[e] + b[e];
}

/* s x* f = (w x n + v x f, w x f) */
SYM_INLINE void fx6(const double *s, const double *f, double *o)
{
    double a[3], b[3];
    c3(s, f, a);
    c3(s + 3, f + 3, b);
    for (int e = 0; e < 3; e++) o[e] = a[e] + b[e];
    c3(s, f + 3, o + 3);
}

/* I s for the packed inertia (m, mx, Ib: xx xy xz yy yz zz about O):
 * (Ib w + mx x v, m v - mx x w) */
SYM_INLINE void iapply(const double *I, const double *s, double *o)
{
    const double *mx = I + 1, *Ib = I + 4, *w = s, *v = s + 3;
    double a[3], b[3];
    c3(mx, v, a);
    c3(mx, w, b);
    o[0] = Ib[0] * w[0] + Ib[1] * w[1] + Ib[2] * w[2] + a[0];
    o[1] = Ib[1] * w[0] + Ib[3] * w[1] + Ib[4] * w[2] + a[1];
    o[2] = Ib[2] * w[0] + Ib[4] * w[1] + Ib[5] * w[2] + a[2];
    for (int e = 0; e < 3; e++) o[3 + e] = I[0] * v[e] - b[e];
}

SYM_INLINE double d6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* y += c x over len entries */
SYM_INLINE void axpy(double *restrict y, double c, const double *restrict x, int len)
{
    for (int e = 0; e < len; e++) y[e] += c * x[e];
}

SYM_INLINE double dot(const double *restrict a, const double *restrict b, int len)
{
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int e = 0;
    for (; e + 4 <= len; e += 4) {
        s0 += a[e] * b[e];
        s1 += a[e + 1] * b[e + 1];
        s2 += a[e + 2] * b[e + 2];
        s3 += a[e + 3] * b[e + 3];
    }
    for (; e < len; e++) s0 += a[e] * b[e];
    return (s0 + s2) + (s1 + s3);
}

/* ------------------------------------------------------------------ */
/* Factorisation and solve                                              */
/* ------------------------------------------------------------------ */
int sym_stree_factor(sym_gwork *g, double h)
{
    sym_gtree *t = &g->tree;
    const sym_gtab *tab = g->tab;
    const int n = g->n, s = tab->s, r = tab->r, m = s - 1, F = 12 * r, Bk = 9 * r;
    const size_t FJ = fac_joint(s, r), BF = (size_t)Bk * (size_t)F;
    const double ih = 1.0 / h, *gw = t->gw;
    sym_lu_factor_fn lu_factor;
    sym_lu_solve_fn lu_solve;
    if (!sym_lu_small_pick(m, &lu_factor, &lu_solve)) return SYM_EINVAL;
    /* the table's weights for this h: Bt_ib = B_i,b+1, Dh_ib = D_i,b+1 / h
     * (U's), Ca_ia = b_i D_ia, Cb_ia = h b_i B_ia (the rows') */
    double Bt[SYM_MAX_NODES][SM], Dh[SYM_MAX_NODES][SM], Ca[SYM_MAX_NODES][SM];
    double Cb[SYM_MAX_NODES][SM];
    for (int i = 0; i < r; i++)
        for (int b = 0; b < m; b++) {
            Bt[i][b] = tab->B[i][b + 1];
            Dh[i][b] = tab->D[i][b + 1] * ih;
            Ca[i][b] = tab->b[i] * tab->D[i][b];
            Cb[i][b] = h * tab->b[i] * tab->B[i][b];
        }
    for (int j = 0; j < n; j++) t->sstart[j] = 0;
    int sign = 1;
    double nf = 0.0;
    for (int j = n - 1; j >= 0; j--) {
        double *UT = t->sfac + (size_t)j * FJ, *G = UT + (size_t)m * F, *Aa = G + (size_t)m * F;
        double *PUT = Aa + (size_t)m * Bk, *Dinv = PUT + (size_t)m * Bk, *Sg = Dinv + m * m;
        double *Psi = t->spsi + (size_t)j * BF;
        const int par = t->spar[j];
        if (!t->sstart[j]) memset(Psi, 0, sizeof(double) * BF);
        double Ab[SM][12 * SYM_MAX_NODES];
        for (int i = 0; i < r; i++) {
            const double *rj = t->srec + ((size_t)i * n + j) * SYM_TR_SIZE;
            const double *S = rj + SYM_TR_S, *I = rj + SYM_TR_I, *V = rj + SYM_TR_V;
            const double *hm = rj + SYM_TR_H, *a = rj + SYM_TR_A, *C = rj + SYM_TR_C;
            const double *Vp = par >= 0 ? t->srec + ((size_t)i * n + par) * SYM_TR_SIZE + SYM_TR_V
                                        : NULL;
            const double gij = g->Gp[(size_t)i * n + j];
            for (int e = 0; e < 6; e++) Sg[6 * i + e] = S[e] * gij;
            /* U^T's rows */
            for (int b = 0; b < m; b++)
                for (int e = 0; e < 6; e++) {
                    UT[(size_t)b * F + 12 * i + e] = S[e] * Bt[i][b];
                    UT[(size_t)b * F + 12 * i + 6 + e] = S[e] * Dh[i][b];
                }
            /* the outputs' vectors: aP = (S, 0), af = (-a, g_w x w),
             * bP = (S x* h, 0), bf = (S x* (G - V_p x* h), S x* h) */
            double gxw[3], Sh[6], Gm[6], t6[6], bf[6];
            c3(gw, S, gxw);
            fx6(S, hm, Sh);
            c3(C + 1, gw, Gm);
            for (int e = 0; e < 3; e++) Gm[3 + e] = C[0] * gw[e];
            if (Vp) {
                fx6(Vp, hm, t6);
                for (int e = 0; e < 6; e++) Gm[e] -= t6[e];
            }
            fx6(S, Gm, bf);
            for (int a_ = 0; a_ < m; a_++) {
                double *Aar = Aa + (size_t)a_ * Bk + 9 * i, *Abr = Ab[a_] + 12 * i;
                const double ca = Ca[i][a_], cb = Cb[i][a_];
                for (int e = 0; e < 6; e++) {
                    Aar[e] = ca * S[e] - cb * a[e];
                    Abr[e] = ca * Sh[e] + cb * bf[e];
                    Abr[6 + e] = cb * Sh[e];
                }
                for (int e = 0; e < 3; e++) Aar[6 + e] = cb * gxw[e];
            }
            /* W_i into Psi's block (rows 9 i.., columns 12 i..):
             * dth columns e_k x* (I V) + I (V x e_k) and (I e_k)_{3..5};
             * dV columns I */
            double hb[6];
            iapply(I, V, hb);
            for (int k = 0; k < 6; k++) {
                double ek[6] = {0.0}, c1[6], c2[6], c3v[6], ie[6];
                ek[k] = 1.0;
                fx6(ek, hb, c1);
                mx6(V, ek, c2);
                iapply(I, c2, c3v);
                iapply(I, ek, ie);
                double *col = Psi + (size_t)(9 * i) * F + 12 * i + k;
                for (int e = 0; e < 6; e++) {
                    col[(size_t)e * F] += c1[e] + c3v[e];
                    col[(size_t)e * F + 6] += ie[e];
                }
                for (int e = 0; e < 3; e++) col[(size_t)(6 + e) * F] += ie[3 + e];
            }
        }
        /* (Psi U)^T without U: its column b is (S_i Bt_ib, S_i Dh_ib) over
         * the points, so (Psi U)_kb = sum_i (Bt_ib Psi[k, th_i] . S_i +
         * Dh_ib Psi[k, V_i] . S_i) */
        for (int k = 0; k < Bk; k++) {
            const double *row = Psi + (size_t)k * F;
            double sth[SYM_MAX_NODES], sv[SYM_MAX_NODES];
            for (int i = 0; i < r; i++) {
                const double *S = t->srec + ((size_t)i * n + j) * SYM_TR_SIZE + SYM_TR_S;
                sth[i] = d6(row + 12 * i, S);
                sv[i] = d6(row + 12 * i + 6, S);
            }
            for (int b = 0; b < m; b++) {
                double v = 0.0;
                for (int i = 0; i < r; i++) v += Bt[i][b] * sth[i] + Dh[i][b] * sv[i];
                PUT[(size_t)b * Bk + k] = v;
            }
        }
        /* Psi T in place: the dth columns of point i gain the dV columns
         * times -crm(S g): for a row x (x_th, x_V), x_th += (w x x_Vt + v x
         * x_Vb, w x x_Vb) with (w, v) = S g_i */
        for (int k = 0; k < Bk; k++) {
            double *row = Psi + (size_t)k * F;
            for (int i = 0; i < r; i++) {
                const double *sg = Sg + 6 * i, *xv = row + 12 * i + 6;
                double a1[3], a2[3], a3[3];
                c3(sg, xv, a1);
                c3(sg + 3, xv + 3, a2);
                c3(sg, xv + 3, a3);
                for (int e = 0; e < 3; e++) {
                    row[12 * i + e] += a1[e] + a2[e];
                    row[12 * i + 3 + e] += a3[e];
                }
            }
        }
        /* D = Aa Psi U + N */
        double Dm[SM * SM];
        const double dj = t->damped && g->base.force ? t->dd[j] : 0.0;
        for (int a_ = 0; a_ < m; a_++) {
            for (int b = 0; b < m; b++) {
                double v = dot(Aa + (size_t)a_ * Bk, PUT + (size_t)b * Bk, Bk);
                if (dj != 0.0) {
                    double nab = 0.0;
                    for (int i = 0; i < r; i++) nab += Cb[i][a_] * Dh[i][b];
                    v -= dj * nab;
                }
                Dm[a_ * m + b] = v;
            }
        }
        /* E = Aa Psi T + Ab without Aa: its row a is, point by point,
         * Ca_ia (S_i, 0) + Cb_ia (-a_i, g_w x w_i), so E_a = Ab_a + sum_i
         * (Ca_ia Y1_i + Cb_ia Y2_i) with the rows Y1_i = S_i . (Psi T)[z_i]
         * and Y2_i = (-a_i, g_w x w_i) . (Psi T)[z_i] (z_i: point i's 9 rows) */
        double Y1[SYM_MAX_NODES][12 * SYM_MAX_NODES], Y2[SYM_MAX_NODES][12 * SYM_MAX_NODES];
        for (int i = 0; i < r; i++) {
            const double *rj = t->srec + ((size_t)i * n + j) * SYM_TR_SIZE;
            const double *S = rj + SYM_TR_S, *a = rj + SYM_TR_A;
            double gxw[3];
            c3(gw, S, gxw);
            const double *z = Psi + (size_t)(9 * i) * F;
            memset(Y1[i], 0, sizeof(double) * (size_t)F);
            memset(Y2[i], 0, sizeof(double) * (size_t)F);
            for (int e = 0; e < 6; e++) {
                axpy(Y1[i], S[e], z + (size_t)e * F, F);
                axpy(Y2[i], -a[e], z + (size_t)e * F, F);
            }
            for (int e = 0; e < 3; e++) axpy(Y2[i], gxw[e], z + (size_t)(6 + e) * F, F);
        }
        double E[SM][12 * SYM_MAX_NODES];
        for (int a_ = 0; a_ < m; a_++) {
            memcpy(E[a_], Ab[a_], sizeof(double) * (size_t)F);
            for (int i = 0; i < r; i++) {
                if (Ca[i][a_] != 0.0) axpy(E[a_], Ca[i][a_], Y1[i], F);
                if (Cb[i][a_] != 0.0) axpy(E[a_], Cb[i][a_], Y2[i], F);
            }
        }
        int piv[SM];
        for (int a_ = 0; a_ < m; a_++) piv[a_] = a_;
        const int st = lu_factor(m, Dm, piv, NULL);
        if (st) return st;
        sign *= sym_lu_det_sign(m, Dm, piv);
        for (int b = 0; b < m; b++) {
            double col[SM] = {0.0};
            col[b] = 1.0;
            lu_solve(m, Dm, piv, col);
            for (int a_ = 0; a_ < m; a_++) Dinv[a_ * m + b] = col[a_];
        }
        for (int a_ = 0; a_ < m; a_++) {
            double *Ga = G + (size_t)a_ * F;
            memset(Ga, 0, sizeof(double) * (size_t)F);
            for (int c = 0; c < m; c++) axpy(Ga, Dinv[a_ * m + c], E[c], F);
            for (int e = 0; e < F; e++) nf += 0.0 * Ga[e];   /* NaN iff one is not finite */
        }
        /* Phi_j = Psi T - (Psi U) G into the parent's Psi */
        if (par >= 0) {
            double *Pp = t->spsi + (size_t)par * BF;
            const int first = !t->sstart[par];
            for (int k = 0; k < Bk; k++) {
                double *dst = Pp + (size_t)k * F;
                const double *src = Psi + (size_t)k * F;
                if (first)
                    memcpy(dst, src, sizeof(double) * (size_t)F);
                else
                    axpy(dst, 1.0, src, F);
                for (int b = 0; b < m; b++) axpy(dst, -PUT[(size_t)b * Bk + k], G + (size_t)b * F, F);
            }
            t->sstart[par] = 1;
        }
    }
    if (nf != 0.0) return SYM_ENONFINITE;
    t->sign = sign;
    return SYM_OK;
}

/* b <- J^{-1} b (layout b[a n + j]) with the factors of sym_stree_factor */
void sym_stree_solve(sym_gwork *g, double *b)
{
    sym_gtree *t = &g->tree;
    const int n = g->n, s = g->tab->s, r = g->tab->r, m = s - 1, F = 12 * r, Bk = 9 * r;
    const size_t FJ = fac_joint(s, r);
    for (int j = 0; j < n; j++) t->sstart[j] = 0;
    for (int j = n - 1; j >= 0; j--) {   /* leaf to root: t_j, phi_j */
        const double *UT = t->sfac + (size_t)j * FJ, *Aa = UT + 2 * (size_t)m * F;
        const double *PUT = Aa + (size_t)m * Bk, *Dinv = PUT + (size_t)m * Bk;
        double *psi = t->sphi + (size_t)j * Bk;
        if (!t->sstart[j]) memset(psi, 0, sizeof(double) * (size_t)Bk);
        double rj[SM], tj[SM];
        for (int a = 0; a < m; a++) rj[a] = b[(size_t)a * n + j] - dot(Aa + (size_t)a * Bk, psi, Bk);
        for (int a = 0; a < m; a++) {
            double v = 0.0;
            for (int c = 0; c < m; c++) v += Dinv[a * m + c] * rj[c];
            tj[a] = v;
            b[(size_t)a * n + j] = v;
        }
        const int par = t->spar[j];
        if (par >= 0) {
            double *pp = t->sphi + (size_t)par * Bk;
            if (!t->sstart[par]) memcpy(pp, psi, sizeof(double) * (size_t)Bk);
            else axpy(pp, 1.0, psi, Bk);
            for (int a = 0; a < m; a++) axpy(pp, tj[a], PUT + (size_t)a * Bk, Bk);
            t->sstart[par] = 1;
        }
    }
    for (int j = 0; j < n; j++) {   /* root to leaf: x_j, Y_j = T Y_p + U x_j */
        const double *UT = t->sfac + (size_t)j * FJ, *G = UT + (size_t)m * F;
        const double *Sg = G + (size_t)m * F + 2 * (size_t)m * Bk + (size_t)m * m;
        const int par = t->spar[j];
        const double *Yp = par >= 0 ? t->sY + (size_t)par * F : NULL;
        double *Y = t->sY + (size_t)j * F, xj[SM];
        for (int a = 0; a < m; a++) {
            xj[a] = b[(size_t)a * n + j] - (Yp ? dot(G + (size_t)a * F, Yp, F) : 0.0);
            b[(size_t)a * n + j] = xj[a];
        }
        if (Yp) {
            memcpy(Y, Yp, sizeof(double) * (size_t)F);
            for (int i = 0; i < r; i++) {   /* dV -= (S g) x dth_p */
                double o[6];
                mx6(Sg + 6 * i, Yp + 12 * i, o);
                for (int e = 0; e < 6; e++) Y[12 * i + 6 + e] -= o[e];
            }
        } else {
            memset(Y, 0, sizeof(double) * (size_t)F);
        }
        for (int a = 0; a < m; a++) axpy(Y, xj[a], UT + (size_t)a * F, F);
    }
}

/* The factors (U^T .. S g of every joint) and their count, which a tangent
 * keeps aside while it uses the workspace's. */
double *sym_stree_factors(sym_gwork *g, size_t *count)
{
    *count = (size_t)g->n * fac_joint(g->tab->s, g->tab->r);
    return g->tree.sfac;
}
