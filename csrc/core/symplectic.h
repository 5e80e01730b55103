/*
 * symplectic.h -- public C API of the symplectic core.
 *
 * Mechanical systems with Lagrangian
 *
 *     L(q, qdot) = 1/2 qdot^T M(q) qdot - V(q),      q in R^n,
 *
 * integrated by variational (symplectic) schemes and by RK4 on Hamilton's
 * equations.  Momenta are canonical: p = M(q) qdot.
 *
 * The core never includes Python.h, never prints, never aborts and never
 * allocates inside a step.  Every function that can fail returns an int
 * status: 0 on success, one of the negative SYM_E* codes otherwise
 * (sym_strerror names them).  There is no global mutable state: everything
 * an integration needs lives in a sym_work allocated by sym_work_new.
 * Matrices are dense, row-major, n x n doubles.  A whole run (sym_run,
 * sym_integrate) is declared in sym_run.h, which this header includes at its
 * end.  Non-conservative forces (sym_force, sym_work_set_force) are declared
 * in sym_force_api.h; the built-in systems (a registry of named
 * constructors) and force terms in sym_builtins.h.
 */
#ifndef SYMPLECTIC_H
#define SYMPLECTIC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Status codes                                                        */
/* ------------------------------------------------------------------ */
enum sym_status {
    SYM_OK = 0,
    SYM_ECALLBACK = -1,   /* a system callback returned nonzero           */
    SYM_ENOCONV = -2,     /* Newton iteration did not converge            */
    SYM_ESINGULAR = -3,   /* Newton matrix is singular                    */
    SYM_ENONFINITE = -4,  /* a non-finite (NaN/inf) value appeared        */
    SYM_EMASS = -5,       /* mass matrix is not symmetric positive definite */
    SYM_EINVAL = -6,      /* invalid argument                             */
    SYM_ENOMEM = -7,      /* out of memory                                */
    SYM_EMETHOD = -8,     /* unknown method                               */
    SYM_ESYSTEM = -9,     /* unknown built-in system or bad parameters    */
    SYM_EINTERRUPT = -10, /* stopped by the progress callback             */
    SYM_EIMPLAUSIBLE = -11, /* Newton reached an implausible root: a spurious
                              solution of the step equations (h too large) */
    SYM_ECONSTRAINT = -12, /* the constraint Jacobian G(q) lost rank
                              (G M^-1 G^T singular)                        */
    SYM_ENOTCONSTRAINED = -13, /* holonomic constraints are not supported by
                              this method or operation (rk4, tangent map)  */
    SYM_ECHART = -14,      /* a configuration at a singularity of the system's
                              coordinates (an eval may return it; the core
                              passes it on: lagrange_top's ZXZ angles near
                              the vertical, sym_builtins.h)                */
    SYM_EBRANCH = -15,     /* Newton's root could not be confirmed as the one
                              continued from h -> 0 and its energy jumped
                              (a wrong branch of the step equations)       */
    SYM_EUNSTABLE = -16    /* the step changed the energy by more than a
                              stable step can: h beyond the stability limit */
};

/* Largest number of degrees of freedom (and largest Newton system): the
 * core indexes n x n matrices with int arithmetic (i * n + j), which must not
 * overflow, so n * n <= INT_MAX, i.e. n <= 46340. */
#define SYM_MAX_DOF 46340

/* A static English description of a status code (never NULL). */
const char *sym_strerror(int status);

