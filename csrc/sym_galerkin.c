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
 * method (full or chord, its safeguards) is sym_newton.c; this file gives it
 * the residual, the Newton matrix and the predictors, forms the step's
 * outputs and judges the plausibility of the root it finds.
 */
#include "sym_forces.h"
#include "sym_gwork.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLAUS_GAIN 10.0      /* plausible roots: T_{j+1} <= PLAUS_GAIN (T_j + |W|) */

/*
 * Taylor predictor from (q_j, p_j): v = M^{-1} p, and the acceleration of
 * the Euler-Lagrange equations M qdd = 1/2 A(q,v)^T v - A(q,v) v - grad V
 * (+ F(t_j, q, v) with a force);
 * X_a = c_a h v + 1/2 (c_a h)^2 qdd  (error O(h^3)).
 */
static int taylor_predict(sym_gwork *g, const double *q, const double *p, double h)
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
 * benchmarks/RESULTS_speed.md section 13.2.
 *
 * SYM_PRED_POLY1, the same through fewer points, for s >= 5: the last
 * step's s nodes and q_{j-2} (degree s; E1), X_a = sum_p E1_ap Y_p with Y =
 * q_{j-2} - q_j = -(X2_{s-1} + X1_{s-1}) and the last step's nodes as in
 * SYM_PRED_POLY2.  It misses the converged nodes by less than SYM_PRED_POLY
 * and than the degree-8 SYM_PRED_POLY2 (the step ends are superconvergent,
 * the interior nodes are not, so fewer, better points win), and per-step
 * Newton needs fewer iterations; measured in benchmarks/RESULTS_speed.md
 * section 13.2.
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

/*
 * Plausibility of a root.  The step equations of an implicit scheme can have
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
 * benchmarks/RESULTS_plausibility.md, section "The threshold PLAUS_GAIN".
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
    if (g->kin_known) {
        T0 = g->kin;
    } else {
        st = sym_galerkin_left_cache(g, q);
        if (st) return st;
        st = g->kinetic(n, g->cache_M, p, g->Lm, g->tmp, g->v, &T0);
        if (st) return st;
    }
    const double *M1 = g->cache_M;
    if (g->right_point >= 0) {
        M1 = g->Mp + (size_t)g->right_point * nn;
    } else {
        st = sym_galerkin_left_cache(g, g->q1);
        if (st) return st;
    }
    st = g->kinetic(n, M1, g->p1, g->Lm, g->tmp, g->v, &T1);
    if (st) return st;
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
    return T1 <= PLAUS_GAIN * (T0 + fabs(work)) ? SYM_OK : SYM_EIMPLAUSIBLE;
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
    return st ? st : plausible(g);
}

static int nt_restart(void *ctx)
{
    sym_gwork *g = ctx;
    return taylor_predict(g, g->q, g->p, g->h);
}

static const sym_newton_ops newton_ops = {nt_residual, nt_factor, nt_solve, nt_finish,
                                          nt_restart};

/* ------------------------------------------------------------------ */
/* The branch check: is the root the one continued from h -> 0?         */
/* ------------------------------------------------------------------ */
/*
 * The step equations R(X; h) = 0 have one root X(h) that tends to the Taylor
 * step as h -> 0 and follows the exact flow (order 2s - 2); at larger h they
 * have others, and Newton may converge to one of them from a predictor that
 * lies between (a "false root": the trial found pendulum chains whose steps
 * jumped by 2-17 rad with every implicit method at omega h = 1.6-3, some
 * passing the plausibility gate above).  A root is suspicious when
 *   - the step's energy balance e (plausible) exceeds BR_EJUMP (BR_EJUMP2
 *     for the two-node schemes, whose predictor is too crude for the next
 *     test to carry much weight),
 *   - the extrapolating predictor missed it by far more than it missed the
 *     last steps' roots, |X - X_start| > BR_JUMP m (m: the misses of the
 *     last steps, a maximum decaying by BR_DECAY a step; a smooth motion changes
 *     the miss smoothly, another root is a jump), or the Taylor predictor
 *     missed it by |X - X_start| > BR_DIST |X|, or the extrapolation did
 *     (not the two-node schemes', which misses that much at every turning
 *     point) and its energy balance is off by more than BR_EJUMP2,
 *   - or it came from the second (Taylor) start.
 * The thresholds come from runs in which every root was checked; what they
 * catch and cost is benchmarks/RESULTS_branch.md.  The known blind spot:
 * roots that conserve the energy and lie near the predictor, as the
 * one-link pendulum's step rotated by nearly a full turn under the midpoint
 * rule at omega h >= 2.5 (branch_check = "always" checks every root).
 * A suspicious root is checked by continuation in h (on the step's workspace):
 * the root at eta_0 = h/8 from the Taylor predictor (halving eta_0 until
 * Newton converges there near the predictor), then eta grown by factors of at
 * most 2 up to h, each stage started from the parabola through the last
 * three roots (the origin X(0) = 0 among them; at the second stage, through
 * the origin with X'(0) = c v, v = M^-1 p, and X(eta_0)) and accepted when
 * Newton converges within BR_ITERS iterations to within BR_STAGE of that
 * start (else the factor is halved), and when det J keeps its sign (a sign
 * change is a fold between two stages: the branch turns back before h; a
 * continuation with steps too long to see the fold would land on the other
 * branch).  The root at eta = h is
 * the continued one: equal to Newton's root to BR_SAME, the root stands
 * (bitwise the step it was); different, the step is redone from it; not
 * reached within BR_STAGES stages, the step fails with SYM_EBRANCH unless
 * its energy balance passes the test above.
 */
