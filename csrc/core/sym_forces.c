/*
 * sym_forces.c -- non-conservative generalized forces F(t, q, qdot) of a
 * workspace (sym_force_api.h: sym_force): their buffers, their evaluation at a
 * point as the sum of the parts (damping -D qdot, a held row, callbacks),
 * the Jacobians dF/dq and dF/dqdot (given, or central differences of F),
 * and the built-in force terms in C.
 *
 * How the schemes use them: the variational schemes evaluate F at their
 * own quadrature points (x_i, b_i) with the positions and velocities of the
 * interpolating polynomial (the discrete Lagrange-d'Alembert principle,
 * sym_galerkin.c and sym_galerkin_forces.c); RK4 adds F to pdot at each
 * stage (sym_rk4.c).
 */
#include "sym_forces.h"
#include "sym_builtins.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Central-difference step for a coordinate value x: eps^(1/3) scaled (the
 * step of sym_eval.c's fallbacks; error O(step^2) ~ 1e-10 relative). */
static double fd_step(double x)
{
    const double base = 6.0554544523933395e-06; /* cbrt(DBL_EPSILON) */
    const double ax = fabs(x);
    return base * (ax > 1.0 ? ax : 1.0);
}

static int force_ok(const sym_force *f)
{
    if (f->nterms < 0 || f->nterms > SYM_FORCE_MAX_TERMS || f->hold_rows < 0 ||
        f->hold_k0 < 0 || f->hold_points < 0)
        return 0;
    if (f->hold_rows > 0 && !f->hold) return 0;
    for (int i = 0; i < f->nterms; i++)
        if (!f->term[i].fn) return 0;
    return 1;
}

/* The block: the struct, then F (npts n), Fq, Fv (npts n^2 each), Ft (n),
 * Tq, Tv (n^2 each), fp, fm, qq, vv, Fx, impulse (n each). */
int sym_work_set_force(sym_work *w, const sym_force *force)
{
    if (!w) return SYM_EINVAL;
    if (!force) {
        sym_force_free(w->force);
        w->force = NULL;
        return SYM_OK;
    }
    if (!force_ok(force) || !w->ops->forced) return SYM_EINVAL;
    const int n = w->n;
    const sym_galerkin_table *gt = w->method->table;
    const int npts = gt ? gt->r : 1, npw = sym_method_force_points(w->method);
    if (force->hold_points > 1 && force->hold_points != npw) return SYM_EINVAL;
    const double dn = (double)n, nn = dn * dn;
    const double doubles = (double)npts * (dn + 2.0 * nn) + 2.0 * nn + 7.0 * dn +
                           (double)npw * (3.0 + dn);
    const double head = (double)((sizeof(sym_fwork) + sizeof(double) - 1) / sizeof(double));
    if (!(doubles + head < (double)(SIZE_MAX / sizeof(double)))) return SYM_ENOMEM;
    const size_t hb = (size_t)head * sizeof(double);
    sym_fwork *fw = calloc(1, hb + (size_t)doubles * sizeof(double));
    if (!fw) return SYM_ENOMEM;
    double *cur = (double *)((char *)fw + hb);
    const size_t un = (size_t)n, unn = un * un, up = (size_t)npts;
    fw->F = cur;        cur += up * un;
    fw->Fq = cur;       cur += up * unn;
    fw->Fv = cur;       cur += up * unn;
    fw->Ft = cur;       cur += un;
    fw->Tq = cur;       cur += unn;
    fw->Tv = cur;       cur += unn;
    fw->fp = cur;       cur += un;
    fw->fm = cur;       cur += un;
    fw->qq = cur;       cur += un;
    fw->vv = cur;       cur += un;
    fw->Fx = cur;       cur += un;
    fw->impulse = cur;  cur += un;
    fw->pw_x = cur;     cur += (size_t)npw;
    fw->pw_b = cur;     cur += (size_t)npw;
    fw->pw_P = cur;     cur += (size_t)npw;
    fw->pw_F = cur;
    fw->npw = npw;
    fw->f = *force;
    fw->n = n;
    fw->npts = npts;
    fw->hpts = force->hold_points > 1 ? force->hold_points : 1;
    fw->jac = force->damping ? SYM_FORCE_DV : 0u;
    for (int i = 0; i < force->nterms; i++) {
        if (!(force->term[i].flags & SYM_FORCE_NO_Q)) fw->jac |= SYM_FORCE_DQ;
        if (!(force->term[i].flags & SYM_FORCE_NO_V)) fw->jac |= SYM_FORCE_DV;
    }
    sym_force_free(w->force);
    w->force = fw;
    w->ops->reset(w);   /* the predictor history belongs to the unforced system */
    return SYM_OK;
}

int sym_work_set_hold(sym_work *w, const double *hold, long rows, long k0)
{
    if (!w || !w->force || rows < 0 || k0 < 0 || (!hold && rows > 0)) return SYM_EINVAL;
    w->force->f.hold = hold;
    w->force->f.hold_rows = hold ? rows : 0;
    w->force->f.hold_k0 = hold ? k0 : 0;
    return SYM_OK;
}

