/*
 * py_shoot.c -- the entry point shoot of symplectic._core: B independent
 * single steps on one workspace, each from its own state, time, step size
 * and held force, with their derivatives (a multiple-shooting transcription's
 * steps, symplectic/control: one call for all its intervals, or for all the
 * perturbed points of a difference quotient).
 *
 * Item b is the one-step run (sym_integrate) from (q0[b], p0[b]) at time
 * k[b] h[b] with step h[b]: node b of a run whose origin is
 * t0 = (k[b] - b) h[b], so that the held force's row b (hold: (B, P n)) is
 * its force, and its outputs are row b of jacobians, h_jacobians and points
 * (the shapes of integrate's, with B for n_steps).  The workspace is reset
 * before each item (sym_work_reset), so that an item's Newton iteration
 * starts as that of a fresh one-step run does.
 */
#include "py_run.h"

#include <string.h>

/* An (B, n) float64 C-contiguous copy of o (o itself when it is one), or
 * NULL with a ValueError naming it. */
static PyArrayObject *rows_of(PyObject *o, npy_intp B, npy_intp n, const char *name)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != B || PyArray_DIM(a, 1) != n) {
        PyErr_Format(PyExc_ValueError, "shoot: %s must have shape (B, n) = (%zd, %zd)", name,
                     (Py_ssize_t)B, (Py_ssize_t)n);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* A nonempty 1-d float64 C-contiguous copy of o (o itself when it is one),
 * or NULL with a ValueError naming it. */
static PyArrayObject *vector_of(PyObject *o, const char *name)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) < 1) {
        PyErr_Format(PyExc_ValueError, "shoot: %s must be a nonempty 1-d array", name);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* The items' runs on the prepared run r: their ends into q1, p1 (B, n).
 * Returns -1 with an exception (a callback's, or a refused argument), else
 * the first failed item (its failure in *fail, *st its status), or B. */
static long run_items(run *r, const run_call *c, const sym_run_derivs *D, const double *k,
                      const double *h, double *q1, double *p1, sym_failure *fail, int *st)
{
    const npy_intp n = r->S->sys.n, B = c->n_steps;
    const npy_intp cj = D->jacobians ? 2 * n * (2 * n + (npy_intp)D->jac_u * n) : 0;
    const npy_intp ch = D->h_jacobians ? 4 * n : 0;
    const npy_intp cp = D->points ? (npy_intp)sym_method_force_points(r->m) * 2 * n *
                                        (1 + 2 * n + (npy_intp)D->jac_u * n +
                                         (D->h_jacobians ? 2 : 0)) : 0;
    const double *q0 = PyArray_DATA(c->q0), *p0 = PyArray_DATA(c->p0);
    double t[2], *q = PyMem_Malloc(sizeof(double) * 4 * (size_t)n);
    int it[1];
    if (!q) {
        PyErr_NoMemory();
        return -1;
    }
    const char *invalid = NULL;
    PyThreadState *ts = run_nogil(r) ? PyEval_SaveThread() : NULL;
    long b;
    for (b = 0; b < B; b++) {
        /* node b at k[b] h[b]: a run of one step from t0 = (k[b] - b) h[b], k0 = b */
        sym_run R = {.q0 = q0 + b * n, .p0 = p0 + b * n, .t0 = (k[b] - (double)b) * h[b],
                     .h = h[b], .k0 = b, .n_steps = 1,
                     .out = {.t = t, .q = q, .p = q + 2 * n, .iters = it},
                     .deriv = *D};
        if (cj) R.deriv.jacobians = D->jacobians + b * cj;
        if (ch) R.deriv.h_jacobians = D->h_jacobians + b * ch;
        if (cp) R.deriv.points = D->points + b * cp;
        sym_work_reset(r->w);
        *st = sym_integrate(r->w, &R);
        if (*st) {
            *fail = R.report.failure;
            if (*st == SYM_EINVAL && R.report.invalid) invalid = R.report.invalid;
            break;
        }
        memcpy(q1 + b * n, q + n, sizeof(double) * (size_t)n);
        memcpy(p1 + b * n, q + 3 * n, sizeof(double) * (size_t)n);
    }
    if (ts) PyEval_RestoreThread(ts);
    PyMem_Free(q);
    if (invalid) {
        PyErr_Format(PyExc_ValueError, "shoot: invalid run argument (%s)", invalid);
        return -1;
    }
    if (*st == SYM_ECALLBACK || (*st && PyErr_Occurred())) {
        if (*st == SYM_ECALLBACK) py_force_raise_recorded(&r->force);
        py_raise_status(*st, &r->call, NULL, NULL);
        return -1;
    }
    if (*st == SYM_ENOMEM || *st == SYM_EINVAL || *st == SYM_EMETHOD) {
        py_raise_work_status(*st, r->S->sys.n, r->m);
        return -1;
    }
    return b;
}

/* The items of one shoot call on the prepared run r (a fresh one, or a kept
 * Work's): q_in, p_in (B, n) their starts, K and H (B,) their node numbers
 * and steps, c's jacobians, h_jacobians and points the outputs.  Returns
 * (q1, p1, failed, failure) as shoot, or NULL with an exception. */
PyObject *py_shoot_on(run *r, run_call *c, PyObject *q_in, PyObject *p_in, PyArrayObject *K,
                      PyArrayObject *H)
{
    PyObject *ret = NULL, *q1 = NULL, *p1 = NULL;
    const npy_intp n = r->S->sys.n, B = PyArray_DIM(K, 0);
    if (PyArray_DIM(H, 0) != B) {
        PyErr_SetString(PyExc_ValueError, "shoot: k and h must have the same length");
        return NULL;
    }
    if (!(c->q0 = rows_of(q_in, B, n, "q0")) || !(c->p0 = rows_of(p_in, B, n, "p0"))) goto done;
    c->n_steps = (long)B;
    sym_run_derivs D = {0};   /* the items' rows 0: run_items moves them to row b */
    if (py_step_outputs(r, c, &D) < 0) goto done;
    const npy_intp dq[2] = {B, n};
    if (!(q1 = py_new_array(2, dq, 0)) || !(p1 = py_new_array(2, dq, 0))) goto done;
    sym_failure fail = {0};
    int st = SYM_OK;
    const long b = run_items(r, c, &D, PyArray_DATA(K), PyArray_DATA(H), py_data_of(q1),
                             py_data_of(p1), &fail, &st);
    if (b < 0) goto done;
    if (b == (long)B)
        ret = Py_BuildValue("(OOlO)", q1, p1, b, Py_None);
    else
        ret = Py_BuildValue("(OOl(isidd))", q1, p1, b, st, sym_strerror(st), fail.iterations,
                            fail.residual, fail.residual_rel);
done:
    Py_CLEAR(c->q0);
    Py_CLEAR(c->p0);
    Py_XDECREF(q1);
    Py_XDECREF(p1);
    return ret;
}

/* The node numbers k and steps h of a shoot call, as 1-d float64 arrays
 * (new references in *K, *H); -1 with an exception. */
int py_shoot_times(PyObject *k_in, PyObject *h_in, PyArrayObject **K, PyArrayObject **H)
{
    *K = *H = NULL;
    if ((*K = vector_of(k_in, "k")) && (*H = vector_of(h_in, "h"))) return 0;
    Py_CLEAR(*K);
    return -1;
}

/* shoot(system, q0, p0, k, h, method='simpson', rtol=0, max_iter=0,
 * predictor=True, chord=0, branch=0, force=None, jacobians=None,
 * h_jacobians=None, points=None) -> (q1, p1, failed, failure): q0, p0 (B, n)
 * the items' starts, k (B,) their node numbers (their time k h; float), h
 * (B,) their step sizes; jacobians, h_jacobians and points as integrate's
 * with B for n_steps, filled in place.  failed: B when every item stepped,
 * else the first item that failed, failure (status, reason, iterations,
 * residual, residual_rel) (None when failed == B), the rows from it on
 * unfilled.  (A kept run's Work.shoot does the same on its workspace.) */
PyObject *mod_shoot(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q0", "p0", "k", "h", "method", "rtol", "max_iter",
                             "predictor", "chord", "branch", "force", "jacobians",
                             "h_jacobians", "points", "solver", NULL};
    PyObject *q_in, *p_in, *k_in, *h_in, *ret = NULL;
    PyArrayObject *K = NULL, *H = NULL;
    run r = {.method = "simpson", .predictor = 1, .force_in = Py_None};
    run_call c = {.store_every = 1, .jacobians = Py_None, .h_jacobians = Py_None,
                  .points = Py_None};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOO|sdipiiOOOOi", kwlist, &r.system, &q_in,
                                     &p_in, &k_in, &h_in, &r.method, &r.rtol, &r.max_iter,
                                     &r.predictor, &r.chord, &r.branch, &r.force_in,
                                     &c.jacobians, &c.h_jacobians, &c.points, &r.solver))
        return NULL;
    if (py_shoot_times(k_in, h_in, &K, &H) < 0) goto done;
    r.force_steps = (long)PyArray_DIM(K, 0);
    r.force_rows = 0;
    /* the prologue checks and converts row 0 as the run's (q, p) */
    if (!(r.q_in = PySequence_GetItem(q_in, 0)) || !(r.p_in = PySequence_GetItem(p_in, 0)))
        goto done;
    if (py_run_begin(module, &r, "q0", "p0") < 0 || py_run_work(&r) < 0) goto done;
    ret = py_shoot_on(&r, &c, q_in, p_in, K, H);
done:
    py_run_end(&r);
    Py_XDECREF(r.q_in);
    Py_XDECREF(r.p_in);
    Py_XDECREF(K);
    Py_XDECREF(H);
    return ret;
}
