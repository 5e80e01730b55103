/*
 * py_system.c -- the type symplectic._core.System: a sym_system made by one
 * of the callback forms (py_callbacks.c), its lifetime and attributes, and
 * the evaluations it offers directly (_eval, energy, _constraint).
 */
#include "py_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Lifetime                                                             */
/* ------------------------------------------------------------------ */
static int System_traverse(SystemObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    const int r = py_state_traverse(self, visit, arg);
    return r ? r : py_constraint_traverse(self, visit, arg);
}

/* Drop everything a System holds (the form's references and buffers, a
 * built-in's parameters) and return it to the state tp_new left it in.
 * __init__ calls it first: an earlier __init__ that failed half-way may have
 * stored references and buffers, which a second one would otherwise leak. */
static void System_release(SystemObject *self)
{
    py_form_release(self);
    py_state_free(self);
    py_constraint_free(self);
    Py_CLEAR(self->builtin_name);
    self->form = NULL;
    self->initialized = 0;
    self->nogil = 0;
    memset(&self->sys, 0, sizeof(self->sys));
}

static int System_clear(PyObject *self)
{
    System_release((SystemObject *)self);
    return 0;
}

static void System_dealloc(PyObject *self)
{
    py_gc_dealloc(self, System_clear);
}

static int System_init(SystemObject *self, PyObject *args, PyObject *kw)
{
    if (self->initialized) {
        PyErr_SetString(PyExc_TypeError, "a System cannot be re-initialised");
        return -1;
    }
    System_release(self);
    if (py_form_init(self, args, kw) < 0) return -1;
    self->initialized = 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* One top-level call                                                   */
/* ------------------------------------------------------------------ */
/* 0 if S was initialised, else -1 with RuntimeError. */
int py_system_ready(const SystemObject *S)
{
    if (S->initialized) return 0;
    PyErr_SetString(PyExc_RuntimeError, "System object is not initialised");
    return -1;
}

/* Start a call on S: the system must be initialised; call->sys is what the
 * core runs on (see py_call).  -1 with an exception on failure; py_call_end
 * must follow either way. */
int py_call_begin(SystemObject *S, py_call *call)
{
    memset(call, 0, sizeof(*call));
    if (py_system_ready(S) < 0) return -1;
    call->S = S;
    call->sys = S->sys;
    if (py_form_begin(call) < 0) return -1;
    return py_constraint_begin(call);
}

void py_call_end(py_call *call)
{
    free(call->q);
    call->q = NULL;
}

/* ------------------------------------------------------------------ */
/* _eval and _constraint: one evaluation into fresh arrays              */
/* ------------------------------------------------------------------ */
/* What one direct evaluation holds until direct_end: its call, its input
 * vectors (q; g or mu), up to six results (NULL: not requested) with their
 * data, and the core's scratch.  Zeroed before use. */
typedef struct {
    py_call call;
    PyArrayObject *q, *v;
    PyObject *res[6];
    double *data[6];
    double *scratch;
} direct;

/* d->res[k] (and d->data[k]) a new float64 array of nd[k] dimensions
 * dims[k] for each bit k < count set in need (nd[k] = 0: not an array);
 * -1 with an exception. */
static int direct_arrays(direct *d, unsigned need, int count, const int *nd,
                         const npy_intp (*dims)[2])
{
    for (int k = 0; k < count; k++) {
        if (!(need & (1u << k)) || !nd[k]) continue;
        if (!(d->res[k] = PyArray_SimpleNew(nd[k], (npy_intp *)dims[k], NPY_DOUBLE))) return -1;
        d->data[k] = PyArray_DATA((PyArrayObject *)d->res[k]);
    }
    return 0;
}

/* d->scratch of `doubles` doubles; -1 with MemoryError. */
static int direct_scratch(direct *d, size_t doubles)
{
    if ((d->scratch = malloc(sizeof(double) * doubles))) return 0;
    PyErr_NoMemory();
    return -1;
}

/* Release everything d holds; returns ret (the tuple, or NULL). */
static PyObject *direct_end(direct *d, PyObject *ret)
{
    py_call_end(&d->call);
    for (int k = 0; k < 6; k++) Py_XDECREF(d->res[k]);
    free(d->scratch);
    Py_XDECREF(d->q);
    Py_XDECREF(d->v);
    return ret;
}

/* A tuple of the k results, None where one was not requested (NULL). */
static PyObject *results_tuple(PyObject *const *res, int k)
{
    PyObject *t = PyTuple_New(k);
    for (int i = 0; t && i < k; i++) {
        PyObject *o = res[i] ? res[i] : Py_None;
        Py_INCREF(o);
        PyTuple_SET_ITEM(t, i, o);
    }
    return t;
}

/* _eval(q, g, need) -> (M, A, H, V, dV, d2V), None where not requested */
static PyObject *System_eval(SystemObject *self, PyObject *args)
{
    static const int nd[6] = {2, 2, 2, 0, 1, 2};   /* by need bit; V is a float */
    PyObject *qo, *go = Py_None, *ret = NULL;
    unsigned int need;
    double V = 0.0;
    direct d;
    memset(&d, 0, sizeof d);
    if (py_call_begin(self, &d.call) < 0 || !PyArg_ParseTuple(args, "OOI", &qo, &go, &need))
        goto done;
    const int n = self->sys.n;
    if (!(d.q = py_as_vector(qo, n, "q"))) goto done;
    if (need & (SYM_NEED_A | SYM_NEED_H)) {
        if (go == Py_None) {
            PyErr_SetString(PyExc_ValueError, "g is required for A and H");
            goto done;
        }
        if (!(d.v = py_as_vector(go, n, "g"))) goto done;
    }
    const npy_intp dims[6][2] = {{n, n}, {n, n}, {n, n}, {0, 0}, {n, 0}, {n, n}};
    if (direct_arrays(&d, need, 6, nd, dims) < 0 ||
        direct_scratch(&d, sym_eval_scratch_size(&d.call.sys)) < 0)
        goto done;
    sym_eval_out out = {d.data[0], d.data[1], d.data[2], &V, d.data[4], d.data[5]};
    const int st = sym_eval(&d.call.sys, PyArray_DATA(d.q), d.v ? PyArray_DATA(d.v) : NULL,
                            need & 63u, &out, d.scratch);
    if (st) { py_raise_status(st, &d.call, NULL, NULL); goto done; }
    if ((need & SYM_NEED_V) && !(d.res[3] = PyFloat_FromDouble(V))) goto done;
    ret = results_tuple(d.res, 6);
done:
    return direct_end(&d, ret);
}

/* ------------------------------------------------------------------ */
/* energy                                                               */
/* ------------------------------------------------------------------ */
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

/* The energies of `rows` states (GIL released for a system without Python);
 * on failure *bad is the failing row. */
static int energy_rows(const py_call *call, npy_intp rows, const double *q, const double *p,
                       double *H, npy_intp *bad)
{
    const int n = call->sys.n;
    double *scratch = malloc(sizeof(double) * sym_energy_scratch_size(&call->sys));
    if (!scratch) return SYM_ENOMEM;
    int st = SYM_OK;
    PyThreadState *ts = call->S->nogil ? PyEval_SaveThread() : NULL;
    for (npy_intp r = 0; r < rows && !st; r++) {
        st = energy_row(&call->sys, q + r * n, p + r * n, H + r, scratch);
        if (st) *bad = r;
    }
    if (ts) PyEval_RestoreThread(ts);
    free(scratch);
    return st;
}

/* energy(q, p): H = 1/2 p^T M^-1 p + V for one state or row-wise. */
static PyObject *System_energy(SystemObject *self, PyObject *args)
{
    PyObject *qo, *po, *H = NULL, *ret = NULL;
    PyArrayObject *q = NULL, *p = NULL;
    py_call call;
    if (py_call_begin(self, &call) < 0 || !PyArg_ParseTuple(args, "OO", &qo, &po)) goto done;
    const int n = self->sys.n;
    q = (PyArrayObject *)PyArray_FROM_OTF(qo, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!q) goto done;
    p = (PyArrayObject *)PyArray_FROM_OTF(po, NPY_DOUBLE, NPY_ARRAY_IN_ARRAY);
    if (!p) goto done;
    const int nd = PyArray_NDIM(q);
    int ok = (nd == 1 || nd == 2) && PyArray_NDIM(p) == nd && PyArray_DIM(q, nd - 1) == n;
    for (int i = 0; ok && i < nd; i++) ok = PyArray_DIM(q, i) == PyArray_DIM(p, i);
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "energy(q, p) needs q and p of equal shape (%d,) or (N, %d)", n, n);
        goto done;
    }
    const npy_intp rows = nd == 1 ? 1 : PyArray_DIM(q, 0);
    if (nd == 2 && !(H = PyArray_SimpleNew(1, &rows, NPY_DOUBLE))) goto done;
    double one = 0.0, *Hd = H ? PyArray_DATA((PyArrayObject *)H) : &one;
    npy_intp bad = -1;
    const int st = energy_rows(&call, rows, PyArray_DATA(q), PyArray_DATA(p), Hd, &bad);
    if (st) {
        char after[64];
        snprintf(after, sizeof after, " at row %ld", (long)bad);
        py_raise_status(st, &call, "energy: ", bad >= 0 ? after : NULL);
        goto done;
    }
    ret = H ? H : PyFloat_FromDouble(one);
    H = NULL;
