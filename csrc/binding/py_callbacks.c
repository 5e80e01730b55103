/*
 * py_callbacks.c -- the callback forms of symplectic._core.System: the
 * arguments of System(), the table that picks a form from them, and the
 * forms themselves -- what stands behind the core's sym_system slots
 * (symplectic.h):
 *
 *   builtin     a built-in C system (no callbacks of ours; GIL released
 *               unless Python constraint callables are attached to it)
 *   cfunc       a compiled callback with the flat signature (GIL released)
 *   combined, vectorized    one Python call per point / per batch of points
 *               (py_arrayforms.c)
 *   constant mass, separate callables   one Python callable per quantity
 *
 * Python callables receive a fresh float64 copy of q (and g) on every call;
 * their results are converted to float64 and checked for shape and
 * finiteness, with messages that name the callable (py_util.c).  A Python
 * exception stops the core at once (the thunk returns nonzero, the core
 * returns SYM_ECALLBACK) and propagates unchanged.
 *
 * HOW TO ADD A CALLBACK FORM (this file, symplectic/_model/_system.py, tests):
 *  1. New keyword arguments of System(): append them to `enum arg` and to
 *     `arg_names` (the enum order is the positional order).
 *  2. A section in this file with
 *     - a state struct whose FIRST member is `PyObject *ref[K]`, the
 *       references it owns; allocate it with py_state_new(S, size, K), which
 *       the System's GC traversal and release then know about (buffers go
 *       in the same block, after the struct);
 *     - the thunks: functions of the sym_system slot types (params = the
 *       state) that call the Python code on fresh copies and convert what it
 *       returns with py_call_array / py_real_array; full derivative arrays
 *       become the core's contracted A and H through py_fill_from_full (or
 *       py_contract_dM / py_contract_d2M);
 *     - init(S, n, arg): check the arguments (py_check_callable),
 *       py_state_new, fill S->sys (n, params, the slots); set S->nogil only
 *       if no Python runs in the loop;
 *     - optionally begin(call), run at the start of every top-level call
 *       (reset a cache; or keep per-call data thread-safe by pointing
 *       call->sys.params at the py_call record, as cfunc does).
 *  3. A row in `forms` at the bottom: the argument that selects the form
 *     (first match wins), init, begin (and release, for what lives outside
 *     the state block, as the built-in's parameters).
 *  4. symplectic/_model/_system.py: a classmethod that checks its input and calls
 *     _core.System.__init__(obj, n, <key>=...).
 * A new SLOT of the core (a force f(t, q, qdot)) taken as a separate
 * callable: its argument (step 1), a row in `fslot` (checked and stored from
 * then on), a thunk (call_slot serves callables of q or (q, g)), and the line
 * in callables_new or callables_init that sets the slot.  A slot that every
 * form may carry (the constraints g(q)) has its own file instead
 * (py_constraints.c), called from py_form_init after the form's init.
 */
#include "py_core.h"
#include "sym_builtins.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* The arguments of System()                                           */
/* ------------------------------------------------------------------ */
enum arg {
    A_N, A_MASS, A_POTENTIAL, A_MASS_GRAD, A_POTENTIAL_GRAD, A_MASS_HESS, A_POTENTIAL_HESS,
    A_MASS_DIR, A_MASS_HESS_DIR, A_BUILTIN, A_PARAMS, A_VECTORIZED, A_CFUNC, A_CFUNC_DATA,
    A_KEEPALIVE, A_COMBINED, A_CONSTRAINT, A_CONSTRAINT_JAC, A_CONSTRAINT_HESS, A_N_CONSTRAINTS,
    A_CONSTRAINT_DATA, A_COUNT
};

static const char *const arg_names[A_COUNT] = {
    [A_N] = "n", [A_MASS] = "mass", [A_POTENTIAL] = "potential", [A_MASS_GRAD] = "mass_grad",
    [A_POTENTIAL_GRAD] = "potential_grad", [A_MASS_HESS] = "mass_hess",
    [A_POTENTIAL_HESS] = "potential_hess", [A_MASS_DIR] = "mass_dir",
    [A_MASS_HESS_DIR] = "mass_hess_dir", [A_BUILTIN] = "builtin", [A_PARAMS] = "params",
    [A_VECTORIZED] = "vectorized", [A_CFUNC] = "cfunc", [A_CFUNC_DATA] = "cfunc_data",
    [A_KEEPALIVE] = "keepalive", [A_COMBINED] = "combined", [A_CONSTRAINT] = "constraint",
    [A_CONSTRAINT_JAC] = "constraint_jac", [A_CONSTRAINT_HESS] = "constraint_hess",
    [A_N_CONSTRAINTS] = "n_constraints", [A_CONSTRAINT_DATA] = "constraint_data"};

