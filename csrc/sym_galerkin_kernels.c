/*
 * sym_galerkin_kernels.c -- the inner loops of the Galerkin engine
 * (sym_galerkin.c holds the formulas; sym_newton.c the Newton iteration).
 *
 * Each kernel is written once for a runtime size and instantiated for small
 * compile-time sizes, where the compiler unrolls the loops completely: the
 * papers' systems have n = 1..4 and Simpson has s = 3 nodes.  The
 * instances compute exactly the same sums as the generic code.  The Lobatto
 * members with s = 4, 5 nodes (orders 6, 8) have instances for n = 1..4
 * too ("lobatto3", the generic cross-check of Simpson, deliberately not).
 *
 *   form_points: q_i = q_j + sum_a B_ia X_a,  g_i = sum_a D_ia X_a / h
 *   residual:    f_i = 1/2 A_i^T g_i - grad V_i,  P_i = M_i g_i,
 *                R_a = [a = 0] p_j + sum_i b_i (D_ia P_i + h B_ia f_i)
 *   jacobian:    J_ab = sum_i b_i [ D_ia D_ib M_i / h + D_ia B_ib A_i
 *                        + B_ia D_ib A_i^T + h B_ia B_ib (H_i - K_i) ]
 *   correct:     f_i += sum_a [ B_ia (H_i - K_i) + A_i^T D_ia / h ] Delta_a
 *                (first-order update of f after the last Newton update)
 *
 * With Lobatto nodes as quadrature points (B = I) these collapse to
 *   q_i = q_j + X_i,  R_a = [a = 0] p_j + sum_i b_i D_ia P_i + h b_a f_a,
 *   J_ab = sum_i (b_i D_ia D_ib / h) M_i + b_b D_ba A_b + b_a D_ab A_a^T
 *          + [a = b] h b_a (H_a - K_a).
 */
#include "sym_forces.h"
#include "sym_galerkin.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* General quadrature (e.g. the midpoint rule): term lists             */
/* ------------------------------------------------------------------ */
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

/* f_i, P_i at every point; returns the largest of |p|, |P_i|, |h f_i|.
 * With a force (sym_galerkin_forces.c) f_i includes F_i. */
SYM_INLINE double point_forces_k(sym_gwork *w, const double *p, double h, const int r,
                                 const int n)
{
    const size_t nn = (size_t)n * (size_t)n;
    const double *Fx = w->base.force ? w->base.force->F : NULL;
    double scale = 0.0;
    for (int k = 0; k < n; k++) if (fabs(p[k]) > scale) scale = fabs(p[k]);
    for (int i = 0; i < r; i++) {
        const double *M = w->Mp + i * nn, *A = w->Ap + i * nn;
        const double *g = w->Gp + (size_t)i * n, *dV = w->dVp + (size_t)i * n;
        double *f = w->f + (size_t)i * n, *P = w->P + (size_t)i * n;
        for (int c = 0; c < n; c++) {
            double sa = 0.0, sm = 0.0;
            for (int k = 0; k < n; k++) {
                sa += A[k * n + c] * g[k];
                sm += M[c * n + k] * g[k];
            }
            f[c] = 0.5 * sa - dV[c];
            if (Fx) f[c] += Fx[(size_t)i * n + c];
            P[c] = sm;
            const double hf = fabs(h * f[c]), am = fabs(sm);
            if (am > scale) scale = am;
            if (hf > scale) scale = hf;
        }
    }
    return scale > 0.0 ? scale : DBL_MIN;
}

SYM_INLINE double residual_k(sym_gwork *w, const double *p, double h, double *Rnorm,
                             const int s, const int n)
{
    (void)s;
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
        if (!(v <= rn)) rn = v;   /* propagates nan */
    }
    *Rnorm = rn;
    return scale;
}

