/*
 * _coremodule.c -- the CPython/NumPy binding of the symplectic core.
 * The only file that includes Python.h and NumPy.
 *
 * symplectic._core.System  a system: a built-in C system, or Python
 *                          callables wrapped as C callbacks
 * symplectic._core.step / integrate / methods / builtins
 *
 * Python callbacks receive a fresh float64 copy of q (and g) on every call;
 * their results are converted to float64 and checked for shape and
 * finiteness, with messages that name the callback.  An exception raised by
 * a callback stops the C loop at once (status SYM_ECALLBACK) and propagates
 * unchanged.  Built-in systems run with the GIL released; Ctrl-C is checked
 * every few hundred steps.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "symplectic.h"

typedef struct {
    PyTypeObject *System_type;
} module_state;

typedef struct {
    PyObject_HEAD
    sym_system sys;
    int initialized;
    int is_builtin;
    PyObject *builtin_name;
    double *const_mass;
    PyObject *mass, *mass_grad, *mass_hess, *mass_dir, *mass_hess_dir;
    PyObject *potential, *potential_grad, *potential_hess;
    PyObject *vectorized;       /* batched Python callable, or NULL        */
    PyObject *combined;         /* in-place Python callable, or NULL       */
    PyObject *cb_arr[5];        /* its persistent M, dM, dV, d2M, d2V      */
    double *cb_q, cb_V;         /* the point they hold                     */
    int cb_valid, cb_busy;
    double *ring_q, *ring_T;    /* dM of the last COMBINED_RING points      */
    int ring_len, ring_next;
    PyObject *keepalive;        /* owner of a compiled callback's code     */
    sym_flat_eval_fn cfunc;     /* compiled callback, or NULL              */
    void *cfunc_data;
    int nogil;                  /* no Python in the loop: release the GIL  */
} SystemObject;

/* ------------------------------------------------------------------ */
/* Calling Python from the C callbacks                                  */
/* ------------------------------------------------------------------ */
static PyObject *vec_copy(const double *x, int n)
{
    npy_intp dim = n;
    PyObject *a = PyArray_SimpleNew(1, &dim, NPY_DOUBLE);
    if (a) memcpy(PyArray_DATA((PyArrayObject *)a), x, sizeof(double) * (size_t)n);
    return a;
}

static void shape_str(char *buf, size_t len, int nd, const npy_intp *dims)
{
    size_t off = 0;
    buf[0] = '\0';
    off += (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < nd && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%ld", i ? ", " : "", (long)dims[i]);
    if (off < len) snprintf(buf + off, len - off, nd == 1 ? ",)" : ")");
}

/* Call fn(q) or fn(q, g); return a C-contiguous float64 array of exactly
 * `nd` dimensions of length n each (nd = 0: a scalar), finite. */
static PyArrayObject *call_array(SystemObject *S, PyObject *fn, const char *name,
                                 const double *q, const double *g, int nd)
{
    const int n = S->sys.n;
    PyObject *qa = vec_copy(q, n), *ga = NULL, *res;
    if (!qa) return NULL;
    if (g) {
        ga = vec_copy(g, n);
        if (!ga) { Py_DECREF(qa); return NULL; }
        res = PyObject_CallFunctionObjArgs(fn, qa, ga, NULL);
    } else {
        res = PyObject_CallFunctionObjArgs(fn, qa, NULL);
    }
    Py_DECREF(qa);
    Py_XDECREF(ga);
    if (!res) return NULL;
    PyArrayObject *arr;
    if (res == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s returned None (a missing return statement?); "
                     "expected real numbers (float64)", name);
        Py_DECREF(res);
        return NULL;
    } else if (PyArray_Check(res) && !strchr("biuf", PyArray_DESCR((PyArrayObject *)res)->kind)) {
        /* object, string, complex, datetime, ... arrays: not real numbers */
        PyErr_Format(PyExc_TypeError, "%s returned an array of dtype %S; expected real "
                     "numbers (float64)", name, (PyObject *)PyArray_DESCR((PyArrayObject *)res));
        Py_DECREF(res);
        return NULL;
    } else if (PyArray_IsScalar(res, Generic) && !PyArray_IsScalar(res, Number)) {
        PyErr_Format(PyExc_TypeError, "%s returned %R; expected real numbers (float64)", name,
                     res);
        Py_DECREF(res);
        return NULL;
    } else if (PyArray_IsScalar(res, ComplexFloating) || PyComplex_Check(res)) {
        PyErr_Format(PyExc_TypeError, "%s returned a complex number; expected real numbers",
                     name);
        Py_DECREF(res);
        return NULL;
    } else {
        arr = (PyArrayObject *)PyArray_FROM_OTF(res, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    }
    if (!arr) {
        PyObject *tp = (PyObject *)Py_TYPE(res);
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "%s returned an object of type %S that cannot be converted "
                     "to a float64 array", name, tp);
        Py_DECREF(res);
        return NULL;
    }
    Py_DECREF(res);
    int ok = PyArray_NDIM(arr) == nd;
    for (int i = 0; ok && i < nd; i++) ok = PyArray_DIM(arr, i) == n;
    if (!ok) {
        char got[128], want[128];
        npy_intp wd[4] = {n, n, n, n};
        shape_str(got, sizeof got, PyArray_NDIM(arr), PyArray_DIMS(arr));
        shape_str(want, sizeof want, nd, wd);
        PyErr_Format(PyExc_ValueError, "%s returned an array of shape %s, expected %s%s",
                     name, got, nd ? want : "a scalar", nd ? "" : " (shape ())");
        Py_DECREF(arr);
        return NULL;
    }
    const double *d = PyArray_DATA(arr);
    const npy_intp size = PyArray_SIZE(arr);
    for (npy_intp i = 0; i < size; i++) {
        if (!isfinite(d[i])) {
            PyObject *qr = vec_copy(q, n);
            PyErr_Format(PyExc_ValueError, "%s returned a non-finite value (nan or inf) at q = %R",
                         name, qr ? qr : Py_None);
            Py_XDECREF(qr);
            Py_DECREF(arr);
            return NULL;
        }
    }
    return arr;
}

static int cb_mass(const double *q, double *out, void *params)
{
    SystemObject *S = params;
    const int n = S->sys.n;
    const size_t nn = (size_t)n * (size_t)n;
    if (S->const_mass) {
        memcpy(out, S->const_mass, sizeof(double) * nn);
        return 0;
    }
    PyArrayObject *a = call_array(S, S->mass, "mass(q)", q, NULL, 2);
    if (!a) return -1;
    const double *M = PyArray_DATA(a);
    double big = 0.0;
    for (size_t k = 0; k < nn; k++) if (fabs(M[k]) > big) big = fabs(M[k]);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (fabs(M[i * n + j] - M[j * n + i]) > 1e-10 * big) {
                /* PyErr_Format has no %g: the numbers are formatted here */
                char vals[160];
                snprintf(vals, sizeof vals, "M[%d, %d] = %.17g but M[%d, %d] = %.17g", i, j,
                         M[i * n + j], j, i, M[j * n + i]);
                PyObject *qr = vec_copy(q, n);
                PyErr_Format(PyExc_ValueError,
                             "mass(q) returned a non-symmetric matrix at q = %R: %s "
                             "(a mass matrix must be symmetric to 1e-10 of its largest entry)",
                             qr ? qr : Py_None, vals);
                Py_XDECREF(qr);
                Py_DECREF(a);
                return -1;
            }
    memcpy(out, M, sizeof(double) * nn);
    Py_DECREF(a);
    return 0;
}

/* A[i][c] = sum_j dM_ij/dq_c g_j with mass_grad[c, i, j] = dM_ij/dq_c. */
static int cb_mass_dir(const double *q, const double *g, double *out, void *params)
{
    SystemObject *S = params;
    const int n = S->sys.n;
    if (S->mass_dir) {
        PyArrayObject *a = call_array(S, S->mass_dir, "mass_dir(q, g)", q, g, 2);
        if (!a) return -1;
        memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)n * n);
        Py_DECREF(a);
        return 0;
    }
    PyArrayObject *a = call_array(S, S->mass_grad, "mass_grad(q)", q, NULL, 3);
    if (!a) return -1;
    const double *T = PyArray_DATA(a);
    for (int i = 0; i < n; i++)
        for (int c = 0; c < n; c++) {
            const double *row = T + ((size_t)c * n + i) * n;
            double s = 0.0;
            for (int j = 0; j < n; j++) s += row[j] * g[j];
            out[i * n + c] = s;
        }
    Py_DECREF(a);
    return 0;
}

/* H[k][l] = 1/2 sum_ij d^2 M_ij/dq_k dq_l g_i g_j, mass_hess[k, l, i, j]. */
static int cb_mass_hess_dir(const double *q, const double *g, double *out, void *params)
{
    SystemObject *S = params;
    const int n = S->sys.n;
    if (S->mass_hess_dir) {
        PyArrayObject *a = call_array(S, S->mass_hess_dir, "mass_hess_dir(q, g)", q, g, 2);
        if (!a) return -1;
        memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)n * n);
        Py_DECREF(a);
        return 0;
    }
    PyArrayObject *a = call_array(S, S->mass_hess, "mass_hess(q)", q, NULL, 4);
    if (!a) return -1;
    const double *T = PyArray_DATA(a);
    const size_t nn = (size_t)n * (size_t)n;
    for (int k = 0; k < n; k++)
        for (int l = 0; l < n; l++) {
            const double *blk = T + ((size_t)k * n + l) * nn;
            double s = 0.0;
            for (int i = 0; i < n; i++) {
                double si = 0.0;
                for (int j = 0; j < n; j++) si += blk[(size_t)i * n + j] * g[j];
                s += g[i] * si;
            }
            out[k * n + l] = 0.5 * s;
        }
    Py_DECREF(a);
    return 0;
}

