/*
 * sym_status.c -- the text of each status code (symplectic.h, enum
 * sym_status).  The binding passes these strings on, so a new code needs a
 * line here and nowhere else.
 */
#include "symplectic.h"

const char *sym_strerror(int status)
{
    switch (status) {
    case SYM_OK: return "success";
    case SYM_ECALLBACK: return "a system callback reported an error";
    case SYM_ENOCONV: return "Newton iteration did not converge";
    case SYM_ESINGULAR: return "Newton matrix is singular";
    case SYM_ENONFINITE: return "a non-finite value (nan or inf) appeared";
    case SYM_EMASS: return "mass matrix is not symmetric positive definite";
    case SYM_EINVAL: return "invalid argument";
    case SYM_ENOMEM: return "out of memory";
    case SYM_EMETHOD: return "unknown method";
    case SYM_ESYSTEM: return "unknown built-in system or invalid parameters";
    case SYM_EINTERRUPT: return "interrupted";
    case SYM_EIMPLAUSIBLE:
        return "implausible Newton root: the step's final kinetic energy exceeds 10 times its "
               "initial kinetic energy plus the work of the potential along it (a spurious "
               "solution of the step equations, or h beyond the stability limit; reduce h)";
    case SYM_ECHART:
        return "coordinate singularity: the configuration is too close to a singular point of the "
               "system's coordinates to be integrated accurately (the ZXZ Euler angles of the "
               "heavy top: its axis within 0.01 rad of the vertical, |sin(theta)| < 0.01, where "
               "their mass matrix is singular); coordinates without this singularity (for the "
               "top: unit quaternions) are needed";
    case SYM_ECONSTRAINT:
        return "the constraint Jacobian G(q) lost rank (G M^-1 G^T is singular): the "
               "constraints are dependent or the motion reached a singular configuration";
    case SYM_ENOTCONSTRAINED:
        return "holonomic constraints are not supported by this method or operation (only "
               "the variational schemes enforce them; rk4 and the tangent map do not)";
    case SYM_EBRANCH:
        return "wrong branch: the root Newton found for this step could not be confirmed as "
               "the one continued from h -> 0 and its energy jumped (a spurious solution of the "
               "step equations, or h so large that they turn singular on the way from h -> 0); "
               "reduce h";
    case SYM_EUNSTABLE:
        return "unstable step size: the step changed the energy by more than a stable step "
               "can (its root is the one continued from h -> 0, so h is beyond the method's "
               "stability limit for the fastest motion); reduce h";
    default: return "unknown status code";
    }
}