SYM_INLINE int jacobian_k(sym_gwork *w, double h, const int s, const int n)
{
    (void)s;
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

SYM_INLINE void correct_k(sym_gwork *w, double h, const int s, const int n)
{
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

/* ------------------------------------------------------------------ */
/* Lobatto quadrature at the nodes (B = I): Simpson and its family      */
/* ------------------------------------------------------------------ */
SYM_INLINE void form_points_lob_k(sym_gwork *w, const double *q, double h, const int s,
                                  const int n)
{
    const double ih = 1.0 / h;
    for (int k = 0; k < n; k++) w->Qp[k] = q[k];
    for (int i = 1; i < s; i++)
        for (int k = 0; k < n; k++) w->Qp[(size_t)i * n + k] = q[k] + w->X[(size_t)(i - 1) * n + k];
    for (int i = 0; i < s; i++)
        for (int k = 0; k < n; k++) {
            double v = 0.0;
            for (int a = 1; a < s; a++) v += w->tab->D[i][a] * w->X[(size_t)(a - 1) * n + k];
            w->Gp[(size_t)i * n + k] = v * ih;
        }
}

SYM_INLINE double residual_lob_k(sym_gwork *w, const double *p, double h, double *Rnorm,
                                 const int s, const int n)
{
    const double scale = point_forces_k(w, p, h, s, n);
    double rn = 0.0;
    for (int a = 0; a <= s - 2; a++) {
        double *Ra = w->R + (size_t)a * n;
        const double cf = h * w->tab->b[a];
        for (int c = 0; c < n; c++) {
            double v = (a == 0 ? p[c] : 0.0) + cf * w->f[(size_t)a * n + c];
            for (int i = 0; i < s; i++) v += w->tab->bD[i][a] * w->P[(size_t)i * n + c];
            Ra[c] = v;
            const double av = fabs(v);
            if (!(av <= rn)) rn = av;   /* propagates nan */
        }
    }
    *Rnorm = rn;
    return scale;
}

SYM_INLINE int jacobian_lob_k(sym_gwork *w, double h, const int s, const int n)
{
    const int nu = w->nu;
    const size_t nn = (size_t)n * (size_t)n;
    const double ih = 1.0 / h;
    for (int a = 0; a <= s - 2; a++) {
        const double *Aa = w->Ap + a * nn, *Ha = w->Hp + a * nn, *Ka = w->Kp + a * nn;
        for (int b = 1; b <= s - 1; b++) {
            const double *Ab = w->Ap + b * nn;
            const double cA = w->tab->b[b] * w->tab->D[b][a], cAT = w->tab->b[a] * w->tab->D[a][b];
            const double cH = (a == b) ? h * w->tab->b[a] : 0.0;
            double cM[SYM_MAX_NODES];
            for (int i = 0; i < s; i++) cM[i] = w->tab->bDD[a][b][i] * ih;
            double *Jb = w->J + (size_t)a * n * nu + (size_t)(b - 1) * n;
            for (int g = 0; g < n; g++) {
                double *Jg = Jb + (size_t)g * nu;
                sym_vscale(n, cA, Ab + (size_t)g * n, Jg);
                for (int i = 0; i < s; i++)
                    if (cM[i] != 0.0) sym_vaxpy(n, cM[i], w->Mp + i * nn + (size_t)g * n, Jg);
                if (a == b) sym_vaxpy_diff(n, cH, Ha + (size_t)g * n, Ka + (size_t)g * n, Jg);
            }
            /* + b_a D_ab A_a^T, in 8 x 8 tiles to keep the transposed reads local */
            for (int g0 = 0; g0 < n; g0 += 8)
                for (int d0 = 0; d0 < n; d0 += 8) {
                    const int g1 = g0 + 8 < n ? g0 + 8 : n, d1 = d0 + 8 < n ? d0 + 8 : n;
                    for (int d = d0; d < d1; d++)
                        for (int g = g0; g < g1; g++) Jb[(size_t)g * nu + d] += cAT * Aa[d * n + g];
                }
        }
    }
    return SYM_OK;   /* non-finite entries surface in the LU or the update */
}

SYM_INLINE void correct_lob_k(sym_gwork *w, double h, const int s, const int n)
{
    const size_t nn = (size_t)n * (size_t)n;
    const double ih = 1.0 / h;
    for (int i = 0; i < s; i++) {
        const double *A = w->Ap + i * nn, *H = w->Hp + i * nn, *K = w->Kp + i * nn;
        const double *dq = i ? w->dX + (size_t)(i - 1) * n : NULL;
        double *f = w->f + (size_t)i * n, *dg = w->acc;
        for (int k = 0; k < n; k++) {
            double v = 0.0;
            for (int a = 1; a < s; a++) v += w->tab->D[i][a] * w->dX[(size_t)(a - 1) * n + k];
            dg[k] = v * ih;
        }
        correct_f_k(n, A, H, K, dg, dq, i != 0, f);
    }
}

/* ------------------------------------------------------------------ */
/* Instances                                                            */
/* ------------------------------------------------------------------ */
#define SYM_KERNEL_SET(FAM, NAME, S, N)                                                 \
    static void form_points_##FAM##NAME(sym_gwork *w, const double *q, double h)          \
    {                                                                                   \
        form_points_##FAM##k(w, q, h, S, N);                                            \
    }                                                                                   \
    static double residual_##FAM##NAME(sym_gwork *w, const double *p, double h, double *rn) \
    {                                                                                   \
        return residual_##FAM##k(w, p, h, rn, S, N);                                    \
    }                                                                                   \
    static int jacobian_##FAM##NAME(sym_gwork *w, double h)                               \
    {                                                                                   \
        return jacobian_##FAM##k(w, h, S, N);                                           \
    }                                                                                   \
    static void correct_##FAM##NAME(sym_gwork *w, double h)                               \
    {                                                                                   \
        correct_##FAM##k(w, h, S, N);                                                   \
    }

SYM_KERNEL_SET(, 1, w->tab->s, 1)
SYM_KERNEL_SET(, 2, w->tab->s, 2)
SYM_KERNEL_SET(, 3, w->tab->s, 3)
SYM_KERNEL_SET(, 4, w->tab->s, 4)
SYM_KERNEL_SET(, any, w->tab->s, w->n)
SYM_KERNEL_SET(lob_, 3_1, 3, 1)
SYM_KERNEL_SET(lob_, 3_2, 3, 2)
SYM_KERNEL_SET(lob_, 3_3, 3, 3)
SYM_KERNEL_SET(lob_, 3_4, 3, 4)
SYM_KERNEL_SET(lob_, 3_any, 3, w->n)
SYM_KERNEL_SET(lob_, 4_1, 4, 1)
SYM_KERNEL_SET(lob_, 4_2, 4, 2)
SYM_KERNEL_SET(lob_, 4_3, 4, 3)
SYM_KERNEL_SET(lob_, 4_4, 4, 4)
SYM_KERNEL_SET(lob_, 5_1, 5, 1)
SYM_KERNEL_SET(lob_, 5_2, 5, 2)
SYM_KERNEL_SET(lob_, 5_3, 5, 3)
SYM_KERNEL_SET(lob_, 5_4, 5, 4)
SYM_KERNEL_SET(lob_, any, w->tab->s, w->n)

#define KSET(FAM, NAME)                                                                 \
    {form_points_##FAM##NAME, residual_##FAM##NAME, jacobian_##FAM##NAME, correct_##FAM##NAME}

/* Lobatto instances by [s - 3][n - 1] for s = 3, 4, 5 and n = 1..4. */
static const sym_gkernels lob_fixed[3][4] = {
    {KSET(lob_, 3_1), KSET(lob_, 3_2), KSET(lob_, 3_3), KSET(lob_, 3_4)},
    {KSET(lob_, 4_1), KSET(lob_, 4_2), KSET(lob_, 4_3), KSET(lob_, 4_4)},
    {KSET(lob_, 5_1), KSET(lob_, 5_2), KSET(lob_, 5_3), KSET(lob_, 5_4)},
};
static const sym_gkernels lob_3_any = KSET(lob_, 3_any), lob_any = KSET(lob_, any);
static const sym_gkernels gen_fixed[4] = {KSET(, 1), KSET(, 2), KSET(, 3), KSET(, 4)};
static const sym_gkernels gen_any = KSET(, any);

/* Lobatto quadrature at the nodes (B = I) runs the collapsed kernels, others
 * the term lists; instances for fixed s and n where they exist, unless the
 * method row asks for the general code (SYM_METHOD_GENERIC). */
void sym_galerkin_pick_kernels(sym_gwork *w)
{
    const int s = w->tab->s, n = w->n;
    const int fixed = !(w->base.method->flags & SYM_METHOD_GENERIC);
    if (w->tab->lobatto) {
        w->k = lob_any;
        if (fixed && s == 3) w->k = n <= 4 ? lob_fixed[0][n - 1] : lob_3_any;
        if (fixed && s >= 4 && s <= 5 && n <= 4) w->k = lob_fixed[s - 3][n - 1];
    } else {
        w->k = (fixed && n <= 4) ? gen_fixed[n - 1] : gen_any;
    }
}
