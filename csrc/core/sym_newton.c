/*
 * sym_newton.c -- Newton's method (full or chord) for the step equations,
 * with its safeguards: the stopping rule, the chord restart, and the second
 * start from the Taylor predictor when an extrapolated start fails or ends
 * at a root the scheme rejects as implausible.
 *
 * Full Newton forms and factorises the Newton matrix at every iterate (the
 * exact Jacobian: quadratic convergence).  The chord (simplified Newton)
 * method keeps the factors of an earlier iterate, possibly of an earlier
 * step, while they contract well (linear convergence at rate theta), and
 * refreshes them when h changed, the previous solve needed more than
 * CHORD_MAX_ITERS iterations, or the observed contraction exceeds
 * CHORD_THETA.
 *
 * The per-step mode (simplified Newton within one step) forms and factorises
 * the matrix at the step's start iterate only and reuses the factors for the
 * step's later iterations; it refreshes them at the current iterate when the
 * observed contraction theta = d_k / d_{k-1} exceeds STEP_THETA, and keeps
 * the chord's restart safeguard.  With a predictor accurate to e_0 the first
 * update is an exact Newton step (e_1 ~ C e_0^2) and the later ones contract
 * at rate ~ 2 C e_0, the chord method's local rate for a matrix taken e_0
 * from the root (Kelley, Iterative Methods for Linear and Nonlinear
 * Equations, SIAM 1995, ch. 5): at small h one factorisation serves the
 * whole step.  The stopping rule then uses the linear-convergence bound
 * theta/(1 - theta) d_k (small_update with exact = 0).
 *
 * The decoupled mode is the per-step mode with an approximate matrix for
 * its first factorisation (ops->factor_frozen: sym_galerkin_decouple.c),
 * whose updates contract linearly at a rate set by what the approximation
 * leaves out, not by the start's distance from the root.  Where their
 * rate exceeds DEC_THETA, or a stale update does not decrease the
 * residual, the solve goes on with full Newton (the exact matrix at every
 * iterate).
 */
#include "sym_newton.h"
#include "sym_simd.h"

#include "symplectic.h"
#include "sym_unroll.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define ROUNDING_RES (16.0 * DBL_EPSILON)
#define CHORD_THETA 0.25      /* refresh the chord matrix above this rate  */
#define CHORD_MAX_ITERS 6     /* ... or after a solve that needed more     */
/* Per step: refresh the factors above this contraction rate.  A stale
 * update at rate theta gains a factor 1/theta for the price of a residual;
 * a fresh one squares the error for the price of a residual, a matrix and
 * an LU, so a low threshold refuses the slow stale updates that a looser
 * one would keep; measured in benchmarks/NOTES.md section 1. */
#define STEP_THETA 0.01
/* Per step: the second update, made with the factors of the start, contracts
 * at theta_2 = d_2 / d_1 ~ kc d_1 (the chord rate is proportional to the
 * start's distance from the root, d_1 ~ e_0 after an exact first update).
 * kc is observed on a solve whose second update was stale; when a later
 * solve at the same h predicts kc d_1 > STEP_THETA after its first update,
 * the factors are refreshed at once instead of after a stale update that
 * would be refused anyway (at large h every step did that; measured in
 * benchmarks/NOTES.md section 1).  Every
 * STEP_KC_AGE + 1-th solve at the same h lets the second update be stale
 * again and renews kc. */
#define STEP_KC_AGE 8
/* The stopping rule (small_update) ends a solve without another residual
 * when the error it predicts after the last update is below STOP_BOUND rtol
 * (and, for a stale update, when that update is below it).  The error such
 * a stop leaves has the same sign from step to step, so it adds up over a
 * run: the energy drifts linearly by N times the error's projection on
 * grad H, where rounding errors only random-walk (sqrt(N) eps).  With the
 * bounds at rtol itself (1e-13 of the increments, ~20 eps of q at the
 * double pendulum's steps) the energy drifted in every Newton mode; at
 * 1e-3 rtol, the increments' own rounding, it stays flat (measured, with
 * the updates it costs, in benchmarks/NOTES.md section 1). */
