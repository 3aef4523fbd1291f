/* The ceiling: x_{k+1} = x_k + Δ [x_k; U_k] for every member of a `harbor export-members`
 * directory, reading only its delta.npy (members × n × p), inputs.npy (steps × s × m) and
 * x0.npy (members × n); 2 n p flops per member-step, each an FMA on 8 lanes (AVX-512).
 *
 * Members go in units whose operators are copied once (setup) into the kernel's layout and
 * stay in cache for all the unit's steps; OpenMP shares the units among the cores:
 * - n not a multiple of 32: blocks of 64 members (32 where 64 would take more than
 *   32 KiB: n = 8) stored member-minor (Δ[r][c][member]), so every vector holds 8 members
 *   and the block's operators sit in L1 (4 KiB at n = 2, 20 KiB at n = 8); each step is
 *   register-tiled, RT rows × VT vectors of accumulators, so a loaded x vector serves RT
 *   rows;
 * - n a multiple of 32: groups of 4 members, each with its own Δᵀ[c][r] (8.5 KiB at n = 32,
 *   so the group sits in L1, where a 64-member block would need 544 KiB of L2); vectors
 *   hold 8 rows of one member and x[c] is broadcast.
 * The stepping is timed alone, best of REPEATS runs from x0.
 *
 *   cc -O3 -march=native -fopenmp -o c_loop c_loop.c -lm
 *   ./c_loop EXPORT_DIR [FINAL_STATE_NPY]       # prints JSON; exits 1 if it disagrees */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define BLOCK 64     /* members per block, at most */
#define L1_SHARE 32768 /* bytes of a block's operators, at most, where 32 members allow */
#define LANES 8
#define GROUP 4
#define REPEATS 5
typedef double vec __attribute__((vector_size(8 * LANES)));

/* Reads an f64 C-order NPY file (format 1.0): its values, and its dimensions into dims
 * (up to 3, 0 after the last). */
static double *npy(const char *path, long dims[3]) {
    char header[65536];
    unsigned char pre[10];
    FILE *f = fopen(path, "rb");
    if (!f || fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY\x01", 7)) {
        fprintf(stderr, "%s: not an NPY 1.0 file\n", path);
        exit(2);
    }
    size_t len = pre[8] | pre[9] << 8;
    if (fread(header, 1, len, f) != len) exit(2);
    header[len] = 0;
    char *p = strstr(header, "'shape'");
    if (!strstr(header, "'<f8'") || !strstr(header, "False") || !p) {
        fprintf(stderr, "%s: need little-endian f64 in C order, got %s\n", path, header);
        exit(2);
    }
    long count = 1;
    p = strchr(p, '(') + 1;
    for (int i = 0; i < 3; i++) {
        char *end;
        dims[i] = strtol(p, &end, 10);
        if (end == p) dims[i] = 0; else count *= dims[i];
        p = end + strspn(end, ", ");
    }
    double *values = malloc(8 * count + 8);
    if (fread(values, 8, count, f) != (size_t)count) exit(2);
    fclose(f);
    return values;
}

/* Member-minor kernel (n not a multiple of 32): one step of a block of vb vectors of 8
 * members, out = in + Δ [in; u] with Δ[r][c][member], in tiles of RT rows × VT vectors;
 * a loaded x vector serves RT rows. */
#define STEP(RT, VT)                                                                         \
    static void step_##RT##_##VT(const vec *op, const vec *in, vec *out, const double *u,   \
                                 long n, long p, long vb) {                                  \
        for (long v0 = 0; v0 < vb; v0 += VT)                                                \
            for (long r0 = 0; r0 < n; r0 += RT) {                                           \
                vec acc[RT][VT];                                                             \
                for (int i = 0; i < RT; i++)                                                 \
                    for (int j = 0; j < VT; j++) acc[i][j] = in[(r0 + i) * vb + v0 + j];    \
                for (long c = 0; c < p; c++) { /* x for c < n, the shared input after */   \
                    vec x[VT];                                                               \
                    for (int j = 0; j < VT; j++)                                             \
                        x[j] = c < n ? in[c * vb + v0 + j] : (vec){} + u[c - n];             \
                    for (int i = 0; i < RT; i++)                                             \
                        for (int j = 0; j < VT; j++)                                         \
                            acc[i][j] += op[((r0 + i) * p + c) * vb + v0 + j] * x[j];        \
                }                                                                            \
                for (int i = 0; i < RT; i++)                                                 \
                    for (int j = 0; j < VT; j++) out[(r0 + i) * vb + v0 + j] = acc[i][j];   \
            }                                                                                \
    }
STEP(1, 4) STEP(1, 8) STEP(2, 4) STEP(2, 8) STEP(4, 4) STEP(8, 2)

/* Row kernel (n a multiple of 32): one step of a group of GROUP members, each with its own
 * Δᵀ[c][r] (n p · 8 bytes: 8.5 KiB at n = 32, so a group's operators sit in L1); rows go
 * 32 at a time (4 vectors) for every member of the group, x[c] broadcast. */
