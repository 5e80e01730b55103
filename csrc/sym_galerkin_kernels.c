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
 *
 * The sums start from their first term, not from 0.0 + it: the same
 * numbers (only a -0.0 result may now stay -0.0), one dependent addition
 * fewer on each chain.
 */
#include "sym_forces.h"
#include "sym_gwork.h"
#include "sym_unroll.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* The fixed instances at an even n <= SYM_PAIR_MAX_N run the Lobatto
 * kernels two components at a time in the compiler's two-lane vectors
 * (the *_pairs kernels below, bitwise the scalar ones). */
#define SYM_PAIR_MAX_N 4
SYM_INLINE int pairs_ok(const int fixed, const int n)
{
    return SYM_VEC2 && fixed && n % 2 == 0 && n <= SYM_PAIR_MAX_N;
}

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

/* ------------------------------------------------------------------ */
/* Lobatto quadrature at the nodes (B = I): Simpson and its family      */
/* ------------------------------------------------------------------ */
/* Each kernel hands its arrays to a worker as restrict parameters and
 * copies the table coefficients it needs to locals first, so that in the
 * fixed-size instances coefficients, point values and sums stay in
 * registers (a store to Q, R or J no longer forces the tables and X to be
 * read again); every output entry is still the sum written in the header,
 * term by term in the same order, so the results are bitwise those of the
 * plain loops.  (The local tables are zeroed only to quiet
 * -Wmaybe-uninitialized in the runtime-size instances.) */

/* 1 / h, kept while h stays (a division per kernel call was measurable) */
SYM_INLINE double inverse_step(sym_gtab *t, double h)
{
    if (!(t->inv_of == h)) {
        t->inv_h = 1.0 / h;
        t->inv_of = h;
    }
    return t->inv_h;
}

/* q_i = q_j + X_i (X_0 = 0),  g_i = (0 + sum_{a>=1} D_ia X_a) / h  (as * 1/h) */
SYM_INLINE void form_points_lob_x(const int s, const int n, const double ih,
                                  const sym_gtab *restrict tab, const double *restrict q,
                                  const double *restrict X, double *restrict Qp,
                                  double *restrict Gp)
{
    double D[SYM_MAX_NODES][SYM_MAX_NODES] = {{0.0}};
    SYM_UNROLL_SMALL
    for (int i = 0; i < s; i++)
        SYM_UNROLL_SMALL
        for (int a = 0; a < s; a++) D[i][a] = tab->D[i][a];
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k++) Qp[k] = q[k];
    SYM_UNROLL_SMALL
    for (int i = 1; i < s; i++)
        SYM_UNROLL_SMALL
        for (int k = 0; k < n; k++) Qp[(size_t)i * n + k] = q[k] + X[(size_t)(i - 1) * n + k];
    SYM_UNROLL_SMALL
    for (int i = 0; i < s; i++)
        SYM_UNROLL_SMALL
        for (int k = 0; k < n; k++) {
            double v = D[i][1] * X[k];
            SYM_UNROLL_SMALL
            for (int a = 2; a < s; a++) v += D[i][a] * X[(size_t)(a - 1) * n + k];
            Gp[(size_t)i * n + k] = v * ih;
        }
}

SYM_INLINE void form_points_lob_k(sym_gwork *w, const double *q, double h, const int s,
                                  const int n)
{
    form_points_lob_x(s, n, inverse_step(w->tab, h), w->tab, q, w->X, w->Qp, w->Gp);
}

/* R_a = [a = 0] p_j + h b_a f_a + sum_i b_i D_ia P_i  (a = 0..s-2), after
 * f_i, P_i (point_forces_x); the largest |R| in the order a, c */
