/*
 * sym_linear.c -- the closed form of a quadratic Lagrangian
 * L = 1/2 qdot^T M qdot - 1/2 q^T K q (M, K constant) as a scheme.
 *
 * For such a system a variational step is linear in the state: with
 * z = (q, p) one step of size h is
 *
 *     z_{k+1} = z_k + D z_k,
 *
 * D = Phi - I the increment of the method's one-step matrix at that h
 * (Simpson: Phi_s = A_s^{-1} B_s, AXIOMS eqs. (30)-(34), with the
 * corrections of docs/errata.md#axioms-linear-simpson; Newmark/midpoint:
 * eqs. (10)-(12)), and Simpson's internal node is
 *
 *     q_{k+1/2} = A (q_k + q_{k+1}),  A = 1/2 (M - h^2 K / 8)^{-1} M
 *
 * (AXIOMS eq. (26)).  symplectic.linear forms D and A (in (q, p) order)
 * once per (M, K, h, method); this file only applies them, so that the
 * closed form runs through the same driver as every scheme -- its thinning,
 * hooks, progress and failures.  The one-step tangent map is I + D, exact.
 * No Newton iterations; a step whose result is not finite fails with
 * SYM_ENONFINITE.  A step of any other size than the h D was formed for is
 * SYM_EINVAL.
 */
#include "sym_scheme.h"

#include <math.h>
#include <string.h>

typedef struct lin_work {
    sym_work base;   /* first: the driver's part            */
    double h;        /* the step D and A were formed for    */
    int has_mid;     /* A given (the method has one node)   */
    double *D;       /* 2n x 2n, (q, p) order, row-major    */
    double *A;       /* n x n                               */
    double *z;       /* 2n: (q_k, p_k), then q_k + q_{k+1}  */
    double *y;       /* 2n: (q_{k+1}, p_{k+1})              */
} lin_work;

#define PARTS 4

static void part_sizes(int n, double *c)
{
    const double dn = (double)n;
    const double sizes[PARTS] = {4.0 * dn * dn, dn * dn, 2.0 * dn, 2.0 * dn};
    memcpy(c, sizes, sizeof(sizes));
}

static int lin_work_size(const sym_method *m, int n, double *doubles)
{
    double c[PARTS];
    part_sizes(n, c);
    *doubles = sym_slices_size(c, PARTS);
    /* the closed form has at most one internal node (Simpson's midpoint) */
    return m->n_mid > 1 ? SYM_EMETHOD : SYM_OK;
}

static int lin_setup(sym_work *w, double *cur)
{
    lin_work *L = (lin_work *)w;
    double c[PARTS];
    double **const slot[] = {&L->D, &L->A, &L->z, &L->y};
    SYM_STATIC_CHECK(sizeof(slot) / sizeof(slot[0]) == PARTS);
    part_sizes(w->n, c);
    sym_lay_out(cur, slot, c, PARTS);
    L->h = NAN;   /* no step until sym_linear_load */
    return SYM_OK;
}

static void lin_reset(sym_work *w)
{
    (void)w;   /* nothing carries over between steps */
}

int sym_linear_load(sym_work *w, double h, const double *D, const double *A)
{
    lin_work *L = (lin_work *)w;
    const size_t n = (size_t)w->n;
    if (!D || !isfinite(h) || h == 0.0 || (w->method->n_mid == 1 && !A)) return SYM_EINVAL;
    for (size_t i = 0; i < 4 * n * n; i++)
        if (!isfinite(D[i])) return SYM_ENONFINITE;
    memcpy(L->D, D, sizeof(double) * 4 * n * n);
    L->has_mid = w->method->n_mid == 1;
    if (L->has_mid) {
        for (size_t i = 0; i < n * n; i++)
            if (!isfinite(A[i])) return SYM_ENONFINITE;
        memcpy(L->A, A, sizeof(double) * n * n);
    }
    L->h = h;
    return SYM_OK;
}

/* y = z + D z (y of 2n values, not aliasing z). */
static void apply(const lin_work *L, const double *z, double *y)
{
    const size_t m = 2 * (size_t)L->base.n;
    for (size_t i = 0; i < m; i++) {
        const double *Di = L->D + i * m;
        double inc = 0.0;
        for (size_t j = 0; j < m; j++) inc += Di[j] * z[j];
        y[i] = z[i] + inc;
    }
}

static int lin_step(sym_work *w, const double *q, const double *p, double h, double *q1,
                    double *p1, double *qmid, sym_step_info *info)
{
    lin_work *L = (lin_work *)w;
    const size_t n = (size_t)w->n;
    (void)info;   /* no iterations, no residual */
    if (h != L->h) {   /* D holds one step size */
        w->invalid = "h";
        return SYM_EINVAL;
    }
    memcpy(L->z, q, sizeof(double) * n);
    memcpy(L->z + n, p, sizeof(double) * n);
    apply(L, L->z, L->y);
    for (size_t i = 0; i < 2 * n; i++)
        if (!isfinite(L->y[i])) return SYM_ENONFINITE;
    memcpy(q1, L->y, sizeof(double) * n);
    memcpy(p1, L->y + n, sizeof(double) * n);
    if (qmid && L->has_mid) {
        double *s = L->z;
        for (size_t j = 0; j < n; j++) s[j] = q[j] + q1[j];
        for (size_t i = 0; i < n; i++) {
            const double *Ai = L->A + i * n;
            double v = 0.0;
            for (size_t j = 0; j < n; j++) v += Ai[j] * s[j];
            qmid[i] = v;
        }
    }
    return SYM_OK;
}

/* The tangent map I + D of a step (the same at every state), applied to the
 * k columns of V: out = V + D V. */
static int lin_tangent(sym_work *w, const double *q, const double *p, double h, int k,
                       int ublocks, const double *V, double *out)
{
    const lin_work *L = (const lin_work *)w;
    const size_t m = 2 * (size_t)w->n;
    (void)q, (void)p, (void)h;
    if (ublocks) return SYM_EINVAL;   /* the closed form takes no force */
    for (size_t i = 0; i < m; i++)
        for (int j = 0; j < k; j++) {
            double v = V[i * (size_t)k + j];
            for (size_t l = 0; l < m; l++) v += L->D[i * m + l] * V[l * (size_t)k + j];
            out[i * (size_t)k + j] = v;
        }
    return SYM_OK;
}

const sym_scheme_ops sym_linear_ops = {
    .state_size = sizeof(lin_work),
    .work_size = lin_work_size,
    .setup = lin_setup,
    .reset = lin_reset,
    .step = lin_step,
    .tangent = lin_tangent,
    .unknowns = NULL,
    .newton_system = NULL,
    .constraint_size = NULL,
    .multipliers = NULL,
    .forced = 0,
};
