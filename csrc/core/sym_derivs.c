/*
 * sym_derivs.c -- a run's derivatives (sym_run.deriv, sym_derivs.h): after
 * step k from (q_k, p_k), at the converged step, the scheme's maps give
 *
 *   D_k = d(q_{k+1}, p_{k+1})/d(q_k, p_k),   B_k = d(q_{k+1}, p_{k+1})/du_k
 *                                            (the force held over the step),
 *   d(q_{k+1}, p_{k+1})/dh and /dt_k,        the states at the force points,
 *
 * and the run propagates the tangent Phi_{k+1} = D_k Phi_k (Phi_0 = T0) and
 * the parameters' S_{k+1} = D_k S_k + C_k (sym_params.c).  None of this
 * changes the states: the step is taken before, with the same arguments.
 */
#include "sym_derivs.h"
#include "sym_forces.h"
#include "sym_params.h"

#include <string.h>

/* The columns c of each step's derivative: 2n, and jac_u n for the force. */
static size_t jac_cols(const sym_work *w, const sym_run_derivs *D)
{
    return 2 * (size_t)w->n + (size_t)D->jac_u * (size_t)w->n;
}

const char *sym_derivs_invalid(const sym_work *w, const sym_run_derivs *D)
{
    const sym_force *f = w->force ? &w->force->f : NULL;
    if (D->tangent && (D->tangent_cols < 1 || (!D->tangent0 && D->tangent_cols != 2 * w->n)))
        return "tangent_cols";
    if (D->h_jacobians && !w->ops->time_tangent) return "h_jacobians";
    if (D->points && (!D->jacobians || !w->ops->point_tangent)) return "points";
    /* the force's columns: one value a step, or its hold_points P > 1 */
    if (D->jacobians && D->jac_u && (!f || D->jac_u != (f->hold_points > 1 ? f->hold_points : 1)))
        return "jac_u";
    return NULL;
}

size_t sym_derivs_doubles(const sym_work *w, const sym_run_derivs *D)
{
    const size_t mk = D->tangent ? 2 * (size_t)w->n * (size_t)D->tangent_cols : 0;
    const size_t cj = D->jacobians ? jac_cols(w, D) : 0;
    return 2 * mk + cj * cj;
}

void sym_derivs_start(const sym_work *w, const sym_run_derivs *D, double *block,
                      sym_derivs_state *S)
{
    const size_t m = 2 * (size_t)w->n;
    const size_t mk = D->tangent ? m * (size_t)D->tangent_cols : 0;
    const size_t cj = D->jacobians ? jac_cols(w, D) : 0;
    S->phi = mk ? block : NULL;
    S->phi1 = mk ? block + mk : NULL;
    S->eye = cj ? block + 2 * mk : NULL;
    for (size_t i = 0; i < cj; i++) S->eye[i * cj + i] = 1.0;
    if (!mk) return;
    /* Phi_0 = T0: tangent0, or the identity */
    if (D->tangent0) {
        memcpy(S->phi, D->tangent0, sizeof(double) * mk);
    } else {
        memset(S->phi, 0, sizeof(double) * mk);
        for (size_t i = 0; i < m; i++) S->phi[i * m + i] = 1.0;
    }
    memcpy(D->tangent, S->phi, sizeof(double) * mk);
}

int sym_derivs_step(sym_work *w, const sym_run *R, const sym_derivs_state *S, long k,
                    const double *q, const double *p, long row)
{
    const sym_run_derivs *D = &R->deriv;
    const size_t m = 2 * (size_t)w->n, mk = m * (size_t)D->tangent_cols;
    const int cols = (int)m + D->jac_u * w->n, ld = 1 + cols + (D->h_jacobians ? 2 : 0);
    const size_t npt = D->points ? (size_t)sym_method_force_points(w->method) : 0;
    double *pts = D->points ? D->points + (size_t)k * npt * m * (size_t)ld : NULL;
    int st = SYM_OK;
    /* the step's own: [D_k | B_k], with the force points' states beside it */
    if (D->jacobians) {
        double *out = D->jacobians + (size_t)k * m * (size_t)cols;
        st = pts ? w->ops->point_tangent(w, q, p, R->h, cols, D->jac_u, S->eye, out, pts, ld)
                 : w->ops->tangent(w, q, p, R->h, cols, D->jac_u, S->eye, out);
    }
    if (!st && D->h_jacobians)
        st = w->ops->time_tangent(w, q, p, R->h, D->h_jacobians + (size_t)k * 2 * m,
                                  pts ? pts + 1 + cols : NULL, ld);
    if (!st && D->par) st = sym_params_step(w, R, k, q, p, row);
    if (st || !D->tangent) return st;
    /* Phi_{k+1} = D_k Phi_k */
    st = w->ops->tangent(w, q, p, R->h, D->tangent_cols, 0, S->phi, S->phi1);
    if (st) return st;
    memcpy(S->phi, S->phi1, sizeof(double) * mk);
    if (row >= 0) memcpy(D->tangent + (size_t)row * mk, S->phi, sizeof(double) * mk);
    return SYM_OK;
}

void sym_derivs_store(const sym_work *w, const sym_run_derivs *D, const sym_derivs_state *S,
                      long row)
{
    if (!S->phi) return;
    const size_t mk = 2 * (size_t)w->n * (size_t)D->tangent_cols;
    memcpy(D->tangent + (size_t)row * mk, S->phi, sizeof(double) * mk);
}
