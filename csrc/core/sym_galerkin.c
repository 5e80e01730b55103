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
 * file gives it the residual, the Newton matrix and the predictors, forms
 * the step's outputs and judges the plausibility of the root Newton
 * returns.  The branch check by continuation in h and the run's energy
 * balance at unstable step sizes are sym_galerkin_roots.c; one step, which
 * runs both, is sym_galerkin_step.c.
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <float.h>
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
        st = sym_force_eval(fw, g->base.t, g->base.k, 0, q, g->v, SYM_FORCE_F, fw->Fx, NULL, NULL);
        if (st) return st;
        for (int i = 0; i < n; i++) g->acc[i] += fw->Fx[i];
    }
    sym_cholesky_solve(n, L, g->acc);
    /* constrained: the acceleration on the manifold and its impulses */
    if (g->con && (st = sym_gcon_taylor(g, q, h))) return st;
    for (int a = 1; a < s; a++) {
        const double tau = g->tab->c[a] * h;
        double *Xa = g->X + (size_t)(a - 1) * n;
        for (int k = 0; k < n; k++) Xa[k] = tau * g->v[k] + 0.5 * tau * tau * g->acc[k];
    }
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
    if (converged == 2 && SYM_TREE_ON(g)) {
        /* the O(n) path evaluates f_i at the final increments (O(n)) instead
         * of advancing them along the dense derivatives it has not formed */
        g->k.form_points(g, g->q, h);
        sym_gtree_points(g);
    } else if (converged == 2) {
        g->k.correct(g, h);
    }
    if (g->base.force && converged == 2 && !SYM_TREE_ON(g)) sym_gforce_correct(g, h);
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
/* Plausibility of a root                                             */
/* ------------------------------------------------------------------ */
#define PLAUS_GAIN 10.0      /* plausible roots: T_{j+1} <= PLAUS_GAIN (T_j + |W|) */

/*
 * The step equations of an implicit scheme can have
 * several solutions; at large h Newton may converge to one that is not the
 * continuation of the h -> 0 branch (a "false root"), e.g. the implicit
 * midpoint rule on a 3-link pendulum on a cart (omega_max = 8.9 rad/s) at
 * h = 0.2 s: |dq| = 8 rad in one step and the kinetic energy jumping from
 * 33 J to 4.2e4 J.  Such a root is rejected by an energy balance that needs
 * neither V nor an energy zero.  Along the exact flow
 *
 *   T_{j+1} = T_j - (V(q_{j+1}) - V(q_j)) <= T_j + |V(q_{j+1}) - V(q_j)|,
 *
 * and the change of V along the step is approximated by the discrete work
 * of the scheme's own interpolating polynomial and quadrature,
 *
 *   W = h sum_i b_i grad V(q_i) . g_i     (no cancellation at small amplitudes).
 *
 * The root is implausible when
 *
 *   T_{j+1} > PLAUS_GAIN (T_j + |W|),     T = 1/2 p^T M(q)^{-1} p,
 *
 * i.e. the step created kinetic energy that its start cannot supply (with a
 * force, |W| + |W_F|, W_F = h sum_i b_i F_i . g_i its discrete work).  The
 * ratio T_{j+1} / (T_j + |W|) is 1 + O(h^p) on the exact flow, so genuine
 * steps keep it near 1 even past the stability limits, while the false
 * roots that blow the energy up push it far beyond: PLAUS_GAIN = 10 lies
 * between the two.  False roots that change the energy only moderately are
 * not caught (no threshold on this or the kinematic measures tried
 * separates them from genuine steps at such h).  Measured in
 * benchmarks/NOTES.md section 6 (the statistics: benchmarks/RESULTS.md section 20).
 *
 * Cost: one L D L^T factorisation of an n x n matrix per step, for T_{j+1}
 * (M(q_{j+1}) is the right node's, evaluated at the last Newton iterate, or
 * for the midpoint rule one evaluation at q_{j+1}, kept as the next step's
 * M(q)).  T_j is the previous step's T_{j+1} when the step starts where that
 * one ended (q and p bitwise, as for the left-node cache), else computed
 * from the cached M(q_j).  (After a final update Delta, the right node's M
 * is that of the iterate before it: T_j then differs from T at q_j by
 * O(|Delta|) < rtol relative, against a threshold of 10.)  Nothing changes
 * in the numbers of an accepted step.
 */
