/*
 * sym_unroll.h -- SYM_UNROLL asks the compiler to unroll the next loop
 * completely when its trip count is a compile-time constant (the small
 * fixed-size kernel instances); it changes no operation or its order.
 * SYM_UNROLL: up to 16 iterations (the small LU, m <= 16).
 * SYM_UNROLL_SMALL: up to 5 (the Galerkin kernels' loops over s <= 5 nodes,
 * n <= 4 components and tiles of 4): the same code in the fixed instances
 * as with 16, without gcc unrolling the runtime-size instances' loops 16
 * times (a compile many times as long).
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
