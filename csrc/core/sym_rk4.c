/*
 * sym_rk4.c -- classical fourth-order Runge-Kutta on Hamilton's equations
 *
 *   qdot = M(q)^{-1} p,      pdot = -grad V(q) + 1/2 qdot^T (dM/dq) qdot
 *                                 = -grad V(q) + 1/2 A(q, qdot)^T qdot,
 *
 * the explicit, non-symplectic reference of the papers (AXIOMS Section 6,
 * TOP Sections 3-4).  Order 4.  It conserves linear invariants exactly: for
 * a cyclic coordinate pdot_c is exactly zero at every stage.
 *
 * With a force (sym_force_api.h, sym_force) pdot gains F(t_j + c_s h, q_s, v_s)
 * at each stage s (v_s = M(q_s)^-1 p_s), and the work and impulse of the
 * step are integrated as two more components of the same system,
 * Wdot = F . qdot and Idot = F:  W_j = h/6 sum_s w_s F_s . v_s,
 * I_j = h/6 sum_s w_s F_s (w = 1, 2, 2, 1), so that p_{j+1,c} - p_{j,c} = I_{j,c}
 * for a cyclic coordinate c.
 */
#include "sym_forces.h"
#include "sym_linalg.h"
#include "sym_scheme.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct rk4_work {
    sym_work base;                   /* first: the driver's part          */
    double *kq, *kp;                 /* the four stages, 4 n each        */
    double *qs, *ps, *vs, *dVs, *acc, *tmp;   /* n each                  */
    double *Ms, *As;                 /* n x n each                       */
} rk4_work;

/* The workspace: the stages kq, kp (4 n each), qs, ps, vs, dVs, acc, tmp
 * (n each), M and A (n x n each). */
#define PARTS 10

static void part_sizes(int n, double *c)
{
    const double dn = (double)n;
    const double sizes[PARTS] = {4 * dn, 4 * dn, dn, dn, dn, dn, dn, dn, dn * dn, dn * dn};
    memcpy(c, sizes, sizeof(sizes));
}

static int rk4_work_size(const sym_method *m, int n, double *doubles)
{
    double c[PARTS];
    (void)m;
    part_sizes(n, c);
    *doubles = sym_slices_size(c, PARTS);
    return SYM_OK;
}

static int rk4_setup(sym_work *w, double *cur)
{
    rk4_work *k = (rk4_work *)w;
    double c[PARTS];
    double **const slot[] = {&k->kq, &k->kp, &k->qs, &k->ps, &k->vs,
                             &k->dVs, &k->acc, &k->tmp, &k->Ms, &k->As};
    SYM_STATIC_CHECK(sizeof(slot) / sizeof(slot[0]) == PARTS);
    part_sizes(w->n, c);
    sym_lay_out(cur, slot, c, PARTS);
    return SYM_OK;
}

static void rk4_reset(sym_work *w)
{
    (void)w;   /* nothing carries over between steps */
}

/* Stage `stage` at time ts: (qs, ps) -> (kq, kp) = (M^{-1} ps, 1/2 A(qs, v)^T v
 * - grad V [+ F(ts, qs, v), left in force->Fx; the stage is the force's
 * point, a held force's value with hold_points = 4]). */
static int rhs(rk4_work *w, int stage, double ts, const double *qs, const double *ps,
               double *kq, double *kp)
{
    const int n = w->base.n;
    sym_eval_out out = {0};
    out.M = w->Ms;
    out.dV = w->dVs;
    w->base.counts.evaluations++;
    int st = sym_eval(w->base.sys, qs, NULL, SYM_NEED_M | SYM_NEED_DV, &out, w->base.scratch);
    if (st) return st;
    st = sym_cholesky(n, w->Ms);
    if (st) return st;
    memcpy(kq, ps, sizeof(double) * (size_t)n);
    sym_cholesky_solve(n, w->Ms, kq);
    sym_eval_out oa = {0};
    oa.A = w->As;
    w->base.counts.evaluations++;
    st = sym_eval(w->base.sys, qs, kq, SYM_NEED_A, &oa, w->base.scratch);
    if (st) return st;
    for (int c = 0; c < n; c++) {
        double sa = 0.0;
        for (int k = 0; k < n; k++) sa += w->As[k * n + c] * kq[k];
        kp[c] = 0.5 * sa - w->dVs[c];
    }
    sym_fwork *fw = w->base.force;
    if (fw) {
        st = sym_force_eval(fw, ts, w->base.k, stage, qs, kq, SYM_FORCE_F, fw->Fx, NULL, NULL);
        if (st) return st;
        for (int c = 0; c < n; c++) kp[c] += fw->Fx[c];
    }
    return SYM_OK;
}

