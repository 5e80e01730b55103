/*
 * py_run.h -- private header of the run entry points of the binding
 * (py_run.c, py_integrate.c, py_work.c, py_diag.c): the prepared run they
 * share and the one integrate call on it.
 */
#ifndef PY_RUN_H
#define PY_RUN_H

#include "py_core.h"

typedef struct run run;

struct run {
    /* in: the parsed arguments (defaults set by the entry point) */
    PyObject *system, *q_in, *p_in;
    double h, rtol, t0;
    const char *method;
    int max_iter, predictor, chord, branch, solver;
    long n_steps;
    PyObject *force_in;           /* force=: None or a description (py_forces.c) */
    PyObject *linear_in;          /* linear=: NULL/None, or the closed form (h, D, A) */
    long force_steps;             /* steps of an integration, -1 for one step */
    long force_rows;              /* rows of its work and impulse outputs      */
    int (*check)(const run *r);   /* NULL, or the entry point's own checks */
    /* out: checked and converted (released by py_run_end) */
    PyObject *module;             /* the module (borrowed), set by py_run_begin */
    SystemObject *S;
    const sym_method *m;
    PyArrayObject *q, *p;
    sym_options opt;
    py_call call;
    sym_work *w;                  /* py_run_work */
    py_force force;
};

/* No Python in the loop: the system's and the force's callbacks are C. */
static inline int run_nogil(const run *r)
{
    return r->S->nogil && !r->force.python;
}

/* One integrate call's own arguments (the run r holds the system, method,
 * options, force and workspace): parsed, borrowed references. */
typedef struct {
    PyArrayObject *q0, *p0;   /* converted state (owned by the caller)      */
    double h, t0, work0;
    long k0, n_steps, store_every;
    PyObject *cancel, *hook, *hook_buf, *hook_steps, *report, *lam, *hook_force;
    PyArrayObject *work, *impulse;   /* a forced run's outputs, or NULL      */
    PyObject *impulse0;              /* None, or the impulse at node 0 (n)   */
    PyObject *tangent, *tangent0;    /* None, or sym_run.deriv.tangent's output
                                        (rows, 2n, k) and its value at node 0
                                        (2n, k) (None: the identity)        */
    PyObject *jacobians;             /* None, or sym_run.deriv.jacobians' output
                                        (n_steps, 2n, (2 + P) n)            */
    PyObject *h_jacobians;           /* NULL/None, or sym_run.deriv.h_jacobians'
                                        output (n_steps, 2, 2n)             */
    PyObject *points;                /* NULL/None, or sym_run.deriv.points' output
                                        (n_steps, r, 2n, 1 + c [+ 2])       */
    PyObject *params;                /* NULL/None, or (augmented system, theta,
                                        tangent or None, jacobians or None[, dD,
                                        S0, its force spec]):
                                        sym_run.deriv.par (py_params.c)           */
} run_call;

/* ---- py_run.c: the prologue and epilogue, step ------------------- */
int py_run_begin(PyObject *module, run *r, const char *qname, const char *pname);
int py_run_work(run *r);
PyObject *py_raise_invalid(const run *r, int st, const char *what);
void py_run_end(run *r);
int py_one_step_begin(PyObject *module, PyObject *args, PyObject *kw, run *r);
PyObject *py_run_one_step(run *r, PyArrayObject *q, PyArrayObject *p, double h, double t,
                       long k);

/* ---- py_params.c: params= of integrate (sym_params.h) ----------- */
typedef struct py_params {
    int active;
    py_call call;                 /* on the augmented system */
    py_force force;               /* its force terms (sym_params_run.pforce) */
    struct sym_params_run *par;   /* allocated with its scratch, or NULL */
} py_params;
int py_params_begin(PyObject *module, const run *r, const run_call *c, npy_intp rows,
                    py_params *pp);
void py_params_end(py_params *pp);

/* ---- py_integrate.c: one integrate call on a prepared run --------- */
int py_rows_fit(long n_steps, int n, int n_mid);
double *py_hook_buffer(PyObject *buf, npy_intp size, const char *name);
PyObject *py_run_integrate(run *r, const run_call *c);
int py_step_outputs(const run *r, const run_call *c, sym_run_derivs *D);

/* ---- py_shoot.c: independent single steps on a prepared run ----- */
PyObject *py_shoot_on(run *r, run_call *c, PyObject *q_in, PyObject *p_in, PyArrayObject *K,
                      PyArrayObject *H);
int py_shoot_times(PyObject *k_in, PyObject *h_in, PyArrayObject **K, PyArrayObject **H);

#endif /* PY_RUN_H */
