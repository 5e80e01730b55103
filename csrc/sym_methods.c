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
