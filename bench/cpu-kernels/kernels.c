/*
 * Baseline CPU kernels for bench/cpu-kernels.ts: CSR SpMV (f32, f64) and
 * SpMM with K = 32 (f32, explicit 8-wide vector extensions, since gcc's plain
 * loop over K is a poor baseline). Single-threaded; reads a CSR matrix in the
 * harness's raw format and prints one JSON line per kernel with the median of
 * the timed runs.
 *   usage: kernels MATRIX.bin RUNS
 * MATRIX.bin: int32 rows, cols, nnz; int32 rowPtr[rows+1]; int32 colIdx[nnz]; float64 values[nnz]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef float v8f __attribute__((vector_size(32)));

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *xs, int n) {
  qsort(xs, n, sizeof(double), cmp_double);
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

static void spmv_f32(int rows, const int32_t *rp, const int32_t *ci, const float *v, const float *x, float *y) {
  for (int i = 0; i < rows; i++) {
    float acc = 0;
    for (int p = rp[i]; p < rp[i + 1]; p++) acc += v[p] * x[ci[p]];
    y[i] = acc;
  }
}

static void spmv_f64(int rows, const int32_t *rp, const int32_t *ci, const double *v, const double *x, double *y) {
  for (int i = 0; i < rows; i++) {
    double acc = 0;
    for (int p = rp[i]; p < rp[i + 1]; p++) acc += v[p] * x[ci[p]];
    y[i] = acc;
  }
}

/* Y[i, :] = sum_p A[i, j_p] * B[j_p, :], K = 32 as four 8-wide vectors. */
static void spmm32_f32(int rows, const int32_t *rp, const int32_t *ci, const float *v, const float *B, float *Y) {
  for (int i = 0; i < rows; i++) {
    v8f a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    for (int p = rp[i]; p < rp[i + 1]; p++) {
      const float *b = B + (size_t)ci[p] * 32;
      v8f s = {v[p], v[p], v[p], v[p], v[p], v[p], v[p], v[p]};
      v8f b0, b1, b2, b3;
      memcpy(&b0, b, 32);
      memcpy(&b1, b + 8, 32);
      memcpy(&b2, b + 16, 32);
      memcpy(&b3, b + 24, 32);
      a0 += s * b0;
      a1 += s * b1;
      a2 += s * b2;
      a3 += s * b3;
    }
    float *y = Y + (size_t)i * 32;
    memcpy(y, &a0, 32);
    memcpy(y + 8, &a1, 32);
    memcpy(y + 16, &a2, 32);
    memcpy(y + 24, &a3, 32);
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MATRIX.bin RUNS\n", argv[0]);
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  int32_t hdr[3];
  if (fread(hdr, 4, 3, f) != 3) return 1;
  int rows = hdr[0], cols = hdr[1], nnz = hdr[2], runs = atoi(argv[2]);
  int32_t *rp = malloc(4 * (size_t)(rows + 1)), *ci = malloc(4 * (size_t)nnz);
  double *v64 = malloc(8 * (size_t)nnz);
  if (fread(rp, 4, rows + 1, f) != (size_t)(rows + 1) || fread(ci, 4, nnz, f) != (size_t)nnz || fread(v64, 8, nnz, f) != (size_t)nnz) return 1;
  fclose(f);
  float *v32 = malloc(4 * (size_t)nnz);
  for (int p = 0; p < nnz; p++) v32[p] = (float)v64[p];
  double *x64 = malloc(8 * (size_t)cols), *y64 = malloc(8 * (size_t)rows);
  float *x32 = malloc(4 * (size_t)cols), *y32 = malloc(4 * (size_t)rows);
  float *B = aligned_alloc(32, 4 * (size_t)cols * 32 + 32), *Y = aligned_alloc(32, 4 * (size_t)rows * 32 + 32);
  for (int j = 0; j < cols; j++) {
    x64[j] = 1.0 + (j % 7) * 0.25;
    x32[j] = (float)x64[j];
    for (int k = 0; k < 32; k++) B[(size_t)j * 32 + k] = (float)((j + k) % 5) * 0.5f;
  }
  double *t = malloc(sizeof(double) * runs);
  double check;
#define TIME(NAME, CALL, CHECK)                                   \
  CALL;                                                           \
  for (int r = 0; r < runs; r++) {                                \
    double t0 = now_ms();                                         \
    CALL;                                                         \
    t[r] = now_ms() - t0;                                         \
  }                                                               \
  check = CHECK;                                                  \
  printf("{\"kernel\":\"%s\",\"median_ms\":%.6f,\"check\":%.9g}\n", NAME, median(t, runs), check);
  TIME("spmv_f32", spmv_f32(rows, rp, ci, v32, x32, y32), (double)y32[rows / 2]);
  TIME("spmv_f64", spmv_f64(rows, rp, ci, v64, x64, y64), y64[rows / 2]);
  TIME("spmm32_f32", spmm32_f32(rows, rp, ci, v32, B, Y), (double)Y[(size_t)(rows / 2) * 32 + 3]);
  return 0;
}
