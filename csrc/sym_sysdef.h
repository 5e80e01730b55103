/*
 * sym_sysdef.h -- how a built-in system is defined (private): the one
 * constructor every built-in's make function calls, and the make functions
 * of the families that the registry (sym_systems.c) lists.
 *
 * A built-in is a parameter struct, an evaluation (eval, optionally split
 * into prep and eval_prep; a constraint callback for a constrained one), a
 * fill function turning the flat parameters into the struct, and a make
 * function that is one call of sym_builtin_new.  Each evaluation is one
 * combined callback, so that sines and cosines are shared between M, A, H,
 * V and their derivatives (symplectic.h defines A and H).  Parameters are
 * read-only during integration, so one system may be integrated by several
 * threads at once.
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

/* The families' make functions (the registry's rows; the make signature of
 * sym_builtin). */
/* sym_sys_pendulums.c: angle coordinates of pendulums */
SYM_PRIVATE int sym_sys_pendulum(int n, const double *par, size_t npar, sym_system *out);
SYM_PRIVATE int sym_sys_double_pendulum(int n, const double *par, size_t npar, sym_system *out);
SYM_PRIVATE int sym_sys_pendulum_chain(int n, const double *par, size_t npar, sym_system *out);
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

#endif /* SYM_SYSDEF_H */
