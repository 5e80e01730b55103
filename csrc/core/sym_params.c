/*
 * sym_params.c -- the parameter sensitivities of a run (sym_params.h):
 * each step's block C_k and the propagation S_{k+1} = D_k S_k + C_k.
 */
#include "sym_params.h"
#include "sym_scheme.h"

#include <string.h>

int sym_params_step(sym_work *w, const sym_run *R, long k, const double *q, const double *p,
                    long row)
{
    sym_params_run *P = R->deriv.par;
    const int n = w->n, np = P->n_par;
    if (!w->ops->param_tangent) return SYM_EMETHOD;
    if (np < 1 || !P->psys || P->psys->n != n + np || P->psys->m != w->sys->m || !P->theta ||
        !P->scratch)
        return SYM_EINVAL;
    const size_t mk = 2 * (size_t)n * (size_t)np;
    double *S = P->scratch, *S1 = S + mk, *C = S1 + mk;
    if (k == 0) {
        /* S_0 = 0: theta does not move (q0, p0); a continued run's from before */
        if (P->tangent0)
            memcpy(S, P->tangent0, sizeof(double) * mk);
        else
            memset(S, 0, sizeof(double) * mk);
        if (P->tangent) memcpy(P->tangent, S, sizeof(double) * mk);
    }
    int st = w->ops->param_tangent(w, q, R->h, P, C);
    if (st) return st;
    if (P->jacobians) memcpy(P->jacobians + (size_t)k * mk, C, sizeof(double) * mk);
    if (!P->tangent) return SYM_OK;
    st = w->ops->tangent(w, q, p, R->h, np, 0, S, S1);
    if (st) return st;
    for (size_t e = 0; e < mk; e++) S[e] = S1[e] + C[e];
    if (row >= 0) memcpy(P->tangent + (size_t)row * mk, S, sizeof(double) * mk);
    return SYM_OK;
}
