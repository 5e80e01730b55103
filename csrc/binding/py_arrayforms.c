/*
 * py_arrayforms.c -- the two callback forms whose Python code produces the
 * full derivative arrays of M and V at once (one call per point, or per
 * batch of points); the core's contracted A and H come from them through
 * py_fill_from_full.  The table that selects them is in py_callbacks.c.
 *
 *   combined    V = f(q, M, dM, dV, d2M, d2V), the arrays filled in place
 *   vectorized  f(Q) -> dict of arrays with a leading point axis
 */
#include "py_core.h"

#include <math.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* combined: V = combined(q, M, dM, dV, d2M, d2V), arrays filled in place */
/* ------------------------------------------------------------------ */
/*
 * The callable fills zeroed arrays M (n, n), dM (n, n, n) [k, i, j] =
 * dM_ij/dq_k, dV (n,), d2M (n, n, n, n), d2V (n, n) and returns V.  One call
 * per point; the results are kept for the last point, so repeated requests at
 * the same q (the left node in every Newton iteration) cost no call, and dM
 * of the last COMBINED_RING points, so that A alone at a recent point is a
 * contraction.  A nested call (the callable integrating the same system)
 * gets fresh arrays.  The caches live for one top-level call (begin).
 */
#define COMBINED_RING 8

static const int combined_nds[5] = {2, 3, 1, 4, 2};
static const char *const combined_names[5] = {"M", "dM", "dV", "d2M", "d2V"};

typedef struct {
    PyObject *ref[6];        /* the callable, then its arrays M, dM, dV, d2M, d2V */
    int n;
    double *q, V;            /* the point the arrays hold */
    int valid, busy;
    double *ring_q, *ring_T; /* dM of the last COMBINED_RING points */
    int ring_len, ring_next;
} combined_state;

static PyObject *new_zeros(int nd, int n)
{
    npy_intp d[4] = {n, n, n, n};
    return PyArray_ZEROS(nd, d, NPY_DOUBLE, 0);
}

/* The callable gets the arrays themselves, so it can damage them: resize
 * them (ndarray.resize(..., refcheck=False) reallocates the buffer), give
 * them another shape, dtype or strides.  Check before every read; a damaged
 * array is replaced by a fresh one (so the next call starts clean) and the
 * damage is a ValueError. */
static int combined_arrays_ok(combined_state *st, PyObject **arrs)
{
    for (int k = 0; k < 5; k++) {
        PyArrayObject *a = (PyArrayObject *)arrs[k];
        int ok = PyArray_TYPE(a) == NPY_DOUBLE && PyArray_NDIM(a) == combined_nds[k] &&
                 PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a);
        for (int i = 0; ok && i < combined_nds[k]; i++) ok = PyArray_DIM(a, i) == st->n;
        if (!ok) {
            PyObject *fresh = new_zeros(combined_nds[k], st->n);
            if (!fresh) return -1;
            Py_SETREF(arrs[k], fresh);
            st->valid = 0;
            PyErr_Format(PyExc_ValueError,
                         "the combined callable changed the array %s (its shape, dtype or "
                         "memory); fill the arrays in place (e.g. %s[...] = ...)",
                         combined_names[k], combined_names[k]);
            return -1;
        }
    }
    return 0;
}

static int combined_call(combined_state *st, const double *q, PyObject **arrs, double *V)
{
    if (combined_arrays_ok(st, arrs) < 0) return -1;
    for (int k = 0; k < 5; k++)
        memset(PyArray_DATA((PyArrayObject *)arrs[k]), 0,
               (size_t)PyArray_NBYTES((PyArrayObject *)arrs[k]));
    PyObject *qa = py_vec_copy(q, st->n);
    if (!qa) return -1;
    PyObject *res = PyObject_CallFunctionObjArgs(st->ref[0], qa, arrs[0], arrs[1], arrs[2],
                                                 arrs[3], arrs[4], NULL);
    Py_DECREF(qa);
    if (!res) return -1;
    *V = PyFloat_AsDouble(res);
    Py_DECREF(res);
    if (*V == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError,
                        "the combined callable must return the potential V(q) as a float");
        return -1;
    }
    if (combined_arrays_ok(st, arrs) < 0) return -1;
    for (int k = 0; k < 5; k++) {
        PyArrayObject *a = (PyArrayObject *)arrs[k];
        if (py_first_nonfinite(PyArray_DATA(a), PyArray_SIZE(a)) >= 0) {
            PyObject *qr = py_vec_copy(q, st->n);
            PyErr_Format(PyExc_ValueError,
                         "the combined callable wrote a non-finite value into %s at q = %R",
                         combined_names[k], qr ? qr : Py_None);
            Py_XDECREF(qr);
            return -1;
        }
    }
    if (!isfinite(*V)) {
        PyErr_SetString(PyExc_ValueError, "the combined callable returned a non-finite potential");
        return -1;
    }
    return 0;
}

