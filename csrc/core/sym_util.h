/*
 * sym_util.h -- small helpers shared by the core's files (private).
 */
#ifndef SYM_UTIL_H
#define SYM_UTIL_H

#include <stddef.h>
#include <string.h>

/* Force inlining where a kernel is instantiated for small fixed sizes, so
 * that the compiler unrolls its loops (n = 1..4 covers the papers' systems). */
#if defined(__GNUC__) || defined(__clang__)
#define SYM_INLINE static inline __attribute__((always_inline))
#else
#define SYM_INLINE static inline
#endif

/* Functions and data shared between the core's files but not part of its
 * API: hidden from a shared object's dynamic symbols, so that calls to them
 * are direct and may be inlined (no interposition through the PLT). */
#if defined(__GNUC__) || defined(__clang__)
#define SYM_PRIVATE __attribute__((visibility("hidden")))
#else
#define SYM_PRIVATE
#endif

/* Doubles of k consecutive slices of count[i] doubles each. */
static inline double sym_slices_size(const double *count, int k)
{
    double total = 0.0;
    for (int i = 0; i < k; i++) total += count[i];
    return total;
}

/* Hand out k consecutive slices of a block from cur: *slot[i] receives
 * count[i] doubles. */
static inline void sym_lay_out(double *cur, double **const *slot, const double *count, int k)
{
    for (int i = 0; i < k; i++) {
        *slot[i] = cur;
        cur += (size_t)count[i];
    }
}

/* Compile-time check (C99): an array of negative size when COND is false. */
#define SYM_STATIC_CHECK(COND) ((void)sizeof(char[(COND) ? 1 : -1]))

/* Doubles that hold k ints (int arrays live in the same block). */
static inline size_t sym_int_doubles(size_t k)
{
    return (k * sizeof(int) + sizeof(double) - 1) / sizeof(double);
}

/* The row named `name` of a table of `count` rows of `size` bytes whose
 * first member is the name (const char *); NULL when there is none. */
static inline const void *sym_row_find(const void *rows, int count, size_t size,
                                       const char *name)
{
    if (!name) return NULL;
    for (int i = 0; i < count; i++) {
        const void *row = (const char *)rows + (size_t)i * size;
        if (strcmp(*(const char *const *)row, name) == 0) return row;
    }
    return NULL;
}

/* The access functions of a registry: PREFIX_count, PREFIX_at and
 * PREFIX_find over the static array TABLE of TYPE rows (named by their
 * first member). */
#define SYM_ROW_ACCESS(TYPE, TABLE, PREFIX)                                             \
    int PREFIX##_count(void)                                                            \
    {                                                                                   \
        return (int)(sizeof(TABLE) / sizeof(TABLE[0]));                                 \
    }                                                                                   \
    const TYPE *PREFIX##_at(int i)                                                      \
    {                                                                                   \
        return (i >= 0 && i < PREFIX##_count()) ? &TABLE[i] : NULL;                     \
    }                                                                                   \
    const TYPE *PREFIX##_find(const char *name)                                         \
    {                                                                                   \
        return (const TYPE *)sym_row_find(TABLE, PREFIX##_count(), sizeof(TABLE[0]), name); \
    }

/* The running maximum m of |values| with v the next one, NaN sticky: a
 * NaN value makes the maximum NaN and it stays NaN (the plain
 * `if (!(v <= m)) m = v` lets a later finite value replace it).  Equal to
 * the plain update for finite values. */
SYM_INLINE double sym_nanmax(double m, double v)
{
    return (m != m || v <= m) ? m : v;
}

#endif /* SYM_UTIL_H */