/* (args, kw) -> arg[] by name, positional first (borrowed; Py_None where not
 * given), with the errors of CPython's own argument parser. */
static int parse_args(PyObject *args, PyObject *kw, PyObject **arg)
{
    const Py_ssize_t npos = PyTuple_GET_SIZE(args);
    if (npos > A_COUNT) {
        PyErr_Format(PyExc_TypeError, "System() takes at most %d arguments (%zd given)",
                     (int)A_COUNT, npos);
        return -1;
    }
    for (int k = 0; k < A_COUNT; k++) arg[k] = k < npos ? PyTuple_GET_ITEM(args, k) : NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (kw && PyDict_Next(kw, &pos, &key, &value)) {
        int k = 0;
        while (k < A_COUNT && !(PyUnicode_Check(key) &&
                                PyUnicode_CompareWithASCIIString(key, arg_names[k]) == 0))
            k++;
        if (k == A_COUNT) {
            PyErr_Format(PyExc_TypeError, "'%S' is an invalid keyword argument for System()", key);
            return -1;
        }
        if (arg[k]) {
            PyErr_Format(PyExc_TypeError, "argument for System() given by name ('%s') and "
                         "position (%d)", arg_names[k], k + 1);
            return -1;
        }
        arg[k] = value;
    }
    if (!arg[A_N]) {
        PyErr_SetString(PyExc_TypeError, "System() missing required argument 'n' (pos 1)");
        return -1;
    }
    for (int k = 0; k < A_COUNT; k++)
        if (!arg[k]) arg[k] = Py_None;
    return 0;
}

static PyObject *none_to_null(PyObject *o)
{
    if (o == Py_None) return NULL;
    Py_INCREF(o);
    return o;
}

/* ------------------------------------------------------------------ */
/* builtin: a C system of the core                                     */
/* ------------------------------------------------------------------ */
static int builtin_init(SystemObject *S, int n, PyObject *const *arg)
{
    Py_ssize_t len;
    const char *name = PyUnicode_Check(arg[A_BUILTIN])
                           ? PyUnicode_AsUTF8AndSize(arg[A_BUILTIN], &len) : NULL;
    if (!name) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "builtin must be str or None, not %S",
                         (PyObject *)Py_TYPE(arg[A_BUILTIN]));
        return -1;
    }
    if ((size_t)len != strlen(name)) {
        PyErr_SetString(PyExc_ValueError, "embedded null character");
        return -1;
    }
    PyArrayObject *pa = (PyArrayObject *)PyArray_FROM_OTF(arg[A_PARAMS], NPY_DOUBLE,
                                                          NPY_ARRAY_IN_ARRAY);
    if (!pa) return -1;
    if (PyArray_NDIM(pa) != 1) {
        Py_DECREF(pa);
        PyErr_SetString(PyExc_ValueError, "builtin params must be a 1-D sequence");
        return -1;
    }
    const int st = sym_builtin_make(name, n, PyArray_DATA(pa), (size_t)PyArray_SIZE(pa), &S->sys);
    Py_DECREF(pa);
    if (st) {
        char before[160];
        snprintf(before, sizeof before, "cannot make built-in system '%.100s' (n = %d): ", name, n);
        py_raise_status(st, NULL, before, NULL);
        return -1;
    }
    S->nogil = 1;
    S->builtin_name = PyUnicode_FromString(name);
    return S->builtin_name ? 0 : -1;
}

static void builtin_release(SystemObject *S)
{
    sym_builtin_free(&S->sys);   /* the parameters sym_builtin_make allocated (or NULL) */
}

/* ------------------------------------------------------------------ */
/* cfunc: a compiled callback (the flat signature of symplectic.h)      */
/* ------------------------------------------------------------------ */
typedef struct {
    PyObject *ref[1];          /* keepalive: the owner of the code */
    sym_flat_eval_fn fn;
    void *data;
} cfunc_state;

/* params is the call's py_call record: the first nonzero return is recorded
 * there for the error message (thread-safe: one record per call). */
