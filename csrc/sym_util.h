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

/* One slice of a workspace block: *slot receives `count` doubles. */
typedef struct sym_slice {
    double **slot;
    size_t count;
} sym_slice;

/* Hand out consecutive slices of a block from `cur`; returns the end. */
static inline double *sym_lay_out(double *cur, const sym_slice *s, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        *s[i].slot = cur;
        cur += s[i].count;
    }
    return cur;
}

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

#endif /* SYM_UTIL_H */