/* ------------------------------------------------------------------ */
/* The system: a struct of callbacks over void *params                 */
/* ------------------------------------------------------------------ */
/*
 * Every callback returns int: 0 = ok, nonzero = stop (the core returns
 * SYM_ECALLBACK at once and calls nothing else).  Results come back
 * through out-parameters.  The velocity-contracted interface keeps all
 * data O(n^2):
 *
 *   mass           M(q)                          out: n x n, SPD
 *   mass_dir       A(q, g) = d(M(q) g)/dq        out: n x n,
 *                  A[i][c] = sum_j dM_ij/dq_c g_j
 *                  (then 1/2 g^T (dM/dq_c) g = 1/2 (A^T g)_c)
 *   mass_hess_dir  H(q, g) = d^2(1/2 g^T M(q) g)/dq^2   out: n x n
 *   potential      V(q)                          out: 1 double
 *   potential_grad grad V(q)                     out: n
 *   potential_hess hess V(q)                     out: n x n
 *
 * Optional slots (may be NULL):
 *   mass_dir       NULL means M is constant (A = H = 0).
 *   mass_hess_dir  NULL: central finite differences of mass_dir
 *                  (about 1e-10 relative; slower; Newton still converges
 *                  to the exact root because the residual is exact).
 *   potential      only needed for energies.
 *   potential_hess NULL: central finite differences of potential_grad.
 *   eval           a combined callback that fills any subset of the
 *                  quantities at one point in a single call; when set it is
 *                  used instead of the individual slots (which may then be
 *                  NULL).  It must fill everything requested in `need`.
 */
typedef int (*sym_fn)(const double *q, double *out, void *params);
typedef int (*sym_dir_fn)(const double *q, const double *g, double *out,
                          void *params);

enum sym_need {
    SYM_NEED_M = 1u,
    SYM_NEED_A = 2u,
    SYM_NEED_H = 4u,
    SYM_NEED_V = 8u,
    SYM_NEED_DV = 16u,
    SYM_NEED_D2V = 32u
};

typedef struct sym_eval_out {
    double *M;   /* n*n  (SYM_NEED_M)   */
    double *A;   /* n*n  (SYM_NEED_A)   */
    double *H;   /* n*n  (SYM_NEED_H)   */
    double *V;   /* 1    (SYM_NEED_V)   */
    double *dV;  /* n    (SYM_NEED_DV)  */
    double *d2V; /* n*n  (SYM_NEED_D2V) */
} sym_eval_out;

/* `scratch` holds sys->scratch_size doubles private to this call (NULL when
 * scratch_size is 0); g is NULL when neither A nor H is requested. */
typedef int (*sym_eval_fn)(const double *q, const double *g, unsigned need,
                           const sym_eval_out *out, void *params,
                           double *scratch);

/* An optional split of `eval` for a system whose evaluation at q starts
 * with work that depends on q alone (its sines and cosines): prep(q) fills
 * prep_size <= SYM_PREP_MAX doubles of `cache`, eval_prep(cache, g, ...)
 * finishes with the same arithmetic as eval, so that prep followed by
 * eval_prep is bitwise eval (same return codes).  The Galerkin engine calls
 * prep once per step at the step's left node, whose q stays fixed while
 * its velocity moves with every Newton iterate (issue 19: the built-in
 * double pendulum's Simpson step then takes 10 sin/cos pairs instead of 14). */
#define SYM_PREP_MAX 16
typedef void (*sym_prep_fn)(const double *q, double *cache, void *params);
typedef int (*sym_prep_eval_fn)(const double *cache, const double *g, unsigned need,
                                const sym_eval_out *out, void *params);
/* An optional batched `prep` (with the split above): the prepared values of
 * npts points at once, Q npts x n and cache npts x prep_size (row-major),
 * bitwise those of prep at each point.  The Galerkin engine prepares a
 * Newton iterate's points in one call, so that a system can compute the
 * sines and cosines of all of them in wide vectors. */
typedef void (*sym_prep_n_fn)(int npts, const double *Q, double *cache, void *params);

/* A batched form of `eval`: quantities at npts points at once (Q and G are
 * npts x n, row-major; need[k] and out[k] are per point).  The schemes
 * evaluate all quadrature points of a Newton iteration in one call, which
 * amortises the overhead of interpreted (e.g. vectorised NumPy) systems.
 * When set it takes precedence over `eval` and the individual slots. */
typedef int (*sym_eval_batch_fn)(int npts, const double *Q, const double *G,
                                 const unsigned *need, const sym_eval_out *out,
                                 void *params, double *scratch);

/* The flat signature for callbacks compiled outside the core (ctypes, cffi,
 * numba cfunc, generated C): same contract as sym_eval_fn with the outputs
 * passed one by one (NULL when not requested) and a user data pointer. */
typedef int (*sym_flat_eval_fn)(const double *q, const double *g, unsigned need,
                                double *M, double *A, double *H, double *V,
                                double *dV, double *d2V, void *user_data);

