/*
 * sym_forces.h -- the forces of a workspace (private): the evaluation of a
 * sym_force (sym_force_api.h) at a point, its Jacobians (given or by central
 * differences), and the Galerkin engine's force terms
 * (sym_galerkin_forces.c).
 */
#ifndef SYM_FORCES_H
#define SYM_FORCES_H

#include "sym_force_api.h"
#include "sym_scheme.h"

typedef struct sym_fwork {
    sym_force f;            /* the caller's description (a copy)           */
    int n, npts;            /* dof; points whose values are kept            */
    int hpts;               /* values of the held force a step: 1, or npw   */
    unsigned jac;           /* SYM_FORCE_DQ / SYM_FORCE_DV: nonzero Jacobians */
    double *F;              /* npts x n: F at each point                   */
    double *Fq, *Fv;        /* npts x n x n: dF/dq, dF/dqdot at each point  */
    double *Ft, *Tq, *Tv;   /* one term's outputs: n, n x n, n x n          */
    double *fp, *fm, *qq, *vv;   /* finite differences: n each              */
    double *Fx;             /* n: F at a point outside the kept ones         */
    double work;            /* of the last step: h sum_i b_i F_i . qdot_i    */
    double *impulse;        /* n, of the last step: h sum_i b_i F_i          */
    /* The last step's quadrature of the work (sym_step_force_points): npw
     * points at t_j + pw_x[i] h with weights pw_b[i], power pw_P[i] =
     * F_i . qdot_i and force pw_F[i * n ...] */
    int npw;
    double *pw_x, *pw_b, *pw_P, *pw_F;
} sym_fwork;

/* Total force at (t, k, q, v), point i of step k's force quadrature (the
 * held force's value there: hold[k][i] with hold_points > 1, else hold[k]):
 * F (n) when need has SYM_FORCE_F, and the Jacobians Fq, Fv (n x n) for
 * SYM_FORCE_DQ / SYM_FORCE_DV (those that are identically zero, fw->jac,
 * are set to zero without a call). */
SYM_PRIVATE int sym_force_eval(sym_fwork *fw, double t, long k, int i, const double *q,
                               const double *v, unsigned need, double *F, double *Fq,
                               double *Fv);
SYM_PRIVATE void sym_force_free(sym_fwork *fw);
/* F = the held part alone (sym_force_eval's first term; the chain's O(n)
 * path, sym_galerkin_tree.c, adds its tridiagonal damping itself) */
SYM_PRIVATE void sym_force_held(const sym_fwork *fw, long k, int point, double *F);

/* sym_galerkin_forces.c: the force terms of the Galerkin engine (g is a
 * sym_gwork; declared in sym_gwork.h). */

#endif /* SYM_FORCES_H */
