/*
 * sym_force_api.h -- non-conservative forces, the public API beside
 * symplectic.h: a force's description (sym_force: damping, a held force,
 * callback terms), attaching it to a workspace, and the work and impulse of
 * a step with their quadrature.  How a workspace evaluates a force is
 * private (sym_forces.h); the built-in force terms are in sym_builtins.h.
 */
#ifndef SYM_FORCE_API_H
#define SYM_FORCE_API_H

#include "symplectic.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Non-conservative forces: the discrete Lagrange-d'Alembert principle  */
/* ------------------------------------------------------------------ */
/*
 * Generalized forces F(t, q, qdot) (n components, the virtual work
 * F . delta q) enter every scheme at its own quadrature points: the
 * variational schemes through the discrete Lagrange-d'Alembert principle
 * (csrc/core/sym_galerkin.c), RK4 through pdot = ... + F.  A force is a sum of
 * optional parts:
 *
 *   damping   F += -D qdot            D n x n, row-major (constant)
 *   hold      F += hold[k - k0]       during step k (zero-order hold),
 *                                     rows x n, row-major (k0 = hold_k0,
 *                                     k0 <= k < k0 + rows)
 *             F += hold[k][i]         or, with hold_points = P > 1 (P =
 *                                     sym_method_force_points(method)), a
 *                                     value at each point i of the step's
 *                                     quadrature of the force (rows x P x n):
 *                                     a control sampled where the scheme
 *                                     evaluates its force, which keeps the
 *                                     scheme's order for a smooth control
 *                                     (a held value: order 1 sampled at the
 *                                     step's start, 2 at its midpoint)
 *   term[i]   F += fn(t, k, q, qdot)  callbacks (at most SYM_FORCE_MAX_TERMS)
 *
 * A callback fills what `need` asks for: F (n), Fq = dF/dq and
 * Fv = dF/dqdot (n x n, row-major, [c][d] = dF_c/dq_d), adding nothing:
 * it overwrites its outputs.  It returns 0, nonzero to stop (the step
 * returns SYM_ECALLBACK).  Jacobians it does not provide (`provides`) are
 * central differences of F (error ~1e-10 relative; they only steer Newton:
 * the root is that of the exact F).  `flags` may say that F does not
 * depend on q or on qdot (that Jacobian is zero, never evaluated).
 * The arrays a sym_force points to must outlive the workspace.
 */
enum sym_force_need { SYM_FORCE_F = 1u, SYM_FORCE_DQ = 2u, SYM_FORCE_DV = 4u };
enum sym_force_flags { SYM_FORCE_NO_Q = 1u, SYM_FORCE_NO_V = 2u };

typedef int (*sym_force_fn)(double t, long k, const double *q, const double *v,
                            unsigned need, double *F, double *Fq, double *Fv, void *params);

#define SYM_FORCE_MAX_TERMS 4

typedef struct sym_force_term {
    sym_force_fn fn;
    void *params;
    unsigned provides;   /* SYM_FORCE_DQ | SYM_FORCE_DV: Jacobians fn fills */
    unsigned flags;      /* SYM_FORCE_NO_Q | SYM_FORCE_NO_V                 */
} sym_force_term;

typedef struct sym_force {
    const double *damping;   /* n x n, or NULL */
    const double *hold;      /* hold_rows x n (hold_points 0 or 1), or
                                hold_rows x hold_points x n; or NULL       */
    long hold_rows;
    long hold_k0;            /* the step whose value is row 0 (>= 0; 0 for a
                                run's own array: row k during step k)       */
    int hold_points;         /* 0 or 1: one value a step; else the method's
                                force points (SYM_EINVAL otherwise)        */
    int nterms;              /* 0 .. SYM_FORCE_MAX_TERMS */
    sym_force_term term[SYM_FORCE_MAX_TERMS];
} sym_force;

/* Attach a force to a workspace (a copy of the description; NULL detaches):
 * every later step includes it.  Allocates the force's buffers (never
 * inside a step); SYM_EINVAL for a malformed description, SYM_ENOMEM. */
int sym_work_set_force(sym_work *w, const sym_force *force);

/* Point the attached force's held part at other values (the force's other
 * parts, its hold_points and the predictor history unchanged): `rows` rows
 * of hold_points x n (or n) values, row 0 held during step k0; hold NULL
 * (rows 0) removes the held part.  The array must outlive its use.  No
 * allocation: a sampled-data loop or an optimiser rewrites its inputs
 * between runs.  SYM_EINVAL without an attached force or for rows < 0,
 * k0 < 0, or hold NULL with rows > 0. */
int sym_work_set_hold(sym_work *w, const double *hold, long rows, long k0);

/* The discrete work W = h sum_i b_i F_i . qdot_i and impulse
 * I = h sum_i b_i F_i (n) of the forces over the last step taken, with the
 * scheme's own quadrature (RK4: its stages); zero without a force.
 * energy - work is what a forced run conserves (to the scheme's order),
 * and p_{j+1} - p_j = I exactly for a cyclic coordinate. */
void sym_step_force_work(const sym_work *w, double *work, double *impulse);

/* That quadrature of the last step: the number of points m (0 without a
 * force), their positions x in the step (t_j + x_i h, 0 <= x_i <= 1), weights
 * b (sum 1), the power P_i = F_i . qdot_i and the force F_i (m x n).  Then
 * W = h sum_i b_i P_i and I = h sum_i b_i F_i; interpolating P (or F)
 * through the points gives the work (impulse) inside the step to the
 * scheme's order.  Arrays of sym_method_force_points(method) entries (x, b,
 * P) and that many rows of n (F); any may be NULL. */
int sym_method_force_points(const sym_method *m);
/* The positions x_i (in [0, 1]) and weights b_i of a method's force points,
 * the same for every step (sym_method_force_points(m) entries each; either
 * may be NULL): where a force -- and a held force with hold_points > 1 --
 * is evaluated.  Returns their number. */
int sym_method_force_quadrature(const sym_method *m, double *x, double *b);
int sym_step_force_points(const sym_work *w, double *x, double *b, double *P, double *F);

#ifdef __cplusplus
}
#endif

#endif /* SYM_FORCE_API_H */
