/*
 * py_util.c -- what the rest of the binding shares: arrays in and out, the
 * contractions of full mass-matrix derivatives with a direction g (the core
 * asks for the contracted forms A and H, see symplectic.h), and the state
 * block of a callback form.
 */
#include "py_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

PyObject *py_vec_copy(const double *x, int n)
{
    npy_intp dim = n;
    PyObject *a = PyArray_SimpleNew(1, &dim, NPY_DOUBLE);
    if (a) memcpy(PyArray_DATA((PyArrayObject *)a), x, sizeof(double) * (size_t)n);
    return a;
}

/* "(2, 3)", "(2,)", "()" */
void py_shape_str(char *buf, size_t len, int nd, const npy_intp *dims)
{
    size_t off = 0;
    buf[0] = '\0';
    off += (size_t)snprintf(buf, len, "(");
    for (int i = 0; i < nd && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%ld", i ? ", " : "", (long)dims[i]);
    if (off < len) snprintf(buf + off, len - off, nd == 1 ? ",)" : ")");
}

/* Index of the first non-finite entry, or -1. */
npy_intp py_first_nonfinite(const double *x, npy_intp size)
{
    for (npy_intp i = 0; i < size; i++)
        if (!isfinite(x[i])) return i;
    return -1;
}

/* The value a Python callable returned, "potential(q) returned ...".  Format
 * arguments: none, complex_ (name); dtype (name, dtype); scalar (name,
 * value); convert (name, type); shape (name, got, expected, suffix);
 * nonfinite (name, q). */
const py_msgs py_msgs_returned = {
    "%s returned None (a missing return statement?); expected real numbers (float64)",
    "%s returned an array of dtype %S; expected real numbers (float64)",
    "%s returned %R; expected real numbers (float64)",
    "%s returned a complex number; expected real numbers",
    "%s returned an object of type %S that cannot be converted to a float64 array",
    "%s returned an array of shape %s, expected %s%s",
    "%s returned a non-finite value (nan or inf) at q = %R"};

/* Python values that are not real numbers, with the message saying so. */
static int not_real(PyObject *o, const py_msgs *msg, const char *name)
{
    if (o == Py_None) {
        PyErr_Format(PyExc_TypeError, msg->none, name);
    } else if (PyArray_Check(o) && !strchr("biuf", PyArray_DESCR((PyArrayObject *)o)->kind)) {
        /* object, string, complex, datetime, ... arrays: not real numbers */
        PyErr_Format(PyExc_TypeError, msg->dtype, name,
                     (PyObject *)PyArray_DESCR((PyArrayObject *)o));
    } else if (PyArray_IsScalar(o, Generic) && !PyArray_IsScalar(o, Number)) {
        PyErr_Format(PyExc_TypeError, msg->scalar, name, o);
    } else if (PyArray_IsScalar(o, ComplexFloating) || PyComplex_Check(o)) {
        PyErr_Format(PyExc_TypeError, msg->complex_, name);
    } else {
        return 0;
    }
    return 1;
}

/* o as a C-contiguous float64 array of exactly nd dimensions dims[] (nd = 0:
 * a scalar), all finite; NULL with the exception msg describes.  q (n
 * doubles, may be NULL) is the point the value belongs to. */
PyArrayObject *py_real_array(PyObject *o, const py_msgs *msg, const char *name, int nd,
                             const npy_intp *dims, const double *q, int n)
{
    if (not_real(o, msg, name)) return NULL;
    PyArrayObject *arr = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!arr) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, msg->convert, name, (PyObject *)Py_TYPE(o));
        return NULL;
    }
    int ok = PyArray_NDIM(arr) == nd;
    for (int i = 0; ok && i < nd; i++) ok = PyArray_DIM(arr, i) == dims[i];
    if (!ok) {
        char got[128], want[128];
        py_shape_str(got, sizeof got, PyArray_NDIM(arr), PyArray_DIMS(arr));
        py_shape_str(want, sizeof want, nd, dims);
        PyErr_Format(PyExc_ValueError, msg->shape, name, got, nd ? want : "a scalar",
                     nd ? "" : " (shape ())");
        Py_DECREF(arr);
        return NULL;
    }
    if (py_first_nonfinite(PyArray_DATA(arr), PyArray_SIZE(arr)) >= 0) {
        PyObject *qr = q ? py_vec_copy(q, n) : NULL;
        PyErr_Format(PyExc_ValueError, msg->nonfinite, name, qr ? qr : Py_None);
        Py_XDECREF(qr);
        Py_DECREF(arr);
        return NULL;
    }
    return arr;
}

/* Call fn(q) or fn(q, g) on fresh copies; the result as a float64 array of
 * nd dimensions of length n each (nd = 0: a scalar), finite. */
PyArrayObject *py_call_array(PyObject *fn, const char *name, int n, const double *q,
                             const double *g, int nd)
{
    PyObject *qa = py_vec_copy(q, n), *ga = NULL, *res;
    if (!qa) return NULL;
    if (g) {
        ga = py_vec_copy(g, n);
        if (!ga) { Py_DECREF(qa); return NULL; }
        res = PyObject_CallFunctionObjArgs(fn, qa, ga, NULL);
    } else {
        res = PyObject_CallFunctionObjArgs(fn, qa, NULL);
    }
    Py_DECREF(qa);
    Py_XDECREF(ga);
    if (!res) return NULL;
    const npy_intp dims[4] = {n, n, n, n};
    PyArrayObject *arr = py_real_array(res, &py_msgs_returned, name, nd, dims, q, n);
    Py_DECREF(res);
    return arr;
}