SYM_INLINE double residual_lob_x(const int s, const int n, const double h,
                                 const sym_gtab *restrict tab, const double *restrict p,
                                 const double *restrict Mp, const double *restrict Ap,
                                 const double *restrict Gp, const double *restrict dVp,
                                 const double *restrict Fx, double *restrict f,
                                 double *restrict P, double *restrict R, double *Rnorm)
{
    /* two copies, so that the usual one (no force) tests nothing per entry */
    const double scale = Fx ? point_forces_x(s, n, h, p, Mp, Ap, Gp, dVp, Fx, f, P)
                            : point_forces_x(s, n, h, p, Mp, Ap, Gp, dVp, NULL, f, P);
    double bD[SYM_MAX_NODES][SYM_MAX_NODES] = {{0.0}}, cf[SYM_MAX_NODES] = {0.0};
    SYM_UNROLL_SMALL
    for (int a = 0; a <= s - 2; a++) {
        cf[a] = h * tab->b[a];
        SYM_UNROLL_SMALL
        for (int i = 0; i < s; i++) bD[i][a] = tab->bD[i][a];
    }
    double rn = 0.0;
    SYM_UNROLL_SMALL
    for (int a = 0; a <= s - 2; a++)
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c++) {
            double v = cf[a] * f[(size_t)a * n + c];
            if (a == 0) v = p[c] + v;
            SYM_UNROLL_SMALL
            for (int i = 0; i < s; i++) v += bD[i][a] * P[(size_t)i * n + c];
            R[(size_t)a * n + c] = v;
            const double av = fabs(v);
            rn = sym_nanmax(rn, av);   /* propagates nan */
        }
    *Rnorm = rn;
    return scale;
}

#if SYM_VEC2
/* residual_lob_x without a force for an even n <= 4 in the fixed
 * instances, two components c, c + 1 at a time: each lane does the scalar
 * code's multiplies and adds in its order (f, P and R bitwise the same);
 * the scale (a NaN never wins) and |R| (a NaN always wins) are maxima,
 * which do not depend on the order in which the entries are visited. */
SYM_INLINE double residual_lob_pairs(const int s, const int n, const double h,
                                     const sym_gtab *restrict tab, const double *restrict p,
                                     const double *restrict Mp, const double *restrict Ap,
                                     const double *restrict Gp, const double *restrict dVp,
                                     double *restrict f, double *restrict P,
                                     double *restrict R, double *Rnorm)
{
    const size_t nn = (size_t)n * (size_t)n;
    double scale = 0.0;
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k++) if (fabs(p[k]) > scale) scale = fabs(p[k]);
    sym_v2d vs = sym_v2_splat(scale);
    const sym_v2d half = sym_v2_splat(0.5), vh = sym_v2_splat(h);
    SYM_UNROLL_SMALL
    for (int i = 0; i < s; i++) {
        const double *M = Mp + i * nn, *A = Ap + i * nn;
        const double *g = Gp + (size_t)i * n, *dV = dVp + (size_t)i * n;
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c += 2) {
            sym_v2d x, sa, sm;
            const sym_v2d g0 = sym_v2_splat(g[0]);
            x = sym_v2_load(A + c);
            sa = x * g0;
            sm = (sym_v2d){M[c * n], M[(c + 1) * n]} * g0;
            SYM_UNROLL_SMALL
            for (int k = 1; k < n; k++) {
                const sym_v2d gk = sym_v2_splat(g[k]);
                x = sym_v2_load(A + k * n + c);
                sa += x * gk;
                sm += (sym_v2d){M[c * n + k], M[(c + 1) * n + k]} * gk;
            }
            x = sym_v2_load(dV + c);
            const sym_v2d fc = half * sa - x;
            sym_v2_store(f + (size_t)i * n + c, fc);
            sym_v2_store(P + (size_t)i * n + c, sm);
            const sym_v2d am = sym_v2_abs(sm), hf = sym_v2_abs(vh * fc);
            vs = sym_v2_select((sym_v2u)(am > vs), am, vs);
            vs = sym_v2_select((sym_v2u)(hf > vs), hf, vs);
        }
    }
    scale = vs[0] > vs[1] ? vs[0] : vs[1];
    sym_v2d rv = sym_v2_splat(0.0);
    SYM_UNROLL_SMALL
    for (int a = 0; a <= s - 2; a++) {
        const double cfa = h * tab->b[a];
        const sym_v2d cf = sym_v2_splat(cfa);
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c += 2) {
            sym_v2d x, v;
            x = sym_v2_load(f + (size_t)a * n + c);
            v = cf * x;
            if (a == 0) {
                x = sym_v2_load(p + c);
                v = x + v;
            }
            SYM_UNROLL_SMALL
            for (int i = 0; i < s; i++) {
                const sym_v2d b = sym_v2_splat(tab->bD[i][a]);
                x = sym_v2_load(P + (size_t)i * n + c);
                v += b * x;
            }
            sym_v2_store(R + (size_t)a * n + c, v);
            const sym_v2d av = sym_v2_abs(v);
            rv = sym_v2_nanmax(rv, av);
        }
    }
    *Rnorm = sym_nanmax(rv[0], rv[1]);
    return scale > 0.0 ? scale : DBL_MIN;
}
#endif

