/*
 * sym_sysdef.h -- how a built-in system is defined (private): the one
 * constructor every built-in's make function calls, and the make functions
 * of the families that the registry (sym_systems.c) lists.
 *
 * A built-in is a parameter struct, an evaluation (eval, optionally split
 * into prep and eval_prep; a constraint callback for a constrained one), a
 * fill function turning the flat parameters into the struct, and a make
 * function that is one call of sym_builtin_new (SYM_BUILTIN_MAKE).  Each
 * evaluation is one combined callback, so that sines and cosines are shared
 * between M, A, H, V and their derivatives (symplectic.h defines A and H).
 * Parameters are read-only during integration, so one system may be
 * integrated by several threads at once.
 */
#ifndef SYM_SYSDEF_H
#define SYM_SYSDEF_H

#include "sym_builtins.h"
#include "sym_util.h"

#include <stddef.h>
#include <string.h>

/* The params block from the flat parameters (checked by then as `spec`
 * says): 0, or a status that refuses them (the block is then freed). */
typedef int (*sym_builtin_fill_fn)(int n, const double *par, void *params);

/* What a built-in is: the parameters it accepts and the sym_system it makes. */
typedef struct sym_builtin_spec {
    /* the parameters: n in [n_min, n_max], npar values, all finite, the
     * first npos of them > 0; `check` (may be NULL) refuses others before
     * anything is allocated (returns 0 or a status) */
    int n_min, n_max;
    size_t npar;
    size_t npos;
    int (*check)(int n, const double *par);
    /* the params block: `bytes` allocated, filled by `fill` */
    size_t bytes;
    sym_builtin_fill_fn fill;
    /* the system's slots (symplectic.h); a constrained built-in's
     * constraint_params is its params block */
    sym_eval_fn eval;
    sym_prep_fn prep;
    sym_prep_eval_fn eval_prep;
    size_t prep_size;
    sym_prep_n_fn prep_n;
    size_t scratch_size;
    unsigned flags;
    int m;
    sym_constraint_fn constraint;
} sym_builtin_spec;

/* The one constructor of the built-ins: checks n and the parameters as
 * `spec` says (SYM_ESYSTEM), allocates the params block (SYM_ENOMEM), fills
 * it (its status, after freeing the block) and sets *out's slots.  *out is
 * left as it was unless SYM_OK is returned. */
SYM_PRIVATE int sym_builtin_new(const sym_builtin_spec *spec, int n, const double *par,
                                size_t npar, sym_system *out);

/* x[0..k) = 0 */
static inline void sym_zero(double *x, size_t k)
{
    memset(x, 0, sizeof(double) * k);
}

/* A constant mass matrix: A = d(M g)/dq and H = d^2(1/2 g^T M g)/dq^2 are
 * zero (n x n each), as far as `need` asks for them. */
static inline void sym_zero_AH(unsigned need, const sym_eval_out *o, int n)
{
    if (need & SYM_NEED_A) sym_zero(o->A, (size_t)n * (size_t)n);
    if (need & SYM_NEED_H) sym_zero(o->H, (size_t)n * (size_t)n);
}

/* X = a Id (n x n) */
static inline void sym_scaled_identity(double *X, int n, double a)
{
    sym_zero(X, (size_t)n * (size_t)n);
    for (int i = 0; i < n; i++) X[(size_t)i * (size_t)n + (size_t)i] = a;
}

/* A built-in's make function `make` (the make signature of sym_builtin):
 * one call of sym_builtin_new with the spec whose designated initialisers
 * follow, e.g.
 *     SYM_BUILTIN_MAKE(sym_sys_x, .n_min = 1, .n_max = 1, .npar = 2, ...)
 * The initialisers may use the arguments n and par (sizes that grow with n). */
#define SYM_BUILTIN_MAKE(make, ...)                                      \
    int make(int n, const double *par, size_t npar, sym_system *out)    \
    {                                                                    \
        const sym_builtin_spec spec_ = {__VA_ARGS__};                    \
        return sym_builtin_new(&spec_, n, par, npar, out);               \
    }

