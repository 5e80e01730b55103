/*
 * py_work.c -- the Work type of symplectic._core: a run prepared once
 * (symplectic._core.work) and kept across calls (symplectic.Integrator).
 */
#include "py_run.h"

/* The run of integrate and step, kept: the system, the method, the
 * options, the force and the workspace (its predictor history and counts)
 * stay from one call to the next, so that runs continued on it compute the
 * states of one long run bitwise (sym_run.k0).  One call at a time (a second
 * thread's call while one runs is a RuntimeError). */
typedef struct WorkObject {
    PyObject_HEAD
    run r;
    int ready;   /* prepared: r.w is a workspace */
    int busy;    /* a call is running            */
    int linear;  /* the closed form's workspace (no force) */
} WorkObject;

static int Work_traverse(WorkObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(self->r.system);
    Py_VISIT(self->r.force_in);
    return py_force_traverse(&self->r.force, visit, arg);
}

static int Work_clear(PyObject *op)
{
    WorkObject *self = (WorkObject *)op;
    if (self->busy) return 0;   /* (a running call holds a reference: not reached) */
    if (self->ready) py_run_end(&self->r);
    self->ready = 0;
    Py_CLEAR(self->r.system);
    Py_CLEAR(self->r.force_in);
    return 0;
}

static void Work_dealloc(PyObject *self)
{
    py_gc_dealloc(self, Work_clear);
}

/* Enter a call: -1 (with RuntimeError) when not prepared or busy; clears
 * the failure records of the last call. */
static int work_enter(WorkObject *self)
{
    if (!self->ready) {
        PyErr_SetString(PyExc_RuntimeError, "this Work was not prepared by symplectic._core.work");
        return -1;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this integrator is running in another thread "
                        "(one call at a time)");
        return -1;
    }
    self->busy = 1;
    self->r.call.failed = 0;
    py_force_clear_records(&self->r.force);
    return 0;
}

/* work(system, q, p, method='simpson', rtol=0, max_iter=0, predictor=True,
 * chord=0, branch=0, force=None, linear=None) -> Work: the prologue of
 * integrate once (q, p: a state of the system, for the number of
 * constraints of Python callables and the checks of the arguments); with
 * linear=(h, D, A) the closed form's workspace (linear_work), which steps
 * only with that h and takes no force. */
PyObject *mod_work(PyObject *module, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"system", "q", "p", "method", "rtol", "max_iter", "predictor",
                             "chord", "branch", "force", "linear", "solver", NULL};
    module_state *ms = PyModule_GetState(module);
    WorkObject *self = (WorkObject *)ms->Work_type->tp_alloc(ms->Work_type, 0);
    if (!self) return NULL;
    run *r = &self->r;
    r->method = "simpson";
    r->predictor = 1;
    r->h = 1.0;
    r->force_in = Py_None;
    r->force_steps = -1;
    r->linear_in = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOO|sdipiiOOi", kwlist, &r->system, &r->q_in,
                                     &r->p_in, &r->method, &r->rtol, &r->max_iter,
                                     &r->predictor, &r->chord, &r->branch, &r->force_in,
                                     &r->linear_in, &r->solver)) {
        r->system = r->force_in = NULL;
        Py_DECREF(self);
        return NULL;
    }
    Py_INCREF(r->system);
    Py_INCREF(r->force_in);
    self->ready = 1;   /* py_run_end releases what py_run_begin took, also on failure */
    const int bad = py_run_begin(module, r, "q", "p") < 0 || py_run_work(r) < 0;
    self->linear = r->linear_in && r->linear_in != Py_None;
    r->linear_in = NULL;   /* borrowed: for py_run_work only */
    if (bad) {
        Py_DECREF(self);
        return NULL;
    }
    Py_CLEAR(r->q);   /* the state was for the checks only */
    Py_CLEAR(r->p);
    r->q_in = r->p_in = NULL;
    return (PyObject *)self;
}

/* Work.integrate(q0, p0, h, n_steps, t0=0, k0=0, cancel=None, store_every=1,
 * hook=None, hook_buf=None, hook_steps=None, report=None, multipliers=None,
 * hook_force=None, work=None, impulse=None, work0=0, impulse0=None, tangent=None,
 * tangent0=None, params=None, jacobians=None, h_jacobians=None, points=None) -> as
 * integrate: the steps k0 .. k0 + n_steps - 1 of a run from t0 (sym_run),
 * on the kept workspace. */
