/*
 * sym_methods.c -- the method registry.  Adding a scheme: one file that
 * defines its sym_method, plus one line here.
 */
#include "symplectic.h"

#include <string.h>

extern const sym_method sym_method_simpson;
extern const sym_method sym_method_midpoint;
extern const sym_method sym_method_lobatto2;
extern const sym_method sym_method_lobatto3;
extern const sym_method sym_method_lobatto4;
extern const sym_method sym_method_lobatto5;

/* RK4 has no table: its step lives in sym_rk4.c. */
static const sym_method sym_method_rk4 = {
    "rk4",
    "Classical explicit Runge-Kutta 4 on Hamilton's equations "
    "qdot = M^-1 p, pdot = -grad V + 1/2 qdot^T dM qdot; order 4; not "
    "symplectic (the papers' reference method).",
    4, SYM_KIND_RK4, 0, 0, NULL,
};

static const sym_method *const registry[] = {
    &sym_method_simpson,
    &sym_method_midpoint,
    &sym_method_rk4,
    &sym_method_lobatto2,
    &sym_method_lobatto3,
    &sym_method_lobatto4,
    &sym_method_lobatto5,
};

int sym_method_count(void)
{
    return (int)(sizeof(registry) / sizeof(registry[0]));
}

const sym_method *sym_method_at(int i)
{
    return (i >= 0 && i < sym_method_count()) ? registry[i] : NULL;
}

const sym_method *sym_method_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < sym_method_count(); i++)
        if (strcmp(registry[i]->name, name) == 0) return registry[i];
    return NULL;
}

int sym_method_nodes(const sym_method *m, double *c)
{
    if (!m->table) {
        c[0] = 0.0;
        c[1] = 1.0;
        return 2;
    }
    for (int a = 0; a < m->table->s; a++) c[a] = m->table->c[a];
    return m->table->s;
}

int sym_method_unknowns(const sym_method *m, int n)
{
    return m->table ? (m->table->s - 1) * n : 0;
}

/* The O(n^2) terms of sym_work_new's block: for a Galerkin scheme the Newton
 * matrix (nu^2) and M, A, H, K at each of the r quadrature points plus two
 * n x n buffers; for RK4 two n x n buffers. */
double sym_method_work_doubles(const sym_method *m, int n)
{
    const double dn = (double)n;
    if (!m->table) return 2.0 * dn * dn;
    const double nu = (double)(m->table->s - 1) * dn;
    return nu * nu + (4.0 * m->table->r + 2.0) * dn * dn;
}
