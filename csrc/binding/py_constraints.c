/*
 * py_constraints.c -- the holonomic constraints g(q) = 0 of a
 * symplectic._core.System (symplectic.h: the constraint slot), attached to
 * any callback form -- a built-in too, when it has no constraints of its own
 * (sys.m == 0 after its make: a rigid-body tree closed into a loop); a
 * built-in that carries its own (four_bar, a tree's mimic rows) refuses
 * them.  The built-in's own slots and params are untouched: the constraint
 * slot has its own params (constraint_params).
 *
 *   callables  constraint(q) -> (m,) the values g(q),
 *              constraint_jac(q) -> (m, n) the Jacobian G = dg/dq, and
 *              optionally constraint_hess(q) -> (m, n, n) with [k, i, j] =
 *              d^2 g_k/dq_i dq_j, contracted here with the multipliers mu
 *              into S = sum_k mu_k d^2 g_k/dq^2 (without it the core forms S
 *              by central differences of G^T mu).  For m = 1 a scalar, an
 *              (n,) and an (n, n) result are accepted too.  m is the length
 *              of constraint(q)'s first result (py_constraint_resolve, at
 *              the first call that has a q) unless n_constraints gives it.
 *              Python runs in the loop: the GIL is kept
 *              (S->nogil = 0, also for a built-in, whose init set it: the
 *              runs then hold the GIL and integrate_many runs one member
 *              at a time).
 *   compiled   constraint = the address of a sym_flat_constraint_fn (the
 *              flat signature of symplectic.h), constraint_data its user
 *              data, n_constraints = m (required); it fills g, G and S when
 *              asked.  Its first nonzero return is recorded in the call
 *              record for the error message, as for a compiled eval.
 *
 * The state block (its references first) is S->cstate, traversed and freed
 * with the System.
 */
#include "py_core.h"

#include <stdlib.h>
#include <string.h>

enum { C_G, C_JAC, C_HESS, C_KEEP, C_REFS };

typedef struct {
    PyObject *ref[C_REFS];   /* the callables (NULL: not given); compiled: keepalive */
    int compiled;
    int n, m;                /* m = -1 until known (callables)       */
    sym_flat_constraint_fn fn;
    void *data;
} cstate;

static const char *const cnames[3] = {"constraint(q)", "constraint_jac(q)", "constraint_hess(q)"};

/* ------------------------------------------------------------------ */
/* Python callables                                                     */
/* ------------------------------------------------------------------ */
/* Call slot c at q; the result as a float64 array of shape (m,), (m, n) or
 * (m, n, n) (nd = 1, 2, 3), or for m = 1 without the leading axis. */
static PyArrayObject *call_constraint(const cstate *st, int c, int m, const double *q)
{
    const int n = st->n, nd = c + 1;
    PyObject *qa = py_vec_copy(q, n);
    if (!qa) return NULL;
    PyObject *res = PyObject_CallFunctionObjArgs(st->ref[c], qa, NULL);
    Py_DECREF(qa);
    if (!res) return NULL;
    npy_intp dims[3] = {m, n, n};
    int k = nd;
    if (m == 1) {   /* one constraint: the leading axis may be left out */
        PyArrayObject *peek = (PyArrayObject *)PyArray_FROM_OTF(res, NPY_DOUBLE, 0);
        if (peek && PyArray_NDIM(peek) == nd - 1) {
            k = nd - 1;
            dims[0] = dims[1] = n;
        }
        Py_XDECREF(peek);
        PyErr_Clear();   /* py_real_array says what is wrong with it */
    }
    PyArrayObject *arr = py_real_array(res, &py_msgs_returned, cnames[c], k, dims, q, n);
    Py_DECREF(res);
    return arr;
}

