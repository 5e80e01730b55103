/*
 * sym_builtins.h -- the built-ins of the core (API beside symplectic.h):
 * the built-in systems, a registry of named constructors, each filling a
 * sym_system from a flat array of parameters, and the constants a built-in
 * shares with the Python package; the built-in force terms.
 *
 * The systems are defined one family to a file (sym_sys_*.c, through the one
 * constructor of sym_sysdef.h); the registry and its worked examples are in
 * sym_systems.c.  The force terms and their registry are in sym_forces.c.
 */
#ifndef SYM_BUILTINS_H
#define SYM_BUILTINS_H

#include "symplectic.h"
#include "sym_force_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* lagrange_top's eval returns SYM_ECHART where |sin theta| < SYM_TOP_MIN_SIN
 * (the axis within 10 mrad of the vertical or of theta = pi; the reasons are
 * in sym_sys_tops.c).  The Python package refuses before the first step any
 * motion whose exact nutation range comes that close (symplectic/_model/_topchart.py
 * reads this value as symplectic._core.TOP_MIN_SIN). */
#define SYM_TOP_MIN_SIN 0.01

/*
 * Each built-in system is made from a flat array of doubles whose layout
 * its `params_doc` describes; sym_builtin_make fills *out (including a
 * malloc'ed params block) and sym_builtin_free releases it.
 */
typedef struct sym_builtin {
    const char *name;
    const char *doc;
    const char *params_doc;
    int (*make)(int n, const double *par, size_t npar, sym_system *out);
    /* A worked example, which tests integrate with every method: n, the
     * parameters (ex_npar values) and an initial state (q0, p0) of a smooth
     * motion. */
    int ex_n;
    size_t ex_npar;
    const double *ex_par, *ex_q0, *ex_p0;
} sym_builtin;

int sym_builtin_count(void);
const sym_builtin *sym_builtin_at(int i);
const sym_builtin *sym_builtin_find(const char *name);
int sym_builtin_make(const char *name, int n, const double *par, size_t npar,
                     sym_system *out);
void sym_builtin_free(sym_system *sys);

/* Built-in force terms (csrc/core/sym_forces.c): named callbacks in C whose
 * params point to npar doubles owned by the caller (checked by `check`). */
typedef struct sym_force_builtin {
    const char *name;
    const char *doc;
    int n;                      /* degrees of freedom it applies to (0: any) */
    int npar;
    int (*check)(int n, const double *par);   /* 0 if the parameters are valid */
    sym_force_term term;        /* fn, provides, flags (params: the caller's) */
} sym_force_builtin;

int sym_force_builtin_count(void);
const sym_force_builtin *sym_force_builtin_at(int i);
const sym_force_builtin *sym_force_builtin_find(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* SYM_BUILTINS_H */
