/* This machine's f64 FMA throughput, the roof the peers are measured against.
 *
 * How it measures: every thread runs CHAINS independent accumulator chains
 * acc_i ← acc_i · a + b, each a vector FMA on the widest registers the compiler targets
 * (-march=native: 8 lanes with AVX-512, 4 with AVX2, else 1). CHAINS = 16 covers the FMA
 * latency (4–5 cycles) times the FMA pipes (2) with room to spare, so the loop is
 * throughput-bound with no memory traffic. Flops = 2 per lane per FMA. It runs first on one
 * thread (per core), then on all OpenMP threads at once (total); each figure is the best of
 * REPEATS runs of ITERATIONS loop trips. The sum of the accumulators is printed so that
 * nothing is optimised away (a = 1 − 2⁻²⁰, b = 2⁻²⁰ keep every value near 1: no
 * overflow, no subnormals).
 *
 *   cc -O3 -march=native -fopenmp -o fma_peak fma_peak.c && ./fma_peak      # prints JSON */
#include <omp.h>
#include <stdio.h>

#if defined(__AVX512F__)
#define LANES 8
#elif defined(__AVX2__) || defined(__AVX__)
#define LANES 4
#else
#define LANES 1
#endif
#define CHAINS 16
#define ITERATIONS 50000000L
#define REPEATS 5

typedef double vec __attribute__((vector_size(8 * LANES)));

/* One thread's chains for ITERATIONS trips; returns the sum of the accumulators. */
static double chains(double seed) {
    vec acc[CHAINS], a, b;
    for (int l = 0; l < LANES; l++) a[l] = 1.0 - 0x1p-20, b[l] = 0x1p-20;
    for (int i = 0; i < CHAINS; i++)
        for (int l = 0; l < LANES; l++) acc[i][l] = seed + i + l;
    for (long t = 0; t < ITERATIONS; t++) {
        __asm__ volatile("" : "+v"(a)); /* keeps the trip from being folded */
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++) acc[i] = acc[i] * a + b;
    }
    double sum = 0;
    for (int i = 0; i < CHAINS; i++)
        for (int l = 0; l < LANES; l++) sum += acc[i][l];
    return sum;
}

/* Best GFLOP/s of `threads` threads running chains() at once, summed over threads. */
static double measure(int threads, double *sink) {
    double best = 0;
    for (int r = 0; r < REPEATS; r++) {
        double start = omp_get_wtime(), sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        sum += chains(omp_get_thread_num() + r);
        double seconds = omp_get_wtime() - start;
        double flops = 2.0 * LANES * CHAINS * ITERATIONS * threads;
        if (flops / seconds > best) best = flops / seconds;
        *sink += sum;
    }
    return best / 1e9;
}

int main(void) {
    double sink = 0;
    int threads = omp_get_max_threads();
    double one = measure(1, &sink), all = measure(threads, &sink);
    printf("{\"lanes\": %d, \"chains\": %d, \"threads\": %d, \"gflops_per_core\": %.1f, "
           "\"gflops_total\": %.1f, \"checksum\": %.6g}\n",
           LANES, CHAINS, threads, one, all, sink);
    return 0;
}