/* The eval of a built-in split into prep and eval_prep (symplectic.h): the
 * k prepared values of this q on the stack, then eval_prep on them -- the
 * same operations as the split, so the two give bitwise the same results. */
#define SYM_EVAL_FROM_PREP(eval, prep, eval_prep, k)                        \
    static int eval(const double *q, const double *g, unsigned need,        \
                    const sym_eval_out *o, void *params, double *scratch)   \
    {                                                                       \
        double prepared_[k];                                                \
        (void)scratch;                                                      \
        prep(q, prepared_, params);                                         \
        return eval_prep(prepared_, g, need, o, params);                    \
    }

/* The families' make functions (the registry's rows; the make signature of
 * sym_builtin). */
/* sym_sys_pendulums.c: angle coordinates of pendulums */
SYM_PRIVATE int sym_sys_pendulum(int n, const double *par, size_t npar, sym_system *out);
SYM_PRIVATE int sym_sys_double_pendulum(int n, const double *par, size_t npar, sym_system *out);
SYM_PRIVATE int sym_sys_pendulum_chain(int n, const double *par, size_t npar, sym_system *out);
/* The chain's parameters (lengths, masses, the masses hanging from each
 * link mu_j = sum_{k>=j} m_k, gravity) when sys is the pendulum_chain
 * built-in: 0, else 1 (the O(n) step of sym_galerkin_tree.c reads them). */
SYM_PRIVATE int sym_chain_view(const sym_system *sys, const double **l, const double **m,
                               const double **mu, double *grav);
/* sym_sys_linear.c: the quadratic Lagrangian */
SYM_PRIVATE int sym_sys_linear(int n, const double *par, size_t npar, sym_system *out);
/* sym_sys_tops.c: the heavy symmetric top in two charts */
SYM_PRIVATE int sym_sys_lagrange_top(int n, const double *par, size_t npar, sym_system *out);
SYM_PRIVATE int sym_sys_lagrange_top_quaternion(int n, const double *par, size_t npar,
                                                sym_system *out);
/* sym_sys_linkages.c: rods and pivots held by holonomic constraints */
SYM_PRIVATE int sym_sys_pendulum_cartesian(int n, const double *par, size_t npar,
                                           sym_system *out);
SYM_PRIVATE int sym_sys_spherical_pendulum_cartesian(int n, const double *par, size_t npar,
                                                     sym_system *out);
SYM_PRIVATE int sym_sys_four_bar(int n, const double *par, size_t npar, sym_system *out);
/* sym_sys_tree.c: a tree of rigid bodies on revolute and prismatic joints (URDF) */
SYM_PRIVATE int sym_sys_tree(int n, const double *par, size_t npar, sym_system *out);
/* The tree's O(n) view for the Galerkin step's elimination
 * (sym_galerkin_stree.c): sym_tree_view 0 when sys is the "tree" built-in
 * without mimic constraints (gravity g_w then in *gw), else 1; the parents
 * (-1: the root) into parent[n]; the scratch doubles the two functions
 * below take; one point's P, f, grad V (n each) and per body the record
 * below (SYM_TR_SIZE doubles: the world axis S, the body's spatial inertia
 * (m, m x, Ib about O), twist V, subtree momentum h, a = S x V_parent, the
 * subtree's m and m x); T = 1/2 p^T M^{-1} p (work: 50 n doubles). */
enum {
    SYM_TR_S = 0, SYM_TR_I = 6, SYM_TR_V = 16, SYM_TR_H = 22, SYM_TR_A = 28, SYM_TR_C = 34,
    SYM_TR_SIZE = 38
};
SYM_PRIVATE int sym_tree_view(const sym_system *sys, const double **gw);
SYM_PRIVATE void sym_tree_parents(const sym_system *sys, int *parent);
SYM_PRIVATE size_t sym_tree_scratch(int n);
SYM_PRIVATE void sym_tree_point(const sym_system *sys, const double *q, const double *g,
                                double *scratch, double *rec, double *P, double *f, double *dV);
SYM_PRIVATE double sym_tree_kinetic(const sym_system *sys, const double *q, const double *p,
                                    double *scratch, double *work);

#endif /* SYM_SYSDEF_H */
