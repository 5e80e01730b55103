/*
 * sym_internal.h -- the workspace shared by the schemes and the driver.
 * Not part of the public API.
 */
#ifndef SYM_INTERNAL_H
#define SYM_INTERNAL_H

#include "symplectic.h"

/* Derived tables of a Galerkin scheme (computed from nodes and weights). */
typedef struct sym_gtab {
    int s, r;
    double b[SYM_MAX_NODES];
    double B[SYM_MAX_NODES][SYM_MAX_NODES];
    double D[SYM_MAX_NODES][SYM_MAX_NODES];
    double E[SYM_MAX_NODES][SYM_MAX_NODES];
    int unit[SYM_MAX_NODES];   /* point i coincides with node unit[i], or -1 */
    double c[SYM_MAX_NODES];
} sym_gtab;

struct sym_work {
    const sym_system *sys;
    const sym_method *method;
    sym_options opt;
    int n;

    /* ---- Galerkin engine ---- */
    sym_gtab tab;
    int nu;                          /* (s-1) n unknowns                 */
    unsigned need_full[SYM_MAX_NODES], need_light[SYM_MAX_NODES];
    int left_point, right_point;     /* points equal to Q_0 / Q_{s-1}    */
    double *X, *dX, *R, *J;
    int *piv;
    double *Qp, *Gp;                 /* r x n                            */
    double *Mp, *Ap, *Hp, *Kp;       /* r x n x n                        */
    double *dVp, *f;                 /* r x n                            */
    int cache_valid;                 /* M, grad V at cache_q             */
    double *cache_q, *cache_M, *cache_dV;
    int prev_valid;                  /* predictor history                */
    double prev_h;
    double *prev_X, *prev_qend;

    /* ---- RK4 ---- */
    double *kq, *kp, *qs, *ps, *vs, *Ms, *As, *dVs;

    /* ---- shared ---- */
    double *v, *acc, *tmp;           /* n: Taylor predictor, P_i         */
    double *scratch;                 /* sym_eval scratch                 */
    double *block;                   /* the single allocation            */
    int *iblock;
};

int sym_galerkin_setup(sym_work *w);
int sym_galerkin_step(sym_work *w, const double *q, const double *p, double h,
                      double *q1, double *p1, double *qmid, sym_step_info *info);
int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h,
                         double *q1, double *p1, double *D, sym_step_info *info);
int sym_rk4_tangent(sym_work *w, const double *q, const double *p, double h,
                    double *q1, double *p1, double *D, sym_step_info *info);
int sym_rk4_step(sym_work *w, const double *q, const double *p, double h,
                 double *q1, double *p1, sym_step_info *info);

#endif /* SYM_INTERNAL_H */