#define STOP_BOUND 1e-3
/* Decoupled: leave the approximate matrix above this contraction rate.  A
 * solve in which it did not serve (left, or more than DEC_ITERS updates)
 * is a miss; after DEC_MISSES misses in a row the next DEC_SKIP solves take
 * the per-step policy (the exact matrix), then the approximate one is tried
 * again: a run where M(q) or the stiffness vary too fast over a step for it
 * pays little more than the per-step mode (measured in benchmarks/NOTES.md
 * section 8). */
#define DEC_THETA 0.1
#define DEC_ITERS 5
#define DEC_MISSES 2
#define DEC_SKIP 32

/* An update's size relative to its iterate's, |dX|_inf / |X|_inf (1 when
 * X = 0 and dX != 0, 0 when both are 0). */
SYM_INLINE double rel_update(const double dn, const double xn)
{
    return xn > 0.0 ? dn / xn : (dn > 0.0 ? 1.0 : 0.0);
}

/* Two blocks (nw->nu_x > 0): X += dX; *dk the positions' relative update,
 * *ek the impulses' update relative to max(|X_y|, yscale).  The stopping rule
 * is applied to each block with its own history (their contraction rates
 * differ: the impulses start from a cruder predictor). */
static int apply_update2(sym_newton *nw, double yscale, double *dk, double *ek)
{
    double xn = 0.0, dn = 0.0, yn = yscale, en = 0.0;
    for (int k = 0; k < nw->nu; k++) {
        nw->X[k] += nw->dX[k];
        const double ax = fabs(nw->X[k]), ad = fabs(nw->dX[k]);
        if (k < nw->nu_x) {
            xn = sym_nanmax(xn, ax);
            dn = sym_nanmax(dn, ad);
        } else {
            yn = sym_nanmax(yn, ax);
            en = sym_nanmax(en, ad);
        }
    }
    if (!isfinite(xn) || !isfinite(dn) || !isfinite(yn) || !isfinite(en)) return SYM_ENONFINITE;
    *dk = rel_update(dn, xn);
    *ek = rel_update(en, yn);
    nw->travel += dn;
    nw->xnorm = xn;
    return SYM_OK;
}

/* X += dX; norms = (|dX|_inf, |X|_inf). */
SYM_INLINE int apply_update_k(const int nu, double *restrict X, const double *restrict dX,
                              double *norms)
{
    double xn = 0.0, dn = 0.0;
    SYM_UNROLL
    for (int k = 0; k < nu; k++) {
        const double x = X[k] + dX[k], ad = fabs(dX[k]);
        X[k] = x;
        xn = sym_nanmax(xn, fabs(x));
        dn = sym_nanmax(dn, ad);
    }
    if (!isfinite(xn) || !isfinite(dn)) return SYM_ENONFINITE;
    norms[0] = dn;
    norms[1] = xn;
    return SYM_OK;
}

#if SYM_VEC2
/* The same for an even nu, two entries at a time: X bitwise the same, and
 * the two maxima too (a maximum does not depend on the order of its
 * entries; a NaN anywhere makes it NaN either way). */
SYM_INLINE int apply_update_pairs(const int nu, double *restrict X, const double *restrict dX,
                                  double *norms)
{
    sym_v2d xv = {0.0, 0.0}, dv = {0.0, 0.0};
    SYM_UNROLL
    for (int k = 0; k < nu; k += 2) {
        sym_v2d x, d;
        memcpy(&x, X + k, sizeof x);
        memcpy(&d, dX + k, sizeof d);
        x += d;
        memcpy(X + k, &x, sizeof x);
        xv = sym_v2_nanmax(xv, sym_v2_abs(x));
        dv = sym_v2_nanmax(dv, sym_v2_abs(d));
    }
    const double xn = sym_nanmax(xv[0], xv[1]), dn = sym_nanmax(dv[0], dv[1]);
    if (!isfinite(xn) || !isfinite(dn)) return SYM_ENONFINITE;
    norms[0] = dn;
    norms[1] = xn;
    return SYM_OK;
}
#define SYM_APPLY_EVEN apply_update_pairs
#else
#define SYM_APPLY_EVEN apply_update_k
#endif