static void step_rows(const vec *op, const vec *in, vec *out, const double *u, long n, long p,
                      long vb) {
    (void)vb;
    const double *xs = (const double *)in;
    for (long r0 = 0; r0 < n / LANES; r0 += 4) {
        vec acc[GROUP][4];
        for (int m = 0; m < GROUP; m++)
            for (int r = 0; r < 4; r++) acc[m][r] = in[m * n / LANES + r0 + r];
        for (long c = 0; c < p; c++)
            for (int m = 0; m < GROUP; m++) {
                double x = c < n ? xs[m * n + c] : u[c - n];
                for (int r = 0; r < 4; r++) acc[m][r] += op[(m * p + c) * (n / LANES) + r0 + r] * x;
            }
        for (int m = 0; m < GROUP; m++)
            for (int r = 0; r < 4; r++) out[m * n / LANES + r0 + r] = acc[m][r];
    }
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s EXPORT_DIR [FINAL_STATE_NPY]\n", argv[0]); return 2; }
    char path[4096];
    long dd[3], du[3], dx[3];
    snprintf(path, sizeof path, "%s/delta.npy", argv[1]);
    double *delta = npy(path, dd);
    snprintf(path, sizeof path, "%s/inputs.npy", argv[1]);
    double *u = npy(path, du);
    snprintf(path, sizeof path, "%s/x0.npy", argv[1]);
    double *x0 = npy(path, dx), *x = malloc(8 * dx[0] * dx[1] + 8);
    long members = dd[0], n = dd[1], p = dd[2], steps = du[0];
    /* Which kernel, and its unit of members: 64-member blocks where their operators fit
     * L1_SHARE, else 32 (n = 8: 40 KiB would fill the 48 KiB L1 to the last way). */
    int rows = n % 32 == 0;
    long block = 8 * n * p * BLOCK <= L1_SHARE ? BLOCK : BLOCK / 2, vb = block / LANES;
    long unit = rows ? GROUP : block, units = (members + unit - 1) / unit;
    void (*step)(const vec *, const vec *, vec *, const double *, long, long, long) =
        rows ? step_rows : n % 8 == 0 ? step_8_2 : n % 4 == 0 ? step_4_4
        : n % 2 == 0 ? (vb == 8 ? step_2_8 : step_2_4) : (vb == 8 ? step_1_8 : step_1_4);
    double t0 = omp_get_wtime(), best = INFINITY;
    double *ops = aligned_alloc(64, 8 * n * p * unit * units);
    #pragma omp parallel for                       /* setup: Δ[r][c][member] or Δᵀ[member][c][r] */
    for (long g = 0; g < units; g++)
        for (long b = 0; b < unit; b++)
            for (long r = 0; r < n; r++)
                for (long c = 0; c < p; c++) {
                    long i = g * unit + b;
                    double value = i < members ? delta[(i * n + r) * p + c] : 0;
                    ops[g * unit * n * p + (rows ? (b * p + c) * n + r : (r * p + c) * block + b)] = value;
                }
    double setup = omp_get_wtime() - t0;
    for (int repeat = 0; repeat < REPEATS; repeat++) {
        double t1 = omp_get_wtime();
        #pragma omp parallel for schedule(dynamic)
        for (long g = 0; g < units; g++) {
            double *xs = aligned_alloc(64, 16 * n * unit); /* two buffers, same layout as ops */
            for (long b = 0; b < unit; b++)
                for (long r = 0; r < n; r++) {
                    long i = g * unit + b;
                    xs[rows ? b * n + r : r * block + b] = i < members ? x0[i * n + r] : 0;
                }
            for (long k = 0; k < steps; k++)
                step((const vec *)(ops + g * unit * n * p), (const vec *)(xs + (k & 1) * n * unit),
                     (vec *)(xs + (~k & 1) * n * unit), u + k * (p - n), n, p, vb);
            for (long b = 0; b < unit && g * unit + b < members; b++)
                for (long r = 0; r < n; r++)
                    x[(g * unit + b) * n + r] = xs[(steps & 1) * n * unit + (rows ? b * n + r : r * block + b)];
            free(xs);
        }
        best = fmin(best, omp_get_wtime() - t1);
    }
    double difference = -1, scale = 0;
    if (argc > 2) {
        long dr[3];
        double *ref = npy(argv[2], dr);
        if (dr[0] != members || dr[1] != n) { fprintf(stderr, "%s: shape differs\n", argv[2]); return 2; }
        for (long i = 0; i < members * n; i++) scale = fmax(scale, fabs(ref[i]));
        difference = 0;
        for (long i = 0; i < members * n; i++) difference = fmax(difference, fabs(x[i] - ref[i]) / scale);
    }
    printf("{\"peer\": \"c-loop\", \"threads\": %d, \"members\": %ld, \"steps\": %ld, \"states\": %ld, "
           "\"setup_seconds\": %.6g, \"step_seconds\": %.6g, \"member_steps_per_second\": %.6g, "
           "\"flops_per_member_step\": %ld",
           omp_get_max_threads(), members, steps, n, setup, best, members * steps / best, 2 * n * p);
    if (argc > 2)
        printf(", \"max_relative_difference\": %.3e, \"agrees\": %s", difference, difference <= 1e-9 ? "true" : "false");
    printf("}\n");
    return argc > 2 && !(difference <= 1e-9);
}