int sym_method_force_points(const sym_method *m)
{
    if (!m) return 0;
    return m->table ? m->table->r : 4;   /* Galerkin: its quadrature; rk4: its stages */
}

int sym_method_force_quadrature(const sym_method *m, double *x, double *b)
{
    static const double rk_x[4] = {0.0, 0.5, 0.5, 1.0};   /* RK4's stages, weights 1 2 2 1 / 6 */
    static const double rk_b[4] = {1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0};
    const int np = sym_method_force_points(m);
    for (int i = 0; m && i < np; i++) {
        if (x) x[i] = m->table ? m->table->x[i] : rk_x[i];
        if (b) b[i] = m->table ? m->table->b[i] : rk_b[i];
    }
    return np;
}

int sym_step_force_points(const sym_work *w, double *x, double *b, double *P, double *F)
{
    const sym_fwork *fw = w ? w->force : NULL;
    if (!fw) return 0;
    const size_t m = (size_t)fw->npw;
    if (x) memcpy(x, fw->pw_x, sizeof(double) * m);
    if (b) memcpy(b, fw->pw_b, sizeof(double) * m);
    if (P) memcpy(P, fw->pw_P, sizeof(double) * m);
    if (F) memcpy(F, fw->pw_F, sizeof(double) * m * (size_t)fw->n);
    return fw->npw;
}

void sym_force_free(sym_fwork *fw)
{
    free(fw);
}

void sym_step_force_work(const sym_work *w, double *work, double *impulse)
{
    const sym_fwork *fw = w ? w->force : NULL;
    if (work) *work = fw ? fw->work : 0.0;
    if (impulse && w) {
        if (fw)
            memcpy(impulse, fw->impulse, sizeof(double) * (size_t)w->n);
        else
            memset(impulse, 0, sizeof(double) * (size_t)w->n);
    }
}

/* Columns d of J (n x n) += central differences of term tm's F in the
 * coordinate (wrt_v = 0) or velocity (wrt_v = 1) d. */
static int fd_columns(sym_fwork *fw, const sym_force_term *tm, double t, long k,
                      const double *q, const double *v, int wrt_v, double *J)
{
    const int n = fw->n;
    double *x = wrt_v ? fw->vv : fw->qq;
    const double *x0 = wrt_v ? v : q;
    const double *qa = wrt_v ? q : fw->qq, *va = wrt_v ? fw->vv : v;
    memcpy(x, x0, sizeof(double) * (size_t)n);
    for (int d = 0; d < n; d++) {
        const double dl = fd_step(x0[d]);
        const double xp = x0[d] + dl, xm = x0[d] - dl;
        x[d] = xp;
        if (tm->fn(t, k, qa, va, SYM_FORCE_F, fw->fp, NULL, NULL, tm->params))
            return SYM_ECALLBACK;
        x[d] = xm;
        if (tm->fn(t, k, qa, va, SYM_FORCE_F, fw->fm, NULL, NULL, tm->params))
            return SYM_ECALLBACK;
        x[d] = x0[d];
        const double inv = 1.0 / (xp - xm);   /* the step actually taken */
        for (int c = 0; c < n; c++) J[(size_t)c * n + d] += (fw->fp[c] - fw->fm[c]) * inv;
    }
    return SYM_OK;
}

/* F = the held value of step k at force point `point` (hold[k - hold_k0],
 * that point's row when the hold has one per point), or 0 without a hold. */
void sym_force_held(const sym_fwork *fw, long k, int point, double *F)
{
    const sym_force *f = &fw->f;
    const size_t un = (size_t)fw->n;
    if (f->hold)
        memcpy(F, f->hold + ((size_t)(k - f->hold_k0) * (size_t)fw->hpts +
                             (fw->hpts > 1 ? (size_t)point : 0)) * un,
               sizeof(double) * un);
    else
        memset(F, 0, sizeof(double) * un);
}

/*
 * F = hold[k - hold_k0] - D v + sum_terms fn(t, k, q, v), and
 * Fq = sum_terms dfn/dq, Fv = -D + sum_terms dfn/dv
 * (each term's Jacobians from the term when it provides them, else central
 * differences of its F).
 */
