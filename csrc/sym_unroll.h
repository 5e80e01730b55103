/*
 * sym_unroll.h -- SYM_UNROLL asks the compiler to unroll the next loop
 * completely when its trip count is a compile-time constant (the small
 * fixed-size kernel instances); it changes no operation or its order.
 * SYM_UNROLL: up to 16 iterations (the small LU, m <= 16).
 * SYM_UNROLL_SMALL: up to 5 (the Galerkin kernels' loops over s <= 5 nodes,
 * n <= 4 components and tiles of 4): the factor 16 there made gcc spend
 * 50 s on sym_galerkin_kernels.c (its runtime-size instances) for the same
 * code in the fixed ones; 5 compiles in 4 s.
 */
#ifndef SYM_UNROLL_H
#define SYM_UNROLL_H

#if defined(__GNUC__) && !defined(__clang__)
#define SYM_UNROLL _Pragma("GCC unroll 16")
#define SYM_UNROLL_SMALL _Pragma("GCC unroll 5")
#elif defined(__clang__)
#define SYM_UNROLL _Pragma("unroll")
#define SYM_UNROLL_SMALL _Pragma("unroll 5")
#else
#define SYM_UNROLL
#define SYM_UNROLL_SMALL
#endif

#endif /* SYM_UNROLL_H */