/* dX = -R */
SYM_INLINE void negate_k(const int nu, const double *restrict R, double *restrict dX)
{
    SYM_UNROLL
    for (int k = 0; k < nu; k++) dX[k] = -R[k];
}

/* The two loops above for the usual small sizes (nu = (s - 1) n unknowns:
 * Simpson n = 1..4 gives 2..8, Lobatto-5 4..16) with fixed trip counts, the
 * rest at runtime size: the same operations either way. */
#define SYM_NU_CASES(CALL) \
    switch (nw->nu) {      \
    case 2: CALL(2);       \
    case 4: CALL(4);       \
    case 6: CALL(6);       \
    case 8: CALL(8);       \
    default: CALL(nw->nu); \
    }

/* X += dX; *dk = |dX|_inf / |X|_inf (1 when X = 0 and dX != 0); the
 * solve's travel and |X| updated. */
static int apply_update(sym_newton *nw, double *dk)
{
    double norms[2];
    int st;
    switch (nw->nu) {
    case 2: st = SYM_APPLY_EVEN(2, nw->X, nw->dX, norms); break;
    case 4: st = SYM_APPLY_EVEN(4, nw->X, nw->dX, norms); break;
    case 6: st = SYM_APPLY_EVEN(6, nw->X, nw->dX, norms); break;
    case 8: st = SYM_APPLY_EVEN(8, nw->X, nw->dX, norms); break;
    default:
        st = nw->nu % 2 == 0 ? SYM_APPLY_EVEN(nw->nu, nw->X, nw->dX, norms)
                             : apply_update_k(nw->nu, nw->X, nw->dX, norms);
    }
    if (st) return st;
    *dk = rel_update(norms[0], norms[1]);
    nw->travel += norms[0];
    nw->xnorm = norms[1];
    return SYM_OK;
}

static void negate(sym_newton *nw)
{
#define SYM_CALL(NU) negate_k(NU, nw->R, nw->dX); return
    SYM_NU_CASES(SYM_CALL)
#undef SYM_CALL
}

/*
 * The stopping rule: the update d_k is below tol_update (for the positions
 * rtol after a fresh update, whose error is ~ d_k^2, and STOP_BOUND rtol
 * after a stale one), or the observed contraction theta = d_k/d_{k-1}
 * predicts that the error left after this update is below tol_error
 * (STOP_BOUND rtol for unconstrained positions), without spending another
 * evaluation:
 * Newton's quadratic convergence, d_{k+1} ~ d_k^3/d_{k-1}^2 = theta^2 d_k,
 * once theta <= 0.01 (needs exact Newton steps: fresh matrices at both
 * updates); otherwise the general contraction bound theta/(1-theta) d_k.
 */
static int small_update(double dk, double dprev, int iters, int exact, double tol_update,
                        double tol_error)
{
    if (dk <= tol_update) return 1;
    if (iters > 1 && dk < dprev) {
        const double th = dk / dprev;
        return (exact && th <= 0.01 ? th * th : th / (1.0 - th)) * dk <= tol_error;
    }
    return 0;
}

/*
 * A stall at the resolution of the positions.  The node positions that the
 * residual is evaluated at are Q_a = q_j + X_a, rounded to about eps |q_j|,
 * so the residual cannot see a change of X below that, and its rounding
 * maps to updates of size ~ |J^-1| eps |terms of R|, independent of |X|.
 * Near rest (a damped system settling away from q = 0: X ~ h qdot -> 0 while
 * q stays O(1)) the update relative to X then stays far above rtol for ever,
 * and the residual's own scale (|p|, |P_i|, |h f_i|, all -> 0 there while
 * grad V and the force cancel) does not describe its rounding either.  Such
 * an iterate is as good as the positions can hold: accept it when an exact
 * Newton update (factors of the current iterate) did not contract against
 * the update before it, d_k >= d_{k-1}/2, and is below STALL_RES eps (|q_j|
 * + |X| + DBL_MIN) in absolute size.  An iteration that still converges contracts
 * (quadratically with fresh factors), so this does not end one early; one
 * that diverges or wanders far from a root takes updates far above the
 * resolution.
 */