/* A at a point of the ring (the left node of a Newton iteration): 1 if found. */
static int combined_ring_A(const combined_state *st, const double *q, const double *g,
                           double *A)
{
    const int n = st->n;
    for (int r = 0; r < st->ring_len; r++)
        if (memcmp(st->ring_q + (size_t)r * n, q, sizeof(double) * (size_t)n) == 0) {
            py_contract_dM(n, st->ring_T + (size_t)r * n * n * n, g, A);
            return 1;
        }
    return 0;
}

/* Call the callable at q into the persistent arrays; remember the point. */
static int combined_refresh(combined_state *st, const double *q)
{
    const int n = st->n;
    const size_t n3 = (size_t)n * n * n;
    double V;
    st->valid = 0;
    st->busy = 1;
    const int rc = combined_call(st, q, st->ref + 1, &V);
    st->busy = 0;
    if (rc < 0) return -1;
    memcpy(st->q, q, sizeof(double) * (size_t)n);
    st->V = V;
    st->valid = 1;
    const int r = st->ring_next;
    memcpy(st->ring_q + (size_t)r * n, q, sizeof(double) * (size_t)n);
    memcpy(st->ring_T + (size_t)r * n3, PyArray_DATA((PyArrayObject *)st->ref[2]),
           sizeof(double) * n3);
    st->ring_next = (r + 1) % COMBINED_RING;
    if (st->ring_len < COMBINED_RING) st->ring_len++;
    return 0;
}

static int cb_combined(const double *q, const double *g, unsigned need, const sym_eval_out *out,
                       void *params, double *scratch)
{
    combined_state *st = params;
    PyObject *tmp[5] = {NULL}, **arrs = st->ref + 1;
    double V;
    int rc = -1;
    (void)scratch;
    if (need == SYM_NEED_A && !st->busy && combined_ring_A(st, q, g, out->A)) return 0;
    if (st->busy) {                         /* nested: private arrays */
        for (int k = 0; k < 5; k++)
            if (!(tmp[k] = new_zeros(combined_nds[k], st->n))) goto done;
        arrs = tmp;
        if (combined_call(st, q, arrs, &V) < 0) goto done;
    } else if (st->valid && memcmp(st->q, q, sizeof(double) * (size_t)st->n) == 0) {
        V = st->V;
        /* the callable may have damaged the arrays since (from another
         * callback, or a reference it kept) */
        if (combined_arrays_ok(st, arrs) < 0) goto done;
    } else {
        if (combined_refresh(st, q) < 0) goto done;
        V = st->V;
    }
    const double *full[6] = {
        PyArray_DATA((PyArrayObject *)arrs[0]), PyArray_DATA((PyArrayObject *)arrs[1]),
        PyArray_DATA((PyArrayObject *)arrs[3]), &V, PyArray_DATA((PyArrayObject *)arrs[2]),
        PyArray_DATA((PyArrayObject *)arrs[4])};
    py_fill_from_full(st->n, need, g, full, out);
    rc = 0;
done:
    for (int k = 0; k < 5; k++) Py_XDECREF(tmp[k]);
    return rc;
}

/* Forget the cached point and the ring at the start of every top-level call,
 * so that values computed before the callable's parameters changed are never
 * reused. */
int py_combined_begin(py_call *call)
{
    combined_state *st = call->S->state;
    st->valid = 0;
    st->ring_len = 0;
    st->ring_next = 0;
    return 0;
}

int py_combined_init(SystemObject *S, int n, PyObject *fn)
{
    if (py_check_callable(fn, "combined", 1) < 0) return -1;
    if (n > 256) {
        PyErr_SetString(PyExc_ValueError,
                        "the combined form holds n^4 second derivatives; use mass_dir / "
                        "mass_hess_dir (contracted forms) for n > 256");
        return -1;
    }
    const size_t nd = (size_t)n * (1 + COMBINED_RING + (size_t)n * n * COMBINED_RING);
    combined_state *st = py_state_new(S, sizeof *st + sizeof(double) * nd, 6);
    if (!st) return -1;
    st->n = n;
    st->q = (double *)(st + 1);
    st->ring_q = st->q + n;
    st->ring_T = st->ring_q + (size_t)n * COMBINED_RING;
    for (int k = 0; k < 5; k++)
        if (!(st->ref[1 + k] = new_zeros(combined_nds[k], n))) return -1;
    st->ref[0] = Py_NewRef(fn);
    S->sys.n = n;
    S->sys.params = st;
    S->sys.eval = cb_combined;
    return 0;
}