static int cb_cfunc(const double *q, const double *g, unsigned need, const sym_eval_out *out,
                    void *params, double *scratch)
{
    py_call *call = params;
    const cfunc_state *st = call->S->state;
    (void)scratch;
    const int rc = st->fn(q, g, need, out->M, out->A, out->H, out->V, out->dV, out->d2V,
                          st->data);
    if (rc && !call->failed) {
        call->failed = 1;
        call->rc = rc;
        call->need = need;
        memcpy(call->q, q, sizeof(double) * (size_t)call->sys.n);
    }
    return rc;
}

static int cfunc_begin(py_call *call)
{
    call->q = malloc(sizeof(double) * (size_t)call->sys.n);
    if (!call->q) { PyErr_NoMemory(); return -1; }
    call->sys.params = call;
    return 0;
}

static int cfunc_init(SystemObject *S, int n, PyObject *const *arg)
{
    void *fp = PyLong_AsVoidPtr(arg[A_CFUNC]);
    if (!fp) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "cfunc must be a nonzero function address");
        return -1;
    }
    void *data = NULL;
    if (arg[A_CFUNC_DATA] != Py_None) {
        data = PyLong_AsVoidPtr(arg[A_CFUNC_DATA]);
        if (!data && PyErr_Occurred()) return -1;
    }
    cfunc_state *st = py_state_new(S, sizeof *st, 1);
    if (!st) return -1;
    /* converting a data pointer to a function pointer: allowed on the
     * platforms CPython supports (POSIX dlsym relies on it too) */
    memcpy(&st->fn, &fp, sizeof fp);
    st->data = data;
    st->ref[0] = none_to_null(arg[A_KEEPALIVE]);
    S->sys.n = n;
    S->sys.eval = cb_cfunc;   /* params: set per call by cfunc_begin */
    S->nogil = 1;
    return 0;
}

/* ------------------------------------------------------------------ */
/* separate callables (mass a callable or a constant array)             */
/* ------------------------------------------------------------------ */
/* One callable per quantity, in the order their arguments are checked. */
enum { F_POT, F_POT_GRAD, F_POT_HESS, F_MASS_GRAD, F_MASS_HESS, F_MASS_DIR, F_MASS_HESS_DIR,
       F_MASS, F_COUNT };

static const struct {
    int arg;              /* its argument of System()              */
    const char *label;    /* its name in messages                  */
    int nd;               /* its result's dimensions (each n long) */
    int required;
} fslot[F_COUNT] = {
    [F_POT] = {A_POTENTIAL, "potential(q)", 0, 1},
    [F_POT_GRAD] = {A_POTENTIAL_GRAD, "potential_grad(q)", 1, 1},
    [F_POT_HESS] = {A_POTENTIAL_HESS, "potential_hess(q)", 2, 0},
    [F_MASS_GRAD] = {A_MASS_GRAD, "mass_grad(q)", 3, 0},
    [F_MASS_HESS] = {A_MASS_HESS, "mass_hess(q)", 4, 0},
    [F_MASS_DIR] = {A_MASS_DIR, "mass_dir(q, g)", 2, 0},
    [F_MASS_HESS_DIR] = {A_MASS_HESS_DIR, "mass_hess_dir(q, g)", 2, 0},
    [F_MASS] = {A_MASS, "mass(q)", 2, 1}};

typedef struct {
    PyObject *ref[F_COUNT];  /* the callables (NULL: not given; mass: constant) */
    int n;
    double *const_mass;      /* n x n, or NULL */
} callables_state;

typedef void (*contract_fn)(int n, const double *full, const double *g, double *out);

/* Call slot f at q (and g, for the callables that take it) into out;
 * contract (if not NULL) turns a full derivative into its contraction with g. */
static int call_slot(const callables_state *st, int f, const double *q, const double *g,
                     contract_fn contract, double *out)
{
    PyArrayObject *a = py_call_array(st->ref[f], fslot[f].label, st->n, q,
                                     contract ? NULL : g, fslot[f].nd);
    if (!a) return -1;
    if (contract)
        contract(st->n, PyArray_DATA(a), g, out);
    else
        memcpy(out, PyArray_DATA(a), sizeof(double) * (size_t)PyArray_SIZE(a));
    Py_DECREF(a);
    return 0;
}

