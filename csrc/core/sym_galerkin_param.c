/*
 * sym_galerkin_param.c -- the parameter block of a Galerkin step:
 * C = d(q1, p1)/dtheta at fixed (q, p) for parameters theta of M and V,
 * from the augmented system of sym_params.h.
 *
 * The step equations R_a(X; q, p, theta) = [a = 0] p + sum_i b_i (D_ia P_i
 * + h B_ia f_i), P_i = M(Q_i, theta) g_i, f_i = 1/2 A_i^T g_i - grad V(Q_i,
 * theta), see theta at fixed points (Q_i, g_i) only, so (as R_q of
 * sym_galerkin_jac.c with dQ_i replaced by dtheta):
 *   dR_a/dtheta_j = sum_i b_i [ D_ia A~_i e_j + h B_ia (H~_i - K~_i) e_j ],
 * with A~ e_j, (H~ - K~) e_j rows 0..n-1 of column n + j of the augmented
 * system's A, H - hess V at ((Q_i, theta), (g_i, 0)).  Then
 *   dX = -J^{-1} dR/dtheta,  dq1 = dX_{s-1}  (q does not move),
 *   dp1 = P_X dX + h sum_i b_i (H~_i - K~_i) e_j
 * (p1 = p + h sum_i b_i f_i; P_X the momentum row of sym_galerkin_jac.c,
 * the force's terms included).  A force that depends on theta (dD, pforce:
 * sym_params.h) adds dF_i/dtheta_j at each point to (H~_i - K~_i) e_j, as
 * it adds F_i to f_i.
 */
#include "sym_gwork.h"
#include "sym_params.h"

#include <stdlib.h>
#include <string.h>

/* Fc_j += dF/dtheta_j at the point (t, Qt, Gt) from the terms of pforce:
 * columns n..n+np-1 of their dF~/dq~ (rows 0..n-1); z: 2 N^2 + N. */
static int force_cols(const sym_gwork *g, const sym_params_run *par, double t,
                      const double *Qt, const double *Gt, double *z, double *Fc)
{
    const int n = g->n, np = par->n_par, N = n + np;
    double *Fq = z, *Fv = Fq + (size_t)N * N, *F = Fv + (size_t)N * N;
    for (int a = 0; a < par->pforce->nterms; a++) {
        const sym_force_term *tm = &par->pforce->term[a];
        if (tm->flags & SYM_FORCE_NO_Q) continue;
        if (!(tm->provides & SYM_FORCE_DQ)) return SYM_EINVAL;
        if (tm->fn(t, g->base.k, Qt, Gt, SYM_FORCE_DQ, F, Fq, Fv, tm->params))
            return SYM_ECALLBACK;
        for (int c = 0; c < n; c++)
            for (int j = 0; j < np; j++) Fc[c * np + j] += Fq[(size_t)c * N + n + j];
    }
    return SYM_OK;
}

/* The augmented evaluation at point i (time t): rows 0..n-1, columns
 * n..n+np-1 of A~ into Ac and of H~ - K~ into Fc (n x np each), and with a
 * damping derivative Fc_j -= dD_j g_i (dF_i/dtheta_j of F = -D(theta) v,
 * which enters R and p1 as d f_i/dtheta_j does), with pforce its
 * dF/dtheta_j; z: Qt, Gt (N each), At, Ht, Kt (N x N each), 2 N^2 + N for
 * force_cols, then the system's scratch. */
static int point_cols(sym_gwork *g, const sym_params_run *par, int i, double t, double *z,
                      double *Ac, double *Fc)
{
    const int n = g->n, np = par->n_par, N = n + np;
    const size_t NN = (size_t)N * (size_t)N;
    double *Qt = z, *Gt = Qt + N, *At = Gt + N, *Ht = At + NN, *Kt = Ht + NN,
           *Fz = Kt + NN;
    memcpy(Qt, g->Qp + (size_t)i * n, sizeof(double) * (size_t)n);
    memcpy(Qt + n, par->theta, sizeof(double) * (size_t)np);
    memcpy(Gt, g->Gp + (size_t)i * n, sizeof(double) * (size_t)n);
    memset(Gt + n, 0, sizeof(double) * (size_t)np);
    const sym_eval_out out = {NULL, At, Ht, NULL, NULL, Kt};
    const int st = sym_eval(par->psys, Qt, Gt, SYM_NEED_A | SYM_NEED_H | SYM_NEED_D2V, &out,
                            Fz + 2 * NN + N);
    g->base.counts.evaluations++;
    if (st) return st;
    for (int c = 0; c < n; c++)
        for (int j = 0; j < np; j++) {
            const size_t e = (size_t)c * N + n + j;
            Ac[c * np + j] = At[e];
            Fc[c * np + j] = Ht[e] - Kt[e];
            for (int d = 0; par->dD && d < n; d++)
                Fc[c * np + j] -= par->dD[((size_t)j * n + c) * n + d] * Gt[d];
        }
    return par->pforce ? force_cols(g, par, t, Qt, Gt, Fz, Fc) : SYM_OK;
}

