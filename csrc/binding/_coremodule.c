/*
 * _coremodule.c -- module init of symplectic._core, the CPython/NumPy binding
 * of the symplectic core, and the registry listings (methods, builtins).
 *
 * The binding's files and their layers are listed in py_core.h:
 *   symplectic._core.System          py_system.c (its forms: py_callbacks.c)
 *   step / integrate                 py_run.c (one integrate call: py_integrate.c)
 *   shoot                            py_shoot.c
 *   work (the Work type)             py_work.c
 *   newton_system, newton_direction, py_diag.c
 *   step_tangent
 *   methods / builtins               here
 *   NEWTON_MODES, BRANCH_MODES,      here: read from the core (sym_newton_mode_name,
 *   SOLVER_MODES, FORCE_MAX_TERMS    sym_branch_mode_name, sym_solver_mode_name,
 *                                    SYM_FORCE_MAX_TERMS)
 */
#define PY_CORE_IMPORT_ARRAY   /* this file imports NumPy's C API for all */
#include "py_core.h"
#include "sym_builtins.h"

#include <limits.h>

/* ------------------------------------------------------------------ */
/* The registries: methods, built-in systems, built-in force terms      */
/* ------------------------------------------------------------------ */
/* [row(0), ..., row(count - 1)]: a registry as a list of tuples (NULL with
 * an exception). */
static PyObject *registry_list(int count, PyObject *(*row)(int i))
{
    PyObject *lst = PyList_New(0);
    for (int i = 0; lst && i < count; i++) {
        PyObject *r = row(i);
        if (!r || PyList_Append(lst, r) < 0) { Py_XDECREF(r); Py_CLEAR(lst); break; }
        Py_DECREF(r);
    }
    return lst;
}

static PyObject *method_row(int i)
{
    const sym_method *m = sym_method_at(i);
    double c[SYM_MAX_NODES];
    const int s = sym_method_nodes(m, c);
    PyObject *nodes = PyTuple_New(s);
    for (int a = 0; nodes && a < s; a++) {
        PyObject *v = PyFloat_FromDouble(c[a]);
        if (!v) { Py_CLEAR(nodes); break; }
        PyTuple_SET_ITEM(nodes, a, v);
    }
    if (!nodes) return NULL;
    double re[SYM_MAX_NODES], im[SYM_MAX_NODES];
    const int ne = sym_method_newton_blocks(m, re, im);
    if (ne < 0) { Py_DECREF(nodes); return PyErr_NoMemory(); }
    PyObject *eig = PyTuple_New(ne);
    for (int k = 0; eig && k < ne; k++) {
        PyObject *v = PyComplex_FromDoubles(re[k], im[k]);
        if (!v) { Py_CLEAR(eig); break; }
        PyTuple_SET_ITEM(eig, k, v);
    }
    if (!eig) { Py_DECREF(nodes); return NULL; }
    double fx[SYM_MAX_NODES > 4 ? SYM_MAX_NODES : 4], fb[SYM_MAX_NODES > 4 ? SYM_MAX_NODES : 4];
    const int nf = sym_method_force_quadrature(m, fx, fb);
    PyObject *fq = PyTuple_New(nf);
    for (int i = 0; fq && i < nf; i++) {
        PyObject *v = Py_BuildValue("(dd)", fx[i], fb[i]);
        if (!v) { Py_CLEAR(fq); break; }
        PyTuple_SET_ITEM(fq, i, v);
    }
    if (!fq) { Py_DECREF(nodes); Py_DECREF(eig); return NULL; }
    return Py_BuildValue("(ssiiiNiNdiN)", m->name, m->doc, m->order, m->symplectic, m->n_mid,
                         nodes, sym_method_constrained(m), fq, m->stability,
                         sym_method_unknowns(m, 1) > 0, eig);
}

static PyObject *builtin_row(int i)
{
    const sym_builtin *b = sym_builtin_at(i);
    return Py_BuildValue("(sss)", b->name, b->doc, b->params_doc);
}

static PyObject *force_builtin_row(int i)
{
    const sym_force_builtin *b = sym_force_builtin_at(i);
    return Py_BuildValue("(ssii)", b->name, b->doc, b->n, b->npar);
}

static PyObject *mod_methods(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    return registry_list(sym_method_count(), method_row);
}

static PyObject *mod_builtins(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    return registry_list(sym_builtin_count(), builtin_row);
}

static PyObject *mod_force_builtins(PyObject *module, PyObject *unused)
{
    (void)module; (void)unused;
    return registry_list(sym_force_builtin_count(), force_builtin_row);
}

