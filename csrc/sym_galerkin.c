/*
 * sym_galerkin.c -- the Galerkin variational-integrator engine.
 *
 * Discrete Lagrangian (Marsden & West 2001; TOP paper Section 2, eq. (6)
 * for Simpson; docs/errata.md#simpson-newton-on-2n-unknowns):
 *
 *   L_d(Q_0, ..., Q_{s-1}) = h sum_i b_i [ 1/2 g_i^T M(q_i) g_i - V(q_i) ],
 *   q_i = sum_a B_ia Q_a,   g_i = sum_a D_ia Q_a / h,
 *
 * with Lagrange interpolation through the nodes Q_a = q(t_j + c_a h),
 * B_ia = l_a(x_i), D_ia = l_a'(x_i), and quadrature (x_i, b_i).
 * With P_i = M(q_i) g_i and f_i = 1/2 A(q_i,g_i)^T g_i - grad V(q_i):
 *
 *   dL_d/dQ_a = sum_i b_i [ D_ia P_i + h B_ia f_i ].
 *
 * One step solves the (s-1) n equations
 *
 *   R_0 = p_j + dL_d/dQ_0 = 0,     R_a = dL_d/dQ_a = 0   (0 < a < s-1)
 *
 * for the increments X_a = Q_a - q_j (a = 1..s-1) by Newton's method with
 * the exact Jacobian
 *
 *   dR_a/dQ_b = sum_i b_i [ D_ia B_ib A_i + D_ia D_ib M_i / h
 *                           + h B_ia B_ib (H_i - K_i) + B_ia D_ib A_i^T ],
 *
 * (A = d(Mg)/dq, H = d^2(1/2 g^T M g)/dq^2, K = hess V), then sets
 *
 *   p_{j+1} = p_j + h sum_i b_i f_i,
 *
 * which equals dL_d/dQ_{s-1} at the root because the rows of D sum to zero
 * and the rows of B to one (sum_a dL_d/dQ_a = h sum_i b_i f_i).  This
 * "difference form" keeps the momentum of a cyclic coordinate bitwise
 * constant (TOP eq. (18arb); docs/errata.md#momentum-in-difference-form).  The node
 * velocities are formed from increments, g_i = sum_{a>=1} D_ia X_a / h,
 * which lowers the round-off floor when |q| is large
 * (docs/errata.md#node-velocities-from-increments).
 *
 * Simpson (s = 3 Lobatto nodes 0, 1/2, 1 with weights 1/6, 2/3, 1/6; order
 * 4), the implicit midpoint rule (s = 2, one Gauss point; order 2) and the
 * Lobatto family are members: rows of the registry, sym_methods.c.  Newton's
 * method (full, chord or per step, its safeguards) is sym_newton.c; this
 * file gives it the residual, the Newton matrix and the predictors, and
 * forms the step's outputs.  Which root the step keeps (the plausibility of
 * a root, the branch check by continuation in h, the run's energy balance
 * at unstable step sizes) is sym_galerkin_roots.c.
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <math.h>
#include <string.h>

/*
 * Taylor predictor from (q_j, p_j): v = M^{-1} p, and the acceleration of
 * the Euler-Lagrange equations M qdd = 1/2 A(q,v)^T v - A(q,v) v - grad V
 * (+ F(t_j, q, v) with a force);
 * X_a = c_a h v + 1/2 (c_a h)^2 qdd  (error O(h^3)).
 */
