/*
 * sym_gwork.h -- the Galerkin engine's workspace (private), shared by
 * sym_galerkin_setup.c (tables, layout), sym_galerkin.c (the formulas,
 * predictors, outputs, what Newton sees, the root's plausibility),
 * sym_galerkin_roots.c (the branch check, the energy balance),
 * sym_galerkin_step.c (one step),
 * sym_galerkin_eval.c (evaluation at the points, the left-node cache),
 * sym_galerkin_diag.c (tangent map, Newton system), sym_galerkin_jac.c (the
 * step's derivatives at its root, for the tangent maps),
 * sym_galerkin_kernels.c (the inner loops), sym_galerkin_forces.c and
 * sym_constraints.c (the hooks of forces and constraints),
 * sym_constraints_tangent.c (the tangent map of the constrained step).
 */
#ifndef SYM_GWORK_H
#define SYM_GWORK_H

#include "sym_linalg.h"
#include "sym_newton.h"
#include "sym_scheme.h"

/* Derived tables of a Galerkin scheme (computed from nodes and weights),
 * kept in the workspace block. */
typedef struct sym_gtab {
    double B[SYM_MAX_NODES][SYM_MAX_NODES];
    double D[SYM_MAX_NODES][SYM_MAX_NODES];
    double E[SYM_MAX_NODES][SYM_MAX_NODES];
    double E2[SYM_MAX_NODES][2 * SYM_MAX_NODES];             /* two-step extrapolation */
    double E1[SYM_MAX_NODES][SYM_MAX_NODES + 1];             /* ... through q_{j-2} only */
    double bD[SYM_MAX_NODES][SYM_MAX_NODES];                 /* b_i D_ia      */
    double bDD[SYM_MAX_NODES][SYM_MAX_NODES][SYM_MAX_NODES]; /* b_i D_ia D_ib */
    double b[SYM_MAX_NODES];
    double c[SYM_MAX_NODES];
    /* Nonzero terms of the Newton matrix and the residual, precomputed so
     * that assembly touches only what contributes (sym_galerkin_kernels.c). */
    struct sym_jterm { short i, a, b, kind; double c; }
        jt[4 * (SYM_MAX_NODES - 1) * (SYM_MAX_NODES - 1) * SYM_MAX_NODES];
    struct sym_rterm { short i, a, kind; double c; } rt[2 * (SYM_MAX_NODES - 1) * SYM_MAX_NODES];
    /* The Newton-matrix coefficients b_i D_ia D_ib / h of the Lobatto
     * kernels for a = 0..s-2, b = 1..s-1 at the step size jac_h (recomputed
     * when h changes; NaN: not yet). */
    double jac_h;
    double jac_cM[SYM_MAX_NODES - 1][SYM_MAX_NODES - 1][SYM_MAX_NODES];
    double inv_h, inv_of;      /* inv_h = 1 / inv_of (NaN: not yet) */
    /* The decoupled Newton matrix (sym_galerkin_decouple.c): W = A^-1 B of
     * the frozen matrix (1/h) A (x) M + h B (x) S in real block-diagonal form
     * W = T L T^-1, dec_Tl = (A T)^-1; dec_nb blocks of size dec_sz (1: a
     * real eigenvalue, 2: a complex pair) starting at index dec_off.
     * dec_ok = 0: no such form (the mode then takes the exact matrix). */
    int dec_ok, dec_nb;
    int dec_sz[SYM_MAX_NODES], dec_off[SYM_MAX_NODES];
    double dec_T[SYM_MAX_NODES - 1][SYM_MAX_NODES - 1];
    double dec_Tl[SYM_MAX_NODES - 1][SYM_MAX_NODES - 1];
    double dec_L[SYM_MAX_NODES - 1][SYM_MAX_NODES - 1];
    int s, r;
    int unit[SYM_MAX_NODES];   /* point i coincides with node unit[i], or -1 */
    int lobatto;               /* points are the nodes: B = I          */
    int njt, nrt;
} sym_gtab;

typedef struct sym_gwork sym_gwork;

/* The O(n) Newton linear algebra of the chain (sym_galerkin_tree.c, whose
 * header has the equations): the chain's parameters, the point data of the
 * last evaluation, the per-joint factors and the sign of det J. */