static int cb_mass(const double *q, double *out, void *params)
{
    const callables_state *st = params;
    const int n = st->n;
    PyArrayObject *a = py_call_array(st->ref[F_MASS], fslot[F_MASS].label, n, q, NULL, 2);
    if (!a) return -1;
    const double *M = PyArray_DATA(a);
    int i, j;
    if (!sym_symmetric(n, M, &i, &j)) {
        /* PyErr_Format has no %g: the numbers are formatted here */
        char vals[200];
        snprintf(vals, sizeof vals, "M[%d, %d] = %.17g but M[%d, %d] = %.17g (a mass matrix "
                 "must be symmetric to %g of its largest entry)", i, j, M[i * n + j], j, i,
                 M[j * n + i], SYM_SYMMETRY_RTOL);
        PyObject *qr = py_vec_copy(q, n);
        PyErr_Format(PyExc_ValueError, "mass(q) returned a non-symmetric matrix at q = %R: %s",
                     qr ? qr : Py_None, vals);
        Py_XDECREF(qr);
        Py_DECREF(a);
        return -1;
    }
    memcpy(out, M, sizeof(double) * (size_t)n * n);
    Py_DECREF(a);
    return 0;
}

static int cb_const_mass(const double *q, double *out, void *params)
{
    const callables_state *st = params;
    (void)q;
    memcpy(out, st->const_mass, sizeof(double) * (size_t)st->n * st->n);
    return 0;
}

/* A[i][c] = sum_j dM_ij/dq_c g_j: mass_dir, or mass_grad contracted */
static int cb_mass_dir(const double *q, const double *g, double *out, void *params)
{
    const callables_state *st = params;
    return st->ref[F_MASS_DIR] ? call_slot(st, F_MASS_DIR, q, g, NULL, out)
                               : call_slot(st, F_MASS_GRAD, q, g, py_contract_dM, out);
}

/* H[k][l] = 1/2 sum_ij d^2 M_ij/dq_k dq_l g_i g_j: mass_hess_dir, or mass_hess contracted */
static int cb_mass_hess_dir(const double *q, const double *g, double *out, void *params)
{
    const callables_state *st = params;
    return st->ref[F_MASS_HESS_DIR] ? call_slot(st, F_MASS_HESS_DIR, q, g, NULL, out)
                                    : call_slot(st, F_MASS_HESS, q, g, py_contract_d2M, out);
}

static int cb_potential(const double *q, double *out, void *params)
{
    return call_slot(params, F_POT, q, NULL, NULL, out);
}

static int cb_potential_grad(const double *q, double *out, void *params)
{
    return call_slot(params, F_POT_GRAD, q, NULL, NULL, out);
}

static int cb_potential_hess(const double *q, double *out, void *params)
{
    return call_slot(params, F_POT_HESS, q, NULL, NULL, out);
}

/* What both mass kinds share: the callables checked and stored (mass too if
 * callable), the potential's slots; `extra` bytes after the state. */
static callables_state *callables_new(SystemObject *S, int n, PyObject *const *arg, size_t extra)
{
    for (int f = 0; f < F_MASS; f++)
        if (py_check_callable(arg[fslot[f].arg], arg_names[fslot[f].arg], fslot[f].required) < 0)
            return NULL;
    if (arg[A_MASS] == Py_None) {
        PyErr_SetString(PyExc_TypeError, "mass is required (a callable or a constant (n, n) array)");
        return NULL;
    }
    callables_state *st = py_state_new(S, sizeof(callables_state) + extra, F_COUNT);
    if (!st) return NULL;
    st->n = n;
    for (int f = 0; f < F_COUNT; f++)
        if (f != F_MASS || PyCallable_Check(arg[A_MASS])) st->ref[f] = none_to_null(arg[fslot[f].arg]);
    sym_system *s = &S->sys;
    s->n = n;
    s->params = st;
    s->potential = cb_potential;
    s->potential_grad = cb_potential_grad;
    if (st->ref[F_POT_HESS]) s->potential_hess = cb_potential_hess;
    return st;
}