SYM_INLINE double residual_lob_k(sym_gwork *w, const double *p, double h, double *Rnorm,
                                 const int s, const int n, const int fixed)
{
#if SYM_VEC2
    if (pairs_ok(fixed, n) && !w->base.force)
        return residual_lob_pairs(s, n, h, w->tab, p, w->Mp, w->Ap, w->Gp, w->dVp, w->f, w->P,
                                  w->R, Rnorm);
#else
    (void)fixed;
#endif
    return residual_lob_x(s, n, h, w->tab, p, w->Mp, w->Ap, w->Gp, w->dVp,
                          w->base.force ? w->base.force->F : NULL, w->f, w->P, w->R, Rnorm);
}

/* The block J_ab (rows a n.., columns (b-1) n..) in tiles of at most
 * SYM_JT x SYM_JT entries, each entry summed in a register in the order
 *   b_b D_ba A_b + sum_{i: b_i D_ia D_ib != 0} (b_i D_ia D_ib / h) M_i
 *   + [a = b] h b_a (H_a - K_a) + b_a D_ab A_a^T. */
#define SYM_JT 4
#if SYM_VEC2
/* The same sums for an even n <= SYM_PAIR_MAX_N in the fixed instances, two
 * adjacent columns d, d + 1 of a block row at a time in the compiler's
 * two-lane vectors: each lane does the scalar entry's multiplies and adds
 * in the scalar order above, so J is bitwise the same.  A_a^T's pairs are
 * columns of A_a, gathered once per node into At. */
SYM_INLINE void jacobian_lob_pairs(const int s, const int n, const double h,
                                   const sym_gtab *restrict tab, const double *restrict cMh,
                                   const double *restrict Mp, const double *restrict Ap,
                                   const double *restrict Hp, const double *restrict Kp,
                                   double *restrict J)
{
    const int nu = (s - 1) * n;
    const size_t nn = (size_t)n * (size_t)n;
    double At[SYM_MAX_NODES - 1][SYM_PAIR_MAX_N * SYM_PAIR_MAX_N];
    SYM_UNROLL_SMALL
    for (int a = 0; a <= s - 2; a++)
        SYM_UNROLL_SMALL
        for (int g = 0; g < n; g++)
            SYM_UNROLL_SMALL
            for (int d = 0; d < n; d++) At[a][g * n + d] = Ap[a * nn + (size_t)d * n + g];
    SYM_UNROLL_SMALL
    for (int a = 0; a <= s - 2; a++) {
        const double *Ha = Hp + a * nn, *Ka = Kp + a * nn;
        SYM_UNROLL_SMALL
        for (int b = 1; b <= s - 1; b++) {
            const double *Ab = Ap + b * nn;
            const double cA = tab->bD[b][a], cAT = tab->bD[a][b];
            const double cH = (a == b) ? h * tab->b[a] : 0.0;
            const double *cM = cMh + ((size_t)a * (SYM_MAX_NODES - 1) + (size_t)(b - 1)) * SYM_MAX_NODES;
            double *Jb = J + (size_t)a * n * nu + (size_t)(b - 1) * n;
            const sym_v2d vA = sym_v2_splat(cA), vAT = sym_v2_splat(cAT), vH = sym_v2_splat(cH);
            SYM_UNROLL_SMALL
            for (int g = 0; g < n; g++)
                SYM_UNROLL_SMALL
                for (int d = 0; d < n; d += 2) {
                    const size_t e = (size_t)g * n + d;
                    sym_v2d x, y, v;
                    x = sym_v2_load(Ab + e);
                    v = vA * x;
                    SYM_UNROLL_SMALL
                    for (int i = 0; i < s; i++) {
                        if (s % 2 == 1 && 2 * i == s - 1 && (a == i || b == i)) continue;
                        const sym_v2d c = sym_v2_splat(cM[i]);
                        x = sym_v2_load(Mp + i * nn + e);
                        v += c * x;
                    }
                    if (a == b) {
                        x = sym_v2_load(Ha + e);
                        y = sym_v2_load(Ka + e);
                        v += vH * (x - y);
                    }
                    x = sym_v2_load(&At[a][e]);
                    v += vAT * x;
                    sym_v2_store(Jb + (size_t)g * nu + d, v);
                }
        }
    }
}
#endif