/* The work and impulse of stage s at t_j + c h of weight wgt (force->Fx,
 * velocity kq), and the stage as a point of the work's quadrature. */
static void stage_work(sym_fwork *fw, int n, int s, double c, double wgt, const double *kq)
{
    double dot = 0.0;
    for (int k = 0; k < n; k++) {
        dot += fw->Fx[k] * kq[k];
        fw->impulse[k] += wgt * fw->Fx[k];
    }
    fw->work += wgt * dot;
    fw->pw_x[s] = c;
    fw->pw_b[s] = wgt / 6.0;
    fw->pw_P[s] = dot;
    memcpy(fw->pw_F + (size_t)s * n, fw->Fx, sizeof(double) * (size_t)n);
}

static int rk4_step(sym_work *ws, const double *q, const double *p, double h, double *q1,
                    double *p1, double *qmid, sym_step_info *info)
{
    rk4_work *w = (rk4_work *)ws;
    const int n = ws->n;
    static const double cst[4] = {0.0, 0.5, 0.5, 1.0};
    static const double wgt[4] = {1.0, 2.0, 2.0, 1.0};
    sym_fwork *fw = ws->force;
    int st;
    (void)qmid;
    (void)info;   /* no iterations: stays zeroed */
    if (fw) {
        fw->work = 0.0;
        memset(fw->impulse, 0, sizeof(double) * (size_t)n);
    }
    for (int s = 0; s < 4; s++) {
        double *kq = w->kq + (size_t)s * n, *kp = w->kp + (size_t)s * n;
        const double ts = ws->t + cst[s] * h;
        if (s == 0) {
            st = rhs(w, s, ts, q, p, kq, kp);
        } else {
            const double *kqp = w->kq + (size_t)(s - 1) * n, *kpp = w->kp + (size_t)(s - 1) * n;
            for (int k = 0; k < n; k++) {
                w->qs[k] = q[k] + cst[s] * h * kqp[k];
                w->ps[k] = p[k] + cst[s] * h * kpp[k];
            }
            st = rhs(w, s, ts, w->qs, w->ps, kq, kp);
        }
        if (st) return st;
        if (fw) stage_work(fw, n, s, cst[s], wgt[s], kq);
    }
    if (fw) {
        fw->work *= h / 6.0;
        for (int k = 0; k < n; k++) fw->impulse[k] *= h / 6.0;
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

/*
 * Jacobian of the right-hand side F(q, p) = (v, f), v = M^{-1} p,
 * f = 1/2 A(q,v)^T v - grad V [+ F(t, q, v)]:
 *   dv/dq = -M^{-1} A,  dv/dp = M^{-1},
 *   df/dq = (H - K) + A^T dv/dq  [+ Fq + Fv dv/dq],
 *   df/dp = A^T M^{-1}  [+ Fv M^{-1}]
 * (H = H(q, v), K = hess V).  JF is 2n x 2n, (q, p) ordering.
 */
static int rhs_jacobian(rk4_work *w, int stage, double ts, const double *qs, const double *ps,
                        double *JF, double *Minv, double *Hb, double *Kb)
{
    const int n = w->base.n, m = 2 * n;
    int st = rhs(w, stage, ts, qs, ps, w->vs, w->acc);   /* v in vs; Ms = chol(M); As = A(q, v) */
    if (st) return st;
    sym_fwork *fw = w->base.force;
    if (fw) {
        st = sym_force_eval(fw, ts, w->base.k, stage, qs, w->vs, SYM_FORCE_DQ | SYM_FORCE_DV, NULL,
                            fw->Fq, fw->Fv);
        if (st) return st;
    }
    sym_eval_out out = {0};
    out.H = Hb;
    out.d2V = Kb;
    w->base.counts.evaluations++;
    st = sym_eval(w->base.sys, qs, w->vs, SYM_NEED_H | SYM_NEED_D2V, &out, w->base.scratch);
    if (st) return st;
    /* Minv columns */
    for (int c = 0; c < n; c++) {
        for (int k = 0; k < n; k++) w->tmp[k] = (k == c) ? 1.0 : 0.0;
        sym_cholesky_solve(n, w->Ms, w->tmp);
        for (int k = 0; k < n; k++) Minv[k * n + c] = w->tmp[k];
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double dvdq = 0.0, dfdp = 0.0;
            for (int k = 0; k < n; k++) {
                dvdq -= Minv[i * n + k] * w->As[k * n + j];
                dfdp += w->As[k * n + i] * Minv[k * n + j];
            }
            JF[i * m + j] = dvdq;
            JF[i * m + n + j] = Minv[i * n + j];
            JF[(n + i) * m + n + j] = dfdp;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double v = Hb[i * n + j] - Kb[i * n + j];
            for (int k = 0; k < n; k++) v += w->As[k * n + i] * JF[k * m + j];
            JF[(n + i) * m + j] = v;
        }
    if (fw)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double vq = fw->Fq[i * n + j], vp = 0.0;
                for (int k = 0; k < n; k++) {
                    vq += fw->Fv[i * n + k] * JF[k * m + j];   /* Fv dv/dq */
                    vp += fw->Fv[i * n + k] * Minv[k * n + j];  /* Fv M^-1  */
                }
                JF[(n + i) * m + j] += vq;
                JF[(n + i) * m + n + j] += vp;
            }
    return SYM_OK;
}

/* The tangent map of the step just taken (its stages kq, kp in the
 * workspace), applied to the k columns of V: out = T V with T = D, or
 * (ublocks = 1) T = [D | B] for V's last n rows the variations du of a force
 * held over the step (it adds u to pdot at every stage), or (ublocks = 4)
 * T = [D | B_0 .. B_3] for a held value u_s at each stage s, where
 *   T = [I | 0] + h/6 (K1 + 2 K2 + 2 K3 + K4),
 *   K_s = JF(y_s) ([I | 0] + c_s h K_{s-1}) + [0 | E_s],  E_s = d(qdot, pdot)/du = [0; I]
 * in the columns of the u that stage s adds (all of them held, u_s per stage),
 * the linearised stages (exact for the scheme, not for the flow). */
static int rk4_tangent(sym_work *ws, const double *q, const double *p, double h, int kc,
                       int ublocks, const double *V, double *out)
{
    rk4_work *w = (rk4_work *)ws;
    const int n = ws->n, m = 2 * n, c = m + ublocks * n;
    const size_t mc = (size_t)m * (size_t)c, nn = (size_t)n * (size_t)n;
    static const double cst[4] = {0.0, 0.5, 0.5, 1.0};
    static const double wgt[4] = {1.0, 2.0, 2.0, 1.0};
    int st = SYM_OK;
    double *buf = malloc(sizeof(double) * ((size_t)m * m + 4 * mc + 3 * nn));
    if (!buf) return SYM_ENOMEM;
    double *JF = buf, *Y = JF + (size_t)m * m, *Ks = Y + mc, *Kprev = Ks + mc;
    double *Minv = Kprev + mc, *Hb = Minv + nn, *Kb = Hb + nn, *T = Kb + nn;
    for (size_t e = 0; e < mc; e++) T[e] = 0.0;
    for (int i = 0; i < m; i++) T[(size_t)i * c + i] = 1.0;
    for (int s = 0; s < 4 && !st; s++) {
        /* stage state y_s = y + c_s h k_{s-1}, exactly as in the step */
        for (int k = 0; k < n; k++) {
            w->qs[k] = s ? q[k] + cst[s] * h * w->kq[(size_t)(s - 1) * n + k] : q[k];
            w->ps[k] = s ? p[k] + cst[s] * h * w->kp[(size_t)(s - 1) * n + k] : p[k];
        }
        st = rhs_jacobian(w, s, ws->t + cst[s] * h, w->qs, w->ps, JF, Minv, Hb, Kb);
        for (int i = 0; i < m && !st; i++)
            for (int j = 0; j < c; j++)
                Y[(size_t)i * c + j] =
                    (i == j ? 1.0 : 0.0) + (s ? cst[s] * h * Kprev[(size_t)i * c + j] : 0.0);
        for (int i = 0; i < m && !st; i++)
            for (int j = 0; j < c; j++) {
                const int ju = ublocks > 1 ? m + s * n : m;   /* stage s's u columns */
                double v = (j >= ju && j < ju + n && i >= n && j - ju == i - n) ? 1.0 : 0.0;
                for (int k = 0; k < m; k++) v += JF[(size_t)i * m + k] * Y[(size_t)k * c + j];
                Ks[(size_t)i * c + j] = v;
            }
        for (size_t e = 0; e < mc && !st; e++) T[e] += h / 6.0 * wgt[s] * Ks[e];
        memcpy(Kprev, Ks, sizeof(double) * mc);
    }
    for (int i = 0; i < m && !st; i++)
        for (int j = 0; j < kc; j++) {
            double v = 0.0;
            for (int l = 0; l < c; l++) v += T[(size_t)i * c + l] * V[(size_t)l * kc + j];
            out[(size_t)i * kc + j] = v;
        }
    free(buf);
    return st;
}

/* explicit: no Newton system (unknowns and newton_system NULL) */
const sym_scheme_ops sym_rk4_ops = {
    .state_size = sizeof(rk4_work), .work_size = rk4_work_size, .setup = rk4_setup,
    .reset = rk4_reset, .step = rk4_step, .tangent = rk4_tangent, .forced = 1,
};
