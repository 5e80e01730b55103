/*
 * sym_galerkin_step.c -- one step of a Galerkin variational integrator, and
 * the scheme's table of operations (sym_scheme.h) through which the driver
 * runs every Galerkin method.
 *
 * A step: the predictor (sym_galerkin.c: Taylor, or the polynomial through
 * the last steps' nodes), Newton's method on the step equations
 * (sym_newton.c, with the residual and Newton matrix of sym_galerkin.c),
 * then the checks of the root it returns: its plausibility (sym_galerkin.c),
 * the branch check by continuation in h and the run's energy balance
 * (sym_galerkin_roots.c).  What the next step reuses is carried over here.
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <string.h>

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
    if (g->right_point >= 0 && converged == 1 && !g->points_stale && !SYM_TREE_ON(g)) {
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
    if (g->left_point >= 0 && !SYM_TREE_ON(g)) {
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
        if (g->newton.mode == SYM_NEWTON_STEP || g->newton.mode == SYM_NEWTON_DECOUPLED) {
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
    g->newton.kc_valid = g->newton.dec_miss = g->newton.dec_skip = 0;
    if (g->con) sym_gcon_reset(g);
    sym_gtree_force(g);   /* (reset follows every attached force) */
}

/* The parameter block of the step just taken: the constrained step's
 * (sym_constraints_tangent.c) or the unconstrained one's (sym_galerkin_param.c). */
static int param_tangent(sym_work *w, const double *q, double h,
                         const struct sym_params_run *par, double *C)
{
    sym_gwork *g = (sym_gwork *)w;
    return g->con ? sym_gcon_param_tangent(g, q, h, par, C)
                  : sym_galerkin_param_tangent(w, q, h, par, C);
}

int sym_work_solver(const sym_work *w)
{
    return w && w->ops == &sym_galerkin_ops && SYM_TREE_ON((const sym_gwork *)w)
               ? SYM_SOLVER_TREE
               : SYM_SOLVER_DENSE;
}

const sym_scheme_ops sym_galerkin_ops = {
    .state_size = sizeof(sym_gwork), .work_size = sym_galerkin_work_size,
    .system_size = sym_gtree_system_size,
    .setup = sym_galerkin_setup, .reset = sym_galerkin_reset, .step = sym_galerkin_step,
    .tangent = sym_galerkin_tangent, .unknowns = sym_galerkin_unknowns,
    .newton_system = sym_galerkin_newton_system,
    .newton_direction = sym_galerkin_newton_direction, .constraint_size = sym_gcon_size,
    .multipliers = sym_gcon_multipliers, .forced = 1,
    .newton_blocks = sym_galerkin_newton_blocks,
    .param_tangent = param_tangent, .time_tangent = sym_galerkin_time_tangent,
    .point_tangent = sym_galerkin_point_tangent,
};