static PyObject *Work_integrate(WorkObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"q0", "p0", "h", "n_steps", "t0", "k0", "cancel", "store_every",
                             "hook", "hook_buf", "hook_steps", "report", "multipliers",
                             "hook_force", "work", "impulse", "work0", "impulse0", "tangent",
                             "tangent0", "params", "jacobians", "h_jacobians", "points", NULL};
    run_call c = {.store_every = 1, .cancel = Py_None, .hook = Py_None, .hook_buf = Py_None,
                  .hook_steps = Py_None, .report = Py_None, .lam = Py_None,
                  .hook_force = Py_None, .impulse0 = Py_None, .tangent = Py_None,
                  .tangent0 = Py_None, .jacobians = Py_None, .params = Py_None,
                  .h_jacobians = Py_None, .points = Py_None};
    PyObject *q0, *p0, *wo = Py_None, *io = Py_None, *ret = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOdl|dlOlOOOOOOOOdOOOOOOO", kwlist, &q0, &p0,
                                     &c.h, &c.n_steps, &c.t0, &c.k0, &c.cancel, &c.store_every,
                                     &c.hook, &c.hook_buf, &c.hook_steps, &c.report, &c.lam,
                                     &c.hook_force, &wo, &io, &c.work0, &c.impulse0,
                                     &c.tangent, &c.tangent0, &c.params, &c.jacobians,
                                     &c.h_jacobians, &c.points))
        return NULL;
    if (work_enter(self) < 0) return NULL;
    run *r = &self->r;
    const int n = r->S->sys.n;
    const npy_intp rows = sym_stored_rows(c.n_steps < 0 ? 0 : c.n_steps, c.store_every);
    if ((wo != Py_None || io != Py_None || c.impulse0 != Py_None) && !r->force.active) {
        PyErr_SetString(PyExc_ValueError, "work, impulse and impulse0 are the outputs of a "
                        "run with a force");
        goto done;
    }
    if (wo != Py_None) {
        if (!py_hook_buffer(wo, rows, "work")) goto done;
        c.work = (PyArrayObject *)wo;
    }
    if (io != Py_None) {
        if (!py_hook_buffer(io, rows * n, "impulse")) goto done;
        c.impulse = (PyArrayObject *)io;
    }
    if (py_rows_fit(c.n_steps, n, r->m->n_mid) < 0) goto done;
    if (!(c.q0 = py_as_vector(q0, n, "q0")) || !(c.p0 = py_as_vector(p0, n, "p0"))) goto done;
    ret = py_run_integrate(r, &c);
done:
    Py_XDECREF(c.q0);
    Py_XDECREF(c.p0);
    self->busy = 0;
    return ret;
}

/* Work.step(q, p, h, t=0, k=0) -> as step: step k of a run, at time t. */
static PyObject *Work_step(WorkObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"q", "p", "h", "t", "k", NULL};
    PyObject *qo, *po, *ret = NULL;
    double h, t = 0.0;
    long k = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOd|dl", kwlist, &qo, &po, &h, &t, &k))
        return NULL;
    if (work_enter(self) < 0) return NULL;
    run *r = &self->r;
    PyArrayObject *q = NULL, *p = NULL;
    const int n = r->S->sys.n;
    if ((q = py_as_vector(qo, n, "q")) && (p = py_as_vector(po, n, "p")))
        ret = py_run_one_step(r, q, p, h, t, k);
    Py_XDECREF(q);
    Py_XDECREF(p);
    self->busy = 0;
    return ret;
}

/* Work.set_force(spec): the run's force replaced by spec (a force
 * description, None: none); the predictor history starts again. */
static PyObject *Work_set_force(WorkObject *self, PyObject *spec)
{
    if (work_enter(self) < 0) return NULL;
    run *r = &self->r;
    PyObject *ret = NULL;
    if (self->linear) {
        PyErr_SetString(PyExc_ValueError, "set_force: the closed form takes no force");
    } else if (py_force_replace(&r->force, spec, r->S->sys.n, r->w) == 0) {
        Py_INCREF(spec);
        Py_XSETREF(r->force_in, spec);
        ret = Py_NewRef(Py_None);
    }
    self->busy = 0;
    return ret;
}

/* Work.set_hold(hold, k0=0): the attached force's held values pointed at
 * hold ((rows, P n), row 0 during step k0; used in place when float64 and
 * C-contiguous; None removes the held part), the history kept. */
