/*
 * py_core.h -- private header of the CPython/NumPy binding (symplectic._core).
 *
 * The binding is the only code that includes Python.h and NumPy; it uses the
 * C core through its public headers alone (symplectic.h, sym_force_api.h,
 * sym_builtins.h).  Its files, each calling only the ones below it:
 *
 *   _coremodule.c   module init and the registry listings (methods, builtins)
 *   py_work.c       the Work type (a run kept across calls: sp.Integrator)
 *   py_diag.c       newton_system, step_tangent: diagnostics
 *   py_shoot.c      shoot: independent single steps on one workspace
 *   py_run.c        step and integrate, and the prologue and epilogue of
 *                   every run entry point (the run struct: py_run.h)
 *   py_integrate.c  one integrate call on a prepared run: outputs,
 *                   progress, hook, result or partial result
 *   py_system.c     the System type: lifetime, attributes, _eval, energy
 *   py_callbacks.c  the arguments of System() and the table of its callback
 *                   forms (what stands behind the core's sym_system slots);
 *                   the built-in, compiled and separate-callables forms.
 *                   "How to add a callback form" is at its top.
 *   py_arrayforms.c the combined and vectorized forms
 *   py_constraints.c the holonomic constraints attached to a form (callables
 *                   or a compiled callback)
 *   py_forces.c     the force= argument of the run entry points: a force
 *                   description -> the core's sym_force, and its thunks
 *   py_errors.c     C status -> Python exception (one table)
 *   py_util.c       arrays in and out, the dM and d2M contractions, a
 *                   form's state block
 */
#ifndef PY_CORE_H
#define PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#ifndef NPY_NO_DEPRECATED_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#endif
/* One NumPy API table for all files of the binding: _coremodule.c imports it
 * (defines PY_CORE_IMPORT_ARRAY), the others use it. */
#define PY_ARRAY_UNIQUE_SYMBOL symplectic_core_ARRAY_API
#ifndef PY_CORE_IMPORT_ARRAY
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

#include "symplectic.h"
#include "sym_force_api.h"

/* A function in a PyType_Slot / PyModuleDef_Slot, which hold void *: ISO C
 * has no conversion between function and object pointers (CPython and POSIX
 * rely on it); __extension__ keeps -Wpedantic quiet about this one use. */
#if defined(__GNUC__)
#define PY_SLOT_FN(f) (__extension__(void *)(f))
#else
#define PY_SLOT_FN(f) ((void *)(f))
#endif

typedef struct {
    PyTypeObject *System_type;
    PyTypeObject *Work_type;
} module_state;

typedef struct py_form py_form;   /* a callback form (py_callbacks.c) */

/* symplectic._core.System: a sym_system whose callbacks a form provides. */
typedef struct SystemObject {
    PyObject_HEAD
    sym_system sys;          /* sys.params is the form's state (or NULL)  */
    const py_form *form;     /* set while __init__ runs and after it      */
    void *state;             /* the form's private data (py_state_new)    */
    int nrefs;               /* references at the start of the state      */
    PyObject *builtin_name;  /* name of a built-in C system, or NULL      */
    int initialized;
    int nogil;               /* no Python in the loop: release the GIL    */
    void *cstate;            /* the constraints' state (py_constraints.c) */
} SystemObject;

/* One top-level call (step, integrate, _eval, energy, ...): the sym_system
 * it runs on -- S->sys, except that a form may point the callbacks' params
 * at this record -- and a C callback's first nonzero return (its value, what
 * was asked for, and q) for the error message.  It lives on the entry
 * point's stack, so concurrent calls on one System (integrate_many's threads,
 * GIL released) never share it. */
typedef struct py_call {
    SystemObject *S;
    sym_system sys;
    int failed;          /* a nonzero return was recorded        */
    int rc;              /* the value the callback returned      */
    unsigned need;       /* the SYM_NEED_* bits it was asked for, or
                            SYM_CNEED_* << PY_CNEED_SHIFT (a constraint) */
    double *q;           /* n doubles (allocated by the form)    */
} py_call;

/* ---- py_util.c --------------------------------------------------- */
/* How a converted value is named in its error messages: printf-like formats
 * taking the value's name first (see py_util.c for each one's arguments). */
typedef struct py_msgs {
    const char *none, *dtype, *scalar, *complex_, *convert, *shape, *nonfinite;
} py_msgs;
extern const py_msgs py_msgs_returned;   /* "potential(q) returned ..."   */

PyObject *py_vec_copy(const double *x, int n);
void py_shape_str(char *buf, size_t len, int nd, const npy_intp *dims);
PyArrayObject *py_real_array(PyObject *o, const py_msgs *msg, const char *name, int nd,
                             const npy_intp *dims, const double *q, int n);
PyArrayObject *py_call_array(PyObject *fn, const char *name, int n, const double *q,
                             const double *g, int nd);