SYM_INLINE void jacobian_lob_x(const int fixed, const int s, const int n, const double h,
                               const sym_gtab *restrict tab,
                               const double *restrict cMh,   /* tab->jac_cM */
                               const double *restrict Mp,
                               const double *restrict Ap, const double *restrict Hp,
                               const double *restrict Kp, double *restrict J)
{
    const int nu = (s - 1) * n;
    const size_t nn = (size_t)n * (size_t)n;
#if SYM_VEC2
    if (pairs_ok(fixed, n)) {
        jacobian_lob_pairs(s, n, h, tab, cMh, Mp, Ap, Hp, Kp, J);
        return;
    }
#endif
    SYM_UNROLL_SMALL
    for (int a = 0; a <= s - 2; a++) {
        const double *Aa = Ap + a * nn, *Ha = Hp + a * nn, *Ka = Kp + a * nn;
        SYM_UNROLL_SMALL
        for (int b = 1; b <= s - 1; b++) {
            const double *Ab = Ap + b * nn;
            const double cA = tab->bD[b][a], cAT = tab->bD[a][b];   /* b_b D_ba, b_a D_ab */
            const double cH = (a == b) ? h * tab->b[a] : 0.0;
            /* b_i D_ia D_ib / h */
            const double *cM = cMh + ((size_t)a * (SYM_MAX_NODES - 1) + (size_t)(b - 1)) * SYM_MAX_NODES;
            double *Jb = J + (size_t)a * n * nu + (size_t)(b - 1) * n;
            for (int g0 = 0; g0 < n; g0 += SYM_JT)
                for (int d0 = 0; d0 < n; d0 += SYM_JT) {
                    const int gn = n - g0 < SYM_JT ? n - g0 : SYM_JT;
                    const int dn = n - d0 < SYM_JT ? n - d0 : SYM_JT;
                    double v[SYM_JT][SYM_JT] = {{0.0}};
                    SYM_UNROLL_SMALL
                    for (int g = 0; g < gn; g++)
                        SYM_UNROLL_SMALL
                        for (int d = 0; d < dn; d++)
                            v[g][d] = cA * Ab[(size_t)(g0 + g) * n + d0 + d];
                    SYM_UNROLL_SMALL
                    for (int i = 0; i < s; i++) {
                        /* the zero coefficients: in the fixed instances
                         * those of the centre node of an odd rule, D_cc = 0
                         * (a = c or b = c), skipped at compile time */
                        if (fixed ? s % 2 == 1 && 2 * i == s - 1 && (a == i || b == i)
                                  : cM[i] == 0.0)
                            continue;
                        const double *Mi = Mp + i * nn;
                        SYM_UNROLL_SMALL
                        for (int g = 0; g < gn; g++)
                            SYM_UNROLL_SMALL
                            for (int d = 0; d < dn; d++)
                                v[g][d] += cM[i] * Mi[(size_t)(g0 + g) * n + d0 + d];
                    }
                    if (a == b)
                        SYM_UNROLL_SMALL
                        for (int g = 0; g < gn; g++)
                            SYM_UNROLL_SMALL
                            for (int d = 0; d < dn; d++) {
                                const size_t e = (size_t)(g0 + g) * n + d0 + d;
                                v[g][d] += cH * (Ha[e] - Ka[e]);
                            }
                    SYM_UNROLL_SMALL
                    for (int g = 0; g < gn; g++)
                        SYM_UNROLL_SMALL
                        for (int d = 0; d < dn; d++)
                            v[g][d] += cAT * Aa[(size_t)(d0 + d) * n + g0 + g];
                    SYM_UNROLL_SMALL
                    for (int g = 0; g < gn; g++)
                        SYM_UNROLL_SMALL
                        for (int d = 0; d < dn; d++) Jb[(size_t)(g0 + g) * nu + d0 + d] = v[g][d];
                }
        }
    }
}

/* b_i D_ia D_ib / h for the step size h (kept while h stays) */
static void jacobian_coefficients(sym_gtab *t, double h)
{
    const double ih = inverse_step(t, h);
    for (int a = 0; a <= t->s - 2; a++)
        for (int b = 1; b <= t->s - 1; b++)
            for (int i = 0; i < t->s; i++) t->jac_cM[a][b - 1][i] = t->bDD[a][b][i] * ih;
    t->jac_h = h;
}

SYM_INLINE int jacobian_lob_k(sym_gwork *w, double h, const int s, const int n,
                               const int fixed)
{
    if (!(w->tab->jac_h == h)) jacobian_coefficients(w->tab, h);
    jacobian_lob_x(fixed, s, n, h, w->tab, &w->tab->jac_cM[0][0][0], w->Mp, w->Ap, w->Hp,
                   w->Kp, w->J);
    return SYM_OK;   /* non-finite entries surface in the LU or the update */
}