typedef struct sym_gtree {
    int ok;                          /* the step takes this path (no force) */
    int sign;                        /* sign of det J of the last factors  */
    int fma;                         /* the four-lane FMA kernels (run-time CPU check) */
    int force_ok, damped;            /* the attached force fits (held values, a
                                      * tridiagonal damping), and has that damping */
    const double *l, *m, *mu;        /* the chain (sym_chain_view)         */
    double grav;
    double *cs, *sn, *pi0, *pi1;     /* r x n: cos, sin, composite momenta */
    double *U, *Aa, *PU, *G, *LU;    /* per joint: U^T, Aa, (Psi U)^T, G (m x F each), D^-1 (m x m) */
    double *kin, *Y;                 /* 8 n (kinetic recursion), F (solve) */
    double *pv;                      /* 20 n: scratch of the points' four-lane pass (AVX2)
                                      * and of the kinetic energy's sines and cosines */
    double *dlo, *dd, *dup;          /* the damping's diagonals D_{j,j-1}, D_jj, D_{j,j+1} */
    int *piv;                        /* m per joint                        */
    /* the spatial "tree" built-in's path (sym_galerkin_stree.c), in the
     * workspace's system block: its gravity, the points' body records, the
     * passes' scratch, the per-joint factors, Psi, the solve's psi and Y,
     * the kinetic recursion's work, the parents and the "started" marks */
    int spatial;
    const double *gw;
    double *srec, *sscr, *sfac, *spsi, *sphi, *sY, *skin;
    int *spar, *sstart;
} sym_gtree;

/* The constrained step's slice (sym_constraints.c, whose header comment
 * has the equations; read also by its tangent, sym_constraints_tangent.c). */
typedef struct sym_gcon sym_gcon;
struct sym_gcon {
    int m, s, n, nu, N;            /* constraints, nodes, dof, (s-1) n, (s-1)(n+m) */
    double w[SYM_MAX_NODES];       /* node weights w_a                          */
    double *X, *dX, *R, *prevX;    /* Newton's vectors (N each)                 */
    double *J;                     /* N x N                                     */
    double *lu_work;
    int *piv;
    sym_lu_factor_fn lu_factor;
    sym_lu_solve_fn lu_solve;
    double *gq, *Gq, *S;           /* per node: g (m), G (m x n), S (n x n)     */
    double *Qa;                    /* a node's position (n)                     */
    double *G1, *q1;               /* G at the last step's end, and that end    */
    double *Y, *z, *schur, *rhs;   /* the projection: m x n, n, m x m, m        */
    double *lam;                   /* the last step's multipliers (s x m)       */
    double *tay;                   /* the Taylor start's scratch: 2 m n + n n
                                      + m m + 2 m                              */
    double *scratch;               /* sym_constraint_scratch_size               */
    int g1_valid, lam_valid;
};


/* The predictors of sym_galerkin.c (which one, and why, is said there). */
enum { SYM_PRED_POLY, SYM_PRED_POLY2, SYM_PRED_POLY1 };

/* The inner loops, instantiated for small sizes (sym_galerkin_kernels.c). */
typedef struct sym_gkernels {
    void (*predict)(sym_gwork *g, int kind);
    void (*form_points)(sym_gwork *g, const double *q, double h);
    double (*residual)(sym_gwork *g, const double *p, double h, double *rnorm);
    int (*jacobian)(sym_gwork *g, double h);
    void (*correct)(sym_gwork *g, double h);
    double (*outputs)(sym_gwork *g, double h);
} sym_gkernels;