/* An argument as a 1-D length-n float vector (lists, ints, strided views ok). */
PyArrayObject *py_as_vector(PyObject *o, int n, const char *name)
{
    if (PyArray_Check(o) && PyArray_TYPE((PyArrayObject *)o) == NPY_OBJECT) {
        PyErr_Format(PyExc_TypeError, "%s must be a float array, got an object array", name);
        return NULL;
    }
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(o, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n) {
        char got[128];
        py_shape_str(got, sizeof got, PyArray_NDIM(a), PyArray_DIMS(a));
        PyErr_Format(PyExc_ValueError, "%s must have shape (%d,), got %s", name, n, got);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

/* ------------------------------------------------------------------ */
/* Contractions                                                        */
/* ------------------------------------------------------------------ */
/* A(q, g) = d(M(q) g)/dq from the full first derivative T[c][i][j] =
 * dM_ij/dq_c (n x n x n):  A[i][c] = sum_j T[c][i][j] g_j. */
void py_contract_dM(int n, const double *T, const double *g, double *A)
{
    for (int i = 0; i < n; i++)
        for (int c = 0; c < n; c++) {
            const double *row = T + ((size_t)c * n + i) * n;
            double s = 0.0;
            for (int j = 0; j < n; j++) s += row[j] * g[j];
            A[i * n + c] = s;
        }
}

/* H(q, g) = d^2(1/2 g^T M(q) g)/dq^2 from the full second derivative
 * T2[k][l][i][j] = d^2 M_ij/dq_k dq_l (n^4):
 * H[k][l] = 1/2 sum_ij T2[k][l][i][j] g_i g_j. */
void py_contract_d2M(int n, const double *T2, const double *g, double *H)
{
    const size_t nn = (size_t)n * (size_t)n;
    for (int k = 0; k < n; k++)
        for (int l = 0; l < n; l++) {
            const double *blk = T2 + ((size_t)k * n + l) * nn;
            double s = 0.0;
            for (int i = 0; i < n; i++) {
                double si = 0.0;
                for (int j = 0; j < n; j++) si += blk[(size_t)i * n + j] * g[j];
                s += g[i] * si;
            }
            H[k * n + l] = 0.5 * s;
        }
}

/* Fill what `need` asks for from the full quantities at one point, indexed
 * by need bit (full[b] for bit 1 << b): M (n x n), dM (n^3), d2M (n^4), V
 * (1), grad V (n), hess V (n x n); A and H are contracted with g. */
void py_fill_from_full(int n, unsigned need, const double *g, const double *const full[6],
                       const sym_eval_out *out)
{
    const size_t nn = (size_t)n * (size_t)n;
    if (need & SYM_NEED_M) memcpy(out->M, full[0], sizeof(double) * nn);
    if (need & SYM_NEED_A) py_contract_dM(n, full[1], g, out->A);
    if (need & SYM_NEED_H) py_contract_d2M(n, full[2], g, out->H);
    if (need & SYM_NEED_V) out->V[0] = full[3][0];
    if (need & SYM_NEED_DV) memcpy(out->dV, full[4], sizeof(double) * (size_t)n);
    if (need & SYM_NEED_D2V) memcpy(out->d2V, full[5], sizeof(double) * nn);
}

/* ------------------------------------------------------------------ */
/* A callback form's state                                              */
/* ------------------------------------------------------------------ */
/* A zeroed block of `size` bytes owned by S whose first `nrefs` members are
 * the PyObject references it holds (traversed and released with S); NULL
 * with MemoryError. */
void *py_state_new(SystemObject *S, size_t size, int nrefs)
{
    S->state = calloc(1, size);
    if (!S->state) return PyErr_NoMemory();
    S->nrefs = nrefs;
    return S->state;
}

int py_state_traverse(SystemObject *S, visitproc visit, void *arg)
{
    PyObject **ref = S->state;
    for (int k = 0; ref && k < S->nrefs; k++) Py_VISIT(ref[k]);
    return 0;
}

void py_state_free(SystemObject *S)
{
    PyObject **ref = S->state;
    for (int k = 0; ref && k < S->nrefs; k++) Py_CLEAR(ref[k]);
    free(S->state);
    S->state = NULL;
    S->nrefs = 0;
}

/* The tp_dealloc of the binding's garbage-collected heap types (System,
 * Work): untrack self, drop what it holds by `clear` (the type's tp_clear),
 * free it and release the reference each instance holds on its heap type. */
void py_gc_dealloc(PyObject *self, inquiry clear)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    clear(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

/* 1 if o is callable, 0 if it is None and not required; else -1 with a
 * TypeError naming the argument. */
int py_check_callable(PyObject *o, const char *name, int required)
{
    if (o == Py_None) {
        if (!required) return 0;
        PyErr_Format(PyExc_TypeError, "%s is required", name);
        return -1;
    }
    if (!PyCallable_Check(o)) {
        PyErr_Format(PyExc_TypeError, "%s must be callable, got %S", name, (PyObject *)Py_TYPE(o));
        return -1;
    }
    return 1;
}

/* A new float64 array of nd dimensions (zeroed if zero), or None for nd < 0
 * (an output the method does not have). */
PyObject *py_new_array(int nd, const npy_intp *dims, int zero)
{
    if (nd < 0) Py_RETURN_NONE;
    return zero ? PyArray_ZEROS(nd, (npy_intp *)dims, NPY_DOUBLE, 0)
                : PyArray_SimpleNew(nd, (npy_intp *)dims, NPY_DOUBLE);
}

double *py_data_of(PyObject *a)
{
    return a == Py_None ? NULL : PyArray_DATA((PyArrayObject *)a);
}