PyArrayObject *py_as_vector(PyObject *o, int n, const char *name);
npy_intp py_first_nonfinite(const double *x, npy_intp size);
void py_contract_dM(int n, const double *T, const double *g, double *A);
void py_contract_d2M(int n, const double *T2, const double *g, double *H);
void py_fill_from_full(int n, unsigned need, const double *g, const double *const full[6],
                       const sym_eval_out *out);
void *py_state_new(SystemObject *S, size_t size, int nrefs);
int py_state_traverse(SystemObject *S, visitproc visit, void *arg);
void py_state_free(SystemObject *S);
int py_check_callable(PyObject *o, const char *name, int required);
void py_gc_dealloc(PyObject *self, inquiry clear);
PyObject *py_new_array(int nd, const npy_intp *dims, int zero);
double *py_data_of(PyObject *a);

/* ---- py_errors.c ------------------------------------------------- */
PyObject *py_raise_status(int st, const py_call *call, const char *before, const char *after);
PyObject *py_raise_work_status(int st, int n, const sym_method *m);

/* ---- py_callbacks.c ---------------------------------------------- */
int py_form_init(SystemObject *S, PyObject *args, PyObject *kw);
int py_form_begin(py_call *call);
void py_form_release(SystemObject *S);

/* ---- py_arrayforms.c --------------------------------------------- */
int py_combined_init(SystemObject *S, int n, PyObject *fn);
int py_combined_begin(py_call *call);
int py_vectorized_init(SystemObject *S, int n, PyObject *fn);

/* ---- py_forces.c ------------------------------------------------- */
/* A force of one call (on the entry point's stack) or of a kept run (a
 * Work): the core's description, the references it holds, the records of
 * its callback terms. */
typedef struct py_fterm py_fterm;
struct py_fterm {
    PyObject *fn, *jac;        /* Python: the callables (owned); NULL otherwise */
    sym_force_fn cfn;          /* compiled: the user's function and user_data  */
    void *data;
    int n;
    int failed, rc, nonfinite; /* the first failure of a compiled term        */
    unsigned need;
    double t;
    long k;
};
typedef struct py_force {
    int active;                /* a force was given                            */
    int python;                /* a Python callable term: keep the GIL         */
    sym_force f;
    PyArrayObject *damping, *hold, *pars[SYM_FORCE_MAX_TERMS];
    py_fterm pt[SYM_FORCE_MAX_TERMS];
    PyArrayObject *work, *impulse;   /* integrate's outputs, or NULL          */
} py_force;
int py_force_begin(PyObject *spec, int n, long steps, long rows, py_force *pf);
void py_force_end(py_force *pf);
int py_force_attach(py_force *pf, sym_work *w);
int py_force_replace(py_force *pf, PyObject *spec, int n, sym_work *w);
int py_force_set_hold(py_force *pf, sym_work *w, PyObject *o, long k0, int n);
int py_force_raise_recorded(const py_force *pf);
void py_force_clear_records(py_force *pf);
int py_force_traverse(const py_force *pf, visitproc visit, void *arg);

/* ---- py_system.c ------------------------------------------------- */
extern PyType_Spec py_System_spec;
int py_system_ready(const SystemObject *S);
int py_call_begin(SystemObject *S, py_call *call);
void py_call_end(py_call *call);

/* ---- py_constraints.c -------------------------------------------- */
#define PY_CNEED_SHIFT 8
/* c: constraint, constraint_jac, constraint_hess, n_constraints, constraint_data */
int py_constraint_init(SystemObject *S, int n, PyObject *const c[5], int builtin);
int py_constraint_traverse(SystemObject *S, visitproc visit, void *arg);
void py_constraint_free(SystemObject *S);
int py_constraint_begin(py_call *call);
int py_constraint_resolve(SystemObject *S, const double *q);

/* ---- the run entry points (what they share: py_run.h) ------------ */
/* py_run.c */
PyObject *mod_step(PyObject *module, PyObject *args, PyObject *kw);
PyObject *mod_integrate(PyObject *module, PyObject *args, PyObject *kw);
/* py_shoot.c */
PyObject *mod_shoot(PyObject *module, PyObject *args, PyObject *kw);
/* py_work.c */
PyObject *mod_work(PyObject *module, PyObject *args, PyObject *kw);
extern PyType_Spec py_Work_spec;
/* py_diag.c */
PyObject *mod_newton_system(PyObject *module, PyObject *args, PyObject *kw);
PyObject *mod_newton_direction(PyObject *module, PyObject *args, PyObject *kw);
PyObject *mod_step_tangent(PyObject *module, PyObject *args, PyObject *kw);
PyObject *mod_adjoint_sweep(PyObject *module, PyObject *args, PyObject *kw);

#endif /* PY_CORE_H */