size_t sym_galerkin_theta_scratch(const sym_gwork *g, const sym_params_run *par)
{
    const size_t N = (size_t)g->n + (size_t)par->n_par;
    return 2 * (size_t)g->n * (size_t)par->n_par + 3 * N + 5 * N * N +
           sym_eval_scratch_size(par->psys);
}

/* dR/dtheta (nu x np) into Rt and F = sum_i b_i (H~_i - K~_i) e_j (n x np),
 * at the points g->Qp, g->Gp (the root's, sym_galerkin_tangent_root). */
int sym_galerkin_theta_rhs(sym_gwork *g, const sym_params_run *par, double h, double *z,
                           double *Rt, double *F)
{
    const int n = g->n, np = par->n_par, s = g->tab->s;
    const size_t cn = (size_t)n * (size_t)np;
    double *Ac = z, *Fc = Ac + cn;
    memset(Rt, 0, sizeof(double) * (size_t)g->nu * (size_t)np);
    memset(F, 0, sizeof(double) * cn);
    for (int i = 0; i < g->tab->r; i++) {
        const double t = g->base.t + g->base.method->table->x[i] * h;
        const int st = point_cols(g, par, i, t, Fc + cn, Ac, Fc);
        if (st) return st;
        const double bi = g->tab->b[i];
        for (size_t e = 0; e < cn; e++) F[e] += bi * Fc[e];
        for (int a = 0; a <= s - 2; a++) {
            const double cA = bi * g->tab->D[i][a], cH = bi * h * g->tab->B[i][a];
            double *Ra = Rt + (size_t)a * cn;
            for (size_t e = 0; e < cn; e++) Ra[e] += cA * Ac[e] + cH * Fc[e];
        }
    }
    return SYM_OK;
}

/* The solves: C's column j from -dR/dtheta_j (dq = 0 in the momentum row). */
static void theta_solve(sym_gwork *g, const double *P, const double *Rt, const double *F,
                        int np, double h, double *v, double *zero, double *C)
{
    const int n = g->n, nu = g->nu, s = g->tab->s;
    memset(zero, 0, sizeof(double) * (size_t)n);
    for (int j = 0; j < np; j++) {
        for (int e = 0; e < nu; e++) v[e] = -Rt[(size_t)e * np + j];
        g->lu_solve(nu, g->J, g->piv, v);
        for (int d = 0; d < n; d++) C[(size_t)d * np + j] = v[(size_t)(s - 2) * n + d];
        for (int c = 0; c < n; c++)
            C[(size_t)(n + c) * np + j] =
                sym_galerkin_tangent_dp(g, P, c, h * F[(size_t)c * np + j], zero, v);
    }
}

int sym_galerkin_param_tangent(sym_work *w, const double *q, double h,
                               const sym_params_run *par, double *C)
{
    sym_gwork *g = (sym_gwork *)w;
    const int n = g->n, nu = g->nu, np = par->n_par;
    if (g->con) return SYM_EINVAL;   /* sym_gcon_param_tangent's (sym_galerkin_step.c) */
    const size_t nnu = (size_t)nu * nu, nP = (size_t)n * (size_t)(n + nu),
                 cn = (size_t)n * np, zsz = sym_galerkin_theta_scratch(g, par);
    const size_t nd = nnu + (size_t)nu * n + nP + (size_t)nu * np + cn + (size_t)nu + n + zsz;
    double *buf = malloc(sizeof(double) * nd + sizeof(int) * (size_t)nu);
    if (!buf) return SYM_ENOMEM;
    double *Jsave = buf, *Rq = Jsave + nnu, *P = Rq + (size_t)nu * n, *Rt = P + nP,
           *F = Rt + (size_t)nu * np, *v = F + cn, *zero = v + nu, *z = zero + n;
    int *pivsave = (int *)(buf + nd);
    memcpy(Jsave, g->J, sizeof(double) * nnu);
    memcpy(pivsave, g->piv, sizeof(int) * (size_t)nu);
    int st = sym_galerkin_tangent_root(g, q, h, Rq, P);
    if (!st) {
        g->base.counts.factorizations++;
        st = g->lu_factor(nu, g->J, g->piv, g->lu_work);
    }
    if (!st) st = sym_galerkin_theta_rhs(g, par, h, z, Rt, F);
    if (!st) theta_solve(g, P, Rt, F, np, h, v, zero, C);
    memcpy(g->J, Jsave, sizeof(double) * nnu);
    memcpy(g->piv, pivsave, sizeof(int) * (size_t)nu);
    free(buf);
    return st;
}