/* ------------------------------------------------------------------ */
/* vectorized: f(Q) -> dict of arrays with a leading point axis         */
/* ------------------------------------------------------------------ */
typedef struct {
    PyObject *ref[1];        /* the callable */
    int n;
} vectorized_state;

/* the dict's keys, by need bit, and their trailing n-axes */
static const char *const batch_keys[6] = {"mass", "mass_grad", "mass_hess", "potential",
                                          "potential_grad", "potential_hess"};
static const int batch_nds[6] = {2, 3, 4, 0, 1, 2};

static const py_msgs msgs_vectorized = {
    "vectorized '%s' is None; expected real numbers (float64)",
    "vectorized '%s' is an array of dtype %S; expected real numbers (float64)",
    "vectorized '%s' is %R; expected real numbers (float64)",
    "vectorized '%s' is a complex number; expected real numbers",
    "vectorized '%s' (an object of type %S) cannot be converted to a float64 array",
    "vectorized '%s' has shape %s, expected %s%s",
    "vectorized '%s' contains a non-finite value (nan or inf)"};

/* The dict's entry for need bit b as a float64 array (npts, n, ..., n). */
static PyArrayObject *batch_item(PyObject *d, int b, int npts, int n)
{
    PyObject *o = PyDict_GetItemString(d, batch_keys[b]);   /* borrowed */
    if (!o) {
        PyErr_Format(PyExc_KeyError, "the vectorized function must return '%s'", batch_keys[b]);
        return NULL;
    }
    const npy_intp dims[5] = {npts, n, n, n, n};
    return py_real_array(o, &msgs_vectorized, batch_keys[b], batch_nds[b] + 1, dims, NULL, n);
}

/* One Python call per batch of points (all quadrature points of a Newton
 * iteration). */
static int cb_batch(int npts, const double *Q, const double *G, const unsigned *need,
                    const sym_eval_out *out, void *params, double *scratch)
{
    const vectorized_state *st = params;
    const int n = st->n;
    (void)scratch;
    npy_intp dims[2] = {npts, n};
    PyObject *Qa = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!Qa) return -1;
    memcpy(PyArray_DATA((PyArrayObject *)Qa), Q, sizeof(double) * (size_t)npts * n);
    PyObject *res = PyObject_CallFunctionObjArgs(st->ref[0], Qa, NULL);
    Py_DECREF(Qa);
    if (!res) return -1;
    if (!PyDict_Check(res)) {
        PyErr_Format(PyExc_TypeError, "the vectorized function must return a dict, got %S",
                     (PyObject *)Py_TYPE(res));
        Py_DECREF(res);
        return -1;
    }
    unsigned any = 0;
    for (int k = 0; k < npts; k++) any |= need[k];
    PyArrayObject *a[6] = {NULL};
    int rc = -1;
    for (int b = 0; b < 6; b++)
        if ((any & (1u << b)) && !(a[b] = batch_item(res, b, npts, n))) goto done;
    for (int k = 0; k < npts; k++) {
        const double *full[6];
        for (int b = 0; b < 6; b++)
            full[b] = a[b] ? (const double *)PyArray_DATA(a[b]) +
                                 (size_t)k * (size_t)(PyArray_SIZE(a[b]) / npts) : NULL;
        py_fill_from_full(n, need[k], G ? G + (size_t)k * n : NULL, full, &out[k]);
    }
    rc = 0;
done:
    for (int b = 0; b < 6; b++) Py_XDECREF(a[b]);
    Py_DECREF(res);
    return rc;
}

int py_vectorized_init(SystemObject *S, int n, PyObject *fn)
{
    if (py_check_callable(fn, "vectorized", 1) < 0) return -1;
    vectorized_state *st = py_state_new(S, sizeof *st, 1);
    if (!st) return -1;
    st->n = n;
    st->ref[0] = Py_NewRef(fn);
    S->sys.n = n;
    S->sys.params = st;
    S->sys.eval_batch = cb_batch;
    return 0;
}

