/*
 * py_params.c -- integrate's params=(system, theta, tangent, jacobians): the
 * parameter sensitivities of a run (sym_run.deriv.par, sym_params.h).  `system` is
 * the augmented symplectic.System (coordinates (q, theta), n + n_par),
 * theta the n_par values, tangent None or a writeable C-contiguous float64
 * array (stored rows, 2n, n_par), jacobians None or (n_steps, 2n, n_par).
 */
#include "py_run.h"
#include "sym_params.h"

#include <stdlib.h>
#include <string.h>

/* o: None or a writeable C-contiguous float64 array (d0, 2n, np); *out its
 * data (NULL for None).  -1 with an exception naming it. */
static int param_out(PyObject *o, npy_intp d0, npy_intp m, npy_intp np, const char *name,
                     double **out)
{
    *out = NULL;
    if (o == Py_None) return 0;
    PyArrayObject *a = (PyArrayObject *)o;
    const int ok = PyArray_Check(o) && PyArray_TYPE(a) == NPY_DOUBLE &&
                   PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISWRITEABLE(a) && PyArray_NDIM(a) == 3 &&
                   PyArray_DIM(a, 0) == d0 && PyArray_DIM(a, 1) == m && PyArray_DIM(a, 2) == np;
    if (!ok) {
        PyErr_Format(PyExc_ValueError, "params: %s must be a writeable C-contiguous float64 "
                     "array of shape (%ld, %ld, %ld)", name, (long)d0, (long)m, (long)np);
        return -1;
    }
    *out = PyArray_DATA(a);
    return 0;
}

/* The `count` values of o (array-like, float64) into out, or -1 with a
 * ValueError naming it. */
static int copy_values(PyObject *o, double *out, size_t count, const char *name)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return -1;
    const int ok = PyArray_SIZE(a) == (npy_intp)count;
    if (ok) memcpy(out, PyArray_DATA(a), sizeof(double) * count);
    Py_DECREF(a);
    if (!ok) PyErr_Format(PyExc_ValueError, "params: %s must have %zu values", name, count);
    return ok ? 0 : -1;
}

/* The augmented system of params= (a symplectic.System with n + n_par
 * coordinates, n_par >= 1), or NULL with an exception. */
static SystemObject *augmented(PyObject *module, PyObject *o, int n, int m)
{
    module_state *ms = PyModule_GetState(module);
    if (!PyObject_TypeCheck(o, ms->System_type)) {
        PyErr_SetString(PyExc_TypeError, "params: the augmented system must be a "
                        "symplectic.System");
        return NULL;
    }
    SystemObject *A = (SystemObject *)o;
    if (py_system_ready(A) < 0) return NULL;
    if (A->sys.n <= n || A->sys.m != m) {
        PyErr_Format(PyExc_ValueError, "params: the augmented system must have more than "
                     "n = %d coordinates and the system's %d constraints", n, m);
        return NULL;
    }
    return A;
}

int py_params_begin(PyObject *module, const run *r, const run_call *c, npy_intp rows,
                    py_params *pp)
{
    memset(pp, 0, sizeof(*pp));
    if (!c->params || c->params == Py_None) return 0;
    PyObject *so, *to, *tan, *jac, *dd = Py_None, *s0 = Py_None, *fo = Py_None;
    if (!PyTuple_Check(c->params) ||
        !PyArg_ParseTuple(c->params, "OOOO|OOO", &so, &to, &tan, &jac, &dd, &s0, &fo)) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "params must be a tuple (system, theta, tangent, "
                            "jacobians[, dD[, S0[, force]]])");
        return -1;
    }
    const int n = r->S->sys.n;
    SystemObject *A = augmented(module, so, n, r->S->sys.m);
    if (!A) return -1;
    const int np = A->sys.n - n;
    const npy_intp m = 2 * (npy_intp)n, N = c->n_steps < 0 ? 0 : c->n_steps;
    double *tp, *jp;
    if (param_out(tan, rows, m, np, "tangent", &tp) < 0 ||
        param_out(jac, N, m, np, "jacobians", &jp) < 0)
        return -1;
    PyArrayObject *th = py_as_vector(to, np, "params theta");
    if (!th) return -1;
    const size_t ndd = dd == Py_None ? 0 : (size_t)np * (size_t)n * (size_t)n;
    const size_t ns0 = s0 == Py_None ? 0 : (size_t)m * (size_t)np;
    const size_t sz =
        sizeof(sym_params_run) + sizeof(double) * (3 * (size_t)m * np + np + ndd + ns0);
    sym_params_run *P = pp->par = malloc(sz);
    if (!P) {
        Py_DECREF(th);
        PyErr_NoMemory();
        return -1;
    }
    double *theta = (double *)(P + 1), *dD = theta + np + 3 * (size_t)m * np;
    memcpy(theta, PyArray_DATA(th), sizeof(double) * (size_t)np);
    Py_DECREF(th);
    double *S0 = dD + ndd;
    if ((ndd && copy_values(dd, dD, ndd, "dD") < 0) || (ns0 && copy_values(s0, S0, ns0, "S0") < 0))
        return -1;
    pp->active = 1;
    if (py_call_begin(A, &pp->call) < 0) return -1;
    /* the augmented force: its terms only (no held part, no outputs) */
    if (py_force_begin(fo, A->sys.n, -1, 0, &pp->force) < 0) return -1;
    if (pp->force.active && (pp->force.f.hold || pp->force.f.damping)) {
        PyErr_SetString(PyExc_ValueError, "params: the augmented force must have callback "
                        "terms only");
        return -1;
    }
    *P = (sym_params_run){&pp->call.sys, np, theta, tp, jp, theta + np, ndd ? dD : NULL,
                          ns0 ? S0 : NULL, pp->force.active ? &pp->force.f : NULL};
    return 0;
}

void py_params_end(py_params *pp)
{
    py_force_end(&pp->force);
    if (pp->active) py_call_end(&pp->call);
    free(pp->par);
    pp->par = NULL;
    pp->active = 0;
}