/* f_i += sum_k [ A_kc dg_k + [i > 0] (H_i - K_i)_ck dq_k ],
 * dg = (0 + sum_{a>=1} D_ia Delta_a) / h, dq = Delta_i (the left node does
 * not move, only its velocity does; its H and K are not evaluated) */
#define SYM_CK 8   /* dg in a local array up to this n, else in scratch */
SYM_INLINE void correct_lob_x(const int s, const int n, const double ih,
                              const sym_gtab *restrict tab, const double *restrict Ap,
                              const double *restrict Hp, const double *restrict Kp,
                              const double *restrict dX, double *restrict f,
                              double *restrict scratch)
{
    const size_t nn = (size_t)n * (size_t)n;
    double D[SYM_MAX_NODES][SYM_MAX_NODES] = {{0.0}}, dgl[SYM_CK] = {0.0};
    double *restrict dg = n <= SYM_CK ? dgl : scratch;
    SYM_UNROLL_SMALL
    for (int i = 0; i < s; i++)
        SYM_UNROLL_SMALL
        for (int a = 0; a < s; a++) D[i][a] = tab->D[i][a];
    SYM_UNROLL_SMALL
    for (int i = 0; i < s; i++) {
        const double *A = Ap + i * nn, *H = Hp + i * nn, *K = Kp + i * nn;
        const double *dq = i ? dX + (size_t)(i - 1) * n : NULL;
        double *fi = f + (size_t)i * n;
        SYM_UNROLL_SMALL
        for (int k = 0; k < n; k++) {
            double v = D[i][1] * dX[k];
            SYM_UNROLL_SMALL
            for (int a = 2; a < s; a++) v += D[i][a] * dX[(size_t)(a - 1) * n + k];
            dg[k] = v * ih;
        }
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c++) {
            double v = A[c] * dg[0];
            if (i) v += (H[c * n] - K[c * n]) * dq[0];
            SYM_UNROLL_SMALL
            for (int k = 1; k < n; k++) {
                v += A[k * n + c] * dg[k];
                if (i) v += (H[c * n + k] - K[c * n + k]) * dq[k];
            }
            fi[c] += v;
        }
    }
}

#if SYM_VEC2
/* correct_lob_x for an even n <= 4 in the fixed instances, two components
 * at a time: each lane does the scalar multiplies and adds in their order
 * (bitwise the same f). */
SYM_INLINE void correct_lob_pairs(const int s, const int n, const double ih,
                                  const sym_gtab *restrict tab, const double *restrict Ap,
                                  const double *restrict Hp, const double *restrict Kp,
                                  const double *restrict dX, double *restrict f)
{
    const size_t nn = (size_t)n * (size_t)n;
    const sym_v2d vih = sym_v2_splat(ih);
    SYM_UNROLL_SMALL
    for (int i = 0; i < s; i++) {
        const double *A = Ap + i * nn, *H = Hp + i * nn, *K = Kp + i * nn;
        const double *dq = i ? dX + (size_t)(i - 1) * n : NULL;
        double *fi = f + (size_t)i * n;
        double dg[SYM_PAIR_MAX_N];
        SYM_UNROLL_SMALL
        for (int k = 0; k < n; k += 2) {
            sym_v2d x, v;
            const sym_v2d d1 = sym_v2_splat(tab->D[i][1]);
            x = sym_v2_load(dX + k);
            v = d1 * x;
            SYM_UNROLL_SMALL
            for (int a = 2; a < s; a++) {
                const sym_v2d da = sym_v2_splat(tab->D[i][a]);
                x = sym_v2_load(dX + (size_t)(a - 1) * n + k);
                v += da * x;
            }
            v = v * vih;
            sym_v2_store(dg + k, v);
        }
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c += 2) {
            sym_v2d x, v;
            SYM_UNROLL_SMALL
            for (int k = 0; k < n; k++) {
                const sym_v2d gk = sym_v2_splat(dg[k]);
                x = sym_v2_load(A + k * n + c);
                v = k ? v + x * gk : x * gk;
                if (i) {
                    const sym_v2d qk = sym_v2_splat(dq[k]);
                    const sym_v2d hk = {H[c * n + k], H[(c + 1) * n + k]};
                    const sym_v2d kk = {K[c * n + k], K[(c + 1) * n + k]};
                    v += (hk - kk) * qk;
                }
            }
            x = sym_v2_load(fi + c);
            x += v;
            sym_v2_store(fi + c, x);
        }
    }
}
#endif