#define BR_DIST 0.3
#define BR_JUMP 30.0
#define BR_DECAY 0.8
#define BR_EJUMP 0.01
#define BR_EJUMP2 0.001
#define BR_ETA0 0.125
#define BR_ITERS 10
#define BR_STAGE 0.05
#define BR_STAGES 64
#define BR_SAME 1e-6

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

/* Full Newton on the step equations of size eta from the start in g->X
 * (no outputs, no second start; the step's q_j, p_j, G(q_j) and left-node
 * cache are the step's own). */
static int probe_solve(sym_gwork *g, double eta, int *iters)
{
    static const sym_newton_ops probe_ops = {nt_residual, nt_factor, nt_solve, probe_finish,
                                             probe_restart};
    sym_newton_out o = {0, 0, 0.0, 1.0, 0.0, 0};
    g->h = eta;
    g->newton.lu_valid = 0;
    const int st = sym_newton_root(&g->newton, &probe_ops, g, eta, 0, &o);
    *iters = o.iters;
    return st;
}

/* The sign of det J of the last factorised Newton matrix: a fold of the
 * branch of roots between two sizes changes it. */
static int newton_det_sign(const sym_gwork *g)
{
    return g->con ? sym_gcon_det_sign(g) : sym_lu_det_sign(g->nu, g->J, g->piv);
}

/* |A - B|_inf / |A|_inf over the first m entries (1 when A = 0 != B) */
static double rel_dist(const double *A, const double *B, int m)
{
    double an = 0.0, dn = 0.0;
    for (int k = 0; k < m; k++) {
        an = sym_nanmax(an, fabs(A[k]));
        dn = sym_nanmax(dn, fabs(A[k] - B[k]));
    }
    if (!isfinite(an) || !isfinite(dn)) return HUGE_VAL;
    return an > 0.0 ? dn / an : (dn > 0.0 ? 1.0 : 0.0);
}

/* The root continued from h -> 0 of the step from (g->q, g->p) of size
 * g->h (comment above), found on the workspace itself: into *Xc_out (N
 * values in the branch buffer), Newton's unknowns X saved there and put
 * back.  What the step's outputs and the next step need is left as it was,
 * but the points' values (the right point's cache: points_stale) and the
 * factorisation (lu_valid = 0). */