enum sym_system_flags {
    SYM_SYS_CONSTANT_MASS = 1u,   /* M does not depend on q */
    SYM_SYS_CONSTRAINT_HESS = 2u, /* the constraint callback fills S (below) */
    SYM_SYS_COSTLY_EVAL = 4u      /* an evaluation costs far more than the step's
                                     linear algebra (a call into Python; a rigid-
                                     body tree's recursions for M, A and H at every
                                     point): newton "auto" then takes the fewest
                                     evaluations */
};

/* ------------------------------------------------------------------ */
/* Holonomic constraints g(q) = 0 (optional)                            */
/* ------------------------------------------------------------------ */
/*
 * A system may carry m holonomic constraints g(q) = 0, 1 <= m < n
 * (sys->m > 0).  The variational schemes then solve the constrained discrete
 * Euler-Lagrange equations (sym_constraints.c: multipliers at the nodes,
 * the hidden constraint G M^-1 p = 0 at every step's end); the constraint
 * force is -G(q)^T lambda.  One callback fills what `need` asks for at q
 * (the same O(n^2) rule as the rest of the interface: never the m n^2
 * tensor of second derivatives):
 *
 *   SYM_CNEED_G     g(q)                                  out->g: m
 *   SYM_CNEED_JAC   G(q) = dg/dq,  G[k][j] = dg_k/dq_j     out->G: m x n
 *   SYM_CNEED_HESS  S(q, mu) = sum_k mu_k d^2 g_k/dq^2      out->S: n x n,
 *                   the second derivatives contracted with a multiplier
 *                   vector mu (m values; NULL unless S is asked for)
 *
 * S is optional: only a system with the flag SYM_SYS_CONSTRAINT_HESS is
 * asked for it; otherwise the core forms it by central differences of
 * G(q)^T mu (2n calls for G; about 1e-10 relative; Newton still converges to
 * the exact root).  The callback receives sys->constraint_params (a built-in
 * sets it to its params) and returns 0, or nonzero to stop (SYM_ECALLBACK).
 * S is used only at the internal nodes of a step (s >= 3 nodes), so the
 * 2-node schemes never ask for it.
 */
enum sym_cneed {
    SYM_CNEED_G = 1u,
    SYM_CNEED_JAC = 2u,
    SYM_CNEED_HESS = 4u
};

typedef struct sym_constraint_out {
    double *g;   /* m      (SYM_CNEED_G)    */
    double *G;   /* m * n  (SYM_CNEED_JAC)  */
    double *S;   /* n * n  (SYM_CNEED_HESS) */
} sym_constraint_out;

typedef int (*sym_constraint_fn)(const double *q, const double *mu, unsigned need,
                                 const sym_constraint_out *out, void *params);

/* The flat signature of a compiled constraint callback (as sym_flat_eval_fn):
 * outputs one by one (NULL when not requested), user data last. */
typedef int (*sym_flat_constraint_fn)(const double *q, const double *mu, unsigned need,
                                      double *g, double *G, double *S, void *user_data);

typedef struct sym_system {
    int n;                      /* degrees of freedom, >= 1 */
    void *params;               /* passed to every callback */
    sym_fn mass;
    sym_dir_fn mass_dir;
    sym_dir_fn mass_hess_dir;
    sym_fn potential;
    sym_fn potential_grad;
    sym_fn potential_hess;
    sym_eval_fn eval;
    sym_eval_batch_fn eval_batch;
    size_t scratch_size;        /* doubles of scratch `eval` needs       */
    unsigned flags;
    /* holonomic constraints (above); m = 0: none, the other two unused */
    int m;
    sym_constraint_fn constraint;
    void *constraint_params;
    /* optional split of `eval` (above); both set or both NULL */
    sym_prep_fn prep;
    sym_prep_eval_fn eval_prep;
    size_t prep_size;
    /* optional batched prep (above); only with prep */
    sym_prep_n_fn prep_n;
} sym_system;

/* Evaluate the requested quantities at (q, g) through whichever slots the
 * system has, with the finite-difference fallbacks described above
 * (eval_batch is called with one point).
 * `scratch` must hold sym_eval_scratch_size(sys) doubles. */
