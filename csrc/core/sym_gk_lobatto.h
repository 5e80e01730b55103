/*
 * sym_gk_lobatto.h -- the Galerkin kernels for Lobatto quadrature at the
 * nodes (B = I): Simpson and its family, one component at a time (the
 * paired two-lane forms are sym_gk_pairs.h).  Internal to
 * sym_galerkin_kernels.c, which instantiates these workers (private).
 *
 * With the nodes as quadrature points the sums of sym_gk_general.h
 * collapse to
 *   q_i = q_j + X_i,  R_a = [a = 0] p_j + sum_i b_i D_ia P_i + h b_a f_a,
 *   J_ab = sum_i (b_i D_ia D_ib / h) M_i + b_b D_ba A_b + b_a D_ab A_a^T
 *          + [a = b] h b_a (H_a - K_a).
 *
 * Each kernel hands its arrays to a worker as restrict parameters and
 * copies the table coefficients it needs to locals first, so that in the
 * fixed-size instances coefficients, point values and sums stay in
 * registers (a store to Q, R or J no longer forces the tables and X to be
 * read again); every output entry is still the sum written above, term by
 * term in the same order, so the results are bitwise those of the plain
 * loops.  (The local tables are zeroed only to quiet -Wmaybe-uninitialized
 * in the runtime-size instances.)
 */
#ifndef SYM_GK_LOBATTO_H
#define SYM_GK_LOBATTO_H

#include "sym_gk_general.h"

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

#if SYM_FMA_DISPATCH
/* form_points_lob_x four components at a time in AVX2 vectors (the
 * increments of a component group held in registers over the points), the
 * last n mod 4 components by it: every entry's operations in the same
 * order and no fused multiply-add, so the same numbers.  For n > 4. */
SYM_AVX2 static inline void form_points_lob_v4_k(sym_gwork *w, const double *restrict q,
                                                 double h, const int s, const int n)
{
    const sym_gtab *tab = w->tab;
    const double ih = inverse_step(w->tab, h);
    const double *restrict X = w->X;
    double *restrict Qp = w->Qp, *restrict Gp = w->Gp;
    const sym_v4d ihv = sym_v4_splat(ih);
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        const sym_v4d qv = sym_v4_load(q + k);
        sym_v4d Xv[SYM_MAX_NODES - 1];
        for (int a = 1; a < s; a++) Xv[a - 1] = sym_v4_load(X + (size_t)(a - 1) * n + k);
        sym_v4_store(Qp + k, qv);
        for (int i = 1; i < s; i++) sym_v4_store(Qp + (size_t)i * n + k, qv + Xv[i - 1]);
        for (int i = 0; i < s; i++) {
            sym_v4d v = sym_v4_splat(tab->D[i][1]) * Xv[0];
            for (int a = 2; a < s; a++) v += sym_v4_splat(tab->D[i][a]) * Xv[a - 1];
            sym_v4_store(Gp + (size_t)i * n + k, v * ihv);
        }
    }
    for (; k < n; k++) {
        Qp[k] = q[k];
        for (int i = 1; i < s; i++) Qp[(size_t)i * n + k] = q[k] + X[(size_t)(i - 1) * n + k];
        for (int i = 0; i < s; i++) {
            double v = tab->D[i][1] * X[k];
            for (int a = 2; a < s; a++) v += tab->D[i][a] * X[(size_t)(a - 1) * n + k];
            Gp[(size_t)i * n + k] = v * ih;
        }
    }
}
#endif

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

/* The block J_ab (rows a n.., columns (b-1) n..) in tiles of at most
 * SYM_JT x SYM_JT entries, each entry summed in a register in the order
 *   b_b D_ba A_b + sum_{i: b_i D_ia D_ib != 0} (b_i D_ia D_ib / h) M_i
 *   + [a = b] h b_a (H_a - K_a) + b_a D_ab A_a^T. */
#define SYM_JT 4
SYM_INLINE void jacobian_lob_x(const int fixed, const int s, const int n, const double h,
                               const sym_gtab *restrict tab,
                               const double *restrict cMh,   /* tab->jac_cM */
                               const double *restrict Mp,
                               const double *restrict Ap, const double *restrict Hp,
                               const double *restrict Kp, double *restrict J)
{
    const int nu = (s - 1) * n;
    const size_t nn = (size_t)n * (size_t)n;
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

#endif /* SYM_GK_LOBATTO_H */