static int continued_root(sym_gwork *g, double **Xc_out)
{
    sym_newton *nw = &g->newton;
    const int n = g->n, s = g->tab->s, nu = g->nu, N = nw->nu;
    const double *q = g->q, *p = g->p, h = g->h;
    const size_t bytes = sizeof(double) * (size_t)N;
    /* the saved X, the stage's start, the last three roots, v = M^-1 p */
    double *Xsave = g->br_buf, *Xp = Xsave + N, *R[3] = {Xp + N, Xp + 2 * N, Xp + 3 * N};
    double *vel = Xp + 4 * N, e[3] = {0.0, 0.0, 0.0};
    const enum sym_newton_mode mode = nw->mode;
    const int prev_iters = nw->prev_iters;
    memcpy(Xsave, g->X, bytes);
    nw->mode = SYM_NEWTON_FULL;
    g->points_stale = 1;
    int st, iters = 0, tries = 0, known = 1;   /* roots known: the origin, X(0) = 0 */
    int sign = 1;                              /* of det J along the branch */
    double eta = h * BR_ETA0;
    for (;;) {   /* the first stage, from the Taylor predictor */
        st = taylor_predict(g, q, p, eta);
        if (st) goto done;
        memcpy(Xp, g->X, bytes);
        memcpy(vel, g->v, sizeof(double) * (size_t)n);
        st = probe_solve(g, eta, &iters);
        if (!st && iters <= BR_ITERS && rel_dist(g->X, Xp, nu) <= BR_STAGE) {
            sign = newton_det_sign(g);
            break;
        }
        if (st && !sym_newton_retryable(st)) goto done;
        if (++tries > 10) { st = SYM_EBRANCH; goto done; }
        eta *= 0.5;
    }
    memset(R[1], 0, bytes);
    memcpy(R[2], g->X, bytes);
    e[2] = eta;
    known = 2;
    double ratio = 2.0;
    int stages = 0;
    while (fabs(eta) < fabs(h)) {
        if (++stages > BR_STAGES) { st = SYM_EBRANCH; goto done; }
        const double next = fabs(eta * ratio) >= fabs(h) ? h : eta * ratio;
        if (known == 2) {
            /* the parabola through the origin with slope X'(0) = c v and
             * through X(eta): X(r eta) = r^2 X(eta) + (r - r^2) c v eta */
            const double r = next / eta;
            for (int a = 1; a < s; a++)
                for (int k = 0; k < n; k++) {
                    const size_t i = (size_t)(a - 1) * n + k;
                    Xp[i] = r * r * R[2][i] + (r - r * r) * g->tab->c[a] * eta * vel[k];
                }
            for (int i = nu; i < N; i++) Xp[i] = r * R[2][i];   /* impulses ~ eta */
        } else {
            /* the parabola through the last three roots (the first of them
             * may be the origin) */
            const double l0 = (next - e[1]) * (next - e[2]) / ((e[0] - e[1]) * (e[0] - e[2]));
            const double l1 = (next - e[0]) * (next - e[2]) / ((e[1] - e[0]) * (e[1] - e[2]));
            const double l2 = (next - e[0]) * (next - e[1]) / ((e[2] - e[0]) * (e[2] - e[1]));
            for (int i = 0; i < N; i++) Xp[i] = l0 * R[0][i] + l1 * R[1][i] + l2 * R[2][i];
        }
        memcpy(g->X, Xp, bytes);
        st = probe_solve(g, next, &iters);
        if (!st && iters <= BR_ITERS && rel_dist(g->X, Xp, nu) <= BR_STAGE) {
            /* a root on the far side of a fold: the branch from h -> 0 turns
             * back between eta and next and does not reach h */
            if (newton_det_sign(g) != sign) { st = SYM_EBRANCH; goto done; }
            double *oldest = R[0];
            R[0] = R[1];
            R[1] = R[2];
            R[2] = oldest;
            memcpy(R[2], g->X, bytes);
            e[0] = e[1];
            e[1] = e[2];
            e[2] = next;
            known = 3;
            eta = next;
            ratio = ratio * ratio > 2.0 ? 2.0 : ratio * ratio;
        } else {
            if (st && !sym_newton_retryable(st)) goto done;
            ratio = 1.0 + 0.5 * (ratio - 1.0);
            if (ratio < 1.0 + 1.0 / 64.0) { st = SYM_EBRANCH; goto done; }
        }
    }
    st = SYM_OK;
done:
    memcpy(g->X, Xsave, bytes);
    g->h = h;
    nw->mode = mode;
    nw->prev_iters = prev_iters;
    nw->lu_valid = 0;
    *Xc_out = R[2];
    return st;
}

