/*
 * sym_unroll.h -- SYM_UNROLL asks the compiler to unroll the next loop
 * completely when its trip count is a compile-time constant (the small
 * fixed-size kernel instances); it changes no operation or its order.
 */
#ifndef SYM_UNROLL_H
#define SYM_UNROLL_H

#if defined(__GNUC__) && !defined(__clang__)
#define SYM_UNROLL _Pragma("GCC unroll 16")
#elif defined(__clang__)
#define SYM_UNROLL _Pragma("unroll")
#else
#define SYM_UNROLL
#endif

#endif /* SYM_UNROLL_H */