static int cb_potential(const double *q, double *out, void *params)
{
    SystemObject *S = params;
    PyArrayObject *a = call_array(S, S->potential, "potential(q)", q, NULL, 0);
    if (!a) return -1;
    out[0] = *(const double *)PyArray_DATA(a);
    Py_DECREF(a);
    return 0;
}

static int cb_potential_grad(const double *q, double *out, void *params)
{
    SystemObject *S = params;
    PyArrayObject *a = call_array(S, S->potential_grad, "potential_grad(q)", q, NULL, 1);
    if (!a) return -1;
    memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)S->sys.n);
    Py_DECREF(a);
    return 0;
}

static int cb_potential_hess(const double *q, double *out, void *params)
{
    SystemObject *S = params;
    const int n = S->sys.n;
    PyArrayObject *a = call_array(S, S->potential_hess, "potential_hess(q)", q, NULL, 2);
    if (!a) return -1;
    memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)n * n);
    Py_DECREF(a);
    return 0;
}

/* A compiled callback is called through a per-call context that records its
 * first nonzero return (the value, what was asked for, and q) for the error
 * message.  The context lives on the stack of the entry point (step,
 * integrate, ...), so concurrent calls on one System from several threads
 * (integrate_many, GIL released) never share it. */
typedef struct {
    SystemObject *S;
    int failed;          /* a nonzero return was recorded */
    int rc;              /* the value the callback returned */
    unsigned need;       /* the SYM_NEED_* bits it was asked for */
    double *q;           /* n doubles: the point */
} cfunc_call;

/* A compiled callback with the flat signature (see symplectic.h). */
static int cb_cfunc(const double *q, const double *g, unsigned need, const sym_eval_out *out,
                    void *params, double *scratch)
{
    cfunc_call *cc = params;
    SystemObject *S = cc->S;
    (void)scratch;
    const int rc = S->cfunc(q, g, need, out->M, out->A, out->H, out->V, out->dV, out->d2V,
                            S->cfunc_data);
    if (rc && !cc->failed) {
        cc->failed = 1;
        cc->rc = rc;
        cc->need = need;
        memcpy(cc->q, q, sizeof(double) * (size_t)S->sys.n);
    }
    return rc;
}

/* The sym_system one top-level call runs on: S->sys itself, except that a
 * compiled callback's params point to the call's context `cc`.  -1 (with
 * MemoryError) if the context cannot be allocated.  call_end releases it. */
static int call_begin(SystemObject *S, sym_system *sys, cfunc_call *cc)
{
    *sys = S->sys;
    memset(cc, 0, sizeof(*cc));
    if (!S->cfunc) return 0;
    cc->S = S;
    cc->q = malloc(sizeof(double) * (size_t)S->sys.n);
    if (!cc->q) { PyErr_NoMemory(); return -1; }
    sys->params = cc;
    return 0;
}

static void call_end(cfunc_call *cc)
{
    free(cc->q);
    cc->q = NULL;
}

/* "M, A, grad V" for a need mask. */
static void need_str(char *buf, size_t len, unsigned need)
{
    static const char *const names[6] = {"M", "A", "H", "V", "grad V", "hess V"};
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 0; k < 6 && off < len; k++)
        if (need & (1u << k))
            off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", names[k]);
}

/* The error for a compiled callback's nonzero return recorded in cc: names
 * the value, what was asked for and q.  0 if nothing was recorded. */
static int raise_cfunc_failure(const cfunc_call *cc)
{
    if (!cc || !cc->failed) return 0;
    char what[64];
    need_str(what, sizeof what, cc->need);
    PyObject *qr = vec_copy(cc->q, cc->S->sys.n);
    PyErr_Format(PyExc_RuntimeError,
                 "the compiled callback returned %d (nonzero: stop) when asked for %s "
                 "(need = %u) at q = %R", cc->rc, what, cc->need, qr ? qr : Py_None);
    Py_XDECREF(qr);
    return 1;
}

/* Fetch key from the dict returned by a vectorized callable, as a float64
 * array of shape (npts, n, ..., n) with `nd` trailing n's; NULL + exception
 * when missing (required) or malformed. */
static PyArrayObject *batch_item(PyObject *d, const char *key, int npts, int n, int nd,
                                 int required)
{
    PyObject *o = PyDict_GetItemString(d, key);   /* borrowed */
    if (!o) {
        if (required)
            PyErr_Format(PyExc_KeyError, "the vectorized function must return '%s'", key);
        return NULL;
    }
    if (o == Py_None) {
        PyErr_Format(PyExc_TypeError, "vectorized '%s' is None; expected real numbers (float64)",
                     key);
        return NULL;
    }
    if (PyArray_Check(o) && !strchr("biuf", PyArray_DESCR((PyArrayObject *)o)->kind)) {
        PyErr_Format(PyExc_TypeError, "vectorized '%s' is an array of dtype %S; expected real "
                     "numbers (float64)", key, (PyObject *)PyArray_DESCR((PyArrayObject *)o));
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "vectorized '%s' (an object of type %S) cannot be "
                     "converted to a float64 array", key, (PyObject *)Py_TYPE(o));
        return NULL;
    }
    int ok = PyArray_NDIM(a) == nd + 1 && PyArray_DIM(a, 0) == npts;
    for (int i = 1; ok && i <= nd; i++) ok = PyArray_DIM(a, i) == n;
    if (!ok) {
        char got[128], want[128];
        npy_intp wd[5] = {npts, n, n, n, n};
        shape_str(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        shape_str(want, sizeof want, nd + 1, wd);
        PyErr_Format(PyExc_ValueError, "vectorized '%s' has shape %s, expected %s", key, got, want);
        Py_DECREF(a);
        return NULL;
    }
    const double *v = PyArray_DATA(a);
    for (npy_intp k = 0; k < PyArray_SIZE(a); k++)
        if (!isfinite(v[k])) {
            PyErr_Format(PyExc_ValueError, "vectorized '%s' contains a non-finite value (nan or inf)",
                         key);
            Py_DECREF(a);
            return NULL;
        }
    return a;
}

/*
 * eval over a combined in-place Python callable
 *     V = combined(q, M, dM, dV, d2M, d2V)
 * that fills zeroed arrays M (n, n), dM (n, n, n) [k, i, j] = dM_ij/dq_k,
 * dV (n,), d2M (n, n, n, n), d2V (n, n) and returns V.  One call per point;
 * the results are kept for the last point, so repeated requests at the same
 * q (the left node in every Newton iteration) cost no call.  A nested call
 * (the callable integrating the same system) gets fresh arrays.
 */
static const int combined_nds[5] = {2, 3, 1, 4, 2};
static const char *const combined_names[5] = {"M", "dM", "dV", "d2M", "d2V"};

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
static int combined_arrays_ok(SystemObject *S, PyObject **arrs)
{
    const int n = S->sys.n;
    for (int k = 0; k < 5; k++) {
        PyArrayObject *a = (PyArrayObject *)arrs[k];
        int ok = PyArray_TYPE(a) == NPY_DOUBLE && PyArray_NDIM(a) == combined_nds[k] &&
                 PyArray_IS_C_CONTIGUOUS(a) && PyArray_ISALIGNED(a);
        for (int i = 0; ok && i < combined_nds[k]; i++) ok = PyArray_DIM(a, i) == n;
        if (!ok) {
            PyObject *fresh = new_zeros(combined_nds[k], n);
            if (!fresh) return -1;
            Py_SETREF(arrs[k], fresh);
            S->cb_valid = 0;
            PyErr_Format(PyExc_ValueError,
                         "the combined callable changed the array %s (its shape, dtype or "
                         "memory); fill the arrays in place (e.g. %s[...] = ...)",
                         combined_names[k], combined_names[k]);
            return -1;
        }
    }
    return 0;
}