size_t sym_eval_scratch_size(const sym_system *sys);
int sym_eval(const sym_system *sys, const double *q, const double *g,
             unsigned need, const sym_eval_out *out, double *scratch);
/* The same at npts points (one eval_batch call when the system has it). */
int sym_eval_points(const sym_system *sys, int npts, const double *Q,
                    const double *G, const unsigned *need, const sym_eval_out *out,
                    double *scratch);

/* The constraint quantities at q through sys->constraint, S by central
 * differences of G^T mu when the system does not supply it (see above).
 * `scratch` must hold sym_constraint_scratch_size(sys) doubles. */
size_t sym_constraint_scratch_size(const sym_system *sys);
int sym_constraint_eval(const sym_system *sys, const double *q, const double *mu,
                        unsigned need, const sym_constraint_out *out, double *scratch);

/* H(q, p) = 1/2 p^T M(q)^{-1} p + V(q).  `scratch`: sym_energy_scratch_size(sys)
 * doubles.  SYM_EMASS if M(q) is not positive definite. */
size_t sym_energy_scratch_size(const sym_system *sys);
int sym_energy(const sym_system *sys, const double *q, const double *p,
               double *H, double *scratch);

/* ------------------------------------------------------------------ */
/* Methods (schemes) behind a registry                                 */
/* ------------------------------------------------------------------ */
/*
 * A Galerkin variational integrator is defined by its discrete Lagrangian
 *
 *   L_d(Q_0..Q_{s-1}) = h sum_i b_i L( sum_a B[i][a] Q_a , sum_a D[i][a] Q_a / h )
 *
 * with s interpolation nodes c_a in [0, 1] (c_0 = 0, c_{s-1} = 1), Lagrange
 * basis l_a, r quadrature points with weights b_i, B[i][a] = l_a(x_i),
 * D[i][a] = l_a'(x_i).  Simpson is the 3-node Lobatto member (x = c,
 * B = I); the implicit midpoint rule is s = 2 with the 1-point Gauss rule.
 */
#define SYM_MAX_NODES 8

/* Nodes and quadrature of a Galerkin scheme; the engine derives B, D and
 * the predictor's extrapolation matrix from them once per workspace. */
typedef struct sym_galerkin_table {
    int s;                     /* interpolation nodes (2..SYM_MAX_NODES)   */
    int r;                     /* quadrature points   (1..SYM_MAX_NODES)   */
    double c[SYM_MAX_NODES];   /* nodes, c_0 = 0 < ... < c_{s-1} = 1        */
    double x[SYM_MAX_NODES];   /* quadrature points in [0, 1]              */
    double b[SYM_MAX_NODES];   /* quadrature weights, sum = 1              */
} sym_galerkin_table;

/* The scheme behind a method (core-private, csrc/core/sym_scheme.h): how it lays
 * out its workspace, takes a step, forms its tangent map and Newton system. */
struct sym_scheme_ops;

enum sym_method_flags {
    /* run the general kernels even where instances for fixed sizes exist
     * (a cross-check row: "lobatto3" is Simpson computed this way) */
    SYM_METHOD_GENERIC = 1u
};

/* One row of the method registry (csrc/core/sym_methods.c). */
typedef struct sym_method {
    const char *name;
    const char *doc;
    int order;
    int symplectic;                   /* 1 for variational schemes       */
    int n_mid;                        /* internal nodes reported per step */
    /* read by the core only: */
    const sym_galerkin_table *table;  /* Galerkin nodes/quadrature, or NULL */
    unsigned flags;                   /* SYM_METHOD_* */
    const struct sym_scheme_ops *ops;
    /* The stability limit on the harmonic oscillator: the first omega |h| at
     * which the step map of qdd = -omega^2 q has an eigenvalue off the unit
     * circle (HUGE_VAL: none; 0: not determined; windows may follow). */
    double stability;
} sym_method;

int sym_method_count(void);
const sym_method *sym_method_at(int i);
const sym_method *sym_method_find(const char *name);

