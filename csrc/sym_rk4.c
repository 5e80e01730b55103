/*
 * sym_rk4.c -- classical fourth-order Runge-Kutta on Hamilton's equations
 *
 *   qdot = M(q)^{-1} p,      pdot = -grad V(q) + 1/2 qdot^T (dM/dq) qdot
 *                                 = -grad V(q) + 1/2 A(q, qdot)^T qdot,
 *
 * the explicit, non-symplectic reference of the papers (AXIOMS Section 6,
 * TOP Sections 3-4).  Order 4.  It conserves linear invariants exactly: for
 * a cyclic coordinate pdot_c is exactly zero at every stage.
 */
#include "sym_internal.h"

#include <math.h>
#include <string.h>

/* One stage: (qs, ps) -> (kq, kp) = (M^{-1} ps, 1/2 A(qs, v)^T v - grad V). */
static int rhs(sym_work *w, const double *qs, const double *ps, double *kq,
               double *kp)
{
    const int n = w->n;
    sym_eval_out out = {0};
    out.M = w->Ms;
    out.dV = w->dVs;
    int st = sym_eval(w->sys, qs, NULL, SYM_NEED_M | SYM_NEED_DV, &out, w->scratch);
    if (st) return st;
    st = sym_cholesky(n, w->Ms);
    if (st) return st;
    memcpy(kq, ps, sizeof(double) * (size_t)n);
    sym_cholesky_solve(n, w->Ms, kq);
    sym_eval_out oa = {0};
    oa.A = w->As;
    st = sym_eval(w->sys, qs, kq, SYM_NEED_A, &oa, w->scratch);
    if (st) return st;
    for (int c = 0; c < n; c++) {
        double sa = 0.0;
        for (int k = 0; k < n; k++) sa += w->As[k * n + c] * kq[k];
        kp[c] = 0.5 * sa - w->dVs[c];
    }
    return SYM_OK;
}

int sym_rk4_step(sym_work *w, const double *q, const double *p, double h,
                 double *q1, double *p1, sym_step_info *info)
{
    const int n = w->n;
    static const double cst[4] = {0.0, 0.5, 0.5, 1.0};
    int st;
    if (info) { info->iterations = 0; info->residual = info->residual_rel = info->update = 0.0; }
    if (!(h != 0.0) || !isfinite(h)) return SYM_EINVAL;
    for (int s = 0; s < 4; s++) {
        double *kq = w->kq + (size_t)s * n, *kp = w->kp + (size_t)s * n;
        if (s == 0) {
            st = rhs(w, q, p, kq, kp);
        } else {
            const double *kqp = w->kq + (size_t)(s - 1) * n, *kpp = w->kp + (size_t)(s - 1) * n;
            for (int k = 0; k < n; k++) {
                w->qs[k] = q[k] + cst[s] * h * kqp[k];
                w->ps[k] = p[k] + cst[s] * h * kpp[k];
            }
            st = rhs(w, w->qs, w->ps, kq, kp);
        }
        if (st) return st;
    }
    const double h6 = h / 6.0;
    for (int k = 0; k < n; k++) {
        const double dq = w->kq[k] + 2.0 * w->kq[n + k] + 2.0 * w->kq[2 * n + k] + w->kq[3 * n + k];
        const double dp = w->kp[k] + 2.0 * w->kp[n + k] + 2.0 * w->kp[2 * n + k] + w->kp[3 * n + k];
        q1[k] = q[k] + h6 * dq;
        p1[k] = p[k] + h6 * dp;
        if (!isfinite(q1[k]) || !isfinite(p1[k])) return SYM_ENONFINITE;
    }
    return SYM_OK;
}