static int combined_call(SystemObject *S, const double *q, PyObject **arrs, double *V)
{
    const int n = S->sys.n;
    if (combined_arrays_ok(S, arrs) < 0) return -1;
    for (int k = 0; k < 5; k++) {
        PyArrayObject *a = (PyArrayObject *)arrs[k];
        memset(PyArray_DATA(a), 0, (size_t)PyArray_NBYTES(a));
    }
    PyObject *qa = vec_copy(q, n);
    if (!qa) return -1;
    PyObject *res = PyObject_CallFunctionObjArgs(S->combined, qa, arrs[0], arrs[1], arrs[2],
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
    if (combined_arrays_ok(S, arrs) < 0) return -1;
    for (int k = 0; k < 5; k++) {
        PyArrayObject *a = (PyArrayObject *)arrs[k];
        const double *d = PyArray_DATA(a);
        for (npy_intp i = 0; i < PyArray_SIZE(a); i++)
            if (!isfinite(d[i])) {
                PyObject *qr = vec_copy(q, n);
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

#define COMBINED_RING 8

/* Forget the cached point and the ring: called at the start of every
 * top-level call (step, integrate, energy, ...), so that values computed
 * before the callable's parameters changed are never reused. */
static void combined_cache_reset(SystemObject *S)
{
    S->cb_valid = 0;
    S->ring_len = 0;
    S->ring_next = 0;
}

static int cb_combined(const double *q, const double *g, unsigned need, const sym_eval_out *out,
                       void *params, double *scratch)
{
    SystemObject *S = params;
    const int n = S->sys.n;
    const size_t nn = (size_t)n * (size_t)n;
    PyObject *tmp[5] = {NULL}, **arrs = S->cb_arr;
    double V;
    (void)scratch;
    if (need == SYM_NEED_A && !S->cb_busy) {
        /* A only (the left node in every Newton iteration): dM of a recent
         * point contracted with the new g */
        for (int r = 0; r < S->ring_len; r++)
            if (memcmp(S->ring_q + (size_t)r * n, q, sizeof(double) * (size_t)n) == 0) {
                const double *T = S->ring_T + (size_t)r * nn * n;
                for (int i = 0; i < n; i++)
                    for (int c = 0; c < n; c++) {
                        const double *row = T + ((size_t)c * n + i) * n;
                        double s = 0.0;
                        for (int j = 0; j < n; j++) s += row[j] * g[j];
                        out->A[i * n + c] = s;
                    }
                return 0;
            }
    }
    if (S->cb_busy) {                       /* nested: private arrays */
        for (int k = 0; k < 5; k++)
            if (!(tmp[k] = new_zeros(combined_nds[k], n))) goto fail;
        arrs = tmp;
        if (combined_call(S, q, arrs, &V) < 0) goto fail;
    } else if (S->cb_valid && memcmp(S->cb_q, q, sizeof(double) * (size_t)n) == 0) {
        V = S->cb_V;
        /* the callable may have damaged the arrays since (from another
         * callback, or a reference it kept) */
        if (combined_arrays_ok(S, arrs) < 0) return -1;
    } else {
        S->cb_valid = 0;
        S->cb_busy = 1;
        const int rc = combined_call(S, q, arrs, &V);
        S->cb_busy = 0;
        if (rc < 0) return -1;
        memcpy(S->cb_q, q, sizeof(double) * (size_t)n);
        S->cb_V = V;
        S->cb_valid = 1;
        const int r = S->ring_next;
        memcpy(S->ring_q + (size_t)r * n, q, sizeof(double) * (size_t)n);
        memcpy(S->ring_T + (size_t)r * nn * n, PyArray_DATA((PyArrayObject *)arrs[1]),
               sizeof(double) * nn * (size_t)n);
        S->ring_next = (r + 1) % COMBINED_RING;
        if (S->ring_len < COMBINED_RING) S->ring_len++;
    }
    const double *M = PyArray_DATA((PyArrayObject *)arrs[0]);
    const double *T = PyArray_DATA((PyArrayObject *)arrs[1]);
    const double *dV = PyArray_DATA((PyArrayObject *)arrs[2]);
    const double *T2 = PyArray_DATA((PyArrayObject *)arrs[3]);
    const double *K = PyArray_DATA((PyArrayObject *)arrs[4]);
    if (need & SYM_NEED_M) memcpy(out->M, M, sizeof(double) * nn);
    if (need & SYM_NEED_A)
        for (int i = 0; i < n; i++)
            for (int c = 0; c < n; c++) {
                const double *row = T + ((size_t)c * n + i) * n;
                double s = 0.0;
                for (int j = 0; j < n; j++) s += row[j] * g[j];
                out->A[i * n + c] = s;
            }
    if (need & SYM_NEED_H)
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) {
                const double *blk = T2 + ((size_t)a * n + b) * nn;
                double s = 0.0;
                for (int i = 0; i < n; i++) {
                    double si = 0.0;
                    for (int j = 0; j < n; j++) si += blk[(size_t)i * n + j] * g[j];
                    s += g[i] * si;
                }
                out->H[a * n + b] = 0.5 * s;
            }
    if (need & SYM_NEED_V) out->V[0] = V;
    if (need & SYM_NEED_DV) memcpy(out->dV, dV, sizeof(double) * (size_t)n);
    if (need & SYM_NEED_D2V) memcpy(out->d2V, K, sizeof(double) * nn);
    for (int k = 0; k < 5; k++) Py_XDECREF(tmp[k]);
    return 0;
fail:
    for (int k = 0; k < 5; k++) Py_XDECREF(tmp[k]);
    return -1;
}

/* eval_batch over a vectorized Python callable f(Q) -> dict of arrays with a
 * leading point axis: mass, mass_grad, potential, potential_grad and the
 * second derivatives mass_hess, potential_hess.  One Python call per batch. */
static int cb_batch(int npts, const double *Q, const double *G, const unsigned *need,
                    const sym_eval_out *out, void *params, double *scratch)
{
    SystemObject *S = params;
    const int n = S->sys.n;
    const size_t nn = (size_t)n * (size_t)n;
    (void)scratch;
    unsigned any = 0;
    for (int k = 0; k < npts; k++) any |= need[k];
    npy_intp dims[2] = {npts, n};
    PyObject *Qa = PyArray_SimpleNew(2, dims, NPY_DOUBLE);
    if (!Qa) return -1;
    memcpy(PyArray_DATA((PyArrayObject *)Qa), Q, sizeof(double) * (size_t)npts * n);
    PyObject *res = PyObject_CallFunctionObjArgs(S->vectorized, Qa, NULL);
    Py_DECREF(Qa);
    if (!res) return -1;
    if (!PyDict_Check(res)) {
        PyErr_Format(PyExc_TypeError, "the vectorized function must return a dict, got %S",
                     (PyObject *)Py_TYPE(res));
        Py_DECREF(res);
        return -1;
    }
    PyArrayObject *M = NULL, *T = NULL, *T2 = NULL, *V = NULL, *dV = NULL, *K = NULL;
    int rc = -1;
    if ((any & SYM_NEED_M) && !(M = batch_item(res, "mass", npts, n, 2, 1))) goto done;
    if ((any & SYM_NEED_A) && !(T = batch_item(res, "mass_grad", npts, n, 3, 1))) goto done;
    if ((any & SYM_NEED_H) && !(T2 = batch_item(res, "mass_hess", npts, n, 4, 1))) goto done;
    if ((any & SYM_NEED_V) && !(V = batch_item(res, "potential", npts, n, 0, 1))) goto done;
    if ((any & SYM_NEED_DV) && !(dV = batch_item(res, "potential_grad", npts, n, 1, 1))) goto done;
    if ((any & SYM_NEED_D2V) && !(K = batch_item(res, "potential_hess", npts, n, 2, 1))) goto done;
    for (int k = 0; k < npts; k++) {
        const unsigned nd = need[k];
        const double *g = G ? G + (size_t)k * n : NULL;
        if (nd & SYM_NEED_M) memcpy(out[k].M, (double *)PyArray_DATA(M) + k * nn, sizeof(double) * nn);
        if (nd & SYM_NEED_A) {
            const double *Tk = (double *)PyArray_DATA(T) + (size_t)k * nn * n;
            for (int i = 0; i < n; i++)
                for (int c = 0; c < n; c++) {
                    const double *row = Tk + ((size_t)c * n + i) * n;
                    double s = 0.0;
                    for (int j = 0; j < n; j++) s += row[j] * g[j];
                    out[k].A[i * n + c] = s;
                }
        }
        if (nd & SYM_NEED_H) {
            const double *Tk = (double *)PyArray_DATA(T2) + (size_t)k * nn * nn;
            for (int a = 0; a < n; a++)
                for (int b = 0; b < n; b++) {
                    const double *blk = Tk + ((size_t)a * n + b) * nn;
                    double s = 0.0;
                    for (int i = 0; i < n; i++) {
                        double si = 0.0;
                        for (int j = 0; j < n; j++) si += blk[(size_t)i * n + j] * g[j];
                        s += g[i] * si;
                    }
                    out[k].H[a * n + b] = 0.5 * s;
                }
        }
        if (nd & SYM_NEED_V) out[k].V[0] = ((double *)PyArray_DATA(V))[k];
        if (nd & SYM_NEED_DV)
            memcpy(out[k].dV, (double *)PyArray_DATA(dV) + (size_t)k * n, sizeof(double) * n);
        if (nd & SYM_NEED_D2V)
            memcpy(out[k].d2V, (double *)PyArray_DATA(K) + k * nn, sizeof(double) * nn);
    }
    rc = 0;
done:
    Py_XDECREF(M);
    Py_XDECREF(T);
    Py_XDECREF(T2);
    Py_XDECREF(V);
    Py_XDECREF(dV);
    Py_XDECREF(K);
    Py_DECREF(res);
    return rc;
}

/* ------------------------------------------------------------------ */
/* The System type                                                      */
/* ------------------------------------------------------------------ */
static int System_traverse(SystemObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->mass);
    Py_VISIT(self->mass_grad);
    Py_VISIT(self->mass_hess);
    Py_VISIT(self->mass_dir);
    Py_VISIT(self->mass_hess_dir);
    Py_VISIT(self->potential);
    Py_VISIT(self->potential_grad);
    Py_VISIT(self->potential_hess);
    Py_VISIT(self->vectorized);
    Py_VISIT(self->keepalive);
    Py_VISIT(self->combined);
    for (int k = 0; k < 5; k++) Py_VISIT(self->cb_arr[k]);
    return 0;
}

static int System_clear(SystemObject *self)
{
    Py_CLEAR(self->mass);
    Py_CLEAR(self->mass_grad);
    Py_CLEAR(self->mass_hess);
    Py_CLEAR(self->mass_dir);
    Py_CLEAR(self->mass_hess_dir);
    Py_CLEAR(self->potential);
    Py_CLEAR(self->potential_grad);
    Py_CLEAR(self->potential_hess);
    Py_CLEAR(self->vectorized);
    Py_CLEAR(self->keepalive);
    Py_CLEAR(self->combined);
    for (int k = 0; k < 5; k++) Py_CLEAR(self->cb_arr[k]);
    return 0;
}

static void System_release(SystemObject *self);

static void System_dealloc(SystemObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    System_release(self);
    tp->tp_free((PyObject *)self);
    Py_DECREF(tp);
}

/* Drop everything a System holds (references, buffers, the built-in's
 * parameters) and return it to the state tp_new left it in.  __init__ calls
 * it first: an earlier __init__ that failed half-way may have stored
 * references and buffers, which a second __init__ would otherwise overwrite
 * and leak. */
static void System_release(SystemObject *self)
{
    System_clear(self);
    Py_CLEAR(self->builtin_name);
    if (self->is_builtin) sym_builtin_free(&self->sys);
    self->is_builtin = 0;
    free(self->const_mass);
    free(self->cb_q);
    free(self->ring_q);
    free(self->ring_T);
    self->const_mass = self->cb_q = self->ring_q = self->ring_T = NULL;
    self->cb_valid = self->cb_busy = 0;
    self->ring_len = self->ring_next = 0;
    self->cfunc = NULL;
    self->cfunc_data = NULL;
    self->nogil = 0;
    memset(&self->sys, 0, sizeof(self->sys));
}

static int check_callable(PyObject *o, const char *name, int required)
{
    if (o == NULL || o == Py_None) {
        if (required) {
            PyErr_Format(PyExc_TypeError, "%s is required", name);
            return -1;
        }
        return 0;
    }
    if (!PyCallable_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be callable, got %S", name, (PyObject *)Py_TYPE(o));
        return -1;
    }
    return 1;
}

static PyObject *none_to_null(PyObject *o)
{
    if (!o || o == Py_None) return NULL;
    Py_INCREF(o);
    return o;
}

static int System_init(SystemObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"n", "mass", "potential", "mass_grad", "potential_grad",
                             "mass_hess", "potential_hess", "mass_dir", "mass_hess_dir",
                             "builtin", "params", "vectorized", "cfunc", "cfunc_data",
                             "keepalive", "combined", NULL};
    int n;
    PyObject *mass = Py_None, *potential = Py_None, *mass_grad = Py_None,
             *potential_grad = Py_None, *mass_hess = Py_None, *potential_hess = Py_None,
             *mass_dir = Py_None, *mass_hess_dir = Py_None, *params = Py_None,
             *vectorized = Py_None, *cfunc = Py_None, *cfunc_data = Py_None,
             *keepalive = Py_None, *combined = Py_None;
    const char *builtin = NULL;
    if (self->initialized) {
        PyErr_SetString(PyExc_TypeError, "a System cannot be re-initialised");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "i|OOOOOOOOzOOOOOO", kwlist, &n, &mass,
                                     &potential, &mass_grad, &potential_grad, &mass_hess,
                                     &potential_hess, &mass_dir, &mass_hess_dir, &builtin,
                                     &params, &vectorized, &cfunc, &cfunc_data, &keepalive,
                                     &combined))
        return -1;
    if (n < 1 || n > SYM_MAX_DOF) {
        PyErr_Format(PyExc_ValueError, "n must be between 1 and %d, got %d", SYM_MAX_DOF, n);
        return -1;
    }
    System_release(self);
    if (builtin) {
        PyArrayObject *pa = (PyArrayObject *)PyArray_FROM_OTF(params, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
        if (!pa) return -1;
        if (PyArray_NDIM(pa) != 1) {
            Py_DECREF(pa);
            PyErr_SetString(PyExc_ValueError, "builtin params must be a 1-D sequence");
            return -1;
        }
        int st = sym_builtin_make(builtin, n, PyArray_DATA(pa), (size_t)PyArray_SIZE(pa), &self->sys);
        Py_DECREF(pa);
        if (st) {
            PyErr_Format(PyExc_ValueError, "cannot make built-in system '%s' (n = %d): %s",
                         builtin, n, sym_strerror(st));
            return -1;
        }
        self->builtin_name = PyUnicode_FromString(builtin);
        if (!self->builtin_name) { sym_builtin_free(&self->sys); return -1; }
        self->is_builtin = 1;
        self->nogil = 1;
        self->initialized = 1;
        return 0;
    }
    if (cfunc != Py_None) {
        void *fp = PyLong_AsVoidPtr(cfunc);
        if (!fp) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "cfunc must be a nonzero function address");
            return -1;
        }
        void *data = NULL;
        if (cfunc_data != Py_None) {
            data = PyLong_AsVoidPtr(cfunc_data);
            if (!data && PyErr_Occurred()) return -1;
        }
        self->sys.n = n;
        self->sys.params = self;
        self->sys.eval = cb_cfunc;
        /* converting a data pointer to a function pointer: allowed on the
         * platforms CPython supports (POSIX dlsym relies on it too) */
        memcpy(&self->cfunc, &fp, sizeof fp);
        self->cfunc_data = data;
        self->keepalive = none_to_null(keepalive);
        self->nogil = 1;
        self->initialized = 1;
        return 0;
    }
    if (combined != Py_None) {
        if (check_callable(combined, "combined", 1) < 0) return -1;
        if (n > 256) {
            PyErr_SetString(PyExc_ValueError,
                            "the combined form holds n^4 second derivatives; use mass_dir / "
                            "mass_hess_dir (contracted forms) for n > 256");
            return -1;
        }
        self->cb_q = malloc(sizeof(double) * (size_t)n);
        self->ring_q = malloc(sizeof(double) * (size_t)n * COMBINED_RING);
        self->ring_T = malloc(sizeof(double) * (size_t)n * n * n * COMBINED_RING);
        if (!self->cb_q || !self->ring_q || !self->ring_T) { PyErr_NoMemory(); return -1; }
        for (int k = 0; k < 5; k++)
            if (!(self->cb_arr[k] = new_zeros(combined_nds[k], n))) return -1;
        self->combined = none_to_null(combined);
        self->sys.n = n;
        self->sys.params = self;
        self->sys.eval = cb_combined;
        self->initialized = 1;
        return 0;
    }
    if (vectorized != Py_None) {
        if (check_callable(vectorized, "vectorized", 1) < 0) return -1;
        self->vectorized = none_to_null(vectorized);
        self->sys.n = n;
        self->sys.params = self;
        self->sys.eval_batch = cb_batch;
        self->initialized = 1;
        return 0;
    }

    if (check_callable(potential, "potential", 1) < 0) return -1;
    if (check_callable(potential_grad, "potential_grad", 1) < 0) return -1;
    if (check_callable(potential_hess, "potential_hess", 0) < 0) return -1;
    if (check_callable(mass_grad, "mass_grad", 0) < 0) return -1;
    if (check_callable(mass_hess, "mass_hess", 0) < 0) return -1;
    if (check_callable(mass_dir, "mass_dir", 0) < 0) return -1;
    if (check_callable(mass_hess_dir, "mass_hess_dir", 0) < 0) return -1;
    if (mass == Py_None) {
        PyErr_SetString(PyExc_TypeError, "mass is required (a callable or a constant (n, n) array)");
        return -1;
    }
    const size_t nn = (size_t)n * (size_t)n;
    int const_mass = !PyCallable_Check(mass);
    if (const_mass) {
        PyArrayObject *ma = (PyArrayObject *)PyArray_FROM_OTF(mass, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
        if (!ma) return -1;
        if (PyArray_NDIM(ma) != 2 || PyArray_DIM(ma, 0) != n || PyArray_DIM(ma, 1) != n) {
            Py_DECREF(ma);
            PyErr_Format(PyExc_ValueError, "a constant mass must have shape (%d, %d)", n, n);
            return -1;
        }
        self->const_mass = malloc(sizeof(double) * nn);
        if (!self->const_mass) { Py_DECREF(ma); PyErr_NoMemory(); return -1; }
        memcpy(self->const_mass, PyArray_DATA(ma), sizeof(double) * nn);
        Py_DECREF(ma);
    }
    self->mass = const_mass ? NULL : none_to_null(mass);
    self->mass_grad = none_to_null(mass_grad);
    self->mass_hess = none_to_null(mass_hess);
    self->mass_dir = none_to_null(mass_dir);
    self->mass_hess_dir = none_to_null(mass_hess_dir);
    self->potential = none_to_null(potential);
    self->potential_grad = none_to_null(potential_grad);
    self->potential_hess = none_to_null(potential_hess);

    sym_system *s = &self->sys;
    s->n = n;
    s->params = self;
    s->mass = cb_mass;
    if (!const_mass && (self->mass_dir || self->mass_grad)) {
        s->mass_dir = cb_mass_dir;
        if (self->mass_hess_dir || self->mass_hess) s->mass_hess_dir = cb_mass_hess_dir;
    } else if (const_mass) {
        s->flags |= SYM_SYS_CONSTANT_MASS;
    } else {
        PyErr_SetString(PyExc_TypeError,
                        "a callable mass needs mass_grad (or mass_dir); the Python System "
                        "class supplies a finite-difference one when it is omitted");
        return -1;
    }
    s->potential = cb_potential;
    s->potential_grad = cb_potential_grad;
    if (self->potential_hess) s->potential_hess = cb_potential_hess;
    self->initialized = 1;
    return 0;
}