static PyObject *Work_set_hold(WorkObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"hold", "k0", NULL};
    PyObject *o;
    long k0 = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|l", kwlist, &o, &k0)) return NULL;
    if (work_enter(self) < 0) return NULL;
    run *r = &self->r;
    const int st = py_force_set_hold(&r->force, r->w, o, k0, r->S->sys.n);
    self->busy = 0;
    if (st < 0) return NULL;
    Py_RETURN_NONE;
}

/* Work.shoot(q0, p0, k, h, jacobians=None, h_jacobians=None, points=None) ->
 * as _core.shoot, on the kept workspace (item b reads row b of the held
 * force: set_hold(hold, 0) with B rows). */
static PyObject *Work_shoot(WorkObject *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"q0", "p0", "k", "h", "jacobians", "h_jacobians", "points", NULL};
    PyObject *q_in, *p_in, *k_in, *h_in, *ret = NULL;
    PyArrayObject *K = NULL, *H = NULL;
    run_call c = {.store_every = 1, .jacobians = Py_None, .h_jacobians = Py_None,
                  .points = Py_None};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOO|OOO", kwlist, &q_in, &p_in, &k_in, &h_in,
                                     &c.jacobians, &c.h_jacobians, &c.points))
        return NULL;
    if (py_shoot_times(k_in, h_in, &K, &H) < 0) return NULL;
    if (work_enter(self) == 0) {
        ret = py_shoot_on(&self->r, &c, q_in, p_in, K, H);
        self->busy = 0;
    }
    Py_DECREF(K);
    Py_DECREF(H);
    return ret;
}

/* Work.counts() -> (steps, evaluations, iterations, factorizations,
 * branch_checks, branch_fixes) since the workspace was made */
static PyObject *Work_counts(WorkObject *self, PyObject *unused)
{
    (void)unused;
    sym_counts c;
    sym_work_counts(self->ready ? self->r.w : NULL, &c);
    return Py_BuildValue("(llllll)", c.steps, c.evaluations, c.iterations, c.factorizations,
                         c.branch_checks, c.branch_fixes);
}

/* Work.reset(): forget the predictor history (the next step starts from a
 * Taylor predictor); the counts stay. */
static PyObject *Work_reset(WorkObject *self, PyObject *unused)
{
    (void)unused;
    if (work_enter(self) < 0) return NULL;
    sym_work_reset(self->r.w);
    self->busy = 0;
    Py_RETURN_NONE;
}

static PyMethodDef Work_methods[] = {
    {"integrate", (PyCFunction)(void (*)(void))Work_integrate, METH_VARARGS | METH_KEYWORDS,
     "integrate(q0, p0, h, n_steps, t0=0, k0=0, ...) -> as _core.integrate, on the kept "
     "workspace: steps k0 .. k0 + n_steps - 1 of a run from t0"},
    {"step", (PyCFunction)(void (*)(void))Work_step, METH_VARARGS | METH_KEYWORDS,
     "step(q, p, h, t=0, k=0) -> as _core.step: step k at time t on the kept workspace"},
    {"set_force", (PyCFunction)Work_set_force, METH_O,
     "set_force(spec): replace the run's force (a force description, None: none); the "
     "predictor history starts again"},
    {"set_hold", (PyCFunction)(void (*)(void))Work_set_hold, METH_VARARGS | METH_KEYWORDS,
     "set_hold(hold, k0=0): the attached force's held values (rows, P n), row 0 during step "
     "k0, used in place (None: no held part); the history stays"},
    {"shoot", (PyCFunction)(void (*)(void))Work_shoot, METH_VARARGS | METH_KEYWORDS,
     "shoot(q0, p0, k, h, jacobians=None, h_jacobians=None, points=None) -> as _core.shoot, "
     "on the kept workspace"},
    {"counts", (PyCFunction)Work_counts, METH_NOARGS,
     "counts() -> (steps, evaluations, iterations, factorizations, branch_checks, "
     "branch_fixes) of the workspace so far"},
    {"reset", (PyCFunction)Work_reset, METH_NOARGS,
     "reset(): forget the predictor history"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Work_slots[] = {
    {Py_tp_dealloc, PY_SLOT_FN(Work_dealloc)},
    {Py_tp_traverse, PY_SLOT_FN(Work_traverse)},
    {Py_tp_clear, PY_SLOT_FN(Work_clear)},
    {Py_tp_methods, Work_methods},
    {Py_tp_doc, "A prepared run kept across calls (symplectic._core.work makes one)."},
    {0, NULL}};

PyType_Spec py_Work_spec = {
    "symplectic._core.Work", sizeof(WorkObject), 0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION, Work_slots};