#define STALL_RES 1024.0

/* |q_j|_inf, the step's start (the stall tests below; both run right after
 * an update, when nw->xnorm is the positions' |X|_inf) */
static double q_ref_norm(const sym_newton *nw)
{
    double qn = 0.0;
    for (int k = 0; k < nw->n_q; k++) qn = sym_nanmax(qn, fabs(nw->q_ref[k]));
    return qn;
}

static int stalled(const sym_newton *nw, double dk, double dprev)
{
    if (!(dk >= 0.5 * dprev) || !nw->q_ref) return 0;
    const int nx = nw->nu_x > 0 ? nw->nu_x : nw->nu;
    double dn = 0.0;
    for (int k = 0; k < nx; k++) dn = sym_nanmax(dn, fabs(nw->dX[k]));
    /* (+ DBL_MIN: below it the doubles are subnormal, with the absolute
     * resolution DBL_MIN eps, as when a damped system settles at q = 0) */
    return dn <= STALL_RES * DBL_EPSILON * (q_ref_norm(nw) + nw->xnorm + DBL_MIN);
}

/*
 * The impulses' stall (constrained steps).  They are solved with the
 * positions from the constraint equations g(Q_a) = 0, which see the positions
 * only to eps |q_j|: where the positions have reached their resolution their
 * updates leave the impulses a floor of the same relative size carried over,
 * STALL_RES eps (|q_j| + |X|) / |X| (four-bar, crank angle 565 rad, h = 1e-3:
 * position updates 4.7e-13 of X, impulse updates 3e-11 - 7e-11 of theirs, a
 * bound of 1.3e-9).  Accepted when an exact update did not contract
 * (e_k >= e_{k-1}/2) and is below it.
 */
static int impulses_stalled(const sym_newton *nw, double ek, double eprev)
{
    if (!(ek >= 0.5 * eprev) || !nw->q_ref) return 0;
    const double xn = nw->xnorm;
    return xn > 0.0 ? ek <= STALL_RES * DBL_EPSILON * (1.0 + q_ref_norm(nw) / xn)
                    : ek <= STALL_RES * DBL_EPSILON;
}

/*
 * What each mode does (symplectic.h, enum sym_newton_mode; the comment at
 * the top of this file).  Full Newton factorises at every iterate; the chord
 * and per-step modes keep their factors while the updates contract and
 * differ in where the factors come from and in how they judge a slow
 * contraction.
 */
typedef struct mode_policy {
    int reuse;      /* keep the factors for later iterations while they
                       contract (stale updates: the restart safeguard, whose
                       start is kept in X0)                                 */
    int carry;      /* begin from the factors of an earlier solve when they
                       fit (same h, that solve quick)                       */
    double theta;   /* reuse: refresh the factors above this contraction    */
    int predict_kc; /* refresh right after the first update when the chord
                       constant kc predicts a slow second one               */
    int frozen;     /* the first factors from ops->factor_frozen; after a
                       refresh, full Newton                                 */
} mode_policy;

static const mode_policy policies[] = {
    [SYM_NEWTON_FULL] = {.reuse = 0, .carry = 0, .theta = 0.0, .predict_kc = 0},
    [SYM_NEWTON_CHORD] = {.reuse = 1, .carry = 1, .theta = CHORD_THETA, .predict_kc = 0},
    [SYM_NEWTON_STEP] = {.reuse = 1, .carry = 0, .theta = STEP_THETA, .predict_kc = 1},
    [SYM_NEWTON_DECOUPLED] = {.reuse = 1, .carry = 0, .theta = DEC_THETA, .predict_kc = 0,
                              .frozen = 1},
};