struct sym_gwork {
    sym_work base;                   /* first: the driver's part          */
    sym_gtab *tab;                   /* in the block                      */
    int n, nu;                       /* dof, (s-1) n unknowns             */
    unsigned need_full[SYM_MAX_NODES];
    int left_point, right_point;     /* points equal to Q_0 / Q_{s-1}    */
    sym_newton newton;               /* X, dX, R below; chord state       */
    double *X, *dX, *R, *J, *lu_work;
    int *piv;
    double *Qp, *Gp;                 /* r x n                            */
    double *Mp, *Ap, *Hp, *Kp;       /* r x n x n                        */
    double *dVp, *f, *P;             /* r x n                            */
    double *v, *acc, *tmp, *Lm;      /* n, n, n (predictor, P_i); n x n  */
    sym_eval_out pout[SYM_MAX_NODES]; /* each point's output slots      */
    int cache_valid;                 /* M, grad V at cache_q             */
    int prep_valid;                  /* left_prep = sys->prep(cache_q)    */
    int left_here;                   /* cache_q is the step's q_j and the left
                                      * point holds its M, grad V (set by the
                                      * step, cleared when the cache moves) */
    double left_prep[SYM_PREP_MAX];
    double pt_prep[SYM_MAX_NODES * SYM_PREP_MAX];   /* the points' (sys->prep_n) */
    double *cache_q, *cache_M, *cache_dV;
    int prev_valid;                  /* predictor history                */
    double prev_h;
    double *prev_X, *prev_qend;
    double *prev_pend;
    double *prev2_X;                 /* the increments of the step before */
    double *br_buf;                  /* the branch check's: 5 N + n (N unknowns) */
    int points_stale;                /* the branch check moved the points: the
                                      * right point is not the root's q_{j+1} */
    int prev2_valid, prev2_pending;  /* (per-step Newton's predictor)      */
    int kin_known;                   /* the step starts at (prev_qend,    */
    double kin, kin_end;             /* prev_pend) with kinetic energy kin; */
                                     /* kin_end: at the root last checked */
    /* the step in progress (for the Newton callbacks) */
    const double *q, *p;
    double h;
    double *q1, *p1, *qmid;
    double work;                     /* its W / h (plausible)               */
    double ebal, eflow;              /* its energy balance and the energy that
                                      * flowed (plausible) */
    double miss;                     /* the predictor's recent misses |X - X_start|
                                      * (a decaying maximum; 0: no history) */
    double step_T0;                  /* the step's T_j (plausible)          */
    /* the run's energy balance since bal_steps began (sym_galerkin_roots.c,
     * track_balance): sum of T_{j+1} - T_j + W - W_F, the sums of W and W_F,
     * and the energy flow after the first step */
    long bal_steps;
    double bal, bal_W, bal_WF, bal_scale1;
    sym_gkernels k;
    int dec_active;                  /* the factors in J are the decoupled
                                      * blocks (sym_galerkin_decouple.c) */
    double *dec_buf;                 /* their scratch: 2 n^2 + nu         */
    sym_lu_factor_fn lu_factor;
    sym_lu_solve_fn lu_solve;
    sym_kinetic_fn kinetic;
    sym_gcon *con;                   /* NULL: no constraints              */
    sym_gtree tree;                  /* the O(n) path (tree.ok)            */
};

/* The step takes the O(n) path: a chain whose run has no force, or one the
 * path takes (sym_gtree_force). */
#define SYM_TREE_ON(g) ((g)->tree.ok && (!(g)->base.force || (g)->tree.force_ok))

/* sym_galerkin_setup.c */
SYM_PRIVATE int sym_galerkin_work_size(const sym_method *m, int n, double *doubles);
SYM_PRIVATE int sym_galerkin_setup(sym_work *w, double *block);
SYM_PRIVATE int sym_galerkin_unknowns(const sym_method *m, int n);
SYM_PRIVATE int sym_galerkin_newton_blocks(const sym_method *m, double *re, double *im);
/* sym_galerkin_kernels.c */
SYM_PRIVATE void sym_galerkin_pick_kernels(sym_gwork *g);
/* sym_galerkin_decouple.c: the tables of the decoupled Newton matrix (at
 * setup), its factors at the current points (into J) and the solve with them */
SYM_PRIVATE void sym_galerkin_decouple_tables(sym_gtab *t);
SYM_PRIVATE int sym_galerkin_decouple_factor(sym_gwork *g, double h);
SYM_PRIVATE void sym_galerkin_decouple_solve(sym_gwork *g, double *b);
/* sym_galerkin_eval.c */
SYM_PRIVATE int sym_galerkin_left_cache(sym_gwork *g, const double *q);
SYM_PRIVATE int sym_galerkin_eval_point(sym_gwork *g, int i, unsigned need);
SYM_PRIVATE int sym_galerkin_eval_points(sym_gwork *g, const unsigned *need);
SYM_PRIVATE void sym_galerkin_left_here(sym_gwork *g);
/* sym_galerkin_step.c */
SYM_PRIVATE int sym_galerkin_step(sym_work *w, const double *q, const double *p, double h,
                                  double *q1, double *p1, double *qmid, sym_step_info *info);
SYM_PRIVATE void sym_galerkin_reset(sym_work *w);
/* sym_galerkin.c */
SYM_PRIVATE int sym_galerkin_taylor(sym_gwork *g, const double *q, const double *p, double h);
/* what Newton sees of a step, and of a probe (the root alone) */
extern SYM_PRIVATE const sym_newton_ops sym_galerkin_newton_ops, sym_galerkin_probe_ops;
/* sym_galerkin_roots.c: the checks of a root (st0: Newton's status) */
SYM_PRIVATE int sym_galerkin_branch_check(sym_gwork *g, sym_newton_out *o, int st0,
                                          int extrapolated);
