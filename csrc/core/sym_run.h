/*
 * sym_run.h -- the run: one call of the driver, sym_integrate(w, &run),
 * steps a prepared workspace (symplectic.h: sym_work_new,
 * sym_work_set_force) from one state over n_steps steps.  Part of the
 * public API: symplectic.h includes it at its end, so that symplectic.h
 * stays the one include of the core (including this header alone includes
 * symplectic.h too).
 *
 * What a run keeps and differentiates is one struct, sym_run, grouped by
 * role:
 *
 *   the steps    (top level)  the state at node 0, t0, h, k0, n_steps: what
 *                             is integrated;
 *   out          sym_run_outputs      what the caller's arrays receive at the
 *                             stored rows and steps: t, q, p, the internal
 *                             nodes, Newton iterations, a force's work and
 *                             impulse (and their values at node 0), the
 *                             multipliers of a constrained system;
 *   deriv        sym_run_derivs       the derivatives of the states: the
 *                             tangent propagated from node 0, each step's
 *                             own derivative (and with respect to h and its
 *                             start time), the states at the force points
 *                             with theirs, the parameter sensitivities;
 *   obs          sym_run_observers    callbacks during the run: the per-step
 *                             hook (with the step's work) and the progress
 *                             report (which can interrupt);
 *   report       sym_run_report       what the run says back: the steps done,
 *                             the rows filled, a stop, the counts of its
 *                             work, the failing step, the refused field.
 *
 * A field that is NULL (a pointer) or 0 asks for nothing: zero the struct,
 * fill the steps and the arrays wanted, call sym_integrate.  The driver
 * (sym_driver.c) reads the steps, out and obs; the derivative bookkeeping
 * (sym_derivs.c) reads deriv; both write report.  The shapes below use
 * n (degrees of freedom), rows = sym_stored_rows(n_steps, store_every),
 * s (the method's nodes, sym_method_nodes), m (constraints), c the
 * columns of deriv.jacobians.
 */
#ifndef SYM_RUN_H
#define SYM_RUN_H

#include "symplectic.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*sym_progress_fn)(void *ctx, long steps_done);

/* Called after the accepted step k (t_k -> t_{k+1}) with the step's data:
 * (q, p) at t_k, the method's n_mid internal nodes qmid (NULL when it has
 * none), (q1, p1) at t_{k+1}.  Returns 0 to go on, > 0 to stop after this
 * step, < 0 for an error (the run returns SYM_ECALLBACK). */
typedef int (*sym_step_hook)(void *ctx, long k, const double *q, const double *p,
                             const double *qmid, const double *q1, const double *p1);

typedef struct sym_failure {
    long step;          /* index j of the failing step of the run        */
    double t;           /* its start time                                 */
    int iterations;
    double residual;
    double residual_rel;
} sym_failure;

/* Rows stored for n_steps steps keeping every k-th state and the last. */
long sym_stored_rows(long n_steps, long every);
/* The bytes of a run's outputs (the one formula: the Python memory check
 * and the binding's allocation check both ask here): t, q, p of the stored
 * rows (8 (1 + 2n) each), the Newton counts (an int per stored row after
 * the first), the internal nodes of every step (store_every <= 1 only: 8
 * n_mid n per step), with a force its work and impulse (8 (1 + n) per row),
 * and n_lam multipliers per stored row after the first (s m: 8 each).  A
 * double: it may exceed the size_t range. */
double sym_run_output_bytes(long n_steps, long store_every, int n, int n_mid, int forced,
                            long n_lam);
/* The time of node k of a run from t0 with step h: t0 + k h, computed by
 * this one function wherever a node's time is needed, so that every piece
 * of a run continued in pieces rounds it alike. */
double sym_node_time(double t0, long k, double h);

/*
 * What the caller's arrays receive (NULL: not wanted).  Rows: t, q, p at
 * nodes 0, k, 2k, ... (k = store_every) and the last node done (also when
 * the run stops early: at a failure, an interruption or the hook's stop,
 * the last completed state is stored); iters[i] the Newton iterations of
 * the steps between rows i and i + 1.  A force's work and impulse
 * accumulate from their values at node 0: W_{j+1} = W_j + the step's
 * quadrature of F . qdot, likewise I = the integral of F.
 */
typedef struct sym_run_outputs {
    long store_every;        /* keep every k-th node and the last; 0 or 1:
                                all (< 0 invalid)                           */
    double *t, *q, *p;       /* required: rows, rows x n, rows x n          */
    double *qmid;            /* n_steps x n_mid x n (store_every <= 1 only) */
    int *iters;              /* rows - 1                                    */
    double *work, *impulse;  /* a forced run: the accumulated work (rows) and
                                impulse (rows x n) of the forces            */
    double work0;            /* ... their values at node 0 (a continued run:
                                the last run's final ones; impulse0 NULL: 0) */
    const double *impulse0;
    double *multipliers;     /* constrained: (rows - 1) x s x m, the
                                multipliers lambda_a at the s nodes of the
                                step that ends at each stored row
                                (sym_step_multipliers)                      */
} sym_run_outputs;

/*
 * The derivatives of the states (NULL: not wanted); sym_derivs.c computes
 * them after each step from the step's own maps, the states unchanged.
 */