SYM_INLINE void correct_lob_k(sym_gwork *w, double h, const int s, const int n,
                              const int fixed)
{
#if SYM_VEC2
    if (pairs_ok(fixed, n)) {
        correct_lob_pairs(s, n, inverse_step(w->tab, h), w->tab, w->Ap, w->Hp, w->Kp, w->dX,
                          w->f);
        return;
    }
#else
    (void)fixed;
#endif
    correct_lob_x(s, n, inverse_step(w->tab, h), w->tab, w->Ap, w->Hp, w->Kp, w->dX, w->f,
                  w->acc);
}

/* ------------------------------------------------------------------ */
/* Predictors (sym_galerkin.c: their derivation and when each is used)  */
/* ------------------------------------------------------------------ */
/* With X1 the last step's increments, X2 the step's before, e = s - 1:
 *   poly:  X_a = E_a0 (-X1_e) + sum_{b=1}^{s-2} E_ab (X1_b - X1_e),
 *   poly2: X_a = sum_p E2_ap Y_p, Y = (-(X2_e + X1_e), X2_b - (X2_e + X1_e)
 *          (b = 1..s-1), X1_b - X1_e (b = 1..s-2)),
 *   poly1: X_a = sum_p E1_ap Y_p, Y = (-(X2_e + X1_e), -X1_e, X1_b - X1_e
 *          (b = 1..s-2)),
 * component by component, for a = 1..s-1. */
SYM_INLINE void predict_x(const int s, const int n, const int kind,
                          const sym_gtab *restrict tab, const double *restrict X1,
                          const double *restrict X2, double *restrict X)
{
    const double *X1e = X1 + (size_t)(s - 2) * n, *X2e = X2 + (size_t)(s - 2) * n;
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k++) {
        double Y[2 * SYM_MAX_NODES] = {0.0};
        int m = 0;
        if (kind == SYM_PRED_POLY) {
            SYM_UNROLL_SMALL
            for (int a = 1; a < s; a++) {
                double v = tab->E[a][0] * (-X1e[k]);
                SYM_UNROLL_SMALL
                for (int b = 1; b < s - 1; b++)
                    v += tab->E[a][b] * (X1[(size_t)(b - 1) * n + k] - X1e[k]);
                X[(size_t)(a - 1) * n + k] = v;
            }
            continue;
        }
        const double base = X2e[k] + X1e[k];   /* q_j - q_{j-2} */
        Y[m++] = -base;
        if (kind == SYM_PRED_POLY2) {
            SYM_UNROLL_SMALL
            for (int b = 1; b < s; b++) Y[m++] = X2[(size_t)(b - 1) * n + k] - base;
        } else {
            Y[m++] = -X1e[k];
        }
        SYM_UNROLL_SMALL
        for (int b = 1; b < s - 1; b++) Y[m++] = X1[(size_t)(b - 1) * n + k] - X1e[k];
        SYM_UNROLL_SMALL
        for (int a = 1; a < s; a++) {
            const double *E = kind == SYM_PRED_POLY2 ? tab->E2[a] : tab->E1[a];
            double v = E[0] * Y[0];
            SYM_UNROLL_SMALL
            for (int p = 1; p < m; p++) v += E[p] * Y[p];
            X[(size_t)(a - 1) * n + k] = v;
        }
    }
}

#if SYM_VEC2
/* X_a = sum_p E_ap Y_p (p < m) for a = 1..s-1, one pair of components */
SYM_INLINE void predict_combine(const int s, const int m, const double *restrict E0,
                                const size_t stride, const sym_v2d *restrict Y,
                                double *restrict X, const int n)
{
    SYM_UNROLL_SMALL
    for (int a = 1; a < s; a++) {
        const double *E = E0 + (size_t)a * stride;
        const sym_v2d e0 = sym_v2_splat(E[0]);
        sym_v2d v = e0 * Y[0];
        SYM_UNROLL_SMALL
        for (int q = 1; q < m; q++) {
            const sym_v2d eq = sym_v2_splat(E[q]);
            v += eq * Y[q];
        }
        sym_v2_store(X + (size_t)(a - 1) * n, v);
    }
}

/* predict_x for an even n <= 4 in the fixed instances, components k, k + 1
 * at a time: each lane does the scalar multiplies and adds in their order
 * (bitwise the same X). */