static int check_system(SystemObject *self)
{
    if (!self->initialized) {
        PyErr_SetString(PyExc_RuntimeError, "System object is not initialised");
        return -1;
    }
    /* every entry point that evaluates the system comes through here: the
     * combined form's point cache lives for one top-level call only */
    if (self->combined) combined_cache_reset(self);
    return 0;
}

/* Convert a 1-D length-n float vector (lists, ints, strided views ok). */
static PyArrayObject *as_vector(PyObject *o, int n, const char *name)
{
    if (PyArray_Check(o) && PyArray_TYPE((PyArrayObject *)o) == NPY_OBJECT) {
        PyErr_Format(PyExc_TypeError, "%s must be a float array, got an object array", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n) {
        char got[128];
        shape_str(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "%s must have shape (%d,), got %s", name, n, got);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* The Python exception for a failed status; cc (may be NULL) is the call's
 * compiled-callback context. */
static PyObject *raise_status(int st, const cfunc_call *cc)
{
    if (st == SYM_ECALLBACK) {
        if (!PyErr_Occurred() && !raise_cfunc_failure(cc))
            PyErr_SetString(PyExc_RuntimeError, "a system callback returned a nonzero status");
        return NULL;
    }
    if (PyErr_Occurred()) return NULL;
    if (st == SYM_EMASS)
        PyErr_SetString(PyExc_ValueError, "mass matrix is not symmetric positive definite");
    else if (st == SYM_ENOMEM)
        PyErr_NoMemory();
    else
        PyErr_SetString(PyExc_RuntimeError, sym_strerror(st));
    return NULL;
}

/* _eval(q, g=None, need) -> (M, A, H, V, dV, d2V), None where not requested */
static PyObject *System_eval(SystemObject *self, PyObject *args)
{
    PyObject *qo, *go = Py_None;
    unsigned int need;
    if (check_system(self) < 0) return NULL;
    if (!PyArg_ParseTuple(args, "OOI", &qo, &go, &need)) return NULL;
    const int n = self->sys.n;
    PyArrayObject *q = as_vector(qo, n, "q"), *g = NULL;
    if (!q) return NULL;
    if (need & (SYM_NEED_A | SYM_NEED_H)) {
        if (go == Py_None) {
            Py_DECREF(q);
            PyErr_SetString(PyExc_ValueError, "g is required for A and H");
            return NULL;
        }
        g = as_vector(go, n, "g");
        if (!g) { Py_DECREF(q); return NULL; }
    }
    npy_intp d2[2] = {n, n}, d1[1] = {n};
    PyObject *res[6] = {NULL};
    const unsigned bits[6] = {SYM_NEED_M, SYM_NEED_A, SYM_NEED_H, SYM_NEED_V, SYM_NEED_DV, SYM_NEED_D2V};
    double V = 0.0;
    sym_eval_out out = {0};
    double *scratch = NULL;
    PyObject *ret = NULL;
    sym_system sys;
    cfunc_call cc;
    if (call_begin(self, &sys, &cc) < 0) goto done;
    for (int k = 0; k < 6; k++) {
        if (!(need & bits[k]) || k == 3) continue;
        res[k] = PyArray_SimpleNew(k == 4 ? 1 : 2, k == 4 ? d1 : d2, NPY_DOUBLE);
        if (!res[k]) goto done;
    }
    out.M = res[0] ? PyArray_DATA((PyArrayObject *)res[0]) : NULL;
    out.A = res[1] ? PyArray_DATA((PyArrayObject *)res[1]) : NULL;
    out.H = res[2] ? PyArray_DATA((PyArrayObject *)res[2]) : NULL;
    out.V = &V;
    out.dV = res[4] ? PyArray_DATA((PyArrayObject *)res[4]) : NULL;
    out.d2V = res[5] ? PyArray_DATA((PyArrayObject *)res[5]) : NULL;
    scratch = malloc(sizeof(double) * sym_eval_scratch_size(&sys));
    if (!scratch) { PyErr_NoMemory(); goto done; }
    int st = sym_eval(&sys, PyArray_DATA(q), g ? PyArray_DATA(g) : NULL, need & 63u,
                      &out, scratch);
    if (st) { raise_status(st, &cc); goto done; }
    if (need & SYM_NEED_V) {
        res[3] = PyFloat_FromDouble(V);
        if (!res[3]) goto done;
    }
    ret = PyTuple_New(6);
    if (!ret) goto done;
    for (int k = 0; k < 6; k++) {
        PyObject *o = res[k] ? res[k] : Py_None;
        Py_INCREF(o);
        PyTuple_SET_ITEM(ret, k, o);
    }
done:
    call_end(&cc);
    for (int k = 0; k < 6; k++) Py_XDECREF(res[k]);
    free(scratch);
    Py_DECREF(q);
    Py_XDECREF(g);
    return ret;
}

/* H at one state.  A finite state whose energy overflows the double range
 * gives the IEEE result (+inf, or -inf for a potential that overflows
 * downwards) rather than an error.  sym_energy reports any non-finite H as
 * SYM_ENONFINITE; V is then evaluated on its own to tell which part
 * overflowed.  With M(q) factorised (its Cholesky factor is then finite) and
 * p finite, a non-finite kinetic energy 1/2 |L^-1 p|^2 >= 0 can only come
 * from overflow (inf, or inf - inf = nan inside the substitution): +inf. */
static int energy_row(const sym_system *sys, const double *q, const double *p, double *H,
                      double *scratch)
{
    const int st = sym_energy(sys, q, p, H, scratch);
    if (st != SYM_ENONFINITE) return st;
    for (int k = 0; k < sys->n; k++)
        if (!isfinite(q[k]) || !isfinite(p[k])) return st;
    double V = 0.0;
    sym_eval_out out = {0};
    out.V = &V;
    const int sv = sym_eval(sys, q, NULL, SYM_NEED_V, &out, scratch);
    if (sv) return sv;
    if (isnan(V)) return st;
    if (isinf(V) && V < 0.0) {
        /* -inf + a finite kinetic energy; -inf + inf is undefined */
        if (!(*H == -INFINITY)) return st;
        return SYM_OK;
    }
    *H = INFINITY;   /* V = +inf, or V finite and the kinetic energy overflowed */
    return SYM_OK;
}

/* energy(q, p): H = 1/2 p^T M^-1 p + V for one state or row-wise. */
static PyObject *System_energy(SystemObject *self, PyObject *args)
{
    PyObject *qo, *po;
    if (check_system(self) < 0) return NULL;
    if (!PyArg_ParseTuple(args, "OO", &qo, &po)) return NULL;
    const int n = self->sys.n;
    PyArrayObject *q = (PyArrayObject *)PyArray_FROM_OTF(qo, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!q) return NULL;
    PyArrayObject *p = (PyArrayObject *)PyArray_FROM_OTF(po, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!p) { Py_DECREF(q); return NULL; }
    PyObject *ret = NULL;
    double *scratch = NULL;
    sym_system sys;
    cfunc_call cc;
    if (call_begin(self, &sys, &cc) < 0) goto done;
    const int nd = PyArray_NDIM(q);
    int ok = (nd == 1 || nd == 2) && PyArray_NDIM(p) == nd && PyArray_DIM(q, nd - 1) == n;
    for (int i = 0; ok && i < nd; i++) ok = PyArray_DIM(q, i) == PyArray_DIM(p, i);
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "energy(q, p) needs q and p of equal shape (%d,) or (N, %d)", n, n);
        goto done;
    }
    const npy_intp rows = nd == 1 ? 1 : PyArray_DIM(q, 0);
    PyObject *H = nd == 1 ? NULL : PyArray_SimpleNew(1, &rows, NPY_DOUBLE);
    if (nd == 2 && !H) goto done;
    double one = 0.0, *Hd = H ? PyArray_DATA((PyArrayObject *)H) : &one;
    scratch = malloc(sizeof(double) * sym_energy_scratch_size(&sys));
    if (!scratch) { Py_XDECREF(H); PyErr_NoMemory(); goto done; }
    const double *qd = PyArray_DATA(q), *pd = PyArray_DATA(p);
    int st = SYM_OK;
    npy_intp bad = -1;
    if (self->nogil) {
        Py_BEGIN_ALLOW_THREADS
        for (npy_intp r = 0; r < rows && !st; r++) {
            st = energy_row(&sys, qd + r * n, pd + r * n, Hd + r, scratch);
            if (st) bad = r;
        }
        Py_END_ALLOW_THREADS
    } else {
        for (npy_intp r = 0; r < rows && !st; r++) {
            st = energy_row(&sys, qd + r * n, pd + r * n, Hd + r, scratch);
            if (st) bad = r;
        }
    }
    if (st) {
        Py_XDECREF(H);
        if (st == SYM_EMASS && !PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "energy: the mass matrix is not positive definite at row %zd", (Py_ssize_t)bad);
        else
            raise_status(st, &cc);
        goto done;
    }
    ret = H ? H : PyFloat_FromDouble(one);
done:
    call_end(&cc);
    free(scratch);
    Py_DECREF(q);
    Py_DECREF(p);
    return ret;
}

static PyObject *System_get_n(SystemObject *self, void *closure)
{
    (void)closure;
    if (!self->initialized) {
        PyErr_SetString(PyExc_RuntimeError, "System object is not initialised");
        return NULL;
    }
    return PyLong_FromLong(self->sys.n);
}

static PyObject *System_get_builtin(SystemObject *self, void *closure)
{
    (void)closure;
    if (self->builtin_name) { Py_INCREF(self->builtin_name); return self->builtin_name; }
    Py_RETURN_NONE;
}

static PyObject *System_get_nogil(SystemObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(self->nogil);
}

static PyObject *System_get_constant_mass(SystemObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong((self->sys.flags & SYM_SYS_CONSTANT_MASS) != 0);
}

static PyMethodDef System_methods[] = {
    {"_eval", (PyCFunction)System_eval, METH_VARARGS,
     "_eval(q, g, need) -> (M, A, H, V, gradV, hessV); need is a bit mask "
     "M=1, A=2, H=4, V=8, gradV=16, hessV=32 (None where not requested)."},
    {"energy", (PyCFunction)System_energy, METH_VARARGS,
     "energy(q, p) -> H = 1/2 p^T M(q)^-1 p + V(q); q and p of shape (n,) give a "
     "float, of shape (N, n) an array of N energies.  A finite state whose energy "
     "overflows the double range gives inf."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef System_getset[] = {
    {"n", (getter)System_get_n, NULL, "number of degrees of freedom", NULL},
    {"builtin", (getter)System_get_builtin, NULL, "name of the built-in C system, or None", NULL},
    {"constant_mass", (getter)System_get_constant_mass, NULL, "True if M does not depend on q", NULL},
    {"nogil", (getter)System_get_nogil, NULL,
     "True if integration runs without Python in the loop (built-in or compiled "
     "callbacks) and releases the GIL", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot System_slots[] = {
    {Py_tp_doc, "C core of a mechanical system (use symplectic.System)."},
    {Py_tp_init, System_init},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, System_dealloc},
    {Py_tp_traverse, System_traverse},
    {Py_tp_clear, System_clear},
    {Py_tp_methods, System_methods},
    {Py_tp_getset, System_getset},
    {0, NULL}};

static PyType_Spec System_spec = {
    "symplectic._core.System", sizeof(SystemObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, System_slots};

/* ------------------------------------------------------------------ */
/* step / integrate                                                     */
/* ------------------------------------------------------------------ */
static SystemObject *get_system(PyObject *module, PyObject *o)
{
    module_state *ms = PyModule_GetState(module);
    if (!PyObject_TypeCheck(o, ms->System_type)) {
        PyErr_Format(PyExc_TypeError, "system must be a symplectic.System, got %S",
                     (PyObject *)Py_TYPE(o));
        return NULL;
    }
    SystemObject *S = (SystemObject *)o;
    if (check_system(S) < 0) return NULL;
    return S;
}

static const sym_method *get_method(const char *name)
{
    const sym_method *m = sym_method_find(name);
    if (!m) {
        PyObject *names = PyList_New(0);
        for (int i = 0; names && i < sym_method_count(); i++) {
            PyObject *s = PyUnicode_FromString(sym_method_at(i)->name);
            if (!s || PyList_Append(names, s) < 0) { Py_XDECREF(s); Py_CLEAR(names); break; }
            Py_DECREF(s);
        }
        if (names) {
            PyErr_Format(PyExc_ValueError, "unknown method '%s'; available: %S", name, names);
            Py_DECREF(names);
        }
    }
    return m;
}

typedef struct {
    PyThreadState *ts;   /* non-NULL while the GIL is released */
    PyObject *cancel;    /* object with is_set(), or NULL       */
} progress_ctx;

/* Signals (Ctrl-C, in the main thread) and an optional cancellation event
 * (for worker threads, which never see signals). */
static int progress_check(progress_ctx *ctx)
{
    if (PyErr_CheckSignals()) return 1;
    if (ctx->cancel) {
        PyObject *r = PyObject_CallMethod(ctx->cancel, "is_set", NULL);
        if (!r) return 1;
        const int set = PyObject_IsTrue(r);
        Py_DECREF(r);
        if (set < 0) return 1;
        if (set) {
            PyErr_SetString(PyExc_KeyboardInterrupt, "integration cancelled");
            return 1;
        }
    }
    return 0;
}

static int progress_cb(void *vctx, long done)
{
    progress_ctx *ctx = vctx;
    (void)done;
    int r;
    if (ctx->ts) {
        PyEval_RestoreThread(ctx->ts);
        r = progress_check(ctx);
        ctx->ts = PyEval_SaveThread();
    } else {
        r = progress_check(ctx);
    }
    return r;
}

/* Attach "where it happened" to the pending exception as a PEP 678 note,
 * leaving its type and message unchanged. */
static void add_note_where(const char *method, long step, double t, long n_steps, long done)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value) {
        PyObject *note = PyUnicode_FromFormat(
            "raised during symplectic.integrate (%s) at step %ld of %ld; %ld steps done",
            method, step, n_steps, done);
        PyObject *tnote = NULL;
        if (note) {
            char buf[64];
            snprintf(buf, sizeof buf, " (t = %.17g)", t);
            tnote = PyUnicode_FromFormat("%U%s", note, buf);
            Py_DECREF(note);
        }
        if (tnote) {
            PyObject *r = PyObject_CallMethod(value, "add_note", "O", tnote);
            if (!r) {
                /* Python 3.10 has no add_note: keep a __notes__ list. */
                PyErr_Clear();
                PyObject *lst = PyList_New(1);
                if (lst) {
                    Py_INCREF(tnote);
                    PyList_SET_ITEM(lst, 0, tnote);
                    if (PyObject_SetAttrString(value, "__notes__", lst) < 0) PyErr_Clear();
                    Py_DECREF(lst);
                }
            }
            Py_XDECREF(r);
            Py_DECREF(tnote);
        } else {
            PyErr_Clear();
        }
    }
    PyErr_Restore(type, value, tb);
}

/* The error of a failed sym_work_new / sym_integrate: a MemoryError that
 * says how large the Newton system is when the workspace could not be had. */
static PyObject *raise_work_status(int st, const SystemObject *S, const sym_method *m)
{
    if (st != SYM_ENOMEM || PyErr_Occurred()) return raise_status(st, NULL);
    const double nu = (double)sym_method_unknowns(m, S->sys.n);
    const double gib = 8.0 * sym_method_work_doubles(m, S->sys.n) / 1073741824.0;
    char buf[256];
    if (nu > SYM_MAX_DOF)
        snprintf(buf, sizeof buf,
                 "method '%s' with n = %d needs a %.0f x %.0f Newton matrix (about %.1f GiB); "
                 "the largest supported Newton system is %d x %d",
                 m->name, S->sys.n, nu, nu, gib, SYM_MAX_DOF, SYM_MAX_DOF);
    else
        snprintf(buf, sizeof buf,
                 "cannot allocate the workspace of method '%s' for n = %d (about %.2g GiB)",
                 m->name, S->sys.n, gib);
    PyErr_SetString(PyExc_MemoryError, buf);
    return NULL;
}

static PyObject *mod_step(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q", "p", "h", "method", "rtol", "max_iter", NULL};
    PyObject *so, *qo, *po;
    double h, rtol = 0.0;
    int max_iter = 0;
    const char *mname = "simpson";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|sdi", kwlist, &so, &qo, &po, &h, &mname,
                                     &rtol, &max_iter))
        return NULL;
    SystemObject *S = get_system(module, so);
    if (!S) return NULL;
    const sym_method *m = get_method(mname);
    if (!m) return NULL;
    if (!isfinite(h) || h == 0.0) {
        PyErr_Format(PyExc_ValueError, "h must be finite and nonzero, got %R", PyTuple_GET_ITEM(args, 3));
        return NULL;
    }
    const int n = S->sys.n;
    PyArrayObject *q = as_vector(qo, n, "q");
    if (!q) return NULL;
    PyArrayObject *p = as_vector(po, n, "p");
    if (!p) { Py_DECREF(q); return NULL; }
    npy_intp d1 = n, dm[2] = {m->n_mid, n};
    PyObject *q1 = PyArray_SimpleNew(1, &d1, NPY_DOUBLE);
    PyObject *p1 = PyArray_SimpleNew(1, &d1, NPY_DOUBLE);
    PyObject *qm = m->n_mid ? PyArray_SimpleNew(2, dm, NPY_DOUBLE) : (Py_INCREF(Py_None), Py_None);
    PyObject *ret = NULL;
    sym_work *w = NULL;
    sym_system sys;
    cfunc_call cc;
    if (call_begin(S, &sys, &cc) < 0) goto done;
    if (!q1 || !p1 || !qm) goto done;
    sym_options opt;
    sym_options_default(&opt);
    opt.rtol = rtol;
    opt.max_iter = max_iter;
    int st = SYM_OK;
    w = sym_work_new(&sys, m, &opt, &st);
    if (!w) { raise_work_status(st, S, m); goto done; }
    sym_step_info info = {0};
    double *qmd = m->n_mid ? PyArray_DATA((PyArrayObject *)qm) : NULL;
    if (S->nogil) {
        Py_BEGIN_ALLOW_THREADS
        st = sym_step(w, PyArray_DATA(q), PyArray_DATA(p), h, PyArray_DATA((PyArrayObject *)q1),
                      PyArray_DATA((PyArrayObject *)p1), qmd, &info);
        Py_END_ALLOW_THREADS
    } else {
        st = sym_step(w, PyArray_DATA(q), PyArray_DATA(p), h, PyArray_DATA((PyArrayObject *)q1),
                      PyArray_DATA((PyArrayObject *)p1), qmd, &info);
    }
    if (st == SYM_ECALLBACK || (st && PyErr_Occurred())) { raise_status(st, &cc); goto done; }
    ret = Py_BuildValue("(OOOiiddds)", q1, p1, qm, st, info.iterations, info.residual,
                        info.residual_rel, info.update, st ? sym_strerror(st) : "");
done:
    sym_work_free(w);
    call_end(&cc);
    Py_XDECREF(q1);
    Py_XDECREF(p1);
    Py_XDECREF(qm);
    Py_DECREF(q);
    Py_DECREF(p);
    return ret;
}

/* Keep the work done before an exception (a callback's, or KeyboardInterrupt):
 * the arrays and the number of completed steps go on the pending exception
 * as `_symplectic_partial`; symplectic.integrate turns them into
 * `exc.trajectory`. */
static void attach_partial(PyObject *t, PyObject *q, PyObject *p, PyObject *qm, PyObject *it,
                           long done)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (value) {
        PyObject *part = Py_BuildValue("(OOOOOl)", t, q, p, qm, it, done);
        if (!part || PyObject_SetAttrString(value, "_symplectic_partial", part) < 0)
            PyErr_Clear();
        Py_XDECREF(part);
    }
    PyErr_Restore(type, value, tb);
}

