/*
 * The baseline of bench/cpu-spmm-widths.ts: SpMM Y = A B as one writes it in
 * C, the column loop innermost with K known at run time (restrict pointers,
 * gcc -O3 -march=native vectorises it), f32 and f64. Usage: spmm FILE RUNS K...
 * with FILE the CSR the bench wrote (int32 rows, cols, nnz; row pointers;
 * column indices). Prints per K and dtype the least time of RUNS calls, us:
 * "f32 K us" lines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

#define SPMM(T, NAME)                                                                                   \
  __attribute__((noinline)) static void NAME(int rows, int k, const int32_t *restrict rp,               \
                                             const int32_t *restrict ci, const T *restrict v,           \
                                             const T *restrict B, T *restrict Y) {                      \
    for (int i = 0; i < rows; i++) {                                                                    \
      T *restrict y = Y + (size_t)i * k;                                                                \
      for (int c = 0; c < k; c++) y[c] = 0;                                                             \
      for (int p = rp[i]; p < rp[i + 1]; p++) {                                                         \
        const T a = v[p];                                                                               \
        const T *restrict b = B + (size_t)ci[p] * k;                                                    \
        for (int c = 0; c < k; c++) y[c] += a * b[c];                                                   \
      }                                                                                                 \
    }                                                                                                   \
  }
SPMM(float, spmm_f32)
SPMM(double, spmm_f64)

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  FILE *f = fopen(argv[1], "rb");
  int32_t head[3];
  if (!f || fread(head, 4, 3, f) != 3) return 3;
  int rows = head[0], cols = head[1], nnz = head[2], runs = atoi(argv[2]);
  int32_t *rp = malloc(4 * (size_t)(rows + 1)), *ci = malloc(4 * (size_t)nnz + 4);
  if (!rp || !ci || fread(rp, 4, rows + 1, f) != (size_t)rows + 1 || fread(ci, 4, nnz, f) != (size_t)nnz) return 4;
  fclose(f);
  float *v32 = malloc(4 * (size_t)nnz + 4);
  double *v64 = malloc(8 * (size_t)nnz + 8);
  for (int p = 0; p < nnz; p++) v32[p] = (float)(v64[p] = 0.5 + (p % 7) * 0.125);
  for (int a = 3; a < argc; a++) {
    int k = atoi(argv[a]);
    float *B32 = malloc(4 * (size_t)cols * k), *Y32 = malloc(4 * (size_t)rows * k);
    double *B64 = malloc(8 * (size_t)cols * k), *Y64 = malloc(8 * (size_t)rows * k);
    for (size_t i = 0; i < (size_t)cols * k; i++) B32[i] = (float)(B64[i] = (i % 5) * 0.5);
    double best32 = 1e30, best64 = 1e30;
    spmm_f32(rows, k, rp, ci, v32, B32, Y32);
    spmm_f64(rows, k, rp, ci, v64, B64, Y64);
    for (int r = 0; r < runs; r++) {
      double t = now_us();
      spmm_f32(rows, k, rp, ci, v32, B32, Y32);
      t = now_us() - t;
      if (t < best32) best32 = t;
      t = now_us();
      spmm_f64(rows, k, rp, ci, v64, B64, Y64);
      t = now_us() - t;
      if (t < best64) best64 = t;
    }
    printf("f32 %d %.3f %.6g\nf64 %d %.3f %.6g\n", k, best32, (double)Y32[rows / 2], k, best64, Y64[rows / 2]);
    free(B32), free(Y32), free(B64), free(Y64);
  }
  return 0;
}