SYM_PRIVATE int sym_galerkin_branch_rescue(sym_gwork *g, sym_newton_out *o, int st0);
/* sym_constraints.c: the constrained step, hooked into the engine where
 * g->con is set (every hook is skipped without constraints) */
SYM_PRIVATE int sym_gcon_size(const sym_method *m, int n, int mc, double *doubles);
SYM_PRIVATE int sym_gcon_setup(sym_gwork *g, double *block);
SYM_PRIVATE void sym_gcon_reset(sym_gwork *g);
SYM_PRIVATE int sym_gcon_start(sym_gwork *g);
SYM_PRIVATE int sym_gcon_taylor(sym_gwork *g, const double *q, double h);
SYM_PRIVATE int sym_gcon_residual(sym_gwork *g, double *rnorm, double *rscale);
/* the sign of the determinant of the last factorised saddle-point matrix */
SYM_PRIVATE int sym_gcon_det_sign(const sym_gwork *g);
SYM_PRIVATE int sym_gcon_jacobian(sym_gwork *g);
/* the saddle-point matrix from g->J, G at the nodes and S at the internal
 * nodes (layouts of struct sym_gcon's Gq, S), into J (N x N) */
SYM_PRIVATE void sym_gcon_assemble(const sym_gwork *g, const double *Gq, const double *S,
                                   double *J);
SYM_PRIVATE int sym_gcon_factor(sym_gwork *g);
SYM_PRIVATE void sym_gcon_solve(sym_gwork *g, double *b);
SYM_PRIVATE const double *sym_gcon_matrix(const sym_gwork *g);
SYM_PRIVATE int sym_gcon_outputs(sym_gwork *g, int converged);
SYM_PRIVATE int sym_gcon_multipliers(const sym_work *w, double *lambda);
/* sym_constraints_tangent.c: the tangent map of the constrained step just
 * taken (the contract of sym_scheme_ops.tangent) */
SYM_PRIVATE int sym_gcon_tangent(sym_gwork *g, const double *q, const double *p, double h,
                                 int k, int ublocks, const double *V, double *out, double *pts,
                                 int ld);
/* ... and its derivative in h and t (sym_scheme_ops.time_tangent) */
SYM_PRIVATE int sym_gcon_time_tangent(sym_gwork *g, const double *q, double h, double *out,
                                      double *pts, int ld);
/* sym_galerkin_diag.c */
SYM_PRIVATE int sym_galerkin_tangent(sym_work *w, const double *q, const double *p, double h,
                                     int k, int ublocks, const double *V, double *out);
SYM_PRIVATE int sym_galerkin_newton_system(sym_work *w, const double *q, const double *p,
                                           double h, const double *X, double *R, double *J);
SYM_PRIVATE int sym_galerkin_newton_direction(sym_work *w, const double *q, const double *p,
                                              double h, const double *X, double *R,
                                              double *rnorm, double *b, int *sign);
SYM_PRIVATE int sym_galerkin_time_tangent(sym_work *w, const double *q, const double *p,
                                          double h, double *out, double *pts, int ld);
SYM_PRIVATE int sym_galerkin_point_tangent(sym_work *w, const double *q, const double *p,
                                           double h, int k, int ublocks, const double *V,
                                           double *out, double *pts, int ld);
/* sym_galerkin_jac.c: the pieces of the tangent shared with the constrained
 * one: the points evaluated at the root (g->X) with every derivative, the
 * kernel's Newton matrix into g->J (not factorised), R_q = dR/dq at fixed
 * increments (nu x n) and the momentum row P (n x (n + nu)), both with the
 * force's terms; and component c of dp plus the derivative of
 * h sum_i b_i f_i (+ the force's impulse) along (dq, dX), from P */
SYM_PRIVATE int sym_galerkin_tangent_root(sym_gwork *g, const double *q, double h, double *Rq,
                                          double *P);
SYM_PRIVATE double sym_galerkin_tangent_dp(const sym_gwork *g, const double *P, int c,
                                           double dpc, const double *dq, const double *dX);
/* at the root's point evaluations (sym_galerkin_tangent_root): dF_i/dt by
 * differences (Ft, r x n), minus the step equations' explicit derivatives in
 * h and in the start time at fixed increments (dh, dt: nu), and the
 * momentum's (ph, pt: n) -- sym_galerkin_time_tangent's formulas */