static int plausible(sym_gwork *g)
{
    const int n = g->n;
    const size_t nn = (size_t)n * (size_t)n;
    const double *q = g->q, *p = g->p;
    double work = g->work * g->h;   /* W, from step_outputs */
    double T0, T1;
    int st;
    if (SYM_TREE_ON(g)) {
        /* the chain's O(n) recursion (sym_galerkin_tree.c) */
        T0 = g->kin_known ? g->kin : sym_gtree_kinetic(g, q, p);
        T1 = sym_gtree_kinetic(g, g->q1, g->p1);
    } else if (g->kin_known) {
        T0 = g->kin;
    } else {
        st = sym_galerkin_left_cache(g, q);
        if (st) return st;
        st = g->kinetic(n, g->cache_M, p, g->Lm, g->tmp, g->v, &T0);
        if (st) return st;
    }
    if (!SYM_TREE_ON(g)) {
        const double *M1 = g->cache_M;
        if (g->right_point >= 0) {
            M1 = g->Mp + (size_t)g->right_point * nn;
        } else {
            st = sym_galerkin_left_cache(g, g->q1);
            if (st) return st;
        }
        st = g->kinetic(n, M1, g->p1, g->Lm, g->tmp, g->v, &T1);
        if (st) return st;
    }
    g->kin_end = T1;   /* the next step's T_j if this root is accepted */
    /* The step's energy balance (sym_galerkin_step's branch check): along the
     * exact flow T_{j+1} - T_j + (V_{j+1} - V_j) = W_F (the forces' work), so
     * with W for the change of V,
     *   e = |T_{j+1} - T_j + W - W_F| / (T_j + T_{j+1} + |W| + |W_F|)
     * is the step's energy error relative to the energy that flowed, of the
     * scheme's order at small h and O(1) at a root that does not follow the
     * flow (0 <= e <= 1): its numerator ebal and denominator eflow. */
    const double wf = g->base.force ? g->base.force->work : 0.0;
    g->step_T0 = T0;
    g->ebal = T1 - T0 + work - wf;
    g->eflow = T0 + T1 + fabs(work) + fabs(wf);
    /* energies beyond the double range (|p| > 1e154): no verdict; the state
     * itself reports SYM_ENONFINITE when it overflows.  Nor below it: a
     * damped system settling at q = 0 reaches |q|, |p| ~ 1e-160 after ~1e3
     * s, where T and W (products of two such numbers) are subnormal or zero
     * and their ratio is rounding, not energy (T1 below DBL_MIN / eps). */
    if (!isfinite(T0) || !isfinite(T1) || !isfinite(work)) {
        g->ebal = isfinite(T0) ? 1.0 : 0.0;   /* e = 1 (an overflow), or no verdict */
        g->eflow = 1.0;
        return SYM_OK;
    }
    if (T1 < DBL_MIN / DBL_EPSILON) {
        g->ebal = 0.0;
        return SYM_OK;
    }
    if (g->base.force) work = fabs(work) + fabs(wf);
    if (g->base.opt.branch == SYM_BRANCH_OFF) return SYM_OK;   /* no verdict asked for */
    return T1 <= PLAUS_GAIN * (T0 + fabs(work)) ? SYM_OK : SYM_EIMPLAUSIBLE;
}

/* ------------------------------------------------------------------ */
/* What Newton sees (sym_newton.h)                                      */
/* ------------------------------------------------------------------ */
static int nt_residual(void *ctx, double *rnorm, double *rscale)
{
    sym_gwork *g = ctx;
    g->k.form_points(g, g->q, g->h);
    if (SYM_TREE_ON(g)) {   /* the chain's O(n) residual (sym_galerkin_tree.c) */
        sym_gtree_points(g);
        *rscale = sym_gtree_residual(g, g->p, g->h, rnorm);
        return SYM_OK;
    }
    int st = sym_galerkin_eval_points(g, g->need_full);
    if (!st && g->base.force) st = sym_gforce_points(g, g->h, SYM_FORCE_F, 0);
    if (st) return st;
    *rscale = g->k.residual(g, g->p, g->h, rnorm);
    return g->con ? sym_gcon_residual(g, rnorm, rscale) : SYM_OK;
}

static int nt_factor(void *ctx)
{
    sym_gwork *g = ctx;
    if (SYM_TREE_ON(g)) {
        g->dec_active = 0;
        g->base.counts.factorizations++;
        return sym_gtree_factor(g, g->h);
    }
    int st = g->k.jacobian(g, g->h);
    if (!st && g->base.force) {
        st = sym_gforce_points(g, g->h, SYM_FORCE_DQ | SYM_FORCE_DV, 0);
        if (!st) sym_gforce_jacobian(g, g->h);
    }
    if (st) return st;
    g->base.counts.factorizations++;
    g->dec_active = 0;
    if (g->con) return sym_gcon_factor(g);
    return g->lu_factor(g->nu, g->J, g->piv, g->lu_work);
}

/* The decoupled mode's approximate matrix (sym_galerkin_decouple.c), where
 * the method has its block form; the exact one otherwise. */
static int nt_factor_frozen(void *ctx)
{
    sym_gwork *g = ctx;
    if (!g->tab->dec_ok || g->con || SYM_TREE_ON(g)) return nt_factor(ctx);
    g->dec_active = 0;
    /* the force's Jacobians at the points: dF/dq enters the frozen matrix,
     * both enter the final correction (sym_gforce_correct) */
    int st = g->base.force ? sym_gforce_points(g, g->h, SYM_FORCE_DQ | SYM_FORCE_DV, 0) : SYM_OK;
    if (st) return st;
    g->base.counts.factorizations++;
    st = sym_galerkin_decouple_factor(g, g->h);
    g->dec_active = !st;
    return st;
}

static void nt_solve(void *ctx, double *b)
{
    sym_gwork *g = ctx;
    if (g->con)
        sym_gcon_solve(g, b);
    else if (SYM_TREE_ON(g))
        sym_gtree_solve(g, b);
    else if (g->dec_active)
        sym_galerkin_decouple_solve(g, b);
    else
        g->lu_solve(g->nu, g->J, g->piv, b);
}

static int nt_finish(void *ctx, int converged)
{
    sym_gwork *g = ctx;
    const int st = step_outputs(g, converged);
    return st ? st : plausible(g);
}

static int nt_restart(void *ctx)
{
    sym_gwork *g = ctx;
    return sym_galerkin_taylor(g, g->q, g->p, g->h);
}

/* the step's: its outputs and the plausibility of its root after
 * convergence, the Taylor predictor as the second start */
const sym_newton_ops sym_galerkin_newton_ops = {nt_residual, nt_factor, nt_solve, nt_finish,
                                                nt_restart, nt_factor_frozen};

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
                                               probe_restart, NULL};
