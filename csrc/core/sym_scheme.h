/*
 * sym_scheme.h -- the contract between the driver and a scheme (private):
 * the driver is the workspace's calls (sym_work.c), the run (sym_driver.c)
 * and the run's derivatives (sym_derivs.c).
 *
 * A method is a row of the registry (sym_methods.c) whose `ops` point to a
 * scheme's function table.  The driver allocates ONE block per workspace:
 *
 *   [ the scheme's state struct (ops->state_size bytes; it begins with
 *     struct sym_work) | sym_eval scratch | the scheme's arrays
 *     | for a constrained system (sys->m > 0): the constraint slice ]
 *
 * asks ops->work_size how many doubles the arrays take, hands ops->setup its
 * slice (zeroed) to lay out as it likes, and then only calls the ops: it
 * never looks at a scheme's layout or switches on the kind of scheme.  The
 * driver checks every argument at the public entry points; the ops receive
 * valid arguments (h finite and nonzero, q and p finite at sym_step).
 */
#ifndef SYM_SCHEME_H
#define SYM_SCHEME_H

#include "symplectic.h"
#include "sym_util.h"

#include <stddef.h>

/* The part of every workspace that the driver fills. */
struct sym_work {
    const sym_system *sys;
    const sym_method *method;
    const struct sym_scheme_ops *ops;
    sym_options opt;
    int n;
    double *scratch;   /* sym_eval_scratch_size(sys) doubles for sym_eval */
    /* forces (sym_forces.h): NULL without one; the time t_k and index k of
     * the step in progress (set by the driver before every step) */
    struct sym_fwork *force;
    double t;
    long k;
    sym_counts counts; /* the schemes add evaluations and factorisations;
                          the driver steps and iterations */
    double *cblock;    /* sys->m > 0: ops->constraint_size doubles (zeroed),
                          laid out by setup; NULL otherwise */
    double *xblock;    /* ops->system_size doubles (zeroed) for setup, or NULL */
    const char *invalid; /* the argument the last call refused (sym_work_invalid) */
};

typedef struct sym_scheme_ops {
    /* bytes of the scheme's workspace struct, whose first member is the
     * struct sym_work (so a sym_work * is a pointer to it) */
    size_t state_size;
    /* *doubles: the doubles of the scheme's arrays for method m and n
     * degrees of freedom (as a double: it may exceed the size_t range; set
     * even on failure).  SYM_EINVAL for a malformed row, SYM_ENOMEM for a
     * problem beyond the supported sizes. */
    int (*work_size)(const sym_method *m, int n, double *doubles);
    /* the doubles of the system block (w->xblock) the scheme takes for this
     * system and options beyond work_size's (NULL: none; a value <= 0: none) */
    double (*system_size)(const sym_method *m, const sym_system *sys, const sym_options *o);
    /* precompute and lay out `block` (the work_size doubles, zeroed) */
    int (*setup)(sym_work *w, double *block);
    /* forget what a step carries over to the next (sym_work_reset) */
    void (*reset)(sym_work *w);
    /* one step; info, when not NULL, starts zeroed */
    int (*step)(sym_work *w, const double *q, const double *p, double h, double *q1,
                double *p1, double *qmid, sym_step_info *info);
    /* the tangent map D = d(q1, p1)/d(q, p) of the step just taken from
     * (q, p) with size h (its root still in the workspace), applied to k
     * columns: out = D V (V, out: 2n x k row-major, distinct); ublocks 1: V is
     * 3n x k, its last n rows variations du of a force held over the step,
     * and out = D V_qp + B du with B = d(q1, p1)/du; ublocks P > 1 (the
     * method's force points): V is (2 + P) n x k, the variations du_i of the
     * held values at each point i, out = D V_qp + sum_i B_i du_i (SYM_EINVAL
     * where the scheme takes no force).  Leaves what the next step reuses as the step
     * left it, so that a run's states are the same with and without it
     * (symplectic.h: sym_step_tangent, sym_run.tangent, sym_run.jacobians) */
    int (*tangent)(sym_work *w, const double *q, const double *p, double h, int k, int ublocks,
                   const double *V, double *out);
    /* the parameter block C = d(q1, p1)/dtheta (2n x n_par) of the step just
     * taken, as `tangent` (sym_params.h); NULL: not supported */
    int (*param_tangent)(sym_work *w, const double *q, double h,
                         const struct sym_params_run *par, double *C);
    /* `tangent`, and the states (q_i, qdot_i) at the method's r force
     * points of the step just taken with their derivative along the same
     * columns: pts r 2n rows of stride ld, column 0 the state, 1 .. k the
     * derivatives (sym_run.points); NULL: not supported */
    int (*point_tangent)(sym_work *w, const double *q, const double *p, double h, int k,
                         int ublocks, const double *V, double *out, double *pts, int ld);
    /* d(q1, p1)/dh and d(q1, p1)/dt (2 x 2n) of the step just taken, as
     * `tangent` (sym_run.h_jacobians), and with pts (not NULL; a scheme with
     * point_tangent) those of the point states into its columns 0 and 1 (rows
     * of stride ld); NULL: not supported */
    int (*time_tangent)(sym_work *w, const double *q, const double *p, double h, double *out,
                        double *pts, int ld);
    /* the Newton system of an implicit scheme (NULL for an explicit one):
     * its size for n degrees of freedom, and R, J at increments X */
    int (*unknowns)(const sym_method *m, int n);
    int (*newton_system)(sym_work *w, const double *q, const double *p, double h,
                         const double *X, double *R, double *J);
    int (*newton_direction)(sym_work *w, const double *q, const double *p, double h,
                            const double *X, double *R, double *rnorm, double *b, int *sign);
    /* the eigenvalues of the decoupled Newton matrix's table W (NULL: none;
     * symplectic.h: sym_method_newton_blocks) */
    int (*newton_blocks)(const sym_method *m, double *re, double *im);
    /* holonomic constraints (NULL: the scheme refuses constrained systems
     * with SYM_ENOTCONSTRAINED): the doubles of the constraint slice for n
     * degrees of freedom and mc constraints, and the multipliers of the last
     * step (s * mc values, symplectic.h: sym_step_multipliers) */
    int (*constraint_size)(const sym_method *m, int n, int mc, double *doubles);
    int (*multipliers)(const sym_work *w, double *lambda);
    /* 1 if the step applies a force (sym_work_set_force), 0 if the scheme
     * refuses one with SYM_EINVAL (the closed form) */
    int forced;
} sym_scheme_ops;

/* The schemes (each method row points to one of these). */
extern SYM_PRIVATE const sym_scheme_ops sym_galerkin_ops;   /* sym_galerkin*.c */
extern SYM_PRIVATE const sym_scheme_ops sym_rk4_ops;        /* sym_rk4.c */
/* The closed form of a quadratic Lagrangian (sym_linear.c): a workspace of
 * these ops steps nothing until sym_linear_load gives it the one-step
 * matrices (sym_work_new_linear). */
extern SYM_PRIVATE const sym_scheme_ops sym_linear_ops;
SYM_PRIVATE int sym_linear_load(sym_work *w, double h, const double *D, const double *A);

#endif /* SYM_SCHEME_H */