/* What callers outside the core may ask of a method (the binding uses only
 * these and the name/doc/order/symplectic/n_mid fields, never the table):
 *   sym_method_nodes     the s interpolation nodes c_0 = 0 < ... < c_{s-1} = 1
 *                        of one step into c[SYM_MAX_NODES]; returns s
 *                        ((0, 1) and 2 for an explicit method);
 *   sym_method_unknowns  the size of the Newton system for n degrees of
 *                        freedom ((s-1) n), 0 for an explicit method;
 *   sym_method_work_doubles  the doubles of sym_work_new's workspace for n
 *                        and a system without scratch of its own (as a
 *                        double: it may exceed the size_t range);
 *   sym_method_constrained  1 if it solves constrained systems, 0 if
 *                        sym_work_new refuses them (SYM_ENOTCONSTRAINED);
 *   sym_method_newton_blocks  the eigenvalues (re, im: SYM_MAX_NODES each) of
 *                        the decoupled Newton matrix's table: their count,
 *                        0 without one. */
int sym_method_nodes(const sym_method *m, double *c);
int sym_method_unknowns(const sym_method *m, int n);
int sym_method_constrained(const sym_method *m);
int sym_method_newton_blocks(const sym_method *m, double *re, double *im);
double sym_method_work_doubles(const sym_method *m, int n);

/* ------------------------------------------------------------------ */
/* Workspace, one step, a whole integration                            */
/* ------------------------------------------------------------------ */
typedef struct sym_options {
    double rtol;   /* Newton update tolerance relative to the step's
                      increment; <= 0 selects the default (1e-13)        */
    int max_iter;  /* Newton iterations per step; <= 0: default (25)     */
    int predictor; /* 1 (default): extrapolate the previous step's
                      interpolating polynomial; 0: always start from a
                      Taylor predictor built from (q_j, p_j)             */
    int newton;    /* enum sym_newton_mode: what each does is the table
                      of policies in sym_newton.c (default FULL)         */
    int branch;    /* SYM_BRANCH_AUTO (default): an implicit scheme checks
                      a suspicious root by continuation in h
                      (csrc/core/sym_galerkin_roots.c); SYM_BRANCH_ALWAYS: every root;
                      SYM_BRANCH_NEVER: none; SYM_BRANCH_OFF: no check of
                      the root at all -- neither the plausibility gate
                      (sym_galerkin.c) nor the watch on energy growth: any
                      root of the step equations is the step (a
                      transcription's constraints, whose inputs need not
                      be smooth)                                          */
    int solver;    /* the Newton matrix's linear algebra: SYM_SOLVER_AUTO
                      (default) the O(n) elimination over the chain where
                      the system has that structure (the built-in
                      pendulum_chain, a Galerkin method, a force of held
                      values and tridiagonal damping or none) from 6
                      links on, the dense LU otherwise;
                      SYM_SOLVER_DENSE always the dense LU;
                      SYM_SOLVER_TREE the elimination (where it does not
                      apply, the dense LU: sym_work_solver says which)    */
} sym_options;

enum sym_newton_mode {
    SYM_NEWTON_FULL = 0, SYM_NEWTON_CHORD = 1, SYM_NEWTON_STEP = 2, SYM_NEWTON_DECOUPLED = 3,
    SYM_NEWTON_AUTO = 4
};
enum sym_branch_mode {
    SYM_BRANCH_AUTO = 0, SYM_BRANCH_ALWAYS = 1, SYM_BRANCH_NEVER = 2, SYM_BRANCH_OFF = 3
};
enum sym_solver_mode { SYM_SOLVER_AUTO = 0, SYM_SOLVER_DENSE = 1, SYM_SOLVER_TREE = 2 };
/* The modes' names, the words the Python API takes, by value: "full",
 * "chord", "step", "decoupled", "auto"; "auto", "always", "never", "off".
 * NULL for a value that is no mode: sym_work_new accepts exactly the values
 * that have a name (else SYM_EINVAL). */
const char *sym_newton_mode_name(int mode);
const char *sym_branch_mode_name(int mode);
/* "auto", "dense", "tree" (sym_options.solver) */
const char *sym_solver_mode_name(int mode);

void sym_options_default(sym_options *opt);