/* The factors the last update was made with: none made yet (or since the
 * restart), those of its own iterate, those of another iterate or step. */
enum last_update { UPDATE_NONE, UPDATE_FRESH, UPDATE_STALE };

/* One solve's state between its iterations (e: the second block's, nu_x > 0). */
typedef struct newton_iter {
    int iters;
    int refresh;             /* factorise at the next iterate               */
    enum last_update last;
    int restarted;           /* the restart safeguard was used              */
    int exact;               /* frozen policy: the approximate matrix was
                                left; every iterate factorised exactly      */
    int flat;                /* the last update was exact and did not
                                contract against the one before it          */
    double rnorm, rscale, rprev, dk, dprev, ek, eprev;
} newton_iter;

/*
 * A stall at the rounding floor of the residual.  The residual's terms can be
 * far larger than the scale rscale that the rounding test above measures it
 * against: in relative joint angles (a tree's coordinates) a chain's
 * residual sums the momenta of every body outboard of a joint, and the
 * Newton matrix L^T J L is worse conditioned than J (a 64-link chain:
 * cond 8e8 against 2e5 in absolute angles), so both the residual and the
 * updates stop falling at levels (5e-12 .. 2e-11 of rscale; updates 1e-10 of
 * the increment) above the rounding test and above `stalled`'s threshold.
 * Full Newton's stopping rule ends such solves before the floor (its
 * quadratic rate predicts the error left); a mode that reuses factors
 * contracts linearly into it and then runs out of iterations.  So: accept
 * the iterate when an exact update (fresh factors) neither contracted
 * against the update before it (d_k >= d_{k-1}/2) nor lowered the residual
 * (|R_k| >= |R_{k-1}|/2), and the residual is at most RES_FLOOR times its
 * scale -- a converging exact Newton does neither (quadratic: both fall by
 * orders), and far from a root the residual is of the size of its scale.
 * One block only (nu_x = 0: unconstrained steps).
 */
#define RES_FLOOR 1e-9

static int residual_floor(const sym_newton *nw, const newton_iter *it)
{
    return nw->nu_x == 0 && it->flat && it->last == UPDATE_FRESH &&
           it->rnorm >= 0.5 * it->rprev && it->rnorm <= RES_FLOOR * it->rscale;
}

/* Chord safeguard: an update made with a matrix factorised at another
 * iterate (or step) that does not decrease the residual means that matrix
 * no longer describes this step; the iterate it produced may already be far
 * off.  Restart once from the start X0 with a fresh matrix. */
static void restart_from_start(sym_newton *nw, newton_iter *it)
{
    memcpy(nw->X, nw->X0, sizeof(double) * (size_t)nw->nu);
    nw->travel = 0.0;
    it->restarted = it->refresh = 1;
    it->last = UPDATE_NONE;
    it->dprev = it->eprev = 0.0;
}

/* The Newton matrix at the current iterate, formed and factorised (the
 * approximate one when `frozen`). */
static int refactor(sym_newton *nw, const sym_newton_ops *ops, void *ctx, double h, int frozen)
{
    nw->lu_valid = 0;
    const int st = frozen ? ops->factor_frozen(ctx) : ops->factor(ctx);
    if (st) return st;
    nw->lu_valid = 1;
    nw->lu_h = h;
    return SYM_OK;
}

/* Per step (comment at STEP_KC_AGE): after an exact first update, refresh
 * at once when kc predicts a refused second one; after a stale second
 * update following an exact first, observe kc. */
static void per_step_kc(sym_newton *nw, newton_iter *it, int fresh, double h)
{
    if (it->iters == 1 && fresh && nw->kc_valid && nw->kc_h == h) {
        if (nw->kc_age < STEP_KC_AGE && !(nw->kc * it->dk <= STEP_THETA)) {
            it->refresh = 1;
            nw->kc_age++;
        } else {
            nw->kc_age = 0;   /* this solve's stale update renews kc */
        }
    } else if (it->iters == 2 && !fresh && it->last == UPDATE_FRESH && it->dprev > 0.0 &&
               !it->restarted) {
        nw->kc = it->dk / (it->dprev * it->dprev);
        nw->kc_h = h;
        nw->kc_valid = 1;
    }
}

