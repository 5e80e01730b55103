/*
 * py_errors.c -- C status codes as Python exceptions.
 *
 * One table gives each SYM_E* code its exception type; the message is the
 * core's sym_strerror text with the caller's context around it.  Two cases
 * say more: a compiled callback's recorded nonzero return (the value, what
 * was asked for and q) and a workspace that cannot be allocated (how large
 * the Newton system is).  An exception already pending (a Python callback's
 * own, or KeyboardInterrupt) always passes through unchanged.
 */
#include "py_core.h"

#include <string.h>

/* The exception type of a status.  (A local table: the PyExc_* objects are
 * not address constants on every platform.) */
static PyObject *status_type(int st)
{
    const struct {
        int status;
        PyObject *type;
    } table[] = {
        {SYM_ECALLBACK, PyExc_RuntimeError},      /* a callback failed           */
        {SYM_ENOCONV, PyExc_RuntimeError},        /* Newton did not converge     */
        {SYM_ESINGULAR, PyExc_RuntimeError},      /* singular Newton matrix      */
        {SYM_ENONFINITE, PyExc_RuntimeError},     /* nan or inf appeared         */
        {SYM_EMASS, PyExc_ValueError},            /* M(q) not SPD                */
        {SYM_EINVAL, PyExc_ValueError},           /* an argument the core refused */
        {SYM_ENOMEM, PyExc_MemoryError},
        {SYM_EMETHOD, PyExc_ValueError},          /* unknown method              */
        {SYM_ESYSTEM, PyExc_ValueError},          /* unknown built-in / params   */
        {SYM_EINTERRUPT, PyExc_KeyboardInterrupt}, /* stopped by progress        */
        {SYM_EIMPLAUSIBLE, PyExc_RuntimeError},   /* a spurious Newton root      */
        {SYM_ECONSTRAINT, PyExc_RuntimeError},    /* G(q) lost rank              */
        {SYM_ENOTCONSTRAINED, PyExc_ValueError},  /* constraints not supported   */
        {SYM_ECHART, PyExc_ValueError},           /* q at a coordinate singularity */
        {SYM_EBRANCH, PyExc_RuntimeError},        /* a wrong branch, not followed */
        {SYM_EUNSTABLE, PyExc_RuntimeError}       /* h beyond the stability limit */
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (table[k].status == st) return table[k].type;
    return PyExc_RuntimeError;                    /* a code this binding does not know */
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

/* The error for a compiled callback's nonzero return recorded in call: names
 * the value, what was asked for and q.  0 if nothing was recorded. */
static int raise_recorded_failure(const py_call *call)
{
    if (!call || !call->failed) return 0;
    char what[64];
    const unsigned cneed = call->need >> PY_CNEED_SHIFT;   /* a constraint callback's */
    if (cneed) {
        static const char *const names[3] = {"g", "G", "S"};
        size_t off = 0;
        what[0] = '\0';
        for (int k = 0; k < 3 && off < sizeof what; k++)
            if (cneed & (1u << k))
                off += (size_t)snprintf(what + off, sizeof what - off, "%s%s", off ? ", " : "",
                                        names[k]);
    } else {
        need_str(what, sizeof what, call->need);
    }
    PyObject *qr = py_vec_copy(call->q, call->sys.n);
    PyErr_Format(PyExc_RuntimeError,
                 "the compiled %scallback returned %d (nonzero: stop) when asked for %s "
                 "(need = %u) at q = %R", cneed ? "constraint " : "", call->rc, what,
                 cneed ? cneed : call->need, qr ? qr : Py_None);
    Py_XDECREF(qr);
    return 1;
}

/* Raise the exception for a failed status st: "<before><sym_strerror(st)>
 * <after>" (before/after may be NULL), unless an exception is pending or call
 * (may be NULL) recorded a compiled callback's failure.  Returns NULL. */
PyObject *py_raise_status(int st, const py_call *call, const char *before, const char *after)
{
    if (PyErr_Occurred()) return NULL;
    if (st == SYM_ECALLBACK && raise_recorded_failure(call)) return NULL;
    PyErr_Format(status_type(st), "%s%s%s", before ? before : "", sym_strerror(st),
                 after ? after : "");
    return NULL;
}

/* The error of a failed sym_work_new / sym_integrate for n degrees of
 * freedom: a MemoryError that says how large the Newton system is when the
 * workspace could not be had. */
PyObject *py_raise_work_status(int st, int n, const sym_method *m)
{
    if (st != SYM_ENOMEM || PyErr_Occurred()) return py_raise_status(st, NULL, NULL, NULL);
    const double nu = (double)sym_method_unknowns(m, n);
    const double gib = 8.0 * sym_method_work_doubles(m, n) / 1073741824.0;
    char buf[256];   /* PyErr_Format has no %g or %f: the numbers are formatted here */
    if (nu > SYM_MAX_DOF)
        snprintf(buf, sizeof buf,
                 "method '%s' with n = %d needs a %.0f x %.0f Newton matrix (about %.1f GiB); "
                 "the largest supported Newton system is %d x %d",
                 m->name, n, nu, nu, gib, SYM_MAX_DOF, SYM_MAX_DOF);
    else
        snprintf(buf, sizeof buf,
                 "cannot allocate the workspace of method '%s' for n = %d (about %.2g GiB)",
                 m->name, n, gib);
    PyErr_SetString(PyExc_MemoryError, buf);
    return NULL;
}