int sym_galerkin_taylor(sym_gwork *g, const double *q, const double *p, double h)
{
    const int n = g->n, s = g->tab->s;
    const size_t nn = (size_t)n * (size_t)n;
    int st = sym_galerkin_left_cache(g, q);
    if (st) return st;
    double *L = g->Lm;
    double *A = g->Ap;  /* borrow point 0 storage */
    memcpy(L, g->cache_M, sizeof(double) * nn);
    st = sym_cholesky(n, L);
    if (st) return st;
    memcpy(g->v, p, sizeof(double) * (size_t)n);
    sym_cholesky_solve(n, L, g->v);
    sym_eval_out out = {0};
    out.A = A;
    g->base.counts.evaluations++;
    st = sym_eval(g->base.sys, q, g->v, SYM_NEED_A, &out, g->base.scratch);
    if (st) return st;
    for (int i = 0; i < n; i++) {
        double s1 = 0.0, s2 = 0.0;
        for (int k = 0; k < n; k++) {
            s1 += A[k * n + i] * g->v[k];   /* (A^T v)_i */
            s2 += A[i * n + k] * g->v[k];   /* (A v)_i   */
        }
        g->acc[i] = 0.5 * s1 - s2 - g->cache_dV[i];
    }
    if (g->base.force) {
        sym_fwork *fw = g->base.force;
        st = sym_force_eval(fw, g->base.t, g->base.k, q, g->v, SYM_FORCE_F, fw->Fx, NULL, NULL);
        if (st) return st;
        for (int i = 0; i < n; i++) g->acc[i] += fw->Fx[i];
    }
    sym_cholesky_solve(n, L, g->acc);
    for (int a = 1; a < s; a++) {
        const double tau = g->tab->c[a] * h;
        double *Xa = g->X + (size_t)(a - 1) * n;
        for (int k = 0; k < n; k++) Xa[k] = tau * g->v[k] + 0.5 * tau * tau * g->acc[k];
    }
    if (g->con) sym_gcon_taylor(g);   /* the multipliers start from zero */
    return SYM_OK;
}

/*
 * The predictors from the history of the last steps (their loops are
 * kernels, sym_galerkin_kernels.c; the step picks one by SYM_PRED_*).
 *
 * SYM_PRED_POLY extrapolates the previous step's interpolating polynomial:
 * Q_a(new) = sum_b l_b(1 + c_a) Q_b(prev), written in increments.
 *
 * SYM_PRED_POLY2, per-step Newton's predictor: the polynomial of degree
 * 2s - 2 through the nodes of the last two steps (same h, each starting
 * where the one before ended), evaluated at this step's nodes, X_a = sum_p
 * E2_ap Y_p, with Y_p the nodes relative to q_j: Q_b(j-2) - q_j = X2_b -
 * X2_{s-1} - X1_{s-1} (X2_0 = 0) and Q_b(j-1) - q_j = X1_b - X1_{s-1}.  Its
 * error is O(h^(2s-1)) against the O(h^s) of SYM_PRED_POLY (Simpson: h^5 vs
 * h^3), so that one matrix and LU per step serve the whole Newton solve:
 * the first update is exact Newton from e_0, the later ones contract at
 * rate ~e_0.  Used for s = 3, 4, where it saves per-step Newton iterations;
 * for Lobatto-5 the degree-8 extrapolation a full step ahead loses to
 * SYM_PRED_POLY (the constant of the extrapolation, not its order, rules at
 * omega h ~ 0.3; SYM_PRED_POLY1 is used there), and for the midpoint rule
 * (degree 2) it only wins at small h; measured in
 * benchmarks/NOTES.md section 2.
 *
 * SYM_PRED_POLY1, the same through fewer points, for s >= 5: the last
 * step's s nodes and q_{j-2} (degree s; E1), X_a = sum_p E1_ap Y_p with Y =
 * q_{j-2} - q_j = -(X2_{s-1} + X1_{s-1}) and the last step's nodes as in
 * SYM_PRED_POLY2.  It misses the converged nodes by less than SYM_PRED_POLY
 * and than the degree-8 SYM_PRED_POLY2 (the step ends are superconvergent,
 * the interior nodes are not, so fewer, better points win), and per-step
 * Newton needs fewer iterations; measured in benchmarks/NOTES.md
 * section 2.
 */

/*
 * The step's outputs from the accepted increments.
 * p_{j+1} = p_j + h sum_i b_i f_i (difference form), with f_i at the
 * accepted increments (f_i + F_i with a force: sym_galerkin_forces.c).  After a final update Delta (converged == 2) the
 * f_i were evaluated before it, so they are advanced to first order,
 *   f_i += sum_{a>=1} [ B_ia (H_i - K_i) + A_i^T D_ia / h ] Delta_a,
 * leaving an O(|Delta|^2) error (below rounding once the update test
 * passes) instead of spending another evaluation.  For a cyclic
 * coordinate c every term of component c is exactly zero, so p_c stays
 * bitwise constant.
 */
