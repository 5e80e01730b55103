/*
 * sym_adjoint.c -- the discrete adjoint (backward) sweep of a run: the
 * gradient of a cost of the run's states with respect to its start and to
 * the forces held over its steps, from each step's own derivative
 * (sym_run.deriv.jacobians).
 *
 * With y_k = (q_k, p_k), y_{k+1} = Psi_k(y_k, u_k) the step (u_k the force
 * held over step k), D_k = dPsi_k/dy_k and B_k = dPsi_k/du_k, and the cost
 *
 *   C = phi(y_N) + sum_{k=0}^{N-1} l_k(y_k),
 *
 * the adjoint variables lambda_k = dC/dy_k obey the backward recursion
 *
 *   lambda_N = grad phi(y_N),
 *   lambda_k = D_k^T lambda_{k+1} + grad l_k(y_k),       k = N-1, ..., 0,
 *   dC/du_k  = B_k^T lambda_{k+1},
 *
 * and dC/dy_0 = lambda_0 (the chain rule applied backward: one sweep, whose
 * cost does not depend on how many u_k or components of y_0 there are).
 * For a variational integrator D_k is the derivative of a symplectic map
 * and the sweep is the same scheme applied to the adjoint equations
 * (Sanz-Serna, SIAM Review 58, 2016): the gradient is exact for the
 * discrete run, to the roots' accuracy.
 */
#include "sym_params.h"

#include <stdlib.h>
#include <string.h>

int sym_adjoint_sweep(int n, long n_steps, int jac_u, const double *jac, const double *lam_end,
                      const double *src, double *lam0, double *grad_u)
{
    return sym_adjoint_sweep_params(n, n_steps, jac_u, jac, lam_end, src, lam0, grad_u, 0, NULL,
                                    NULL);
}

/* With parameters theta (sym_params.h): y_{k+1} = Psi_k(y_k, u_k, theta),
 * C_k = dPsi_k/dtheta, and dC/dtheta = sum_k C_k^T lambda_{k+1}. */
int sym_adjoint_sweep_params(int n, long n_steps, int jac_u, const double *jac,
                             const double *lam_end, const double *src, double *lam0,
                             double *grad_u, int n_par, const double *pjac, double *grad_par)
{
    if (n < 1 || n_steps < 0 || !jac || !lam_end || !lam0 || jac_u < 0 || (jac_u && !grad_u) ||
        n_par < 0 || (n_par > 0 && (!pjac || !grad_par)))
        return SYM_EINVAL;
    const size_t m = 2 * (size_t)n, cu = (size_t)jac_u * (size_t)n, c = m + cu;
    const size_t np = (size_t)n_par;
    double *next = malloc(sizeof(double) * m);
    if (!next) return SYM_ENOMEM;
    memcpy(lam0, lam_end, sizeof(double) * m);     /* lambda_{k+1}, held in lam0 */
    for (size_t j = 0; j < np; j++) grad_par[j] = 0.0;
    for (long k = n_steps - 1; k >= 0; k--) {
        const double *T = jac + (size_t)k * m * c;   /* [D_k | B_k], m x c */
        const double *Ck = np ? pjac + (size_t)k * m * np : NULL;   /* m x n_par */
        for (size_t j = 0; j < np; j++)
            for (size_t i = 0; i < m; i++) grad_par[j] += Ck[i * np + j] * lam0[i];
        for (size_t j = 0; j < c; j++) {
            double v = 0.0;
            for (size_t i = 0; i < m; i++) v += T[i * c + j] * lam0[i];
            if (j < m)
                next[j] = v + (src ? src[(size_t)k * m + j] : 0.0);
            else
                grad_u[(size_t)k * cu + (j - m)] = v;
        }
        memcpy(lam0, next, sizeof(double) * m);
    }
    free(next);
    return SYM_OK;
}