static int const_mass_init(SystemObject *S, int n, PyObject *const *arg)
{
    const size_t nn = (size_t)n * (size_t)n;
    callables_state *st = callables_new(S, n, arg, sizeof(double) * nn);
    if (!st) return -1;
    PyArrayObject *ma = (PyArrayObject *)PyArray_FROM_OTF(arg[A_MASS], NPY_DOUBLE,
                                                          NPY_ARRAY_IN_ARRAY);
    if (!ma) return -1;
    if (PyArray_NDIM(ma) != 2 || PyArray_DIM(ma, 0) != n || PyArray_DIM(ma, 1) != n) {
        Py_DECREF(ma);
        PyErr_Format(PyExc_ValueError, "a constant mass must have shape (%d, %d)", n, n);
        return -1;
    }
    st->const_mass = (double *)(st + 1);
    memcpy(st->const_mass, PyArray_DATA(ma), sizeof(double) * nn);
    Py_DECREF(ma);
    S->sys.mass = cb_const_mass;
    S->sys.flags |= SYM_SYS_CONSTANT_MASS;
    return 0;
}

static int callables_init(SystemObject *S, int n, PyObject *const *arg)
{
    callables_state *st = callables_new(S, n, arg, 0);
    if (!st) return -1;
    if (!st->ref[F_MASS_DIR] && !st->ref[F_MASS_GRAD]) {
        PyErr_SetString(PyExc_TypeError,
                        "a callable mass needs mass_grad (or mass_dir); the Python System "
                        "class supplies a finite-difference one when it is omitted");
        return -1;
    }
    S->sys.mass = cb_mass;
    S->sys.mass_dir = cb_mass_dir;
    if (st->ref[F_MASS_HESS_DIR] || st->ref[F_MASS_HESS]) S->sys.mass_hess_dir = cb_mass_hess_dir;
    return 0;
}

static int not_callable(PyObject *o)
{
    return !PyCallable_Check(o);
}

/* ------------------------------------------------------------------ */
/* The forms, and the dispatcher                                        */
/* ------------------------------------------------------------------ */
struct py_form {
    int key;                            /* the argument that selects it; -1: the default */
    int (*accepts)(PyObject *value);    /* NULL: any value but None selects it           */
    int (*init)(SystemObject *S, int n, PyObject *const *arg);
    int (*begin)(py_call *call);        /* NULL, or: prepare one top-level call          */
    void (*release)(SystemObject *S);   /* NULL, or: free what is not in S->state        */
};

static int combined_init(SystemObject *S, int n, PyObject *const *arg)
{
    return py_combined_init(S, n, arg[A_COMBINED]);
}

static int vectorized_init(SystemObject *S, int n, PyObject *const *arg)
{
    return py_vectorized_init(S, n, arg[A_VECTORIZED]);
}

static const py_form forms[] = {
    {.key = A_BUILTIN, .init = builtin_init, .release = builtin_release},
    {.key = A_CFUNC, .init = cfunc_init, .begin = cfunc_begin},
    {.key = A_COMBINED, .init = combined_init, .begin = py_combined_begin},
    {.key = A_VECTORIZED, .init = vectorized_init},
    {.key = A_MASS, .accepts = not_callable, .init = const_mass_init},
    {.key = -1, .init = callables_init}};

/* System.__init__ after the object was emptied: the first form whose
 * argument is given (and accepted) makes the system. */
int py_form_init(SystemObject *S, PyObject *args, PyObject *kw)
{
    PyObject *arg[A_COUNT];
    if (parse_args(args, kw, arg) < 0) return -1;
    const long n = PyLong_AsLong(arg[A_N]);
    if (n == -1 && PyErr_Occurred()) return -1;
    if (n < 1 || n > SYM_MAX_DOF) {
        PyErr_Format(PyExc_ValueError, "n must be between 1 and %d, got %ld", SYM_MAX_DOF, n);
        return -1;
    }
    const py_form *f = forms;
    while (f->key >= 0 && !(arg[f->key] != Py_None && (!f->accepts || f->accepts(arg[f->key]))))
        f++;
    S->form = f;
    if (f->init(S, (int)n, arg) < 0) return -1;
    /* every form but the built-ins and compiled callbacks evaluates in Python */
    if (f->key != A_BUILTIN && f->key != A_CFUNC) S->sys.flags |= SYM_SYS_COSTLY_EVAL;
    /* holonomic constraints, whatever the form (py_constraints.c) */
    return py_constraint_init(S, (int)n, arg + A_CONSTRAINT, f->key == A_BUILTIN);
}

int py_form_begin(py_call *call)
{
    const py_form *f = call->S->form;
    return f->begin ? f->begin(call) : 0;
}

/* Free what a form holds outside its state block (a built-in's parameters). */
void py_form_release(SystemObject *S)
{
    if (S->form && S->form->release) S->form->release(S);
}