static PyObject *mod_integrate(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q0", "p0", "h", "n_steps", "method", "t0",
                             "rtol", "max_iter", "predictor", "chord", "cancel", NULL};
    PyObject *so, *qo, *po;
    double h, t0 = 0.0, rtol = 0.0;
    long n_steps;
    int max_iter = 0, predictor = 1, chord = 0;
    PyObject *cancel = Py_None;
    const char *mname = "simpson";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOdl|sddippO", kwlist, &so, &qo, &po, &h,
                                     &n_steps, &mname, &t0, &rtol, &max_iter, &predictor,
                                     &chord, &cancel))
        return NULL;
    SystemObject *S = get_system(module, so);
    if (!S) return NULL;
    const sym_method *m = get_method(mname);
    if (!m) return NULL;
    if (!isfinite(h) || h == 0.0) {
        PyErr_Format(PyExc_ValueError, "h must be finite and nonzero, got %R", PyTuple_GET_ITEM(args, 3));
        return NULL;
    }
    if (!isfinite(t0)) {
        PyErr_SetString(PyExc_ValueError, "t0 must be finite");
        return NULL;
    }
    if (n_steps < 0) {
        PyErr_Format(PyExc_ValueError, "n_steps must be >= 0, got %ld", n_steps);
        return NULL;
    }
    const int n = S->sys.n;
    const double rows = (double)n_steps + 1.0;
    if (rows * (double)n * (2.0 + (double)m->n_mid) * 8.0 > (double)NPY_MAX_INTP / 2) {
        PyErr_Format(PyExc_MemoryError,
                     "n_steps = %ld with n = %d needs more memory than can be addressed", n_steps, n);
        return NULL;
    }
    PyArrayObject *q0 = as_vector(qo, n, "q0");
    if (!q0) return NULL;
    PyArrayObject *p0 = as_vector(po, n, "p0");
    if (!p0) { Py_DECREF(q0); return NULL; }
    npy_intp dt = n_steps + 1, dq[2] = {n_steps + 1, n}, dm[3] = {n_steps, m->n_mid, n},
             di = n_steps;
    PyObject *t = PyArray_SimpleNew(1, &dt, NPY_DOUBLE);
    PyObject *q = PyArray_SimpleNew(2, dq, NPY_DOUBLE);
    PyObject *p = PyArray_SimpleNew(2, dq, NPY_DOUBLE);
    PyObject *qm = m->n_mid ? PyArray_ZEROS(3, dm, NPY_DOUBLE, 0) : (Py_INCREF(Py_None), Py_None);
    PyObject *it = PyArray_ZEROS(1, &di, NPY_INT, 0);
    PyObject *ret = NULL, *fail_obj = NULL;
    sym_system sys;
    cfunc_call cc;
    if (call_begin(S, &sys, &cc) < 0) goto done;
    if (!t || !q || !p || !qm || !it) goto done;
    sym_options opt;
    sym_options_default(&opt);
    opt.rtol = rtol;
    opt.max_iter = max_iter;
    opt.predictor = predictor;
    opt.newton = chord ? SYM_NEWTON_CHORD : SYM_NEWTON_FULL;
    sym_failure fail;
    long done_steps = 0;
    progress_ctx ctx = {NULL, cancel == Py_None ? NULL : cancel};
    /* check for Ctrl-C every ~0.1 ms..10 ms of work: the step cost grows with
     * the square of the Newton size (s-1) n (cube for the LU) */
    const long nu = sym_method_unknowns(m, n) > 0 ? (long)sym_method_unknowns(m, n) : (long)n;
    long every = 20000 / (nu * nu);
    if (every > 512) every = 512;
    if (every < 1) every = 1;
    if (!S->nogil && every > 64) every = 64;
    double *qmd = m->n_mid ? PyArray_DATA((PyArrayObject *)qm) : NULL;
    int st;
