/*
 * sym_gk_pairs.h -- the Lobatto kernels of sym_gk_lobatto.h and the
 * predictors of sym_gk_predict.h two components at a time, in the
 * compiler's two-lane vectors (sym_simd.h), for the fixed instances at an
 * even n <= SYM_PAIR_MAX_N.  Each lane does the scalar kernel's multiplies
 * and adds in the scalar order, so the results are bitwise those of the
 * scalar kernels (the bitwise check and tests/c_core/test_speed_paths.py).
 * Internal to sym_galerkin_kernels.c, which instantiates these workers
 * (private).
 */
#ifndef SYM_GK_PAIRS_H
#define SYM_GK_PAIRS_H

#include "sym_gwork.h"
#include "sym_simd.h"
#include "sym_unroll.h"

#include <float.h>
#include <math.h>

/* Whether an instance runs the paired kernels: the fixed ones at an even
 * n <= SYM_PAIR_MAX_N, where the vector types exist. */
#define SYM_PAIR_MAX_N 4
SYM_INLINE int pairs_ok(const int fixed, const int n)
{
    return SYM_VEC2 && fixed && n % 2 == 0 && n <= SYM_PAIR_MAX_N;
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
            const sym_v2d g0 = sym_v2_splat(g[0]);
            sym_v2d sa = sym_v2_load(A + c) * g0;
            sym_v2d sm = (sym_v2d){M[c * n], M[(c + 1) * n]} * g0;
            SYM_UNROLL_SMALL
            for (int k = 1; k < n; k++) {
                const sym_v2d gk = sym_v2_splat(g[k]);
                sa += sym_v2_load(A + k * n + c) * gk;
                sm += (sym_v2d){M[c * n + k], M[(c + 1) * n + k]} * gk;
            }
            const sym_v2d fc = half * sa - sym_v2_load(dV + c);
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
        const sym_v2d cf = sym_v2_splat(h * tab->b[a]);
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c += 2) {
            sym_v2d v = cf * sym_v2_load(f + (size_t)a * n + c);
            if (a == 0) v = sym_v2_load(p + c) + v;
            SYM_UNROLL_SMALL
            for (int i = 0; i < s; i++)
                v += sym_v2_splat(tab->bD[i][a]) * sym_v2_load(P + (size_t)i * n + c);
            sym_v2_store(R + (size_t)a * n + c, v);
            rv = sym_v2_nanmax(rv, sym_v2_abs(v));
        }
    }
    *Rnorm = sym_nanmax(rv[0], rv[1]);
    return scale > 0.0 ? scale : DBL_MIN;
}

/* The sums of jacobian_lob_x for an even n <= SYM_PAIR_MAX_N in the fixed
 * instances, two adjacent columns d, d + 1 of a block row at a time: each
 * lane does the scalar entry's multiplies and adds in its order, so J is
 * bitwise the same.  A_a^T's pairs are columns of A_a, gathered once per
 * node into At. */
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
                    sym_v2d v = vA * sym_v2_load(Ab + e);
                    SYM_UNROLL_SMALL
                    for (int i = 0; i < s; i++) {
                        if (s % 2 == 1 && 2 * i == s - 1 && (a == i || b == i)) continue;
                        v += sym_v2_splat(cM[i]) * sym_v2_load(Mp + i * nn + e);
                    }
                    if (a == b) v += vH * (sym_v2_load(Ha + e) - sym_v2_load(Ka + e));
                    v += vAT * sym_v2_load(&At[a][e]);
                    sym_v2_store(Jb + (size_t)g * nu + d, v);
                }
        }
    }
}

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
            sym_v2d v = sym_v2_splat(tab->D[i][1]) * sym_v2_load(dX + k);
            SYM_UNROLL_SMALL
            for (int a = 2; a < s; a++)
                v += sym_v2_splat(tab->D[i][a]) * sym_v2_load(dX + (size_t)(a - 1) * n + k);
            sym_v2_store(dg + k, v * vih);
        }
        SYM_UNROLL_SMALL
        for (int c = 0; c < n; c += 2) {
            sym_v2d v;
            SYM_UNROLL_SMALL
            for (int k = 0; k < n; k++) {
                const sym_v2d x = sym_v2_load(A + k * n + c), gk = sym_v2_splat(dg[k]);
                v = k ? v + x * gk : x * gk;
                if (i) {
                    const sym_v2d qk = sym_v2_splat(dq[k]);
                    const sym_v2d hk = {H[c * n + k], H[(c + 1) * n + k]};
                    const sym_v2d kk = {K[c * n + k], K[(c + 1) * n + k]};
                    v += (hk - kk) * qk;
                }
            }
            sym_v2_store(fi + c, sym_v2_load(fi + c) + v);
        }
    }
}

/* X_a = sum_p E_ap Y_p (p < m) for a = 1..s-1, one pair of components */
SYM_INLINE void predict_combine(const int s, const int m, const double *restrict E0,
                                const size_t stride, const sym_v2d *restrict Y,
                                double *restrict X, const int n)
{
    SYM_UNROLL_SMALL
    for (int a = 1; a < s; a++) {
        const double *E = E0 + (size_t)a * stride;
        sym_v2d v = sym_v2_splat(E[0]) * Y[0];
        SYM_UNROLL_SMALL
        for (int q = 1; q < m; q++) v += sym_v2_splat(E[q]) * Y[q];
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
        sym_v2d Y[2 * SYM_MAX_NODES];
        const sym_v2d x1e = sym_v2_load(X1e + k);
        if (kind == SYM_PRED_POLY) {
            Y[0] = -x1e;
            SYM_UNROLL_SMALL
            for (int b = 1; b < s - 1; b++) Y[b] = sym_v2_load(X1 + (size_t)(b - 1) * n + k) - x1e;
            predict_combine(s, s - 1, &tab->E[0][0], SYM_MAX_NODES, Y, X + k, n);
            continue;
        }
        const sym_v2d base = sym_v2_load(X2e + k) + x1e;
        Y[0] = -base;
        /* the second block of Y starts at t: after q_(j-2)'s step's nodes
         * (poly2) or after -X1e (poly1) */
        const int two = kind == SYM_PRED_POLY2, t = two ? s : 2;
        if (two) {
            SYM_UNROLL_SMALL
            for (int b = 1; b < s; b++) Y[b] = sym_v2_load(X2 + (size_t)(b - 1) * n + k) - base;
        } else {
            Y[1] = -x1e;
        }
        SYM_UNROLL_SMALL
        for (int b = 1; b < s - 1; b++)
            Y[t + b - 1] = sym_v2_load(X1 + (size_t)(b - 1) * n + k) - x1e;
        if (two) predict_combine(s, 2 * s - 2, &tab->E2[0][0], 2 * SYM_MAX_NODES, Y, X + k, n);
        else predict_combine(s, s, &tab->E1[0][0], SYM_MAX_NODES + 1, Y, X + k, n);
    }
}
#endif /* SYM_VEC2 */

#endif /* SYM_GK_PAIRS_H */