/*
 * A step size past the stability limit.  Along the run, the discrete energy
 * balance sum_j (T_{j+1} - T_j + W_j - W_F,j) = T_k - T_0 + sum W - sum W_F
 * (W: the potential's work, approximating its change; W_F the forces')
 * stays a small fraction of the energy that flowed, S_k = max over the run
 * of T_j + |sum W| + |sum W_F|, however large h is while the scheme is
 * stable: the error of a symplectic scheme's energy is bounded.  Past the
 * limit of its linear stability (omega h > 2 sqrt 2 for Simpson) the
 * continued root itself grows the energy geometrically; then the balance
 * becomes the flow (|bal| >= BAL_RATIO S_k) while S_k grows far beyond its
 * value after the first step (>= BAL_GROWTH S_1): SYM_EUNSTABLE, before the
 * state runs off to overflow (the stiff two-mass spring at omega h = 14:
 * energy x 1e4 a step).  A forced run's energy follows its work, which the
 * balance includes.  The balance restarts whenever a step does not start
 * where the last one ended.  (S_k is the current flow T_k + |sum W| + |sum
 * W_F| rather than its maximum: a stable run's balance is far below either,
 * and the test below is then a single comparison, |bal| >= BAL_RATIO
 * BAL_GROWTH S_1 being necessary.)
 */
#define BAL_RATIO 0.9
#define BAL_GROWTH 100.0

static inline int track_balance(sym_gwork *g)
{
    const double W = g->work * g->h, WF = g->base.force ? g->base.force->work : 0.0;
    if (!g->kin_known || g->bal_steps == 0) {
        g->bal_steps = 0;
        g->bal = g->bal_W = g->bal_WF = 0.0;
    }
    g->bal += g->ebal;
    g->bal_W += W;
    g->bal_WF += WF;
    if (++g->bal_steps == 1)
        g->bal_scale1 = fmax(g->step_T0, g->kin_end + fabs(g->bal_W) + fabs(g->bal_WF));
    if (!(fabs(g->bal) >= BAL_RATIO * BAL_GROWTH * g->bal_scale1) || !(g->bal_scale1 > 0.0))
        return SYM_OK;
    /* (an energy beyond the double range is unstable too; a nan never is) */
    const double scale = g->kin_end + fabs(g->bal_W) + fabs(g->bal_WF);
    return scale >= BAL_GROWTH * g->bal_scale1 && fabs(g->bal) >= BAL_RATIO * scale
               ? SYM_EUNSTABLE
               : SYM_OK;
}

/* The step again, from the continued root Xc (N values): Newton converges
 * there at once and the outputs are that root's (counted in branch_fixes;
 * the next step starts from the Taylor predictor: no history).  A continued
 * root that the plausibility gate rejects is the scheme's own answer at this
 * h: SYM_EUNSTABLE.  *o gains the solve's iterations. */
static int redo_from(sym_gwork *g, const double *Xc, sym_newton_out *o)
{
    g->miss = 0.0;
    g->points_stale = 0;
    memcpy(g->X, Xc, sizeof(double) * (size_t)g->newton.nu);
    g->newton.lu_valid = 0;
    g->prev_valid = g->prev2_valid = 0;
    sym_newton_out o2 = {0, 0, 0.0, 1.0, 0.0, 0};
    const int st = sym_newton_root(&g->newton, &newton_ops, g, g->h, 0, &o2);
    o2.iters += o->iters;
    *o = o2;
    if (st) return st == SYM_EIMPLAUSIBLE ? SYM_EUNSTABLE : st;
    g->base.counts.branch_fixes++;
    return track_balance(g);
}