typedef struct sym_step_info {
    int iterations;     /* Newton iterations (0 for rk4)                 */
    double residual;    /* final residual, infinity norm (momentum units) */
    double residual_rel;/* the same relative to the residual's scale     */
    double update;      /* last Newton update relative to the increment  */
} sym_step_info;

typedef struct sym_work sym_work;

/* Allocate everything one integration needs.  *status receives the
 * reason when NULL is returned. */
sym_work *sym_work_new(const sym_system *sys, const sym_method *method,
                       const sym_options *opt, int *status);
/* The workspace of the closed form of a quadratic Lagrangian (M, K
 * constant; sym_linear.c): every step of size h is z_{k+1} = z_k + D z_k with
 * z = (q, p), D (2n x 2n, row-major) the method's increment matrix at h, and
 * when the method has one internal node q_mid = A (q_k + q_{k+1}), A (n x n).
 * The caller forms D and A (symplectic.linear); this workspace only applies
 * them, in every entry point below (sym_step_at, sym_step_tangent: I + D,
 * sym_integrate), with no Newton iterations.  A step of another size is
 * SYM_EINVAL, a result that is not finite SYM_ENONFINITE; it takes no force
 * (sym_work_set_force: SYM_EINVAL) and no constraints. */
sym_work *sym_work_new_linear(const sym_system *sys, const sym_method *method, double h,
                              const double *D, const double *A, int *status);
void sym_work_free(sym_work *w);
/* Forget the predictor history and the cached left-node values. */
void sym_work_reset(sym_work *w);

/* One step (q, p) at time t -> (q1, p1) after time h (h may be negative).
 * qmid (may be NULL) receives method->n_mid internal nodes, n each.
 * q1/p1 may not alias q/p. */
int sym_step(sym_work *w, const double *q, const double *p, double h,
             double *q1, double *p1, double *qmid, sym_step_info *info);

/* The multipliers of the last step sym_step completed on w (constrained
 * systems): lambda_a (m values each) at the step's s nodes t + c_a h,
 * a = 0..s-1, into lambda[s * m]; the constraint force at node a is
 * -G(Q_a)^T lambda_a.  SYM_EINVAL without constraints or before a step. */
int sym_step_multipliers(const sym_work *w, double *lambda);
/* One step as sym_step, at time t as step number k of a run: the time and the
 * index that a force (sym_work_set_force) is evaluated with.  sym_step is
 * the case t = 0, k = 0.  SYM_EINVAL if t is not finite, k < 0, or k is
 * beyond the rows of a held force. */
int sym_step_at(sym_work *w, double t, long k, const double *q, const double *p, double h,
                double *q1, double *p1, double *qmid, sym_step_info *info);
/* Set the time t and step index k of the workspace without stepping: the
 * ones sym_newton_system and sym_step_tangent evaluate a force with (0 on a
 * new workspace; sym_step_at, sym_step and sym_integrate set their own).
 * SYM_EINVAL as for sym_step_at. */
int sym_work_set_time(sym_work *w, double t, long k);
/* The argument that the last call on w (sym_step_at, sym_step, sym_work_set_time,
 * sym_step_tangent, sym_newton_system) refused with SYM_EINVAL: a constant
 * string ("h", "t", "k", "hold"), or NULL when it refused none. */
const char *sym_work_invalid(const sym_work *w);
/* The linear algebra a workspace's Newton matrix takes: SYM_SOLVER_TREE (the
 * O(n) elimination over a chain, used by every step without a force) or
 * SYM_SOLVER_DENSE. */
int sym_work_solver(const sym_work *w);

/* Diagnostics of a Galerkin scheme (SYM_EMETHOD for rk4): the number of
 * Newton unknowns ((s-1) n; (s-1)(n + m) with m constraints), and the
 * residual R and Newton matrix J (row-major, unknowns x unknowns) at the
 * unknowns X (the increments X_a = Q_a - q, a = 1..s-1; then, constrained,
 * the impulses Lambda_a = h w_a lambda_a, a = 0..s-2: sym_constraints.c) for
 * the step from (q, p) with size h. */
int sym_newton_size(const sym_work *w);
int sym_newton_system(sym_work *w, const double *q, const double *p, double h,
                      const double *X, double *R, double *J);