#define CALL_INTEGRATE                                                                     \
    sym_integrate(&sys, m, &opt, PyArray_DATA(q0), PyArray_DATA(p0), t0, h, n_steps,  \
                  PyArray_DATA((PyArrayObject *)t), PyArray_DATA((PyArrayObject *)q),    \
                  PyArray_DATA((PyArrayObject *)p), qmd, PyArray_DATA((PyArrayObject *)it), \
                  progress_cb, &ctx, every, &fail, &done_steps)
    if (S->nogil) {
        ctx.ts = PyEval_SaveThread();
        st = CALL_INTEGRATE;
        PyEval_RestoreThread(ctx.ts);
        ctx.ts = NULL;
    } else {
        st = CALL_INTEGRATE;
    }
#undef CALL_INTEGRATE
    if (st == SYM_ECALLBACK || st == SYM_EINTERRUPT || PyErr_Occurred()) {
        if (!PyErr_Occurred()) raise_status(st, &cc);
        add_note_where(m->name, st == SYM_EINTERRUPT ? done_steps : fail.step,
                       t0 + (double)(st == SYM_EINTERRUPT ? done_steps : fail.step) * h,
                       n_steps, done_steps);
        attach_partial(t, q, p, qm, it, done_steps);
        goto done;
    }
    if (st == SYM_ENOMEM || st == SYM_EINVAL || st == SYM_EMETHOD) {
        raise_work_status(st, S, m);
        goto done;
    }
    if (st) {
        fail_obj = Py_BuildValue("(isldidd)", st, sym_strerror(st), fail.step, fail.t,
                                 fail.iterations, fail.residual, fail.residual_rel);
        if (!fail_obj) goto done;
    } else {
        fail_obj = Py_None;
        Py_INCREF(fail_obj);
    }
    ret = Py_BuildValue("(OOOOOlO)", t, q, p, qm, it, done_steps, fail_obj);
