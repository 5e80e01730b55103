/*
 * sym_newton.h -- Newton's method for the step equations of an implicit
 * scheme (private; sym_newton.c).
 *
 * The solver sees the nu unknowns X, the residual R(X) and a factorised
 * Newton matrix only through the callbacks below; the scheme (e.g. the
 * Galerkin engine) supplies them with its workspace as ctx.
 */
#ifndef SYM_NEWTON_H
#define SYM_NEWTON_H

#include "sym_util.h"
#include "symplectic.h"

typedef struct sym_newton_ops {
    /* R = R(X) at the current X; *rnorm = |R|_inf, *rscale = the size of the
     * terms R is made of (the scale of the rounding test); both untouched on
     * failure */
    int (*residual)(void *ctx, double *rnorm, double *rscale);
    /* form the Newton matrix at the current X and factorise it */
    int (*factor)(void *ctx);
    /* b <- J^{-1} b with the factors of the last `factor` */
    void (*solve)(void *ctx, double *b);
    /* after convergence: the step's outputs and the plausibility of the
     * root (SYM_EIMPLAUSIBLE rejects it); `converged` as in sym_newton_out */
    int (*finish)(void *ctx, int converged);
    /* the fallback start: X <- the Taylor predictor */
    int (*restart)(void *ctx);
    /* the decoupled mode's first matrix of a solve: an approximate Newton
     * matrix at the current X, factorised, which `solve` then uses until the
     * next `factor` (NULL: `factor` serves) */
    int (*factor_frozen)(void *ctx);
} sym_newton_ops;

typedef struct sym_newton {
    int nu;                   /* unknowns                                   */
    double *X, *dX, *R;       /* iterate, last update, residual (nu each)   */
    double *X0;               /* chord, per step: the start, kept for one
                                 restart                                    */
    double rtol;              /* update tolerance relative to |X|           */
    int max_iter;
    enum sym_newton_mode mode; /* full, chord or per step: what each does
                                 is sym_newton.c's table of policies       */
    int lu_valid;             /* chord: factors of an earlier iterate ...   */
    double lu_h;              /* ... for step size lu_h                     */
    int prev_iters;           /* iterations of the last converged solve     */
    /* Per step: the observed chord constant kc = d_2 / d_1^2 (relative
     * updates; a stale second update after an exact first one) at step size
     * kc_h, and how many solves used it since (sym_newton.c, STEP_KC_AGE) */
    int kc_valid, kc_age;
    double kc, kc_h;
    /* Decoupled: consecutive solves in which the approximate matrix did not
     * serve (sym_newton.c, DEC_MISSES), and how many solves are left that
     * take the per-step policy instead */
    int dec_miss, dec_skip;
    /* Two blocks of unknowns (constrained steps, sym_constraints.c): when
     * nu_x > 0, X = [positions (nu_x) | impulses (nu - nu_x)] and the update
     * test takes the larger of |dX_x|/|X_x| and |dX_y|/max(|X_y|, rscale)
     * (rscale: the residual's scale, in the impulses' units).  0: one block. */
    int nu_x;
    /* The step's start q_j (n_q entries; NULL: none), against whose size an
     * update that no longer contracts is judged (sym_newton.c, stalled) */
    const double *q_ref;
    int n_q;
    /* The last solve's travel from its start, sum_k |dX_k|_inf over its
     * updates of the positions (>= |X - X_start|_inf, equal to first order
     * once Newton converges), and |X|_inf after its last update */
    double travel, xnorm;
} sym_newton;

typedef struct sym_newton_out {
    int iters;
    int converged;            /* 1 residual test, 2 update test (or a
                                 stall at the positions' resolution)       */
    double rnorm, rscale, dk; /* last residual, its scale, last update      */
    int second;               /* the root is from the second start (the
                                 Taylor predictor after an extrapolated
                                 start failed or was rejected)              */
} sym_newton_out;

/* Solve from the start in X (extrapolated: 1 when it is a prediction that a
 * fresh Taylor start may replace), call finish, and once more from
 * ops->restart when an extrapolated start fails in a way another start may
 * avoid.  o->iters counts the iterations of both attempts. */
SYM_PRIVATE int sym_newton_root(sym_newton *nw, const sym_newton_ops *ops, void *ctx,
                                double h, int extrapolated, sym_newton_out *o);

/* 1 for a failure that another start of Newton may avoid (no convergence,
 * a singular matrix, a non-finite value, an implausible root). */
SYM_PRIVATE int sym_newton_retryable(int st);

#endif /* SYM_NEWTON_H */