/* stored_rows(n_steps, every) -> the rows a run keeps (sym_stored_rows) */
static PyObject *mod_stored_rows(PyObject *module, PyObject *args)
{
    (void)module;
    long n_steps, every;
    if (!PyArg_ParseTuple(args, "ll", &n_steps, &every)) return NULL;
    return PyLong_FromLong(sym_stored_rows(n_steps, every));
}

/* output_bytes(n_steps, every, n, n_mid, forced, n_lam) -> the bytes of a
 * run's outputs (sym_run_output_bytes) */
static PyObject *mod_output_bytes(PyObject *module, PyObject *args)
{
    (void)module;
    long n_steps, every, n_lam;
    int n, n_mid, forced;
    if (!PyArg_ParseTuple(args, "lliipl", &n_steps, &every, &n, &n_mid, &forced, &n_lam))
        return NULL;
    return PyFloat_FromDouble(sym_run_output_bytes(n_steps, every, n, n_mid, forced, n_lam));
}

/* node_time(t0, k, h) -> t0 + k h as the driver rounds it (sym_node_time) */
static PyObject *mod_node_time(PyObject *module, PyObject *args)
{
    (void)module;
    double t0, h;
    long k;
    if (!PyArg_ParseTuple(args, "dld", &t0, &k, &h)) return NULL;
    return PyFloat_FromDouble(sym_node_time(t0, k, h));
}

/* asymmetry(A) -> None when the square float64 matrix A is symmetric by the
 * one rule (sym_symmetric), else the pair (i, j) of its largest difference */
static PyObject *mod_asymmetry(PyObject *module, PyObject *arg)
{
    (void)module;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(arg, NPY_DOUBLE, 2, 2,
                                                       NPY_ARRAY_IN_ARRAY);
    if (!a) return NULL;
    const npy_intp n = PyArray_DIM(a, 0);
    if (PyArray_DIM(a, 1) != n || n > INT_MAX) {
        Py_DECREF(a);
        PyErr_SetString(PyExc_ValueError, "asymmetry: a square matrix is required");
        return NULL;
    }
    int i, j;
    const int sym = sym_symmetric((int)n, PyArray_DATA(a), &i, &j);
    Py_DECREF(a);
    if (sym) Py_RETURN_NONE;
    return Py_BuildValue("(ii)", i, j);
}

/* strerror(status) -> the core's text of a status (sym_strerror): the one
 * source of every failure's reason */
static PyObject *mod_strerror(PyObject *module, PyObject *args)
{
    (void)module;
    int st;
    if (!PyArg_ParseTuple(args, "i", &st)) return NULL;
    return PyUnicode_FromString(sym_strerror(st));
}