SYM_PRIVATE int sym_galerkin_time_rhs(sym_gwork *g, double h, double *Ft, double *dh,
                                      double *dt, double *ph, double *pt);
/* the states at the force points (q_i, qdot_i) along a direction (dq, dX,
 * dh), into column col of pts (rows of stride ld) */
SYM_PRIVATE void sym_galerkin_point_column(const sym_gwork *g, const double *dq,
                                           const double *dX, double dh, double h, double *pts,
                                           int col, int ld);
/* sym_galerkin_param.c: the parameter block of the unconstrained step just
 * taken (the contract of sym_scheme_ops.param_tangent, sym_params.h) */
SYM_PRIVATE int sym_galerkin_param_tangent(sym_work *w, const double *q, double h,
                                           const struct sym_params_run *par, double *C);
/* its pieces shared with the constrained block: dR/dtheta and
 * sum_i b_i (H~_i - K~_i) at the root's points, and their scratch size */
SYM_PRIVATE size_t sym_galerkin_theta_scratch(const sym_gwork *g,
                                              const struct sym_params_run *par);
SYM_PRIVATE int sym_galerkin_theta_rhs(sym_gwork *g, const struct sym_params_run *par, double h,
                                       double *z, double *Rt, double *F);
/* sym_constraints_tangent.c: the parameter block of the constrained step
 * just taken (sym_galerkin_step.c dispatches between the two) */
SYM_PRIVATE int sym_gcon_param_tangent(sym_gwork *g, const double *q, double h,
                                       const struct sym_params_run *par, double *C);

/* sym_galerkin_tree.c: the O(n) path's size, layout, choice (at setup),
 * point evaluation, residual, factorisation, solve and kinetic energy */
SYM_PRIVATE double sym_gtree_size(int s, int r, int n);
SYM_PRIVATE void sym_gtree_layout(sym_gwork *g, double *buf);
SYM_PRIVATE void sym_gtree_setup(sym_gwork *g);
SYM_PRIVATE void sym_gtree_points(sym_gwork *g);
SYM_PRIVATE double sym_gtree_residual(sym_gwork *g, const double *p, double h, double *rnorm);
SYM_PRIVATE int sym_gtree_factor(sym_gwork *g, double h);
SYM_PRIVATE void sym_gtree_solve(sym_gwork *g, double *b);
SYM_PRIVATE double sym_gtree_kinetic(sym_gwork *g, const double *q, const double *p);
/* whether the attached force fits the path (called when a force is attached) */
SYM_PRIVATE void sym_gtree_force(sym_gwork *g);
/* the factors a tangent keeps aside (sym_galerkin_diag.c): where, how many */
SYM_PRIVATE double *sym_gtree_factors(sym_gwork *g, size_t *count);
/* the doubles of the system block (the workspace's xblock) the path takes
 * for this method, system and options (0: none) */
SYM_PRIVATE double sym_gtree_system_size(const sym_method *m, const sym_system *sys,
                                         const sym_options *o);
/* sym_galerkin_stree.c: the same for the spatial "tree" built-in */
SYM_PRIVATE double sym_stree_size(int s, int r, int n);
SYM_PRIVATE void sym_stree_layout(sym_gwork *g, double *buf);
SYM_PRIVATE void sym_stree_points(sym_gwork *g);
SYM_PRIVATE int sym_stree_factor(sym_gwork *g, double h);
SYM_PRIVATE void sym_stree_solve(sym_gwork *g, double *b);
SYM_PRIVATE double sym_stree_kinetic(sym_gwork *g, const double *q, const double *p);
SYM_PRIVATE double *sym_stree_factors(sym_gwork *g, size_t *count);

/* sym_galerkin_forces.c: the terms of a force (sym_forces.h), used only when
 * the workspace has one (base.force != NULL) */
SYM_PRIVATE int sym_gforce_points(sym_gwork *g, double h, unsigned need, int all);
SYM_PRIVATE void sym_gforce_jacobian(sym_gwork *g, double h);
SYM_PRIVATE void sym_gforce_correct(sym_gwork *g, double h);
SYM_PRIVATE void sym_gforce_work(sym_gwork *g, double h);
SYM_PRIVATE void sym_gforce_tangent(const sym_gwork *g, double h, double *Rq, double *P);
SYM_PRIVATE void sym_gforce_du(const sym_gwork *g, double h, int ublocks, const double *V, int k,
                               int col, double *Ru, double *pu);

#endif /* SYM_GWORK_H */