done:
    call_end(&cc);
    Py_XDECREF(fail_obj);
    Py_XDECREF(t);
    Py_XDECREF(q);
    Py_XDECREF(p);
    Py_XDECREF(qm);
    Py_XDECREF(it);
    Py_DECREF(q0);
    Py_DECREF(p0);
    return ret;
}

/* newton_system(system, q, p, h, X, method) -> (R, J): diagnostics for tests */
static PyObject *mod_newton_system(PyObject *module, PyObject *args)
{
    PyObject *so, *qo, *po, *xo;
    double h;
    const char *mname;
    if (!PyArg_ParseTuple(args, "OOOdOs", &so, &qo, &po, &h, &xo, &mname)) return NULL;
    SystemObject *S = get_system(module, so);
    if (!S) return NULL;
    const sym_method *m = get_method(mname);
    if (!m) return NULL;
    if (sym_method_unknowns(m, S->sys.n) == 0) {
        PyErr_Format(PyExc_ValueError, "method '%s' has no Newton system", mname);
        return NULL;
    }
    const int n = S->sys.n;
    int st = SYM_OK;
    sym_system sys;
    cfunc_call cc;
    if (call_begin(S, &sys, &cc) < 0) return NULL;
    sym_work *w = sym_work_new(&sys, m, NULL, &st);
    if (!w) { call_end(&cc); return raise_work_status(st, S, m); }
    const int nu = sym_newton_size(w);
    PyArrayObject *q = NULL, *p = NULL, *x = NULL;
    PyObject *R = NULL, *J = NULL, *ret = NULL;
    q = as_vector(qo, n, "q");
    if (!q) goto done;
    p = as_vector(po, n, "p");
    if (!p) goto done;
    x = as_vector(xo, nu, "X");
    if (!x) goto done;
    npy_intp d1 = nu, d2[2] = {nu, nu};
    R = PyArray_SimpleNew(1, &d1, NPY_DOUBLE);
    J = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
    if (!R || !J) goto done;
    st = sym_newton_system(w, PyArray_DATA(q), PyArray_DATA(p), h, PyArray_DATA(x),
                           PyArray_DATA((PyArrayObject *)R), PyArray_DATA((PyArrayObject *)J));
    if (st) { raise_status(st, &cc); goto done; }
    ret = PyTuple_Pack(2, R, J);
done:
    sym_work_free(w);
    call_end(&cc);
    Py_XDECREF(q);
    Py_XDECREF(p);
    Py_XDECREF(x);
    Py_XDECREF(R);
    Py_XDECREF(J);
    return ret;
}

