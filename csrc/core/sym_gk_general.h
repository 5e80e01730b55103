/*
 * sym_gk_general.h -- the Galerkin kernels for a general quadrature (e.g.
 * the midpoint rule), with points other than the nodes: the sums run over
 * the term lists of the tables (sym_galerkin_setup.c), which hold only the
 * nonzero coefficients.  Internal to sym_galerkin_kernels.c, which
 * instantiates these workers (private).
 *
 * With s nodes, r quadrature points, increments X_a = q_a - q_j (a >= 1)
 * and the tables B_ia, D_ia of the nodal basis and its derivative at the
 * points:
 *
 *   form_points: q_i = q_j + sum_a B_ia X_a,  g_i = sum_a D_ia X_a / h
 *   residual:    f_i = 1/2 A_i^T g_i - grad V_i,  P_i = M_i g_i,
 *                R_a = [a = 0] p_j + sum_i b_i (D_ia P_i + h B_ia f_i)
 *   jacobian:    J_ab = sum_i b_i [ D_ia D_ib M_i / h + D_ia B_ib A_i
 *                        + B_ia D_ib A_i^T + h B_ia B_ib (H_i - K_i) ]
 *   correct:     f_i += sum_a [ B_ia (H_i - K_i) + A_i^T D_ia / h ] Delta_a
 *                (first-order update of f after the last Newton update)
 */
#ifndef SYM_GK_GENERAL_H
#define SYM_GK_GENERAL_H

#include "sym_forces.h"
#include "sym_gwork.h"
#include "sym_unroll.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* sum_{a>=1} B_ia Y_ak and sum_{a>=1} D_ia Y_ak for increments Y (X or dX) */
SYM_INLINE void point_sums_k(const sym_gtab *t, const double *Y, const int i, const int k,
                             const int s, const int n, double *bsum, double *dsum)
{
    double vb = 0.0, vd = 0.0;
    for (int a = 1; a < s; a++) {
        const double ya = Y[(size_t)(a - 1) * n + k];
        vd += t->D[i][a] * ya;
        vb += t->B[i][a] * ya;
    }
    *bsum = vb;
    *dsum = vd;
}

SYM_INLINE void form_points_k(sym_gwork *w, const double *q, double h, const int s,
                              const int n)
{
    const int r = w->tab->r;
    for (int i = 0; i < r; i++) {
        double *Qi = w->Qp + (size_t)i * n, *Gi = w->Gp + (size_t)i * n;
        const int u = w->tab->unit[i];
        for (int k = 0; k < n; k++) {
            double bq, gq;
            point_sums_k(w->tab, w->X, i, k, s, n, &bq, &gq);
            Gi[k] = gq / h;
            if (u == 0) Qi[k] = q[k];
            else if (u > 0) Qi[k] = q[k] + w->X[(size_t)(u - 1) * n + k];
            else Qi[k] = q[k] + bq;
        }
    }
}

/* f_i = 1/2 A_i^T g_i - grad V_i (+ F_i with a force, sym_galerkin_forces.c),
 * P_i = M_i g_i at r points; returns the largest of |p|, |P_i|, |h f_i|
 * (a NaN never wins, so the order of the comparisons does not matter). */
SYM_INLINE double point_forces_x(const int r, const int n, const double h,
                                 const double *restrict p, const double *restrict Mp,
                                 const double *restrict Ap, const double *restrict Gp,
                                 const double *restrict dVp, const double *restrict Fx,
                                 double *restrict f, double *restrict P)
{
    const size_t nn = (size_t)n * (size_t)n;
    double scale = 0.0;
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k++) if (fabs(p[k]) > scale) scale = fabs(p[k]);
    SYM_UNROLL_SMALL
    for (int i = 0; i < r; i++) {
        const double *M = Mp + i * nn, *A = Ap + i * nn;
        const double *g = Gp + (size_t)i * n, *dV = dVp + (size_t)i * n;
        double *fi = f + (size_t)i * n, *Pi = P + (size_t)i * n;
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c++) {
            double sa = A[c] * g[0], sm = M[c * n] * g[0];
            SYM_UNROLL_SMALL
            for (int k = 1; k < n; k++) {
                sa += A[k * n + c] * g[k];
                sm += M[c * n + k] * g[k];
            }
            double fc = 0.5 * sa - dV[c];
            if (Fx) fc += Fx[(size_t)i * n + c];
            fi[c] = fc;
            Pi[c] = sm;
            const double hf = fabs(h * fc), am = fabs(sm);
            if (am > scale) scale = am;
            if (hf > scale) scale = hf;
        }
    }
    return scale > 0.0 ? scale : DBL_MIN;
}

