/*
 * Shared helpers for the C bench peers: a monotonic ns clock, a bounded array of per-request
 * latencies, and the JSON line every client prints (percentiles from the sorted samples, nearest rank).
 * The raw samples can also be written as little-endian uint64 ns so bench/ builds HDR histograms from
 * exactly the same numbers it gets from the Node clients.
 */
#ifndef NINES_BENCH_LAT_H
#define NINES_BENCH_LAT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/resource.h>

static inline uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct {
  uint64_t *ns;
  size_t n, cap;
  uint64_t errors;
  uint64_t start_ns, end_ns;
  uint64_t cpu_ns; /* the process's own CPU time (user + system) over the measured loop, when taken */
} lat_t;

/* The process's CPU time so far (user + system), ns. */
static inline uint64_t cpu_now_ns(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return ((uint64_t)u.ru_utime.tv_sec + (uint64_t)u.ru_stime.tv_sec) * 1000000000ull +
         ((uint64_t)u.ru_utime.tv_usec + (uint64_t)u.ru_stime.tv_usec) * 1000ull;
}

static inline int lat_init(lat_t *l, size_t cap) {
  memset(l, 0, sizeof(*l));
  l->ns = malloc(cap * sizeof(uint64_t));
  l->cap = cap;
  return l->ns ? 0 : -1;
}

static inline void lat_add(lat_t *l, uint64_t ns) {
  if (l->n < l->cap) l->ns[l->n++] = ns;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static inline uint64_t pct(const uint64_t *s, size_t n, double p) {
  if (n == 0) return 0;
  size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
  if (rank < 1) rank = 1;
  if (rank > n) rank = n;
  return s[rank - 1];
}

/* Writes the raw samples (if path), then prints one JSON line, with `extra` (more JSON members,
 * each starting with a comma) before its closing brace when given. Sorts l->ns afterwards. */
static inline void lat_report_with(lat_t *l, const char *tool, const char *path, const char *extra) {
  if (path && *path) {
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(l->ns, sizeof(uint64_t), l->n, f); fclose(f); }
  }
  qsort(l->ns, l->n, sizeof(uint64_t), cmp_u64);
  double secs = (double)(l->end_ns - l->start_ns) / 1e9;
  printf("{\"tool\":\"%s\",\"count\":%zu,\"errors\":%llu,\"elapsedNs\":%llu,\"reqPerSec\":%.1f,"
         "\"p50Ns\":%llu,\"p90Ns\":%llu,\"p99Ns\":%llu,\"p999Ns\":%llu,\"maxNs\":%llu,\"cpuNsPerReq\":%llu%s}\n",
         tool, l->n, (unsigned long long)l->errors, (unsigned long long)(l->end_ns - l->start_ns),
         secs > 0 ? (double)l->n / secs : 0.0,
         (unsigned long long)pct(l->ns, l->n, 50), (unsigned long long)pct(l->ns, l->n, 90),
         (unsigned long long)pct(l->ns, l->n, 99), (unsigned long long)pct(l->ns, l->n, 99.9),
         (unsigned long long)(l->n ? l->ns[l->n - 1] : 0),
         (unsigned long long)(l->n && l->cpu_ns ? l->cpu_ns / l->n : 0), extra ? extra : "");
  fflush(stdout);
}

static inline void lat_report(lat_t *l, const char *tool, const char *path) {
  lat_report_with(l, tool, path, NULL);
}

static inline void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* Prints the bound port as "PORT <n>" so the harness knows where to connect. */
static inline void announce_port(int listen_fd) {
  struct sockaddr_in a;
  socklen_t len = sizeof(a);
  getsockname(listen_fd, (struct sockaddr *)&a, &len);
  printf("PORT %d\n", ntohs(a.sin_port));
  fflush(stdout);
}

#endif
