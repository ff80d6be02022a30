/*
 * The floor: TCP ping-pong with Modbus FC3x10 sizes (12-byte request, 29-byte reply), TCP_NODELAY,
 * one connection, closed loop. Nothing is parsed, so this is what the kernel and loopback cost.
 *   pingpong server [port]
 *   pingpong client <port> <count> <durationMs> <warmup> [outfile]
 */
#include <errno.h>
#include <arpa/inet.h>
#include "serve.h"

#define REQ_BYTES 12
#define REPLY_BYTES 29
#define MAX_FD 65536

static unsigned char have[MAX_FD];

static int on_readable(int fd) {
  static unsigned char buf[4096], out[(4096 / REQ_BYTES + 1) * REPLY_BYTES];
  if (fd >= MAX_FD) return -1;
  ssize_t r = read(fd, buf, sizeof(buf));
  if (r <= 0) return (r < 0 && errno == EAGAIN) ? 0 : -1;
  size_t total = have[fd] + (size_t)r, replies = total / REQ_BYTES;
  have[fd] = (unsigned char)(total % REQ_BYTES);
  if (replies && write(fd, out, replies * REPLY_BYTES) < 0) return -1;
  return 0;
}

static void on_close(int fd) { if (fd < MAX_FD) have[fd] = 0; }

static int read_full(int fd, unsigned char *b, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, b + got, n - got);
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static int client(int port, size_t count, uint64_t duration_ms, size_t warmup, const char *out) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) { perror("connect"); return 1; }
  set_nodelay(fd);
  unsigned char req[REQ_BYTES] = { 0, 1, 0, 0, 0, 6, 1, 3, 0, 0, 0, 10 }, rep[REPLY_BYTES];
  lat_t l;
  if (lat_init(&l, count)) return 1;
  for (size_t i = 0; i < warmup; i++) {
    if (write(fd, req, REQ_BYTES) != REQ_BYTES || read_full(fd, rep, REPLY_BYTES)) { perror("warmup"); return 1; }
  }
  l.start_ns = now_ns();
  uint64_t stop = l.start_ns + duration_ms * 1000000ull;
  for (size_t i = 0; i < count; i++) {
    uint64_t t0 = now_ns();
    if (t0 >= stop) break;
    if (write(fd, req, REQ_BYTES) != REQ_BYTES || read_full(fd, rep, REPLY_BYTES)) { l.errors++; break; }
    lat_add(&l, now_ns() - t0);
  }
  l.end_ns = now_ns();
  close(fd);
  lat_report(&l, "c-pingpong", out);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "server")) {
    serve(serve_listen(argc > 2 ? atoi(argv[2]) : 0), on_readable, on_close);
    return 0;
  }
  if (argc >= 6 && !strcmp(argv[1], "client")) {
    return client(atoi(argv[2]), strtoull(argv[3], 0, 10), strtoull(argv[4], 0, 10), strtoull(argv[5], 0, 10),
                  argc > 6 ? argv[6] : NULL);
  }
  fprintf(stderr, "usage: pingpong server [port] | client <port> <count> <durationMs> <warmup> [outfile]\n");
  return 2;
}