/* After an update (fresh: made with fresh factors): 1 when it ends the
 * solve (the stopping rule, or a stall); the mode's refresh decisions for
 * the next iterate; the history moved on. */
static int update_ends(sym_newton *nw, const mode_policy *pol, newton_iter *it, int fresh,
                       double h)
{
    const int exact = fresh && it->iters > 1;   /* an exact Newton update, not the first */
    const int both = fresh && it->last == UPDATE_FRESH;   /* this and the last one */
    /* constrained steps (nu_x > 0): the positions' rounding floor is set
     * by the constraint terms' scale, above STOP_BOUND rtol (the four-bar:
     * ~1e-14 of the increments), and a stop needs both blocks at once: the
     * bounds stay at rtol there */
    const double tight = nw->nu_x > 0 ? nw->rtol : STOP_BOUND * nw->rtol;
    int small = small_update(it->dk, it->dprev, it->iters, both, fresh ? nw->rtol : tight, tight);
    it->flat = exact && it->dk >= 0.5 * it->dprev;
    if (!small && it->flat) small = stalled(nw, it->dk, it->dprev);
    if (pol->reuse && it->iters > 1 && !(it->dk <= pol->theta * it->dprev)) it->refresh = 1;
    if (pol->predict_kc && nw->nu_x == 0) per_step_kc(nw, it, fresh, h);
    if (nw->nu_x > 0) {
        /* the impulses' update is relative to max(|X_y|, the residual's
         * scale); their stall: impulses_stalled */
        small = small &&
                (small_update(it->ek, it->eprev, it->iters, both, nw->rtol, nw->rtol) ||
                 (exact && impulses_stalled(nw, it->ek, it->eprev)));
        if (pol->reuse && it->iters > 1 && !(it->ek <= pol->theta * it->eprev)) it->refresh = 1;
        it->eprev = it->ek;
    }
    it->dprev = it->dk;
    it->last = fresh ? UPDATE_FRESH : UPDATE_STALE;
    it->rprev = it->rnorm;
    return small;
}

/*
 * The residual test |R| <= ROUNDING_RES |scale| accepts an iterate whose
 * error, J^-1 R, is small but has the same sign from step to step (it is
 * the last update's own error, C e^2 for an exact one), so the energy
 * drifts with it as with the bounds above.  The residual is in hand and so
 * are factors that contract, so the update -J^-1 R costs a solve and no
 * evaluation: it leaves theta |J^-1 R| plus the residual's rounding, which
 * does not accumulate (benchmarks/NOTES.md section 1).  The step's outputs
 * then advance f_i along it (converged = 2).  Not counted as an iteration:
 * no residual is evaluated.
 */
static void final_correction(sym_newton *nw, const sym_newton_ops *ops, void *ctx)
{
    negate(nw);
    ops->solve(ctx, nw->dX);
    for (int k = 0; k < nw->nu; k++) nw->X[k] += nw->dX[k];
}

/* Decoupled: a solve in which the approximate matrix served or not. */
static void dec_record(sym_newton *nw, int miss)
{
    nw->dec_miss = miss ? nw->dec_miss + 1 : 0;
    if (nw->dec_miss >= DEC_MISSES) {
        nw->dec_miss = 0;
        nw->dec_skip = DEC_SKIP;
    }
}

/* Newton from the start in nw->X (reusing modes: also in nw->X0).
 * Converged when the residual is at rounding level (|R| <= 16 eps * scale,
 * after at least one update; then with the final correction above), by the
 * stopping rule above, or at a stall (stalled). */