SYM_INLINE double point_forces_k(sym_gwork *w, const double *p, double h, const int r,
                                 const int n)
{
    return point_forces_x(r, n, h, p, w->Mp, w->Ap, w->Gp, w->dVp,
                          w->base.force ? w->base.force->F : NULL, w->f, w->P);
}

SYM_INLINE double residual_k(sym_gwork *w, const double *p, double h, double *Rnorm,
                             const int s, const int n, const int fixed)
{
    (void)s;
    (void)fixed;
    const double scale = point_forces_k(w, p, h, w->tab->r, n);
    memset(w->R, 0, sizeof(double) * (size_t)w->nu);
    for (int k = 0; k < n; k++) w->R[k] = p[k];
    for (int t = 0; t < w->tab->nrt; t++) {
        const struct sym_rterm *T = &w->tab->rt[t];
        const double c = T->kind ? T->c * h : T->c;
        const double *v = (T->kind ? w->f : w->P) + (size_t)T->i * n;
        double *Ra = w->R + (size_t)T->a * n;
        for (int k = 0; k < n; k++) Ra[k] += c * v[k];
    }
    double rn = 0.0;
    for (int k = 0; k < w->nu; k++) {
        const double v = fabs(w->R[k]);
        rn = sym_nanmax(rn, v);   /* propagates nan */
    }
    *Rnorm = rn;
    return scale;
}

SYM_INLINE int jacobian_k(sym_gwork *w, double h, const int s, const int n, const int fixed)
{
    (void)s;
    (void)fixed;
    const int nu = w->nu;
    const size_t nn = (size_t)n * (size_t)n;
    memset(w->J, 0, sizeof(double) * (size_t)nu * nu);
    for (int t = 0; t < w->tab->njt; t++) {
        const struct sym_jterm *T = &w->tab->jt[t];
        double *Jb = w->J + (size_t)T->a * n * nu + (size_t)(T->b - 1) * n;
        const size_t off = (size_t)T->i * nn;
        const double *M = w->Mp + off, *A = w->Ap + off, *H = w->Hp + off, *K = w->Kp + off;
        switch (T->kind) {
        case 0: {           /* M / h */
            const double c = T->c / h;
            for (int g = 0; g < n; g++)
                for (int d = 0; d < n; d++) Jb[(size_t)g * nu + d] += c * M[g * n + d];
            break;
        }
        case 1:             /* A */
            for (int g = 0; g < n; g++)
                for (int d = 0; d < n; d++) Jb[(size_t)g * nu + d] += T->c * A[g * n + d];
            break;
        case 2:             /* A^T */
            for (int g = 0; g < n; g++)
                for (int d = 0; d < n; d++) Jb[(size_t)g * nu + d] += T->c * A[d * n + g];
            break;
        default: {          /* h (H - K) */
            const double c = T->c * h;
            for (int g = 0; g < n; g++)
                for (int d = 0; d < n; d++)
                    Jb[(size_t)g * nu + d] += c * (H[g * n + d] - K[g * n + d]);
            break;
        }
        }
    }
    for (size_t k = 0; k < (size_t)nu * nu; k++)
        if (!isfinite(w->J[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

/* f_c += sum_k A_kc dg_k + [moves] sum_k (H - K)_ck dq_k at one point */
SYM_INLINE void correct_f_k(const int n, const double *A, const double *H, const double *K,
                            const double *dg, const double *dq, const int moves, double *f)
{
    for (int c = 0; c < n; c++) {
        double v = 0.0;
        for (int k = 0; k < n; k++) {
            v += A[k * n + c] * dg[k];
            if (moves) v += (H[c * n + k] - K[c * n + k]) * dq[k];
        }
        f[c] += v;
    }
}

SYM_INLINE void correct_k(sym_gwork *w, double h, const int s, const int n, const int fixed)
{
    (void)fixed;
    const int r = w->tab->r;
    const size_t nn = (size_t)n * (size_t)n;
    for (int i = 0; i < r; i++) {
        const double *A = w->Ap + i * nn, *H = w->Hp + i * nn, *K = w->Kp + i * nn;
        double *f = w->f + (size_t)i * n, *dq = w->tmp, *dg = w->acc;
        for (int k = 0; k < n; k++) {
            double vq, vg;
            point_sums_k(w->tab, w->dX, i, k, s, n, &vq, &vg);
            dq[k] = vq;
            dg[k] = vg / h;
        }
        /* the left node does not move (only its velocity does); its H and
         * K are not evaluated */
        correct_f_k(n, A, H, K, dg, dq, i != w->left_point, f);
    }
}

#endif /* SYM_GK_GENERAL_H */