int sym_force_eval(sym_fwork *fw, double t, long k, int point, const double *q, const double *v,
                   unsigned need, double *F, double *Fq, double *Fv)
{
    const int n = fw->n;
    const size_t un = (size_t)n, nn = un * un;
    const sym_force *f = &fw->f;
    int st;
    const unsigned wq = (need & SYM_FORCE_DQ) && (fw->jac & SYM_FORCE_DQ);
    const unsigned wv = (need & SYM_FORCE_DV) && (fw->jac & SYM_FORCE_DV);
    if (need & SYM_FORCE_F) {
        sym_force_held(fw, k, point, F);
        if (f->damping)
            for (int c = 0; c < n; c++) {
                double s = 0.0;
                for (int d = 0; d < n; d++) s += f->damping[(size_t)c * n + d] * v[d];
                F[c] -= s;
            }
    }
    if (need & SYM_FORCE_DQ) memset(Fq, 0, sizeof(double) * nn);
    if (need & SYM_FORCE_DV) {
        if (f->damping && wv)
            for (size_t e = 0; e < nn; e++) Fv[e] = -f->damping[e];
        else
            memset(Fv, 0, sizeof(double) * nn);
    }
    for (int i = 0; i < f->nterms; i++) {
        const sym_force_term *tm = &f->term[i];
        const int dq = wq && !(tm->flags & SYM_FORCE_NO_Q);
        const int dv = wv && !(tm->flags & SYM_FORCE_NO_V);
        unsigned tneed = need & SYM_FORCE_F;
        if (dq && (tm->provides & SYM_FORCE_DQ)) tneed |= SYM_FORCE_DQ;
        if (dv && (tm->provides & SYM_FORCE_DV)) tneed |= SYM_FORCE_DV;
        if (tneed) {
            if (tm->fn(t, k, q, v, tneed, fw->Ft, (tneed & SYM_FORCE_DQ) ? fw->Tq : NULL,
                       (tneed & SYM_FORCE_DV) ? fw->Tv : NULL, tm->params))
                return SYM_ECALLBACK;
            if (tneed & SYM_FORCE_F)
                for (size_t c = 0; c < un; c++) F[c] += fw->Ft[c];
            if (tneed & SYM_FORCE_DQ)
                for (size_t e = 0; e < nn; e++) Fq[e] += fw->Tq[e];
            if (tneed & SYM_FORCE_DV)
                for (size_t e = 0; e < nn; e++) Fv[e] += fw->Tv[e];
        }
        if (dq && !(tm->provides & SYM_FORCE_DQ) && (st = fd_columns(fw, tm, t, k, q, v, 0, Fq)))
            return st;
        if (dv && !(tm->provides & SYM_FORCE_DV) && (st = fd_columns(fw, tm, t, k, q, v, 1, Fv)))
            return st;
    }
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* Built-in force terms                                                 */
/* ------------------------------------------------------------------ */
/*
 * pivot_friction: a viscous torque -c omega at the fixed point of the
 * Lagrange top in ZXZ Euler angles q = (phi, theta, psi).  The angular
 * velocity is omega = J(q) qdot = phi' e_z + theta' e_N + psi' e_3 (e_N
 * the line of nodes, e_3 the symmetry axis, e_z . e_3 = cos theta, the
 * other pairs orthogonal), and the generalized force is the virtual work
 * of the torque, F = J^T (-c omega) = -c G(theta) qdot with
 *   G = J^T J = [[1, 0, cos theta], [0, 1, 0], [cos theta, 0, 1]];
 * dissipated power F . qdot = -c |omega|^2.
 *   Fv = -c G,  Fq: only column theta, dF/dtheta = c sin theta (psi', 0, phi').
 */
static int pivot_friction(double t, long k, const double *q, const double *v, unsigned need,
                          double *F, double *Fq, double *Fv, void *params)
{
    const double c = *(const double *)params, ct = cos(q[1]);
    (void)t;
    (void)k;
    if (need & SYM_FORCE_F) {
        F[0] = -c * (v[0] + ct * v[2]);
        F[1] = -c * v[1];
        F[2] = -c * (ct * v[0] + v[2]);
    }
    if (need & SYM_FORCE_DQ) {
        const double st = sin(q[1]);
        memset(Fq, 0, 9 * sizeof(double));
        Fq[0 * 3 + 1] = c * st * v[2];
        Fq[2 * 3 + 1] = c * st * v[0];
    }
    if (need & SYM_FORCE_DV) {
        const double G[9] = {1.0, 0.0, ct, 0.0, 1.0, 0.0, ct, 0.0, 1.0};
        for (int e = 0; e < 9; e++) Fv[e] = -c * G[e];
    }
    return 0;
}

static int nonnegative_finite(int n, const double *par)
{
    (void)n;
    return isfinite(par[0]) && par[0] >= 0.0 ? 0 : -1;
}

static const sym_force_builtin force_builtins[] = {
    {"pivot_friction",
     "Viscous friction at the fixed point of the Lagrange top (ZXZ Euler angles): "
     "the torque -c omega, F = -c G(theta) qdot, G = [[1, 0, cos], [0, 1, 0], [cos, 0, 1]].",
     3, 1, nonnegative_finite,
     {pivot_friction, NULL, SYM_FORCE_DQ | SYM_FORCE_DV, 0u}},
};

/* sym_force_builtin_count, sym_force_builtin_at, sym_force_builtin_find */
SYM_ROW_ACCESS(sym_force_builtin, force_builtins, sym_force_builtin)
