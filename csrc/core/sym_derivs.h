/*
 * sym_derivs.h -- a run's derivatives, sym_run.deriv (private: the driver,
 * sym_driver.c, calls these; sym_derivs.c holds them).  The states are the
 * driver's; after each step these add the step's derivatives (its own
 * D_k, B_k, d/dh, d/dt_k, the force points' states) and propagate the
 * tangent Phi_{k+1} = D_k Phi_k and the parameters' S_{k+1} = D_k S_k + C_k.
 */
#ifndef SYM_DERIVS_H
#define SYM_DERIVS_H

#include "sym_scheme.h"

#include <stddef.h>

/* The run's derivative state, laid out in the driver's one allocation. */
typedef struct sym_derivs_state {
    double *phi, *phi1;   /* with a tangent: 2n x k each (the tangent at the
                             last node, the next one)                      */
    double *eye;          /* with jacobians: the identity, c x c           */
} sym_derivs_state;

/* The field of D that the run on w cannot fill (a constant string, the name
 * sym_run.report.invalid gives), or NULL. */
const char *sym_derivs_invalid(const sym_work *w, const sym_run_derivs *D);

/* The doubles of the state (0 when D asks for no tangent and no jacobians). */
size_t sym_derivs_doubles(const sym_work *w, const sym_run_derivs *D);

/* Lay the state out on `block` (sym_derivs_doubles of them, zeroed) and
 * start it: Phi_0 = tangent0 or the identity, written into the tangent's
 * row 0; the identity for the jacobians. */
void sym_derivs_start(const sym_work *w, const sym_run_derivs *D, double *block,
                      sym_derivs_state *S);

/* Does the run compute derivatives after each step? */
SYM_INLINE int sym_derivs_wanted(const sym_run_derivs *D, const sym_derivs_state *S)
{
    return S->phi || S->eye || D->par || D->h_jacobians;
}

/* The derivatives after step k of the run R (run-local index) from (q, p):
 * its own into row k of jacobians, h_jacobians and points, the parameters'
 * (sym_params_step), and the tangent Phi_{k+1} into output row `row` (row
 * < 0: not kept there). */
int sym_derivs_step(sym_work *w, const sym_run *R, const sym_derivs_state *S, long k,
                    const double *q, const double *p, long row);

/* The tangent at the last node into output row `row` (a thinned run's last
 * row, when its node was not kept by a step). */
void sym_derivs_store(const sym_work *w, const sym_run_derivs *D, const sym_derivs_state *S,
                      long row);

#endif /* SYM_DERIVS_H */