static int step_outputs(sym_gwork *g, int converged)
{
    const int n = g->n;
    const double h = g->h;
    const double *q1 = g->q1, *p1 = g->p1;
    if (converged == 2) g->k.correct(g, h);
    if (g->base.force && converged == 2) sym_gforce_correct(g, h);
    g->work = g->k.outputs(g, h);   /* q_{j+1}, p_{j+1}, the nodes; W / h */
    if (g->con) {
        /* the constraint impulses, and the hidden constraint on p_{j+1} */
        const int st = sym_gcon_outputs(g, converged);
        if (st) return st;
    }
    for (int k = 0; k < n; k++)
        if (!isfinite(q1[k]) || !isfinite(p1[k])) return SYM_ENONFINITE;
    if (g->base.force) sym_gforce_work(g, h);
    return SYM_OK;
}

/* ------------------------------------------------------------------ */
/* What Newton sees (sym_newton.h)                                      */
/* ------------------------------------------------------------------ */
static int nt_residual(void *ctx, double *rnorm, double *rscale)
{
    sym_gwork *g = ctx;
    g->k.form_points(g, g->q, g->h);
    int st = sym_galerkin_eval_points(g, g->need_full);
    if (!st && g->base.force) st = sym_gforce_points(g, g->h, SYM_FORCE_F, 0);
    if (st) return st;
    *rscale = g->k.residual(g, g->p, g->h, rnorm);
    return g->con ? sym_gcon_residual(g, rnorm, rscale) : SYM_OK;
}

static int nt_factor(void *ctx)
{
    sym_gwork *g = ctx;
    int st = g->k.jacobian(g, g->h);
    if (!st && g->base.force) {
        st = sym_gforce_points(g, g->h, SYM_FORCE_DQ | SYM_FORCE_DV, 0);
        if (!st) sym_gforce_jacobian(g, g->h);
    }
    if (st) return st;
    g->base.counts.factorizations++;
    if (g->con) return sym_gcon_factor(g);
    return g->lu_factor(g->nu, g->J, g->piv, g->lu_work);
}

static void nt_solve(void *ctx, double *b)
{
    sym_gwork *g = ctx;
    if (g->con)
        sym_gcon_solve(g, b);
    else
        g->lu_solve(g->nu, g->J, g->piv, b);
}

static int nt_finish(void *ctx, int converged)
{
    sym_gwork *g = ctx;
    const int st = step_outputs(g, converged);
    return st ? st : sym_galerkin_plausible(g);
}

static int nt_restart(void *ctx)
{
    sym_gwork *g = ctx;
    return sym_galerkin_taylor(g, g->q, g->p, g->h);
}

/* the step's: its outputs and the plausibility of its root after
 * convergence, the Taylor predictor as the second start */
const sym_newton_ops sym_galerkin_newton_ops = {nt_residual, nt_factor, nt_solve, nt_finish,
                                                nt_restart};

static int probe_finish(void *ctx, int converged)
{
    (void)ctx;
    (void)converged;
    return SYM_OK;
}

static int probe_restart(void *ctx)
{
    (void)ctx;
    return SYM_ENOCONV;
}

/* a probe's (the branch check's continuation, sym_galerkin_roots.c): the
 * root alone, no outputs, no second start */
const sym_newton_ops sym_galerkin_probe_ops = {nt_residual, nt_factor, nt_solve, probe_finish,
                                               probe_restart};

/* ------------------------------------------------------------------ */
/* One step                                                             */
/* ------------------------------------------------------------------ */
static void report(sym_step_info *info, const sym_newton_out *o)
{
    if (!info) return;
    info->iterations = o->iters;
    info->residual = o->rnorm;
    info->residual_rel = o->rnorm / o->rscale;
    info->update = o->dk;
}

/* What the next step may reuse: the right point's M and grad V when they
 * were evaluated at the accepted q_{j+1} (residual test), the increments
 * for the predictor, the end state for the kinetic energy. */
static void carry_over(sym_gwork *g, int converged)
{
    const int n = g->n;
    g->left_here = 0;
    if (g->right_point >= 0 && converged == 1 && !g->points_stale) {
        const size_t nn = (size_t)n * (size_t)n;
        const int i = g->right_point;
        memcpy(g->cache_q, g->Qp + (size_t)i * n, sizeof(double) * (size_t)n);
        memcpy(g->cache_M, g->Mp + i * nn, sizeof(double) * nn);
        memcpy(g->cache_dV, g->dVp + (size_t)i * n, sizeof(double) * (size_t)n);
        g->cache_valid = 1;
        g->prep_valid = 0;   /* prepared on first use at the next step's left node */
    }
    memcpy(g->prev_X, g->X, sizeof(double) * (size_t)g->nu);
    memcpy(g->prev_qend, g->q1, sizeof(double) * (size_t)n);
    memcpy(g->prev_pend, g->p1, sizeof(double) * (size_t)n);
    g->prev_h = g->h;
    g->prev_valid = 1;
    g->prev2_valid = g->prev2_pending;
    g->kin = g->kin_end;
}