typedef struct sym_run_derivs {
    /* the tangent: rows x 2n x k, row j = Phi_j T0, Phi_j = d(q_j, p_j)/d(q_0,
     * p_0) ((q, p) order), T0 = tangent0 (2n x k) or the identity (NULL,
     * k = 2n); Phi_{j+1} = D_j Phi_j with D_j each step's sym_step_tangent
     * map */
    double *tangent;
    const double *tangent0;
    int tangent_cols;        /* k >= 1                                       */
    /* each step's own derivative for sym_adjoint_sweep (constrained too):
     * n_steps x 2n x c, D_j = d(q_{j+1}, p_{j+1})/d(q_j, p_j) (c = 2n), with
     * jac_u [D_j | B_j = d(q_{j+1}, p_{j+1})/du_j] (c = (2 + jac_u) n), u_j
     * the force held over step j: jac_u = 1 (one value a step), or the
     * force's hold_points P > 1 (its values at the step's P points, in that
     * order); 0: no force columns */
    double *jacobians;
    int jac_u;
    /* each step's derivative with respect to its size and its start time
     * (the variational schemes, constrained too, else SYM_EINVAL naming
     * it): n_steps x 2 x 2n, d(q_{j+1}, p_{j+1})/dh then d(q_{j+1},
     * p_{j+1})/dt_j at fixed (q_j, p_j) and inputs (a free duration's
     * column: t_j = t0 + j h moves with h too) */
    double *h_jacobians;
    /* the states at each step's r = sym_method_force_points force points
     * and their derivatives (needs jacobians; the variational schemes, else
     * SYM_EINVAL naming it; constrained too): n_steps x r x 2n x (1 + c
     * [+ 2]), row (i, .) = (q_i, qdot_i) at t_j + x_i h, column 0 the
     * state, then its derivative along the c columns of jacobians, then
     * (with h_jacobians) d/dh and d/dt_j */
    double *points;
    /* the parameters' sensitivities S_j = d(q_j, p_j)/dtheta and blocks C_j
     * (sym_params.h: S_{j+1} = D_j S_j + C_j) */
    struct sym_params_run *par;
} sym_run_derivs;

/* Called during the run (NULL: none). */
typedef struct sym_run_observers {
    sym_step_hook hook;      /* called after accepted steps:                */
    void *hook_ctx;
    const long *hook_steps;  /* ... only these j, increasing (NULL: all)    */
    long n_hook_steps;
    /* NULL, or (a run with a force) filled before each hook call with the
     * step's work: W_j, W_{j+1}, the impulses I_j, I_{j+1} (n each), then
     * the step's quadrature of the work (sym_step_force_points: r positions
     * x, r weights b, r powers P, r x n forces F); 2 + 2n + r (3 + n)
     * doubles, r = sym_method_force_points(method) */
    double *hook_force;
    sym_progress_fn progress;  /* called every progress_every steps with the */
    void *progress_ctx;        /* steps done; nonzero stops the run with     */
    long progress_every;       /* SYM_EINTERRUPT                             */
} sym_run_observers;

/* What the run says back (sym_integrate sets every field). */
typedef struct sym_run_report {
    long done;               /* steps completed (rows 0 .. of the outputs)  */
    long rows;               /* rows filled                                  */
    int stopped;             /* 1 when the hook stopped the run             */
    sym_counts counts;       /* the work of this run                        */
    sym_failure failure;     /* the failing step j (of this run), its time  */
    const char *invalid;     /* SYM_EINVAL: the field that is invalid       */
} sym_run_report;

/*
 * One run on a prepared workspace (sym_work_new, sym_work_set_force).
 *
 * Steps j = 0 .. n_steps-1 of the run are the steps k = k0 + j of a run
 * whose origin is t0: step k goes from t0 + k h to t0 + (k+1) h, and a force
 * sees that time and the index k (a held force's row k).  A run continued
 * from node k0 on the same workspace (which keeps the predictor history
 * when a step starts where the last one ended) computes bitwise the states
 * of one long run; k0 = 0 is a run from t0.  Whatever is kept, differentiated
 * or observed, the steps are the same calls on the same arguments, hence
 * bitwise the same states.
 */
typedef struct sym_run {
    /* in: the steps */
    const double *q0, *p0;   /* the state at node 0 (time t0 + k0 h)        */
    double t0, h;            /* origin and step (finite, h != 0)            */
    long k0;                 /* index of the first step (>= 0)              */
    long n_steps;            /* >= 0                                        */
    sym_run_outputs out;     /* out: the caller's arrays                    */
    sym_run_derivs deriv;    /* out: the derivatives                        */
    sym_run_observers obs;   /* in: the observers                           */
    sym_run_report report;   /* out: the report                             */
} sym_run;

/* The one driver: the run R on w (see sym_run).  SYM_OK, or the status of
 * the failure (R->report.failure and .done say where), SYM_EINVAL naming
 * the field in R->report.invalid, SYM_ENONFINITE for a non-finite initial
 * state, SYM_ENOMEM. */
int sym_integrate(sym_work *w, sym_run *R);

#ifdef __cplusplus
}
#endif

#endif /* SYM_RUN_H */