SYM_INLINE void predict_pairs(const int s, const int n, const int kind,
                              const sym_gtab *restrict tab, const double *restrict X1,
                              const double *restrict X2, double *restrict X)
{
    const double *X1e = X1 + (size_t)(s - 2) * n, *X2e = X2 + (size_t)(s - 2) * n;
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k += 2) {
        sym_v2d x1e, x2e, x, Y[2 * SYM_MAX_NODES];
        x1e = sym_v2_load(X1e + k);
        if (kind == SYM_PRED_POLY) {
            Y[0] = -x1e;
            SYM_UNROLL_SMALL
            for (int b = 1; b < s - 1; b++) {
                x = sym_v2_load(X1 + (size_t)(b - 1) * n + k);
                Y[b] = x - x1e;
            }
            predict_combine(s, s - 1, &tab->E[0][0], SYM_MAX_NODES, Y, X + k, n);
            continue;
        }
        x2e = sym_v2_load(X2e + k);
        const sym_v2d base = x2e + x1e;
        Y[0] = -base;
        /* the second block of Y starts at t: after q_(j-2)'s step's nodes
         * (poly2) or after -X1e (poly1) */
        const int two = kind == SYM_PRED_POLY2, t = two ? s : 2;
        if (two) {
            SYM_UNROLL_SMALL
            for (int b = 1; b < s; b++) {
                x = sym_v2_load(X2 + (size_t)(b - 1) * n + k);
                Y[b] = x - base;
            }
        } else {
            Y[1] = -x1e;
        }
        SYM_UNROLL_SMALL
        for (int b = 1; b < s - 1; b++) {
            x = sym_v2_load(X1 + (size_t)(b - 1) * n + k);
            Y[t + b - 1] = x - x1e;
        }
        if (two) predict_combine(s, 2 * s - 2, &tab->E2[0][0], 2 * SYM_MAX_NODES, Y, X + k, n);
        else predict_combine(s, s, &tab->E1[0][0], SYM_MAX_NODES + 1, Y, X + k, n);
    }
}
#endif

SYM_INLINE void predict_k(sym_gwork *w, const int kind, const int s, const int n,
                          const int fixed)
{
#if SYM_VEC2
    if (pairs_ok(fixed, n)) {
        predict_pairs(s, n, kind, w->tab, w->prev_X, w->prev2_X, w->X);
        return;
    }
#else
    (void)fixed;
#endif
    predict_x(s, n, kind, w->tab, w->prev_X, w->prev2_X, w->X);
}

/* ------------------------------------------------------------------ */
/* The step's outputs (sym_galerkin.c, step_outputs and plausible)      */
/* ------------------------------------------------------------------ */
/* p_{j+1} = p_j + h sum_i b_i f_i,  q_{j+1} = q_j + X_{s-1},  the interior
 * nodes q_j + X_a (a = 1..s-2) when asked for; returns the discrete work
 * of the potential over h, sum_i b_i grad V_i . g_i, at r points. */
SYM_INLINE double outputs_x(const int s, const int r, const int n, const double h,
                            const double *restrict b, const double *restrict q,
                            const double *restrict p, const double *restrict X,
                            const double *restrict f, const double *restrict dVp,
                            const double *restrict Gp, double *restrict q1,
                            double *restrict p1, double *restrict qmid)
{
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k++) {
        double acc = b[0] * f[k];
        SYM_UNROLL_SMALL
        for (int i = 1; i < r; i++) acc += b[i] * f[(size_t)i * n + k];
        p1[k] = p[k] + h * acc;
    }
    SYM_UNROLL_SMALL
    for (int k = 0; k < n; k++) q1[k] = q[k] + X[(size_t)(s - 2) * n + k];
    if (qmid)
        SYM_UNROLL_SMALL
        for (int a = 1; a <= s - 2; a++)
            SYM_UNROLL_SMALL
            for (int k = 0; k < n; k++)
                qmid[(size_t)(a - 1) * n + k] = q[k] + X[(size_t)(a - 1) * n + k];
    double work = 0.0;
    SYM_UNROLL_SMALL
    for (int i = 0; i < r; i++) {
        double dot = dVp[(size_t)i * n] * Gp[(size_t)i * n];
        SYM_UNROLL_SMALL
        for (int k = 1; k < n; k++) dot += dVp[(size_t)i * n + k] * Gp[(size_t)i * n + k];
        work = i ? work + b[i] * dot : b[i] * dot;
    }
    return work;
}