/* step_tangent(system, q, p, h, method) -> (q1, p1, D) */
static PyObject *mod_step_tangent(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q", "p", "h", "method", "rtol", "max_iter", NULL};
    PyObject *so, *qo, *po;
    double h, rtol = 0.0;
    int max_iter = 0;
    const char *mname = "simpson";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOd|sdi", kwlist, &so, &qo, &po, &h, &mname,
                                     &rtol, &max_iter))
        return NULL;
    SystemObject *S = get_system(module, so);
    if (!S) return NULL;
    const sym_method *m = get_method(mname);
    if (!m) return NULL;
    if (!isfinite(h) || h == 0.0) {
        PyErr_SetString(PyExc_ValueError, "h must be finite and nonzero");
        return NULL;
    }
    const int n = S->sys.n;
    PyArrayObject *q = as_vector(qo, n, "q"), *p = NULL;
    if (!q) return NULL;
    p = as_vector(po, n, "p");
    if (!p) { Py_DECREF(q); return NULL; }
    npy_intp d1 = n, d2[2] = {2 * n, 2 * n};
    PyObject *q1 = PyArray_SimpleNew(1, &d1, NPY_DOUBLE);
    PyObject *p1 = PyArray_SimpleNew(1, &d1, NPY_DOUBLE);
    PyObject *D = PyArray_SimpleNew(2, d2, NPY_DOUBLE);
    PyObject *ret = NULL;
    sym_work *w = NULL;
    sym_system sys;
    cfunc_call cc;
    if (call_begin(S, &sys, &cc) < 0) goto done;
    if (!q1 || !p1 || !D) goto done;
    sym_options opt;
    sym_options_default(&opt);
    opt.rtol = rtol;
    opt.max_iter = max_iter;
    int st = SYM_OK;
    w = sym_work_new(&sys, m, &opt, &st);
    if (!w) { raise_work_status(st, S, m); goto done; }
    sym_step_info info = {0};
    st = sym_step_tangent(w, PyArray_DATA(q), PyArray_DATA(p), h, PyArray_DATA((PyArrayObject *)q1),
                          PyArray_DATA((PyArrayObject *)p1), PyArray_DATA((PyArrayObject *)D), &info);
    if (st) {
        if (st == SYM_ECALLBACK) {
            raise_status(st, &cc);
        } else if (!PyErr_Occurred()) {
            char res[32];
            snprintf(res, sizeof res, "%.3g", info.residual);   /* no %g in PyErr_Format */
            PyErr_Format(PyExc_RuntimeError, "step_tangent failed: %s (residual %s)",
                         sym_strerror(st), res);
        }
        goto done;
    }
    ret = PyTuple_Pack(3, q1, p1, D);
done:
    sym_work_free(w);
    call_end(&cc);
    Py_XDECREF(q1);
    Py_XDECREF(p1);
    Py_XDECREF(D);
    Py_DECREF(q);
    Py_DECREF(p);
    return ret;
}

static PyObject *mod_methods(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    PyObject *lst = PyList_New(0);
    for (int i = 0; lst && i < sym_method_count(); i++) {
        const sym_method *m = sym_method_at(i);
        double c[SYM_MAX_NODES];
        const int s = sym_method_nodes(m, c);
        PyObject *nodes = PyTuple_New(s);
        for (int a = 0; nodes && a < s; a++) {
            PyObject *v = PyFloat_FromDouble(c[a]);
            if (!v) { Py_CLEAR(nodes); break; }
            PyTuple_SET_ITEM(nodes, a, v);
        }
        if (!nodes) { Py_CLEAR(lst); break; }
        PyObject *row = Py_BuildValue("(ssiiiN)", m->name, m->doc, m->order, m->symplectic,
                                      m->n_mid, nodes);
        if (!row || PyList_Append(lst, row) < 0) { Py_XDECREF(row); Py_CLEAR(lst); break; }
        Py_DECREF(row);
    }
    return lst;
}

static PyObject *mod_builtins(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    PyObject *lst = PyList_New(0);
    for (int i = 0; lst && i < sym_builtin_count(); i++) {
        const sym_builtin *b = sym_builtin_at(i);
        PyObject *row = Py_BuildValue("(sss)", b->name, b->doc, b->params_doc);
        if (!row || PyList_Append(lst, row) < 0) { Py_XDECREF(row); Py_CLEAR(lst); break; }
        Py_DECREF(row);
    }
    return lst;
}

static PyMethodDef module_methods[] = {
    {"step", (PyCFunction)(void (*)(void))mod_step, METH_VARARGS | METH_KEYWORDS,
     "step(system, q, p, h, method='simpson', rtol=0, max_iter=0) -> "
     "(q1, p1, q_mid, status, iterations, residual, residual_rel, update, reason)"},
    {"integrate", (PyCFunction)(void (*)(void))mod_integrate, METH_VARARGS | METH_KEYWORDS,
     "integrate(system, q0, p0, h, n_steps, method='simpson', t0=0, rtol=0, max_iter=0, "
     "predictor=True) -> (t, q, p, q_mid, iterations, n_done, failure)"},
    {"newton_system", mod_newton_system, METH_VARARGS,
     "newton_system(system, q, p, h, X, method) -> (R, J): residual and Newton matrix of "
     "a variational scheme at increments X ((s-1) n) -- a diagnostic for tests."},
    {"step_tangent", (PyCFunction)(void (*)(void))mod_step_tangent, METH_VARARGS | METH_KEYWORDS,
     "step_tangent(system, q, p, h, method='simpson', rtol=0, max_iter=0) -> (q1, p1, D): one "
     "step and its exact tangent map D = d(q1, p1)/d(q, p), (2n, 2n), (q, p) ordering."},
    {"methods", mod_methods, METH_NOARGS,
     "[(name, doc, order, symplectic, n_mid, nodes)]: nodes are the interpolation nodes "
     "c_a in [0, 1] of one step ((0, 1) for rk4)"},
    {"builtins", mod_builtins, METH_NOARGS, "[(name, doc, params_doc)]"},
    {NULL, NULL, 0, NULL}};

static int module_exec(PyObject *module)
{
    import_array1(-1);
    module_state *ms = PyModule_GetState(module);
    ms->System_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &System_spec, NULL);
    if (!ms->System_type) return -1;
    if (PyModule_AddObjectRef(module, "System", (PyObject *)ms->System_type) < 0) return -1;
    if (PyModule_AddIntConstant(module, "NEED_M", SYM_NEED_M) < 0 ||
        PyModule_AddIntConstant(module, "NEED_A", SYM_NEED_A) < 0 ||
        PyModule_AddIntConstant(module, "NEED_H", SYM_NEED_H) < 0 ||
        PyModule_AddIntConstant(module, "NEED_V", SYM_NEED_V) < 0 ||
        PyModule_AddIntConstant(module, "NEED_DV", SYM_NEED_DV) < 0 ||
        PyModule_AddIntConstant(module, "NEED_D2V", SYM_NEED_D2V) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *ms = PyModule_GetState(module);
    Py_VISIT(ms->System_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *ms = PyModule_GetState(module);
    Py_CLEAR(ms->System_type);
    return 0;
}

static void module_free(void *module)
{
    module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL}};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "symplectic._core",
    "C core of symplectic: variational integrators over callbacks.",
    sizeof(module_state), module_methods, module_slots, module_traverse, module_clear,
    module_free};

PyMODINIT_FUNC PyInit__core(void)
{
    return PyModuleDef_Init(&moduledef);
}