/* After Newton's root (st0: SYM_OK, or SYM_EIMPLAUSIBLE for a root the
 * plausibility gate rejected, which is always checked): the checks of the
 * comment above.  A continued root that is itself implausible is the
 * scheme's own answer at this h: SYM_EUNSTABLE.  *o is updated when the
 * step is redone from the continued root. */
static int branch_check(sym_gwork *g, sym_newton_out *o, int st0, int extrapolated)
{
    const int nu = g->nu;
    /* the predictor's miss, measured by Newton's travel from it, and |X| */
    const double miss = g->newton.travel, xn = g->newton.xnorm;
    /* the history: misses of extrapolated starts only (a Taylor start's miss
     * is another kind, often far smaller: the next step's would look like a
     * jump); a Taylor start's root is judged by its miss relative to |X|, the
     * first extrapolated start's miss opens the history */
    const int extra = extrapolated && !o->second;
    const double ref = extra ? g->miss : 0.0;
    g->miss = extra ? (miss > BR_DECAY * ref ? miss : BR_DECAY * ref) : 0.0;
    const double ejump_max = g->tab->s == 2 ? BR_EJUMP2 : BR_EJUMP;
    const int mode = g->base.opt.branch;
    /* a far miss: from a Taylor start alone; from an extrapolated one (not
     * the two-node schemes', whose miss relative to |X| is O(1) at every
     * turning point) with an energy balance off by more than BR_EJUMP2 too,
     * since at omega h ~ 1 the extrapolation misses by a third of the step
     * on many genuine roots */
    const int far = !(miss <= BR_DIST * xn) &&
                    (!extra || (g->tab->s > 2 && fabs(g->ebal) > BR_EJUMP2 * g->eflow));
    const int suspicious = mode == SYM_BRANCH_ALWAYS || o->second || far ||
                           fabs(g->ebal) > ejump_max * g->eflow ||
                           (extra && ref > 0.0 && miss > BR_JUMP * ref);
    if (mode == SYM_BRANCH_NEVER) return st0 ? st0 : track_balance(g);
    if (!st0 && !suspicious) return track_balance(g);
    g->base.counts.branch_checks++;
    double *Xc;
    int st = continued_root(g, &Xc);
    /* No continued root to compare with: the step equations turn singular
     * between h -> 0 and h (a linear system far past its stability limit
     * does so at resonant sizes), or the branch folds.  A root that keeps
     * the energy balance stands (uncertified: a linear system's is unique);
     * else SYM_EBRANCH. */
    if (st == SYM_EBRANCH && !st0 && !(fabs(g->ebal) > ejump_max * g->eflow))
        return track_balance(g);
    if (st) return st;
    if (rel_dist(Xc, g->X, nu) <= BR_SAME) return st0 ? SYM_EUNSTABLE : track_balance(g);
    return redo_from(g, Xc, o);   /* a false root */
}

/* Newton found no root from its starts (st0: no convergence, a singular
 * matrix, a non-finite value): the continued root, when the continuation
 * reaches h, is the step's (counted as a branch check and fix); else st0. */
static int branch_rescue(sym_gwork *g, sym_newton_out *o, int st0)
{
    if (g->base.opt.branch == SYM_BRANCH_NEVER) return st0;
    g->base.counts.branch_checks++;
    double *Xc;
    int st = continued_root(g, &Xc);
    if (st == SYM_EBRANCH || (st && sym_newton_retryable(st))) return st0;
    return st ? st : redo_from(g, Xc, o);
}

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
        st = taylor_predict(g, q, p, h);
    }
    g->prev_valid = g->prev2_valid = 0;
    if (!st) st = sym_newton_root(&g->newton, &newton_ops, g, h, extrapolated, &o);
    if (!st || st == SYM_EIMPLAUSIBLE)
        st = branch_check(g, &o, st, extrapolated);
    else if (st == SYM_ENOCONV || st == SYM_ESINGULAR || st == SYM_ENONFINITE)
        st = branch_rescue(g, &o, st);
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
