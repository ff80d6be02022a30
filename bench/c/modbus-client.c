/*
 * The reference Modbus TCP client: libmodbus reading FC3, 10 holding registers from address 0, unit 1,
 * one connection, closed loop; each request's latency recorded in ns. With "reconnect", every request
 * opens and closes its own connection and the latency includes the connect. With "rate=<n>" it sends at
 * a fixed rate instead (request i intended at start + i/n, one in flight as libmodbus allows: a request
 * whose time has come while the previous one is still out goes as soon as it is answered), and each
 * latency counts from the intended time, so waiting behind a slow reply counts (no coordinated omission).
 * The paced wait is the open-loop reference of question 15: clock_nanosleep to SPIN_NS before the
 * intended time (absolute, so no drift), then a spin on the clock to the intended time itself. The
 * kernel's timer slack (50 us by default) makes a sleep end up to that much late, hence a window wider.
 * Paced, it also reports its own dispatch lag as nines' probe counts it: the send − the later of the
 * intended time and the moment the previous reply was complete (lagP50Ns, lagP99Ns, lagMaxNs).
 *   modbus-client <port> <count> <durationMs> <warmup> [outfile] [reconnect|rate=<n>]
 */
#include <errno.h>
#include <modbus.h>
#include "lat.h"

/* The last stretch before an intended time that is spun, not slept: the timer slack plus a margin */
#define SPIN_NS 100000ull

static int open_ctx(modbus_t *ctx) {
  if (modbus_connect(ctx) < 0) return -1;
  set_nodelay(modbus_get_socket(ctx)); /* libmodbus sets it too; be explicit */
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: modbus-client <port> <count> <durationMs> <warmup> [outfile] [reconnect]\n"); return 2; }
  size_t count = strtoull(argv[2], 0, 10), warmup = strtoull(argv[4], 0, 10);
  uint64_t duration_ms = strtoull(argv[3], 0, 10);
  const char *out = argc > 5 ? argv[5] : NULL;
  int reconnect = argc > 6 && !strcmp(argv[6], "reconnect");
  double rate = argc > 6 && !strncmp(argv[6], "rate=", 5) ? strtod(argv[6] + 5, 0) : 0;
  uint64_t period_ns = rate > 0 ? (uint64_t)(1e9 / rate) : 0;
  modbus_t *ctx = modbus_new_tcp("127.0.0.1", atoi(argv[1]));
  uint16_t regs[10];
  lat_t l, lag; /* lag: paced only, how late each request went out (send − intended), its own dispatch lag */
  /* paced, at most one request per period of the run: the lag samples need no more room than that */
  size_t paced = period_ns ? (size_t)(duration_ms * 1000000ull / period_ns) + 16 : 1;
  if (!ctx || lat_init(&l, count) || lat_init(&lag, paced < count ? paced : count)) return 1;
  modbus_set_slave(ctx, 1);
  modbus_set_response_timeout(ctx, 1, 0);
  if (open_ctx(ctx)) { fprintf(stderr, "connect: %s\n", modbus_strerror(errno)); return 1; }
  for (size_t i = 0; i < warmup; i++) modbus_read_registers(ctx, 0, 10, regs);
  if (reconnect) modbus_close(ctx);
  uint64_t cpu0 = cpu_now_ns();
  l.start_ns = now_ns();
  uint64_t stop = l.start_ns + duration_ms * 1000000ull;
  uint64_t free_ns = 0; /* when the previous reply was complete */
  for (size_t i = 0; i < count; i++) {
    uint64_t t0 = now_ns();
    if (period_ns) {
      /* paced: sleep to SPIN_NS before the intended time, spin the rest; latency counts from it */
      uint64_t due = l.start_ns + i * period_ns;
      if (due >= stop) break;
      if (now_ns() + SPIN_NS < due) {
        uint64_t wake = due - SPIN_NS;
        struct timespec ts = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, 0) == EINTR) {}
      }
      uint64_t sent;
      while ((sent = now_ns()) < due) {}
      lat_add(&lag, sent - (due > free_ns ? due : free_ns));
      t0 = due;
    }
    if (t0 >= stop) break;
    int ok = 1;
    if (reconnect && open_ctx(ctx)) ok = 0;
    if (ok && modbus_read_registers(ctx, 0, 10, regs) != 10) ok = 0;
    if (reconnect) modbus_close(ctx);
    uint64_t t1 = now_ns();
    free_ns = t1;
    if (!ok) {
      l.errors++;
      if (!reconnect) { modbus_close(ctx); if (open_ctx(ctx)) break; }
      continue;
    }
    lat_add(&l, t1 - t0);
  }
  l.end_ns = now_ns();
  l.cpu_ns = cpu_now_ns() - cpu0;
  if (!reconnect) modbus_close(ctx);
  modbus_free(ctx);
  char extra[96] = "";
  if (period_ns && lag.n) {
    qsort(lag.ns, lag.n, sizeof(uint64_t), cmp_u64);
    snprintf(extra, sizeof(extra), ",\"lagP50Ns\":%llu,\"lagP99Ns\":%llu,\"lagMaxNs\":%llu",
             (unsigned long long)pct(lag.ns, lag.n, 50), (unsigned long long)pct(lag.ns, lag.n, 99), (unsigned long long)lag.ns[lag.n - 1]);
  }
  lat_report_with(&l, reconnect ? "c-libmodbus-reconnect" : period_ns ? "c-libmodbus-paced" : "c-libmodbus", out, extra);
  return 0;
}