int sym_galerkin_step(sym_work *w, const double *q, const double *p, double h, double *q1,
                      double *p1, double *qmid, sym_step_info *info)
{
    sym_gwork *g = (sym_gwork *)w;
    sym_newton_out o = {0, 0, 0.0, 1.0, 0.0, 0};
    int st = SYM_OK;
    g->q = q;
    g->p = p;
    g->h = h;
    g->newton.q_ref = q;
    g->points_stale = 0;
    g->q1 = q1;
    g->p1 = p1;
    g->qmid = qmid;
    if (g->left_point >= 0) {
        st = sym_galerkin_left_cache(g, q);
        if (!st) sym_galerkin_left_here(g);
    }
    if (!st && g->con) st = sym_gcon_start(g);   /* G(q_j) */
    /* does the step start where the last one ended? */
    const size_t bytes = sizeof(double) * (size_t)g->n;
    const int same_q = g->prev_valid && memcmp(g->prev_qend, q, bytes) == 0;
    g->kin_known = same_q && memcmp(g->prev_pend, p, bytes) == 0;
    const int extrapolated = !st && w->opt.predictor && same_q && g->prev_h == h;
    g->prev2_pending = 0;
    if (extrapolated) {
        if (g->newton.mode == SYM_NEWTON_STEP) {
            /* the two-step predictor once the history holds two steps; the
             * last step's increments become the step-before's */
            const int s = g->tab->s;
            g->k.predict(g, !g->prev2_valid          ? SYM_PRED_POLY
                            : (s == 3 || s == 4) ? SYM_PRED_POLY2
                            : s >= 5             ? SYM_PRED_POLY1
                                                 : SYM_PRED_POLY);
            memcpy(g->prev2_X, g->prev_X, sizeof(double) * (size_t)g->nu);
            g->prev2_pending = 1;
        } else {
            g->k.predict(g, SYM_PRED_POLY);
        }
    } else if (!st) {
        st = sym_galerkin_taylor(g, q, p, h);
    }
    g->prev_valid = g->prev2_valid = 0;
    if (!st) st = sym_newton_root(&g->newton, &sym_galerkin_newton_ops, g, h, extrapolated, &o);
    if (!st || st == SYM_EIMPLAUSIBLE)
        st = sym_galerkin_branch_check(g, &o, st, extrapolated);
    else if (st == SYM_ENOCONV || st == SYM_ESINGULAR || st == SYM_ENONFINITE)
        st = sym_galerkin_branch_rescue(g, &o, st);
    report(info, &o);
    if (st) {
        g->cache_valid = g->prev_valid = g->prep_valid = g->left_here = 0;
        g->newton.lu_valid = g->newton.kc_valid = 0;
        g->miss = 0.0;
        g->bal_steps = 0;
        return st;
    }
    carry_over(g, o.converged);
    return SYM_OK;
}

void sym_galerkin_reset(sym_work *w)
{
    sym_gwork *g = (sym_gwork *)w;
    g->miss = 0.0;
    g->bal_steps = 0;
    g->cache_valid = g->prev_valid = g->prep_valid = g->prev2_valid = g->left_here = 0;
    g->newton.kc_valid = 0;
    if (g->con) sym_gcon_reset(g);
}

const sym_scheme_ops sym_galerkin_ops = {
    .state_size = sizeof(sym_gwork), .work_size = sym_galerkin_work_size,
    .setup = sym_galerkin_setup, .reset = sym_galerkin_reset, .step = sym_galerkin_step,
    .tangent = sym_galerkin_tangent, .unknowns = sym_galerkin_unknowns,
    .newton_system = sym_galerkin_newton_system, .constraint_size = sym_gcon_size,
    .multipliers = sym_gcon_multipliers, .forced = 1,
};