static int newton_solve(sym_newton *nw, const sym_newton_ops *ops, void *ctx, double h,
                        sym_newton_out *o)
{
    const mode_policy *pol = &policies[nw->mode];
    if (pol->frozen && nw->dec_skip > 0) {
        nw->dec_skip--;
        pol = &policies[SYM_NEWTON_STEP];
    }
    newton_iter it = {0, 0, UPDATE_NONE, 0, 0, 0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    const int frozen = pol->frozen && ops->factor_frozen;
    it.refresh = !pol->carry || !nw->lu_valid || nw->lu_h != h || nw->prev_iters > CHORD_MAX_ITERS;
    int st;
    o->converged = 0;
    nw->travel = 0.0;
    nw->xnorm = 0.0;
    for (;;) {
        st = ops->residual(ctx, &it.rnorm, &it.rscale);
        if (st) break;
        if (pol->reuse && it.last == UPDATE_STALE && !it.restarted && !(it.rnorm < it.rprev)) {
            restart_from_start(nw, &it);
            continue;
        }
        if (!isfinite(it.rnorm)) { st = SYM_ENONFINITE; break; }
        if (it.iters > 0 && it.rnorm <= ROUNDING_RES * it.rscale) {
            final_correction(nw, ops, ctx);
            o->converged = 2;
            break;
        }
        if (residual_floor(nw, &it)) { o->converged = 1; break; }
        if (it.iters >= nw->max_iter) { st = SYM_ENOCONV; break; }
        /* frozen: the approximate matrix first, the exact one after (also
         * when the approximate one cannot be factorised); an update with the
         * approximate matrix counts as a stale one */
        int approx = it.refresh && frozen && it.iters == 0 && !it.restarted;
        int fresh = it.refresh && !approx;
        if (it.refresh) {
            st = refactor(nw, ops, ctx, h, approx);
            if (st == SYM_ESINGULAR && approx) {
                approx = 0;
                fresh = 1;
                st = refactor(nw, ops, ctx, h, 0);
            }
            if (st) break;
            it.exact = frozen && !approx;
            it.refresh = !pol->reuse || it.exact;
        }
        negate(nw);
        ops->solve(ctx, nw->dX);
        it.iters++;
        st = nw->nu_x > 0 ? apply_update2(nw, it.rscale, &it.dk, &it.ek) : apply_update(nw, &it.dk);
        if (st) break;
        if (update_ends(nw, pol, &it, fresh, h)) { o->converged = 2; break; }
    }
    if (!st) nw->prev_iters = it.iters;
    if (frozen) dec_record(nw, st || it.exact || it.iters > DEC_ITERS);
    o->iters = it.iters;
    o->rnorm = it.rnorm;
    o->rscale = it.rscale;
    o->dk = it.dk > it.ek ? it.dk : it.ek;
    return st;
}

/* Failures that another start of Newton may avoid. */
int sym_newton_retryable(int st)
{
    return st == SYM_ENOCONV || st == SYM_ESINGULAR || st == SYM_ENONFINITE ||
           st == SYM_EIMPLAUSIBLE;
}

/* A root from the extrapolated predictor that Newton does not reach, or
 * that the scheme finds implausible, is sought once more from the Taylor
 * predictor (what predictor=False does), so that the predictor never makes
 * a run fail where starting afresh would not. */
int sym_newton_root(sym_newton *nw, const sym_newton_ops *ops, void *ctx, double h,
                    int extrapolated, sym_newton_out *o)
{
    int st, iters = 0, second = 0;
    for (;;) {
        if (policies[nw->mode].reuse) memcpy(nw->X0, nw->X, sizeof(double) * (size_t)nw->nu);
        st = newton_solve(nw, ops, ctx, h, o);
        iters += o->iters;
        if (!st) st = ops->finish(ctx, o->converged);
        if (!st || !extrapolated || !sym_newton_retryable(st)) break;
        extrapolated = 0;
        second = 1;
        nw->lu_valid = 0;
        st = ops->restart(ctx);
        if (st) break;
    }
    o->iters = iters;
    o->second = second;
    return st;
}