done:
    py_call_end(&call);
    Py_XDECREF(H);
    Py_XDECREF(q);
    Py_XDECREF(p);
    return ret;
}

/* ------------------------------------------------------------------ */
/* Attributes and the type                                              */
/* ------------------------------------------------------------------ */
static PyObject *System_get_n(SystemObject *self, void *closure)
{
    (void)closure;
    return py_system_ready(self) < 0 ? NULL : PyLong_FromLong(self->sys.n);
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

static PyObject *System_get_n_constraints(SystemObject *self, void *closure)
{
    (void)closure;
    if (py_system_ready(self) < 0) return NULL;
    if (self->sys.m < 0) Py_RETURN_NONE;   /* callables: known at the first evaluation */
    return PyLong_FromLong(self->sys.m);
}

/* ------------------------------------------------------------------ */
/* System._constraint                                                   */
/* ------------------------------------------------------------------ */
/* _constraint(q, mu, need) -> (g, G, S), None where not requested; need
 * bits g = 1, G = 2, S = 4 (S needs mu). */
static PyObject *System_constraint(SystemObject *self, PyObject *args)
{
    static const int nd[3] = {1, 2, 2};
    PyObject *qo, *muo, *ret = NULL;
    unsigned int need;
    direct d;
    memset(&d, 0, sizeof d);
    if (py_system_ready(self) < 0 || !PyArg_ParseTuple(args, "OOI", &qo, &muo, &need))
        goto done;
    if (self->sys.m == 0) {
        PyErr_SetString(PyExc_ValueError, "this system has no constraints");
        goto done;
    }
    const int n = self->sys.n;
    if (!(d.q = py_as_vector(qo, n, "q"))) goto done;
    if (py_constraint_resolve(self, PyArray_DATA(d.q)) < 0) goto done;
    const int m = self->sys.m;
    if ((need & SYM_CNEED_HESS) && !(d.v = py_as_vector(muo, m, "mu"))) goto done;
    const npy_intp dims[3][2] = {{m, 0}, {m, n}, {n, n}};
    if (direct_arrays(&d, need, 3, nd, dims) < 0 || py_call_begin(self, &d.call) < 0 ||
        direct_scratch(&d, sym_constraint_scratch_size(&d.call.sys)) < 0)
        goto done;
    sym_constraint_out out = {d.data[0], d.data[1], d.data[2]};
    const int st = sym_constraint_eval(&d.call.sys, PyArray_DATA(d.q),
                                       d.v ? PyArray_DATA(d.v) : NULL, need & 7u, &out,
                                       d.scratch);
    if (st) { py_raise_status(st, &d.call, NULL, NULL); goto done; }
    ret = results_tuple(d.res, 3);
done:
    return direct_end(&d, ret);
}

static PyMethodDef System_methods[] = {
    {"_eval", (PyCFunction)System_eval, METH_VARARGS,
     "_eval(q, g, need) -> (M, A, H, V, gradV, hessV); need is a bit mask "
     "M=1, A=2, H=4, V=8, gradV=16, hessV=32 (None where not requested)."},
    {"_constraint", (PyCFunction)System_constraint, METH_VARARGS,
     "_constraint(q, mu, need) -> (g, G, S): the constraints g(q) (m,), their Jacobian "
     "G (m, n) and S = sum_k mu_k hess g_k (n, n); need bits g=1, G=2, S=4 (None where "
     "not requested)."},
    {"energy", (PyCFunction)System_energy, METH_VARARGS,
     "energy(q, p) -> H = 1/2 p^T M(q)^-1 p + V(q); q and p of shape (n,) give a "
     "float, of shape (N, n) an array of N energies.  A finite state whose energy "
     "overflows the double range gives inf."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef System_getset[] = {
    {"n", (getter)System_get_n, NULL, "number of degrees of freedom", NULL},
    {"builtin", (getter)System_get_builtin, NULL, "name of the built-in C system, or None", NULL},
    {"constant_mass", (getter)System_get_constant_mass, NULL, "True if M does not depend on q", NULL},
    {"n_constraints", (getter)System_get_n_constraints, NULL,
     "number m of holonomic constraints (0: none; None: Python callables whose m is "
     "not known before their first evaluation)", NULL},
    {"nogil", (getter)System_get_nogil, NULL,
     "True if integration runs without Python in the loop (built-in or compiled "
     "callbacks) and releases the GIL", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot System_slots[] = {
    {Py_tp_doc, "C core of a mechanical system (use symplectic.System)."},
    {Py_tp_init, PY_SLOT_FN(System_init)},
    {Py_tp_new, PY_SLOT_FN(PyType_GenericNew)},
    {Py_tp_dealloc, PY_SLOT_FN(System_dealloc)},
    {Py_tp_traverse, PY_SLOT_FN(System_traverse)},
    {Py_tp_clear, PY_SLOT_FN(System_clear)},
    {Py_tp_methods, System_methods},
    {Py_tp_getset, System_getset},
    {0, NULL}};

PyType_Spec py_System_spec = {
    "symplectic._core.System", sizeof(SystemObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC, System_slots};
