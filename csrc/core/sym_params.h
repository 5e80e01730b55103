/*
 * sym_params.h -- parameter sensitivities of a run (private): the
 * derivatives of the states with respect to parameters theta of M and V,
 * sym_run.deriv.par (sym_params.c, sym_galerkin_param.c, sym_adjoint.c).
 *
 * The parameters are read as extra coordinates that do not move: the caller
 * supplies the AUGMENTED system psys, with coordinates (q, theta) (n + n_par),
 * mass matrix blockdiag(M(q, theta), I) and potential V(q, theta).  At a
 * point (Q, theta) with velocity (g, 0) its A, H and hess V have, in rows
 * 0..n-1 and columns n..n+n_par-1, d(M g)/dtheta, d(1/2 A^T g)/dtheta and
 * d grad V/dtheta (symplectic.h's conventions).  A step's parameter block
 * C_k = d(q_{k+1}, p_{k+1})/dtheta at fixed (q_k, p_k) comes from them
 * (sym_galerkin_param.c); the run propagates
 *   S_0 = 0,  S_{k+1} = D_k S_k + C_k,   S_k = d(q_k, p_k)/dtheta,
 * and the adjoint sweep gives dC/dtheta = sum_k C_k^T lambda_{k+1}.
 * A force (sym_work_set_force) is taken as independent of theta, but for a
 * linear damping F = -D(theta) v given by its derivatives dD (the
 * parameters of a built-in's joint damping) and for the terms of pforce:
 * at a point, dF/dtheta_j (-dD_j g; pforce's dF~/dtheta_j) enters as
 * d f/dtheta_j does (sym_galerkin_param.c).
 * A constrained system's psys carries the constraints g(q, theta) in the
 * augmented coordinates (m of them, as the system's): its G and S hold, in
 * the columns of theta, dg/dtheta and d(G^T mu)/dtheta
 * (sym_constraints_tangent.c).
 */
#ifndef SYM_PARAMS_H
#define SYM_PARAMS_H

#include "sym_force_api.h"

typedef struct sym_params_run {
    const sym_system *psys;  /* the augmented system (n + n_par coordinates) */
    int n_par;               /* >= 1                                        */
    const double *theta;     /* the parameters' values (n_par)              */
    double *tangent;         /* NULL, or rows x 2n x n_par: S at the rows   */
    double *jacobians;       /* NULL, or n_steps x 2n x n_par: C_k          */
    double *scratch;         /* 3 x 2n x n_par doubles (S, D_k S, C_k)      */
    const double *dD;        /* NULL, or n_par x n x n: dD/dtheta_j         */
    const double *tangent0;  /* NULL, or 2n x n_par: S at node 0 (a run
                                continued from an earlier one; NULL: S_0 = 0) */
    const sym_force *pforce; /* NULL, or the augmented system's force terms
                                F~(t, (q, theta), (v, 0)) = (F(t, q, v, theta),
                                0), each providing dF~/dq~: the theta
                                columns are dF/dtheta (a SymPy system's
                                forces with parameters)                     */
} sym_params_run;

/* After step k of R (run-local index, from (q, p)): C_k into
 * par->jacobians, S_{k+1} into par->tangent row `row` (row < 0: not kept;
 * k = 0 also writes row 0 = S_0, par->tangent0 or 0).  SYM_EMETHOD for a
 * scheme without the operation (rk4, the closed form), SYM_EINVAL for an
 * inconsistent par (psys of another size or number of constraints). */
int sym_params_step(sym_work *w, const sym_run *R, long k, const double *q, const double *p,
                    long row);

/* sym_adjoint_sweep with parameter blocks: pjac (n_steps x 2n x n_par, the
 * C_k) and grad_par (n_par) = sum_k C_k^T lambda_{k+1}; n_par = 0: none. */
int sym_adjoint_sweep_params(int n, long n_steps, int jac_u, const double *jac,
                             const double *lam_end, const double *src, double *lam0,
                             double *grad_u, int n_par, const double *pjac, double *grad_par);

#endif /* SYM_PARAMS_H */
