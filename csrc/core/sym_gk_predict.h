/*
 * sym_gk_predict.h -- the predictors of a step's increments and the
 * step's outputs, for both families of kernels (the paired predictor is
 * sym_gk_pairs.h).  Internal to sym_galerkin_kernels.c, which instantiates
 * these workers (private).
 */
#ifndef SYM_GK_PREDICT_H
#define SYM_GK_PREDICT_H

#include "sym_gwork.h"
#include "sym_unroll.h"

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
    if (n > 4) {
        /* the component index innermost (the vectoriser's loop): each
         * X_a's sum over the same terms in the same order as below, each
         * Y_p formed again for every a (the same operations, the same bits) */
        for (int a = 1; a < s; a++) {
            double *restrict Xa = X + (size_t)(a - 1) * n;
            if (kind == SYM_PRED_POLY) {
                const double e0 = tab->E[a][0];
                for (int k = 0; k < n; k++) Xa[k] = e0 * (-X1e[k]);
                for (int b = 1; b < s - 1; b++) {
                    const double eb = tab->E[a][b];
                    const double *X1b = X1 + (size_t)(b - 1) * n;
                    for (int k = 0; k < n; k++) Xa[k] += eb * (X1b[k] - X1e[k]);
                }
                continue;
            }
            const double *E = kind == SYM_PRED_POLY2 ? tab->E2[a] : tab->E1[a];
            int m = 0;
            const double e0 = E[m++];
            for (int k = 0; k < n; k++) Xa[k] = e0 * (-(X2e[k] + X1e[k]));
            if (kind == SYM_PRED_POLY2) {
                for (int b = 1; b < s; b++) {
                    const double eb = E[m++];
                    const double *X2b = X2 + (size_t)(b - 1) * n;
                    for (int k = 0; k < n; k++) Xa[k] += eb * (X2b[k] - (X2e[k] + X1e[k]));
                }
            } else {
                const double e1 = E[m++];
                for (int k = 0; k < n; k++) Xa[k] += e1 * (-X1e[k]);
            }
            for (int b = 1; b < s - 1; b++) {
                const double eb = E[m++];
                const double *X1b = X1 + (size_t)(b - 1) * n;
                for (int k = 0; k < n; k++) Xa[k] += eb * (X1b[k] - X1e[k]);
            }
        }
        return;
    }
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

/* ------------------------------------------------------------------ */
/* The step's outputs (step_outputs; sym_galerkin_plausible)          */
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

#endif /* SYM_GK_PREDICT_H */