static PyMethodDef module_methods[] = {
    {"step", (PyCFunction)(void (*)(void))mod_step, METH_VARARGS | METH_KEYWORDS,
     "step(system, q, p, h, method='simpson', rtol=0, max_iter=0, force=None, t=0, branch=0, "
     "chord=0, solver=0) -> "
     "(q1, p1, q_mid, status, iterations, residual, residual_rel, update, reason)"},
    {"integrate", (PyCFunction)(void (*)(void))mod_integrate, METH_VARARGS | METH_KEYWORDS,
     "integrate(system, q0, p0, h, n_steps, method='simpson', t0=0, rtol=0, max_iter=0, "
     "predictor=True, chord=False, cancel=None, force=None, multipliers=None, solver=0) -> "
     "(t, q, p, "
     "q_mid, iterations, n_done, failure); force: a description made by symplectic._forces "
     "(py_forces.c); multipliers: for a constrained system, an array (stored rows - 1, s, m) "
     "that receives the multipliers at the nodes of the step ending at each stored row; "
     "tangent: an array (stored rows, 2n, k) that receives d(q, p)/d(q0, p0) applied to "
     "tangent0 ((2n, k); None: the identity, k = 2n)"},
    {"shoot", (PyCFunction)(void (*)(void))mod_shoot, METH_VARARGS | METH_KEYWORDS,
     "shoot(system, q0, p0, k, h, method='simpson', rtol=0, max_iter=0, predictor=True, "
     "chord=0, branch=0, force=None, jacobians=None, h_jacobians=None, points=None, "
     "solver=0) -> (q1, "
     "p1, failed, failure): B independent steps, item b from (q0[b], p0[b]) at time k[b] h[b] "
     "with step h[b] and the held force's row b; the derivatives' arrays as integrate's with "
     "B for n_steps; failed = B, or the first item that failed (failure: status, reason, "
     "iterations, residual, residual_rel)"},
    {"work", (PyCFunction)(void (*)(void))mod_work, METH_VARARGS | METH_KEYWORDS,
     "work(system, q, p, method='simpson', rtol=0, max_iter=0, predictor=True, chord=0, "
     "branch=0, force=None, linear=None, solver=0) -> Work: a run kept across calls (its integrate and step "
     "continue one workspace: the predictor history, the counts)"},
    {"newton_system", (PyCFunction)(void (*)(void))mod_newton_system,
     METH_VARARGS | METH_KEYWORDS,
     "newton_system(system, q, p, h, X, method, force=None, t=0) -> (R, J): residual and "
     "Newton matrix of a variational scheme at increments X ((s-1) n; (s-1)(n + m) with m "
     "constraints) -- a diagnostic for tests."},
    {"newton_direction", (PyCFunction)(void (*)(void))mod_newton_direction,
     METH_VARARGS | METH_KEYWORDS,
     "newton_direction(system, q, p, h, X, b, method, force=None, t=0, solver=0) -> (R, "
     "rnorm, x, sign): the residual at increments X and the norm Newton reads, x = J^{-1} b "
     "and the sign of det J through the "
     "linear algebra the steps take (solver: SOLVER_MODES' value; the O(n) elimination where "
     "it applies) -- a diagnostic for tests."},
    {"adjoint_sweep", (PyCFunction)(void (*)(void))mod_adjoint_sweep,
     METH_VARARGS | METH_KEYWORDS,
     "adjoint_sweep(jacobians, lam_end, src=None, pjac=None) -> (lam0, grad_u[, grad_par]): "
     "the discrete adjoint "
     "sweep over a run's step derivatives (integrate's jacobians=): lambda_k = D_k^T "
     "lambda_{k+1} + src_k from lambda_N = lam_end; grad_u[k] = B_k^T lambda_{k+1} when the "
     "jacobians hold the held force's columns (else None); with pjac (N, 2n, n_par, "
     "integrate's params=) grad_par = sum_k C_k^T lambda_{k+1}"},
    {"step_tangent", (PyCFunction)(void (*)(void))mod_step_tangent, METH_VARARGS | METH_KEYWORDS,
     "step_tangent(system, q, p, h, method='simpson', rtol=0, max_iter=0, force=None, t=0, "
     "branch=0, chord=0, solver=0) -> "
     "(q1, p1, D): one step and its exact tangent map D = d(q1, p1)/d(q, p), (2n, 2n), (q, p) "
     "ordering."},
    {"asymmetry", mod_asymmetry, METH_O,
     "asymmetry(A) -> None if A is symmetric by the core's one rule (|A_ij - A_ji| <= "
     "SYMMETRY_RTOL max|A|), else the pair (i, j) of the largest difference"},
    {"strerror", mod_strerror, METH_VARARGS,
     "strerror(status) -> the C core's text of a status"},
    {"stored_rows", mod_stored_rows, METH_VARARGS,
     "stored_rows(n_steps, every) -> rows kept by a run storing every k-th state and the last"},
    {"output_bytes", mod_output_bytes, METH_VARARGS,
     "output_bytes(n_steps, every, n, n_mid, forced, n_lam) -> the bytes of a run's outputs "
     "(a float)"},
    {"node_time", mod_node_time, METH_VARARGS,
     "node_time(t0, k, h) -> the time t0 + k h of node k, rounded as the C driver rounds it"},
    {"methods", mod_methods, METH_NOARGS,
     "[(name, doc, order, symplectic, n_mid, nodes, constrained, force_points, stability, "
     "implicit, newton_blocks)]: "
     "nodes are the interpolation nodes c_a in [0, 1] of one step ((0, 1) for rk4); "
     "constrained: 1 if the method solves systems with holonomic constraints; force_points: "
     "((x_i, b_i), ...), the positions in [0, 1] and weights of one step's quadrature of a "
     "force's work (sym_method_force_quadrature); "
     "stability: the omega h below which the harmonic oscillator is stable (inf: any); "
     "newton_blocks: the eigenvalues of newton='decoupled''s table (sym_method_newton_blocks)"},
    {"builtins", mod_builtins, METH_NOARGS, "[(name, doc, params_doc)]"},
    {"force_builtins", mod_force_builtins, METH_NOARGS,
     "[(name, doc, n, npar)]: the force terms built into the core (n = 0: any)"},
    {NULL, NULL, 0, NULL}};

/* A read-only mapping name -> value of a core table of names (value 0, 1,
 * ... up to the first without a name) as the module's attribute `attr`. */