/* The same through the residual and linear algebra the workspace's steps
 * take (the dense LU, or the O(n) elimination: sym_work_solver): the
 * residual R at X and the norm *rnorm Newton's residual test reads, b <-
 * J^{-1} b, and *sign the sign of det J (the branch check's; 0 for a
 * constrained system, whose sign is not formed). */
int sym_newton_direction(sym_work *w, const double *q, const double *p, double h,
                         const double *X, double *R, double *rnorm, double *b, int *sign);

/* The exact tangent map of one step: takes the step (q, p) -> (q1, p1) and
 * fills D (2n x 2n, row-major) with d(q1, p1)/d(q, p), rows and columns
 * ordered (q, p).  For the variational schemes D follows from the implicit
 * function theorem on the converged step equations, with the Newton matrix
 * at the root; for rk4 from the linearised stages; for the closed form it
 * is the constant I + D.  It allocates its own scratch (a run propagates
 * the same map: sym_run.deriv.tangent).  Constrained (sys->m > 0): the exact
 * derivative of the constrained step map (sym_constraints_tangent.c), of
 * rank 2n - 2m, its columns in the tangent space of the manifold
 * {g = 0, G M^-1 p = 0} at (q1, p1); along that space at (q, p) it is the
 * derivative along the manifold and keeps the restricted symplectic form
 * (V^T D^T J D V = V^T J V for a basis V of it). */
int sym_step_tangent(sym_work *w, const double *q, const double *p, double h,
                     double *q1, double *p1, double *D, sym_step_info *info);

/* The discrete adjoint sweep (sym_adjoint.c) over a run of n_steps steps
 * whose derivatives sym_run.deriv.jacobians holds (jac: n_steps x 2n x c,
 * c = (2 + jac_u) n, jac_u as in sym_run_derivs): lambda_N = lam_end (2n, the
 * gradient of the terminal cost), lambda_k = D_k^T lambda_{k+1} + src_k
 * (src: NULL, or n_steps x 2n, the gradients of the running cost at nodes
 * 0 .. N-1); fills lam0 (2n) with lambda_0 = the gradient with respect to
 * (q_0, p_0) and, with jac_u, grad_u (n_steps x jac_u n) with
 * B_k^T lambda_{k+1}. */
int sym_adjoint_sweep(int n, long n_steps, int jac_u, const double *jac, const double *lam_end,
                      const double *src, double *lam0, double *grad_u);

/* The work of a run: accepted steps, points at which the system was
 * evaluated (one point may ask for several quantities: M, A, H, grad V,
 * ...; finite-difference fallbacks inside one request are not counted),
 * Newton iterations, factorisations of the Newton matrix (LU), and the
 * implicit schemes' branch checks (their evaluations and factorisations
 * included above). */
typedef struct sym_counts {
    long steps;
    long evaluations;
    long iterations;
    long factorizations;
    long branch_checks;  /* roots checked by continuation in h (sym_galerkin_roots.c) */
    long branch_fixes;   /* ... found on a wrong branch, the step redone from
                            the continued root */
} sym_counts;

/* The counts accumulated by a workspace since sym_work_new. */
void sym_work_counts(const sym_work *w, sym_counts *out);

/* The one symmetry rule of a mass (or stiffness) matrix, wherever one is
 * checked (the built-in linear system, a mass(q) callable, the Python
 * checks of symplectic/_model/_validate.py): |A_ij - A_ji| <= SYM_SYMMETRY_RTOL
 * max_kl |A_kl|, relative to the largest entry so that a matrix with large
 * and zero entries is judged on its scale.  Returns 1 when A (n x n,
 * row-major) is symmetric; else 0 with (*i, *j) (i < j; either may be NULL)
 * the pair of the largest difference.  Non-finite entries are not judged. */
#define SYM_SYMMETRY_RTOL 1e-10
int sym_symmetric(int n, const double *A, int *i, int *j);

#ifdef __cplusplus
}
#endif

/* The run: sym_run and sym_integrate (the one driver of every run). */
#include "sym_run.h"

#endif /* SYMPLECTIC_H */