SYM_INLINE double outputs_k(sym_gwork *w, double h, const int s, const int n)
{
    return outputs_x(s, w->tab->r, n, h, w->tab->b, w->q, w->p, w->X, w->f, w->dVp, w->Gp,
                     w->q1, w->p1, w->qmid);
}

SYM_INLINE double outputs_lob_k(sym_gwork *w, double h, const int s, const int n)
{
    return outputs_x(s, s, n, h, w->tab->b, w->q, w->p, w->X, w->f, w->dVp, w->Gp, w->q1,
                     w->p1, w->qmid);
}

/* ------------------------------------------------------------------ */
/* Instances                                                            */
/* ------------------------------------------------------------------ */
#define SYM_KERNEL_SET(FAM, NAME, S, N, FIXED)                                          \
    static void predict_##FAM##NAME(sym_gwork *w, int kind)                               \
    {                                                                                   \
        predict_k(w, kind, S, N, FIXED);                                                \
    }                                                                                   \
    static void form_points_##FAM##NAME(sym_gwork *w, const double *q, double h)          \
    {                                                                                   \
        form_points_##FAM##k(w, q, h, S, N);                                            \
    }                                                                                   \
    static double residual_##FAM##NAME(sym_gwork *w, const double *p, double h, double *rn) \
    {                                                                                   \
        return residual_##FAM##k(w, p, h, rn, S, N, FIXED);                             \
    }                                                                                   \
    static int jacobian_##FAM##NAME(sym_gwork *w, double h)                               \
    {                                                                                   \
        return jacobian_##FAM##k(w, h, S, N, FIXED);                                    \
    }                                                                                   \
    static void correct_##FAM##NAME(sym_gwork *w, double h)                               \
    {                                                                                   \
        correct_##FAM##k(w, h, S, N, FIXED);                                            \
    }                                                                                   \
    static double outputs_##FAM##NAME(sym_gwork *w, double h)                             \
    {                                                                                   \
        return outputs_##FAM##k(w, h, S, N);                                            \
    }

SYM_KERNEL_SET(, 1, w->tab->s, 1, 0)
SYM_KERNEL_SET(, 2, w->tab->s, 2, 0)
SYM_KERNEL_SET(, 3, w->tab->s, 3, 0)
SYM_KERNEL_SET(, 4, w->tab->s, 4, 0)
SYM_KERNEL_SET(, any, w->tab->s, w->n, 0)
SYM_KERNEL_SET(lob_, 3_1, 3, 1, 1)
SYM_KERNEL_SET(lob_, 3_2, 3, 2, 1)
SYM_KERNEL_SET(lob_, 3_3, 3, 3, 1)
SYM_KERNEL_SET(lob_, 3_4, 3, 4, 1)
SYM_KERNEL_SET(lob_, 3_any, 3, w->n, 1)
SYM_KERNEL_SET(lob_, 4_1, 4, 1, 1)
SYM_KERNEL_SET(lob_, 4_2, 4, 2, 1)
SYM_KERNEL_SET(lob_, 4_3, 4, 3, 1)
SYM_KERNEL_SET(lob_, 4_4, 4, 4, 1)
SYM_KERNEL_SET(lob_, 5_1, 5, 1, 1)
SYM_KERNEL_SET(lob_, 5_2, 5, 2, 1)
SYM_KERNEL_SET(lob_, 5_3, 5, 3, 1)
SYM_KERNEL_SET(lob_, 5_4, 5, 4, 1)
SYM_KERNEL_SET(lob_, any, w->tab->s, w->n, 0)

#define KSET(FAM, NAME)                                                                 \
    {predict_##FAM##NAME, form_points_##FAM##NAME, residual_##FAM##NAME,                 \
     jacobian_##FAM##NAME, correct_##FAM##NAME, outputs_##FAM##NAME}

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
        /* the fixed Lobatto instances skip the centre node's zero
         * Newton-matrix terms at compile time (jacobian_lob_x): only where
         * its D_cc is exactly 0 */
        const int centre_zero = s % 2 == 0 || w->tab->D[(s - 1) / 2][(s - 1) / 2] == 0.0;
        w->k = lob_any;
        if (fixed && centre_zero && s == 3) w->k = n <= 4 ? lob_fixed[0][n - 1] : lob_3_any;
        if (fixed && centre_zero && s >= 4 && s <= 5 && n <= 4) w->k = lob_fixed[s - 3][n - 1];
    } else {
        w->k = (fixed && n <= 4) ? gen_fixed[n - 1] : gen_any;
    }
}