static int cb_constraint(const double *q, const double *mu, unsigned need,
                         const sym_constraint_out *out, void *params)
{
    const cstate *st = params;
    const int n = st->n, m = st->m;
    if (m < 1) {   /* resolved before every run: not reached */
        PyErr_SetString(PyExc_RuntimeError, "the number of constraints is not known yet");
        return -1;
    }
    const size_t nn = (size_t)n * (size_t)n;
    if (need & SYM_CNEED_G) {
        PyArrayObject *a = call_constraint(st, C_G, m, q);
        if (!a) return -1;
        memcpy(out->g, PyArray_DATA(a), sizeof(double) * (size_t)m);
        Py_DECREF(a);
    }
    if (need & SYM_CNEED_JAC) {
        PyArrayObject *a = call_constraint(st, C_JAC, m, q);
        if (!a) return -1;
        memcpy(out->G, PyArray_DATA(a), sizeof(double) * (size_t)m * (size_t)n);
        Py_DECREF(a);
    }
    if (need & SYM_CNEED_HESS) {
        PyArrayObject *a = call_constraint(st, C_HESS, m, q);
        if (!a) return -1;
        const double *T = PyArray_DATA(a);
        for (size_t ij = 0; ij < nn; ij++) {
            double v = 0.0;
            for (int k = 0; k < m; k++) v += mu[k] * T[(size_t)k * nn + ij];
            out->S[ij] = v;
        }
        Py_DECREF(a);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* A compiled callback                                                  */
/* ------------------------------------------------------------------ */
/* params is the call's py_call record (set by py_constraint_begin). */
static int cb_constraint_cfunc(const double *q, const double *mu, unsigned need,
                               const sym_constraint_out *out, void *params)
{
    py_call *call = params;
    const cstate *st = call->S->cstate;
    const int rc = st->fn(q, mu, need, out->g, out->G, out->S, st->data);
    if (rc && !call->failed) {
        call->failed = 1;
        call->rc = rc;
        call->need = need << PY_CNEED_SHIFT;
        memcpy(call->q, q, sizeof(double) * (size_t)call->sys.n);
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Set-up, lifetime                                                     */
/* ------------------------------------------------------------------ */
static int count_arg(PyObject *o, int n, int *m)
{
    const long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 1 || v >= n) {
        PyErr_Format(PyExc_ValueError,
                     "n_constraints must be between 1 and n - 1 = %d (a system with n = %d "
                     "coordinates keeps at least one degree of freedom), got %ld", n - 1, n, v);
        return -1;
    }
    *m = (int)v;
    return 0;
}

int py_constraint_init(SystemObject *S, int n, PyObject *const c[5], int builtin)
{
    PyObject *g = c[0], *G = c[1], *H = c[2], *count = c[3], *data = c[4];
    if (g == Py_None) {
        for (int k = 1; k < 5; k++)
            if (c[k] != Py_None) {
                PyErr_SetString(PyExc_TypeError, "constraint_jac, constraint_hess, n_constraints "
                                "and constraint_data need constraint (the values g(q))");
                return -1;
            }
        return 0;
    }
    if (builtin && S->sys.m != 0) {
        PyErr_Format(PyExc_TypeError, "the built-in system '%U' carries its own %d holonomic "
                     "constraint(s): it takes no constraint arguments (a built-in without "
                     "constraints of its own takes them)", S->builtin_name, S->sys.m);
        return -1;
    }
    int m = -1;
    if (count != Py_None && count_arg(count, n, &m) < 0) return -1;
    cstate *st = calloc(1, sizeof(cstate));
    if (!st) { PyErr_NoMemory(); return -1; }
    S->cstate = st;
    st->n = n;
    sym_system *s = &S->sys;
    if (PyLong_Check(g)) {                              /* compiled */
        void *fp = PyLong_AsVoidPtr(g);
        if (!fp) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "constraint must be a nonzero function address");
            return -1;
        }
        if (G != Py_None || H != Py_None) {
            PyErr_SetString(PyExc_TypeError, "a compiled constraint callback fills g, G and S "
                            "itself: it takes no constraint_jac or constraint_hess");
            return -1;
        }
        if (m < 0) {
            PyErr_SetString(PyExc_TypeError, "a compiled constraint callback needs "
                            "n_constraints (the number m of constraints)");
            return -1;
        }
        if (data != Py_None) {
            st->data = PyLong_AsVoidPtr(data);
            if (!st->data && PyErr_Occurred()) return -1;
        }
        memcpy(&st->fn, &fp, sizeof fp);   /* data -> function pointer: as cfunc_init */
        st->compiled = 1;
        s->constraint = cb_constraint_cfunc;   /* params: the call record (begin) */
        s->flags |= SYM_SYS_CONSTRAINT_HESS;
    } else {                                            /* Python callables */
        if (py_check_callable(g, "constraint", 1) < 0 ||
            py_check_callable(G, "constraint_jac", 1) < 0 ||
            py_check_callable(H, "constraint_hess", 0) < 0)
            return -1;
        if (data != Py_None) {
            PyErr_SetString(PyExc_TypeError, "constraint_data is for a compiled constraint "
                            "callback");
            return -1;
        }
        st->ref[C_G] = Py_NewRef(g);
        st->ref[C_JAC] = Py_NewRef(G);
        s->flags &= ~(unsigned)SYM_SYS_CONSTRAINT_HESS;   /* a built-in's, meaningless at m = 0 */
        if (H != Py_None) {
            st->ref[C_HESS] = Py_NewRef(H);
            s->flags |= SYM_SYS_CONSTRAINT_HESS;
        }
        s->constraint = cb_constraint;
        s->constraint_params = st;
        S->nogil = 0;   /* Python in the loop: keep the GIL (a built-in had released it) */
    }
    s->m = st->m = m;
    return 0;
}

int py_constraint_traverse(SystemObject *S, visitproc visit, void *arg)
{
    cstate *st = S->cstate;
    for (int k = 0; st && k < C_REFS; k++) Py_VISIT(st->ref[k]);
    return 0;
}

void py_constraint_free(SystemObject *S)
{
    cstate *st = S->cstate;
    for (int k = 0; st && k < C_REFS; k++) Py_CLEAR(st->ref[k]);
    free(st);
    S->cstate = NULL;
}

/* A compiled constraint gets the call record (for its error message). */
int py_constraint_begin(py_call *call)
{
    const cstate *st = call->S->cstate;
    if (!st || !st->compiled) return 0;
    if (!call->q && !(call->q = malloc(sizeof(double) * (size_t)call->sys.n))) {
        PyErr_NoMemory();
        return -1;
    }
    call->sys.constraint_params = call;
    return 0;
}

/* The number of constraints of Python callables, from the first result of
 * constraint(q): set once, then every result must have that length. */
int py_constraint_resolve(SystemObject *S, const double *q)
{
    cstate *st = S->cstate;
    if (S->sys.m >= 0 || !st) return 0;
    const int n = S->sys.n;
    PyObject *qa = py_vec_copy(q, n);
    if (!qa) return -1;
    PyObject *res = PyObject_CallFunctionObjArgs(st->ref[C_G], qa, NULL);
    Py_DECREF(qa);
    if (!res) return -1;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROM_OTF(res, NPY_DOUBLE, 0);
    Py_DECREF(res);
    if (!a) {
        PyErr_Clear();
        PyErr_SetString(PyExc_TypeError, "constraint(q) must return the m constraint values "
                        "g(q) as real numbers (a float or a 1-D array)");
        return -1;
    }
    const int nd = PyArray_NDIM(a);
    const npy_intp len = nd == 0 ? 1 : PyArray_DIM(a, 0);
    char got[128];
    py_shape_str(got, sizeof got, nd, PyArray_DIMS(a));
    Py_DECREF(a);
    if (nd > 1 || len < 1) {
        PyErr_Format(PyExc_ValueError, "constraint(q) must return the m >= 1 constraint values "
                     "g(q), shape (m,), got an array of shape %s", got);
        return -1;
    }
    if (len >= n) {
        PyErr_Format(PyExc_ValueError,
                     "constraint(q) returned %ld values for a system with n = %d coordinates: "
                     "at most n - 1 = %d constraints (a system keeps at least one degree of "
                     "freedom)", (long)len, n, n - 1);
        return -1;
    }
    S->sys.m = st->m = (int)len;
    return 0;
}
