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
 * which lowers the round-off floor when |q| is large (docs/errata.md#node-velocities-from-increments).
 *
 * Simpson (s = 3 Lobatto nodes 0, 1/2, 1 with weights 1/6, 2/3, 1/6; order
 * 4) and the implicit midpoint rule (s = 2, one Gauss point; order 2) are
 * members; see sym_simpson.c and sym_midpoint.c.
 */
#include "sym_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDING_RES (16.0 * DBL_EPSILON)
#define CHORD_THETA 0.25      /* refresh the chord matrix above this rate  */
#define CHORD_MAX_ITERS 6     /* ... or after a step that needed more     */
#define PLAUS_GAIN 10.0      /* plausible roots: T_{j+1} <= PLAUS_GAIN (T_j + |W|) */

/* Lagrange basis polynomial l_a on nodes c[0..s-1] and its derivative. */
static double lagrange(const double *c, int s, int a, double x)
{
    double v = 1.0;
    for (int m = 0; m < s; m++)
        if (m != a) v *= (x - c[m]) / (c[a] - c[m]);
    return v;
}

static double lagrange_d(const double *c, int s, int a, double x)
{
    double sum = 0.0;
    for (int k = 0; k < s; k++) {
        if (k == a) continue;
        double v = 1.0 / (c[a] - c[k]);
        for (int m = 0; m < s; m++)
            if (m != a && m != k) v *= (x - c[m]) / (c[a] - c[m]);
        sum += v;
    }
    return sum;
}

int sym_galerkin_setup(sym_work *w)
{
    const sym_galerkin_table *gt = w->method->table;
    sym_gtab *t = &w->tab;
    if (!gt || gt->s < 2 || gt->s > SYM_MAX_NODES || gt->r < 1 ||
        gt->r > SYM_MAX_NODES)
        return SYM_EINVAL;
    const int s = gt->s, r = gt->r;
    t->s = s;
    t->r = r;
    for (int a = 0; a < s; a++) t->c[a] = gt->c[a];
    for (int i = 0; i < r; i++) {
        t->b[i] = gt->b[i];
        t->unit[i] = -1;
        double bsum = 0.0, dsum = 0.0;
        for (int a = 0; a < s; a++) {
            t->B[i][a] = lagrange(gt->c, s, a, gt->x[i]);
            t->D[i][a] = lagrange_d(gt->c, s, a, gt->x[i]);
            if (gt->x[i] == gt->c[a]) t->unit[i] = a;
            if (a > 0) { bsum += t->B[i][a]; dsum += t->D[i][a]; }
        }
        /* Exact partition of unity and zero row sums: the increments form
         * used below defines L_d with exactly these B_i0, D_i0. */
        t->B[i][0] = 1.0 - bsum;
        t->D[i][0] = -dsum;
        if (t->unit[i] >= 0)
            for (int a = 0; a < s; a++) t->B[i][a] = (a == t->unit[i]) ? 1.0 : 0.0;
    }
    for (int a = 0; a < s; a++)
        for (int b = 0; b < s; b++)
            t->E[a][b] = lagrange(gt->c, s, b, 1.0 + gt->c[a]);

    /* Lobatto structure (points = nodes) and its precombined weights. */
    t->lobatto = (r == s);
    for (int i = 0; i < r; i++) if (t->unit[i] != i) t->lobatto = 0;
    if (t->lobatto)
        for (int i = 0; i < s; i++)
            for (int a = 0; a < s; a++) {
                t->bD[i][a] = t->b[i] * t->D[i][a];
                for (int b = 0; b < s; b++) t->bDD[a][b][i] = t->b[i] * t->D[i][a] * t->D[i][b];
            }

    /* Term lists: J_ab += c X_i with X in {M/h, A, A^T, h (H - K)} and
     * R_a += c P_i or c h f_i, keeping only nonzero coefficients. */
    t->njt = t->nrt = 0;
    for (int a = 0; a <= s - 2; a++) {
        for (int i = 0; i < r; i++) {
            const double cP = t->b[i] * t->D[i][a], cf = t->b[i] * t->B[i][a];
            if (cP != 0.0) t->rt[t->nrt++] = (struct sym_rterm){(short)i, (short)a, 0, cP};
            if (cf != 0.0) t->rt[t->nrt++] = (struct sym_rterm){(short)i, (short)a, 1, cf};
        }
        for (int b = 1; b <= s - 1; b++)
            for (int i = 0; i < r; i++) {
                const double bi = t->b[i];
                const double cs[4] = {bi * t->D[i][a] * t->D[i][b], bi * t->D[i][a] * t->B[i][b],
                                      bi * t->B[i][a] * t->D[i][b], bi * t->B[i][a] * t->B[i][b]};
                for (int kind = 0; kind < 4; kind++)
                    if (cs[kind] != 0.0)
                        t->jt[t->njt++] = (struct sym_jterm){(short)i, (short)a, (short)b, (short)kind, cs[kind]};
            }
    }

    w->nu = (s - 1) * w->n;
    sym_galerkin_pick_kernels(w);
    w->left_point = w->right_point = -1;
    for (int i = 0; i < r; i++) {
        if (t->unit[i] == 0) w->left_point = i;
        if (t->unit[i] == s - 1) w->right_point = i;
    }
    for (int i = 0; i < r; i++) {
        if (i == w->left_point) {
            /* M and grad V at q_j are cached; A depends on g_0.  H and K of
             * the left node enter neither the Newton matrix (B_0b = 0 for
             * the unknowns b >= 1) nor the final momentum correction. */
            w->need_full[i] = SYM_NEED_A;
        } else {
            /* H and K enter the Newton matrix (through B_ia B_ib) and the
             * linearised final momentum (through B_ia, a >= 1). */
            w->need_full[i] = SYM_NEED_M | SYM_NEED_A | SYM_NEED_DV | SYM_NEED_H | SYM_NEED_D2V;
        }
    }
    return SYM_OK;
}

static int eval_point(sym_work *w, int i, unsigned need)
{
    const int n = w->n;
    const size_t nn = (size_t)n * (size_t)n;
    sym_eval_out out;
    out.M = w->Mp + i * nn;
    out.A = w->Ap + i * nn;
    out.H = w->Hp + i * nn;
    out.V = NULL;
    out.dV = w->dVp + (size_t)i * n;
    out.d2V = w->Kp + i * nn;
    return sym_eval(w->sys, w->Qp + (size_t)i * n, w->Gp + (size_t)i * n, need,
                    &out, w->scratch);
}

/* Make sure M(q) and grad V(q) at the left node are in the cache. */
static int left_cache(sym_work *w, const double *q)
{
    const int n = w->n;
    if (w->cache_valid && memcmp(w->cache_q, q, sizeof(double) * (size_t)n) == 0)
        return SYM_OK;
    w->cache_valid = 0;
    sym_eval_out out = {0};
    out.M = w->cache_M;
    out.dV = w->cache_dV;
    int st = sym_eval(w->sys, q, NULL, SYM_NEED_M | SYM_NEED_DV, &out, w->scratch);
    if (st) return st;
    memcpy(w->cache_q, q, sizeof(double) * (size_t)n);
    w->cache_valid = 1;
    return SYM_OK;
}

/*
 * Taylor predictor from (q_j, p_j): v = M^{-1} p, and the acceleration of
 * the Euler-Lagrange equations M qdd = 1/2 A(q,v)^T v - A(q,v) v - grad V;
 * X_a = c_a h v + 1/2 (c_a h)^2 qdd  (error O(h^3)).
 */
static int taylor_predict(sym_work *w, const double *q, const double *p, double h)
{
    const int n = w->n, s = w->tab.s;
    const size_t nn = (size_t)n * (size_t)n;
    int st = left_cache(w, q);
    if (st) return st;
    double *L = w->Lm;
    double *A = w->Ap;  /* borrow point 0 storage */
    memcpy(L, w->cache_M, sizeof(double) * nn);
    st = sym_cholesky(n, L);
    if (st) return st;
    memcpy(w->v, p, sizeof(double) * (size_t)n);
    sym_cholesky_solve(n, L, w->v);
    sym_eval_out out = {0};
    out.A = A;
    st = sym_eval(w->sys, q, w->v, SYM_NEED_A, &out, w->scratch);
    if (st) return st;
    for (int i = 0; i < n; i++) {
        double s1 = 0.0, s2 = 0.0;
        for (int k = 0; k < n; k++) {
            s1 += A[k * n + i] * w->v[k];   /* (A^T v)_i */
            s2 += A[i * n + k] * w->v[k];   /* (A v)_i   */
        }
        w->acc[i] = 0.5 * s1 - s2 - w->cache_dV[i];
    }
    sym_cholesky_solve(n, L, w->acc);
    for (int a = 1; a < s; a++) {
        const double tau = w->tab.c[a] * h;
        double *Xa = w->X + (size_t)(a - 1) * n;
        for (int k = 0; k < n; k++) Xa[k] = tau * w->v[k] + 0.5 * tau * tau * w->acc[k];
    }
    return SYM_OK;
}

/* Extrapolate the previous step's interpolating polynomial:
 * Q_a(new) = sum_b l_b(1 + c_a) Q_b(prev), written in increments. */
static void poly_predict(sym_work *w)
{
    const int n = w->n, s = w->tab.s;
    const double *Xe = w->prev_X + (size_t)(s - 2) * n;   /* X_{s-1}(prev) */
    for (int a = 1; a < s; a++) {
        double *Xa = w->X + (size_t)(a - 1) * n;
        for (int k = 0; k < n; k++) {
            double v = w->tab.E[a][0] * (-Xe[k]);
            for (int b = 1; b < s - 1; b++)
                v += w->tab.E[a][b] * (w->prev_X[(size_t)(b - 1) * n + k] - Xe[k]);
            Xa[k] = v;
        }
    }
}

static int eval_points(sym_work *w, const unsigned *need)
{
    const int n = w->n, r = w->tab.r;
    const size_t nn = (size_t)n * (size_t)n;
    sym_eval_out out[SYM_MAX_NODES];
    for (int i = 0; i < r; i++) {
        out[i].M = w->Mp + i * nn;
        out[i].A = w->Ap + i * nn;
        out[i].H = w->Hp + i * nn;
        out[i].V = NULL;
        out[i].dV = w->dVp + (size_t)i * n;
        out[i].d2V = w->Kp + i * nn;
    }
    const int st = sym_eval_points(w->sys, r, w->Qp, w->Gp, need, out, w->scratch);
    if (st) return st;
    if (w->left_point >= 0) {
        const int i = w->left_point;
        memcpy(w->Mp + i * nn, w->cache_M, sizeof(double) * nn);
        memcpy(w->dVp + (size_t)i * n, w->cache_dV, sizeof(double) * (size_t)n);
    }
    return SYM_OK;
}

/* What one Newton solve reports. */
typedef struct newton_out {
    int iters, converged;   /* converged: 1 residual test, 2 update test */
    double rnorm, rscale, dk;
} newton_out;

/* Newton's method on the step equations from the increments in w->X (the
 * predictor, also kept in prev_X for the chord restart). */
static int newton_solve(sym_work *w, const double *q, const double *p, double h,
                        newton_out *o)
{
    const int nu = w->nu;
    const double rtol = w->opt.rtol;
    int st, iters = 0;
    double rnorm = 0.0, rscale = 1.0, dprev = 0.0, dk = 0.0;
    o->converged = 0;

    /* Chord (simplified Newton): reuse the factorised Newton matrix of an
     * earlier iterate, possibly of an earlier step, while it contracts well;
     * refresh it when h changed, the previous step needed many iterations,
     * or the observed contraction theta exceeds CHORD_THETA. */
    const int chord = w->opt.newton == SYM_NEWTON_CHORD;
    int refresh = !chord || !w->lu_valid || w->lu_h != h || w->prev_iters > CHORD_MAX_ITERS;
    int fresh_prev = 0;
    /* Chord safeguard: an update made with a matrix factorised at another
     * iterate (or step) that does not decrease the residual means that
     * matrix no longer describes this step; the iterate it produced may
     * already be far off.  Restart once from the predictor (kept in prev_X)
     * with a fresh matrix. */
    int stale = 0, restarted = 0;
    double rprev = 0.0;

    for (;;) {
        w->form_points(w, q, h);
        st = eval_points(w, w->need_full);
        if (st) goto out;
        rscale = w->residual(w, p, h, &rnorm);
        if (chord && stale && !restarted && !(rnorm < rprev)) {
            memcpy(w->X, w->prev_X, sizeof(double) * (size_t)nu);
            restarted = 1;
            refresh = 1;
            stale = 0;
            fresh_prev = 0;
            dprev = 0.0;
            continue;
        }
        if (!isfinite(rnorm)) { st = SYM_ENONFINITE; goto out; }
        if (iters > 0 && rnorm <= ROUNDING_RES * rscale) { o->converged = 1; break; }
        if (iters >= w->opt.max_iter) { st = SYM_ENOCONV; goto out; }
        const int fresh = refresh;
        if (refresh) {
            w->lu_valid = 0;
            st = w->jacobian(w, h);
            if (st) goto out;
            st = w->lu_factor(nu, w->J, w->piv);
            if (st) goto out;
            w->lu_valid = 1;
            w->lu_h = h;
            refresh = !chord;
        }
        for (int k = 0; k < nu; k++) w->dX[k] = -w->R[k];
        w->lu_solve(nu, w->J, w->piv, w->dX);
        double xn = 0.0, dn = 0.0;
        for (int k = 0; k < nu; k++) {
            w->X[k] += w->dX[k];
            double ax = fabs(w->X[k]), ad = fabs(w->dX[k]);
            if (!(ax <= xn)) xn = ax;
            if (!(ad <= dn)) dn = ad;
        }
        iters++;
        if (!isfinite(xn) || !isfinite(dn)) { st = SYM_ENONFINITE; goto out; }
        dk = xn > 0.0 ? dn / xn : (dn > 0.0 ? 1.0 : 0.0);
        /* Stop when the update is below rtol, or when the observed
         * contraction theta = d_k/d_{k-1} predicts that the error left after
         * this update is below rtol, without spending another evaluation:
         * Newton's quadratic convergence, d_{k+1} ~ d_k^3/d_{k-1}^2
         * = theta^2 d_k, once theta <= 0.01; otherwise the contraction
         * bound theta/(1-theta) d_k. */
        int small = dk <= rtol;
        if (!small && iters > 1 && dk < dprev) {
            const double th = dk / dprev;
            /* the quadratic estimate needs exact Newton steps (fresh
             * matrices at both updates); the contraction bound is general */
            const int newton = fresh && fresh_prev;
            small = (newton && th <= 0.01 ? th * th : th / (1.0 - th)) * dk <= rtol;
        }
        if (chord && iters > 1 && !(dk <= CHORD_THETA * dprev)) refresh = 1;
        dprev = dk;
        fresh_prev = fresh;
        stale = !fresh;
        rprev = rnorm;
        if (small) { o->converged = 2; break; }
    }
    w->prev_iters = iters;
out:
    o->iters = iters;
    o->rnorm = rnorm;
    o->rscale = rscale;
    o->dk = dk;
    return st;
}

/*
 * The step's outputs from the accepted increments.
 * p_{j+1} = p_j + h sum_i b_i f_i (difference form), with f_i at the
 * accepted increments.  After a final update Delta (converged == 2) the
 * f_i were evaluated before it, so they are advanced to first order,
 *   f_i += sum_{a>=1} [ B_ia (H_i - K_i) + A_i^T D_ia / h ] Delta_a,
 * leaving an O(|Delta|^2) error (below rounding once the update test
 * passes) instead of spending another evaluation.  For a cyclic
 * coordinate c every term of component c is exactly zero, so p_c stays
 * bitwise constant.
 */
static int step_outputs(sym_work *w, const double *q, const double *p, double h, int converged,
                        double *q1, double *p1, double *qmid)
{
    const int n = w->n, s = w->tab.s, r = w->tab.r;
    if (converged == 2) w->correct(w, h);
    for (int k = 0; k < n; k++) {
        double acc = 0.0;
        for (int i = 0; i < r; i++) acc += w->tab.b[i] * w->f[(size_t)i * n + k];
        p1[k] = p[k] + h * acc;
    }
    for (int k = 0; k < n; k++) q1[k] = q[k] + w->X[(size_t)(s - 2) * n + k];
    if (qmid)
        for (int a = 1; a <= s - 2; a++)
            for (int k = 0; k < n; k++)
                qmid[(size_t)(a - 1) * n + k] = q[k] + w->X[(size_t)(a - 1) * n + k];
    for (int k = 0; k < n; k++)
        if (!isfinite(q1[k]) || !isfinite(p1[k])) return SYM_ENONFINITE;
    return SYM_OK;
}

/* Kinetic energy 1/2 p^T M^{-1} p by the square-root-free factorisation
 * M = L D L^T, in place in A (a copy of M; its lower triangle receives
 * U = L D): L y = p, T = 1/2 sum_j y_j^2 / D_j.  y and inv (1/D) are n
 * scratch doubles.  SYM_EMASS when a pivot D_j is not positive. */
static int kinetic(int n, double *A, const double *p, double *y, double *inv, double *T)
{
    double kin = 0.0;
    for (int j = 0; j < n; j++) {
        double *rj = A + (size_t)j * n;
        double d = rj[j], v = p[j];
        for (int k = 0; k < j; k++) {
            const double ljk = rj[k] * inv[k];
            d -= ljk * rj[k];
            v -= ljk * y[k];
        }
        if (!(d > 0.0)) return SYM_EMASS;
        inv[j] = 1.0 / d;
        y[j] = v;
        kin += v * v * inv[j];
        for (int i = j + 1; i < n; i++) {
            double *ri = A + (size_t)i * n;
            double u = ri[j];
            for (int k = 0; k < j; k++) u -= ri[k] * rj[k] * inv[k];
            ri[j] = u;
        }
    }
    *T = 0.5 * kin;
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
 * i.e. the step created kinetic energy that its start cannot supply.  The
 * ratio T_{j+1} / (T_j + |W|) is 1 + O(h^p) on the exact flow.  Measured
 * (benchmarks/plausibility.py, RESULTS_plausibility.md; ratios recomputed
 * there in NumPy):
 *   - genuine steps: every step of 693 bounded integrations (the built-in
 *     systems at the papers' h up to and past the stability limits, the 8-
 *     and 64-link chain, the Lagrange top, the cart pendulum; all implicit
 *     methods): max 1.8 at step sizes up to the stability limits, 6.4 past
 *     them (Lobatto-4, pendulum, omega h = 3.8); the roots reached by
 *     continuation in h from h -> 0 at 668 sampled large-h step equations:
 *     max 4.1;
 *   - false roots (not on that branch): those that blow the energy up gave
 *     16 to 6e8 in the runs measured (the trial's 49 and 178); the median of
 *     1,851 false roots of sampled step equations is 1.2e3.
 * PLAUS_GAIN = 10 lies 5.5x above the genuine maximum at stable step sizes
 * (1.6x above the extreme 6.4) and 1.6x below the smallest energy-blowing
 * false root.  About 10 % of the sampled false roots give 3 to 15 and some
 * below 1 (other solutions that change the energy moderately): no threshold
 * on this or the kinematic measures tried (|X| over the Taylor step, V-based
 * energy jumps) separates those from genuine steps at such h; the runs that
 * met one failed within a few steps.
 *
 * Cost: two L D L^T factorisations of n x n matrices (M(q) is cached;
 * M(q_{j+1}) is the right node's, evaluated at the last Newton iterate, or
 * for the midpoint rule one evaluation at q_{j+1}, kept as the next step's
 * M(q)); nothing changes in the numbers of an accepted step.
 */
static int plausible(sym_work *w, const double *q, const double *p, double h,
                     const double *q1, const double *p1)
{
    const int n = w->n, r = w->tab.r;
    const size_t nn = (size_t)n * (size_t)n;
    double work = 0.0;   /* W / h */
    for (int i = 0; i < r; i++) {
        double dot = 0.0;
        for (int k = 0; k < n; k++) dot += w->dVp[(size_t)i * n + k] * w->Gp[(size_t)i * n + k];
        work += w->tab.b[i] * dot;
    }
    work *= h;
    double T0, T1;
    int st = left_cache(w, q);
    if (st) return st;
    memcpy(w->Lm, w->cache_M, sizeof(double) * nn);
    st = kinetic(n, w->Lm, p, w->tmp, w->v, &T0);
    if (st) return st;
    if (w->right_point >= 0) {
        memcpy(w->Lm, w->Mp + w->right_point * nn, sizeof(double) * nn);
    } else {
        st = left_cache(w, q1);
        if (st) return st;
        memcpy(w->Lm, w->cache_M, sizeof(double) * nn);
    }
    st = kinetic(n, w->Lm, p1, w->tmp, w->v, &T1);
    if (st) return st;
    /* energies beyond the double range (|p| > 1e154): no verdict; the state
     * itself reports SYM_ENONFINITE when it overflows */
    if (!isfinite(T0) || !isfinite(T1) || !isfinite(work)) return SYM_OK;
    return T1 <= PLAUS_GAIN * (T0 + fabs(work)) ? SYM_OK : SYM_EIMPLAUSIBLE;
}

/* Failures that another start of Newton may avoid. */
static int retryable(int st)
{
    return st == SYM_ENOCONV || st == SYM_ESINGULAR || st == SYM_ENONFINITE ||
           st == SYM_EIMPLAUSIBLE;
}

int sym_galerkin_step(sym_work *w, const double *q, const double *p, double h,
                      double *q1, double *p1, double *qmid, sym_step_info *info)
{
    const int n = w->n, nu = w->nu;
    int st, iters = 0;
    newton_out o = {0, 0, 0.0, 1.0, 0.0};

    if (info) { info->iterations = 0; info->residual = info->residual_rel = info->update = 0.0; }
    if (!(h != 0.0) || !isfinite(h)) return SYM_EINVAL;
    for (int k = 0; k < n; k++)
        if (!isfinite(q[k]) || !isfinite(p[k])) return SYM_ENONFINITE;

    if (w->left_point >= 0) {
        st = left_cache(w, q);
        if (st) goto fail;
    }
    int extrapolated = w->opt.predictor && w->prev_valid && w->prev_h == h &&
                       memcmp(w->prev_qend, q, sizeof(double) * (size_t)n) == 0;
    if (extrapolated) {
        poly_predict(w);
    } else {
        st = taylor_predict(w, q, p, h);
        if (st) goto fail;
    }
    w->prev_valid = 0;

    /* A root from the extrapolated predictor that Newton does not reach, or
     * that is implausible, is sought once more from the Taylor predictor
     * (what predictor=False does), so that the predictor never makes a run
     * fail where starting afresh would not. */
    for (;;) {
        if (w->opt.newton == SYM_NEWTON_CHORD)   /* the predictor, for the restart */
            memcpy(w->prev_X, w->X, sizeof(double) * (size_t)nu);
        st = newton_solve(w, q, p, h, &o);
        iters += o.iters;
        if (!st) st = step_outputs(w, q, p, h, o.converged, q1, p1, qmid);
        if (!st) st = plausible(w, q, p, h, q1, p1);
        if (!st) break;
        if (!extrapolated || !retryable(st)) goto fail;
        extrapolated = 0;
        w->lu_valid = 0;
        st = taylor_predict(w, q, p, h);
        if (st) goto fail;
    }

    /* The right point's M and grad V are the next step's left-node values
     * when they were evaluated at the accepted q_{j+1}. */
    if (w->right_point >= 0 && o.converged == 1) {
        const size_t nn = (size_t)n * (size_t)n;
        const int i = w->right_point;
        memcpy(w->cache_q, w->Qp + (size_t)i * n, sizeof(double) * (size_t)n);
        memcpy(w->cache_M, w->Mp + i * nn, sizeof(double) * nn);
        memcpy(w->cache_dV, w->dVp + (size_t)i * n, sizeof(double) * (size_t)n);
        w->cache_valid = 1;
    }
    memcpy(w->prev_X, w->X, sizeof(double) * (size_t)nu);
    memcpy(w->prev_qend, q1, sizeof(double) * (size_t)n);
    w->prev_h = h;
    w->prev_valid = 1;
    if (info) {
        info->iterations = iters;
        info->residual = o.rnorm;
        info->residual_rel = o.rnorm / o.rscale;
        info->update = o.dk;
    }
    return SYM_OK;

fail:
    w->cache_valid = 0;
    w->prev_valid = 0;
    w->lu_valid = 0;
    if (info) {
        info->iterations = iters;
        info->residual = o.rnorm;
        info->residual_rel = o.rnorm / o.rscale;
        info->update = o.dk;
    }
    return st;
}

/*
 * Tangent map of a converged step (implicit function theorem).  With the
 * increments X fixed, q moves every node: dR_a/dq = sum_b dR_a/dQ_b
 *   = sum_i b_i [ D_ia A_i + h B_ia (H_i - K_i) ]   (rows of B sum to 1,
 * rows of D to 0), and dR_0/dp = I.  Then dX = -J^{-1}(R_q dq + R_p dp),
 *   dq1 = dq + dX_{s-1},
 *   dp1 = dp + h sum_i b_i [ (H_i - K_i) dq_i + A_i^T dg_i ],
 *   dq_i = dq + sum_a B_ia dX_a,  dg_i = sum_a D_ia dX_a / h.
 */
int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h,
                         double *q1, double *p1, double *D, sym_step_info *info)
{
    const int n = w->n, s = w->tab.s, r = w->tab.r, nu = w->nu, m = 2 * n;
    const size_t nn = (size_t)n * (size_t)n;
    int st = sym_galerkin_step(w, q, p, h, q1, p1, NULL, info);
    if (st) return st;
    /* Full evaluation of every point at the converged increments (the
     * left node needs H and K here, unlike in Newton). */
    w->form_points(w, q, h);
    const unsigned all = SYM_NEED_M | SYM_NEED_A | SYM_NEED_H | SYM_NEED_DV | SYM_NEED_D2V;
    for (int i = 0; i < r; i++) {
        st = eval_point(w, i, all);
        if (st) return st;
    }
    w->lu_valid = 0;
    st = w->jacobian(w, h);
    if (st) return st;
    st = w->lu_factor(nu, w->J, w->piv);
    if (st) return st;
    double *Rq = malloc(sizeof(double) * ((size_t)nu * n + (size_t)nu + (size_t)n));
    if (!Rq) return SYM_ENOMEM;
    double *dX = Rq + (size_t)nu * n, *dq = dX + nu;
    memset(Rq, 0, sizeof(double) * (size_t)nu * n);
    for (int i = 0; i < r; i++) {
        const double *A = w->Ap + i * nn, *H = w->Hp + i * nn, *K = w->Kp + i * nn;
        for (int a = 0; a <= s - 2; a++) {
            const double cA = w->tab.b[i] * w->tab.D[i][a];
            const double cH = w->tab.b[i] * h * w->tab.B[i][a];
            for (int g = 0; g < n; g++)
                for (int d = 0; d < n; d++)
                    Rq[((size_t)a * n + g) * n + d] += cA * A[g * n + d] + cH * (H[g * n + d] - K[g * n + d]);
        }
    }
    for (int col = 0; col < m; col++) {
        /* perturbation (dq, dp) = unit vector `col` */
        for (int k = 0; k < n; k++) dq[k] = (col == k) ? 1.0 : 0.0;
        for (int k = 0; k < nu; k++) {
            double v = (col < n) ? Rq[(size_t)k * n + col] : 0.0;
            if (col >= n && k == col - n) v += 1.0;    /* R_0 = p + ... */
            dX[k] = -v;
        }
        w->lu_solve(nu, w->J, w->piv, dX);
        for (int k = 0; k < n; k++)
            D[(size_t)k * m + col] = dq[k] + dX[(size_t)(s - 2) * n + k];
        for (int c = 0; c < n; c++) {
            double acc = 0.0;
            for (int i = 0; i < r; i++) {
                const double *A = w->Ap + i * nn, *H = w->Hp + i * nn, *K = w->Kp + i * nn;
                double sum = 0.0;
                for (int d = 0; d < n; d++) {
                    double dqd = dq[d], dgd = 0.0;
                    for (int a = 1; a < s; a++) {
                        dqd += w->tab.B[i][a] * dX[(size_t)(a - 1) * n + d];
                        dgd += w->tab.D[i][a] * dX[(size_t)(a - 1) * n + d];
                    }
                    sum += (H[c * n + d] - K[c * n + d]) * dqd + A[d * n + c] * dgd / h;
                }
                acc += w->tab.b[i] * sum;
            }
            D[(size_t)(n + c) * m + col] = ((col == n + c) ? 1.0 : 0.0) + h * acc;
        }
    }
    free(Rq);
    return SYM_OK;
}

int sym_newton_size(const sym_work *w)
{
    return w->method->kind == SYM_KIND_GALERKIN ? w->nu : 0;
}

int sym_newton_system(sym_work *w, const double *q, const double *p, double h,
                      const double *X, double *R, double *J)
{
    if (w->method->kind != SYM_KIND_GALERKIN) return SYM_EMETHOD;
    if (!(h != 0.0) || !isfinite(h)) return SYM_EINVAL;
    const size_t nu = (size_t)w->nu;
    double rnorm;
    int st = SYM_OK;
    w->prev_valid = 0;
    w->lu_valid = 0;
    if (w->left_point >= 0) st = left_cache(w, q);
    if (st) return st;
    memcpy(w->X, X, sizeof(double) * nu);
    w->form_points(w, q, h);
    st = eval_points(w, w->need_full);
    if (st) return st;
    (void)w->residual(w, p, h, &rnorm);
    st = w->jacobian(w, h);
    if (R) memcpy(R, w->R, sizeof(double) * nu);
    if (J) memcpy(J, w->J, sizeof(double) * nu * nu);
    return st;
}