static int add_names(PyObject *module, const char *attr, const char *(*name)(int))
{
    PyObject *d = PyDict_New();
    for (int v = 0; d && name(v); v++) {
        PyObject *o = PyLong_FromLong(v);
        if (!o || PyDict_SetItemString(d, name(v), o) < 0) Py_CLEAR(d);
        Py_XDECREF(o);
    }
    PyObject *proxy = d ? PyDictProxy_New(d) : NULL;
    Py_XDECREF(d);
    const int rc = proxy ? PyModule_AddObjectRef(module, attr, proxy) : -1;
    Py_XDECREF(proxy);
    return rc;
}

static int module_exec(PyObject *module)
{
    import_array1(-1);
    module_state *ms = PyModule_GetState(module);
    ms->System_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &py_System_spec, NULL);
    if (!ms->System_type) return -1;
    if (PyModule_AddObjectRef(module, "System", (PyObject *)ms->System_type) < 0) return -1;
    ms->Work_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &py_Work_spec, NULL);
    if (!ms->Work_type) return -1;
    if (PyModule_AddObjectRef(module, "Work", (PyObject *)ms->Work_type) < 0) return -1;
    if (PyModule_AddIntConstant(module, "NEED_M", SYM_NEED_M) < 0 ||
        PyModule_AddIntConstant(module, "NEED_A", SYM_NEED_A) < 0 ||
        PyModule_AddIntConstant(module, "NEED_H", SYM_NEED_H) < 0 ||
        PyModule_AddIntConstant(module, "NEED_V", SYM_NEED_V) < 0 ||
        PyModule_AddIntConstant(module, "NEED_DV", SYM_NEED_DV) < 0 ||
        PyModule_AddIntConstant(module, "NEED_D2V", SYM_NEED_D2V) < 0)
        return -1;
    /* lagrange_top's refusal, for the pre-run check of symplectic/_model/_topchart.py:
     * its threshold on |sin theta| and the core's text of SYM_ECHART */
    if (PyModule_AddIntConstant(module, "ECHART", SYM_ECHART) < 0 ||
        PyModule_AddStringConstant(module, "ECHART_REASON", sym_strerror(SYM_ECHART)) < 0)
        return -1;
    /* the statuses whose failures symplectic/_run/_integrate.py completes with the
     * step's stability estimate */
    PyObject *srtol = PyFloat_FromDouble(SYM_SYMMETRY_RTOL);
    if (!srtol) return -1;
    const int src = PyModule_AddObjectRef(module, "SYMMETRY_RTOL", srtol);
    Py_DECREF(srtol);
    if (src < 0) return -1;
    if (PyModule_AddIntConstant(module, "EUNSTABLE", SYM_EUNSTABLE) < 0 ||
        PyModule_AddIntConstant(module, "ESINGULAR", SYM_ESINGULAR) < 0 ||
        PyModule_AddIntConstant(module, "EBRANCH", SYM_EBRANCH) < 0 ||
        PyModule_AddIntConstant(module, "ENONFINITE", SYM_ENONFINITE) < 0 ||
        PyModule_AddIntConstant(module, "ENOCONV", SYM_ENOCONV) < 0)
        return -1;
    /* the core's facts that Python reads rather than types: the Newton and
     * branch-check modes and the Newton matrix's linear algebra (name -> value
     * of sym_options.newton, .branch and .solver, the integrate/work/shoot
     * arguments chord, branch and solver) and the most
     * callback terms of a force (the force= argument's "terms") */
    if (add_names(module, "NEWTON_MODES", sym_newton_mode_name) < 0 ||
        add_names(module, "BRANCH_MODES", sym_branch_mode_name) < 0 ||
        add_names(module, "SOLVER_MODES", sym_solver_mode_name) < 0 ||
        PyModule_AddIntConstant(module, "FORCE_MAX_TERMS", SYM_FORCE_MAX_TERMS) < 0)
        return -1;
    PyObject *min_sin = PyFloat_FromDouble(SYM_TOP_MIN_SIN);
    if (!min_sin) return -1;
    const int rc = PyModule_AddObjectRef(module, "TOP_MIN_SIN", min_sin);
    Py_DECREF(min_sin);
    return rc < 0 ? -1 : 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *ms = PyModule_GetState(module);
    Py_VISIT(ms->System_type);
    Py_VISIT(ms->Work_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *ms = PyModule_GetState(module);
    Py_CLEAR(ms->System_type);
    Py_CLEAR(ms->Work_type);
    return 0;
}

static void module_free(void *module)
{
    module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, PY_SLOT_FN(module_exec)},
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
