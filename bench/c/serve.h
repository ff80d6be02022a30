/*
 * A small poll() loop for the C bench servers: listens on 127.0.0.1:<port> (0 = any free port),
 * announces the port, accepts any number of connections (TCP_NODELAY) and hands each readable
 * socket to on_readable(fd), which returns -1 to close it. Ends on stdin EOF (the harness's pipe
 * closing) or SIGTERM, so a server never outlives its bench.
 */
#ifndef NINES_BENCH_SERVE_H
#define NINES_BENCH_SERVE_H

#include <poll.h>
#include <signal.h>
#include <unistd.h>
#include <arpa/inet.h>
#include "lat.h"

#define SERVE_MAX_FDS 2048

static int serve_listen(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 512) < 0) { perror("listen"); exit(1); }
  return fd;
}

static void serve(int listen_fd, int (*on_readable)(int fd), void (*on_close)(int fd)) {
  static struct pollfd fds[SERVE_MAX_FDS];
  nfds_t n = 2;
  signal(SIGPIPE, SIG_IGN);
  fds[0].fd = listen_fd; fds[0].events = POLLIN;
  fds[1].fd = 0; fds[1].events = POLLIN; /* stdin: EOF means the harness is gone */
  announce_port(listen_fd);
  for (;;) {
    if (poll(fds, n, -1) < 0) continue;
    if (fds[1].revents) {
      char b[64];
      if (read(0, b, sizeof(b)) <= 0) return;
    }
    if (fds[0].revents & POLLIN) {
      int c = accept(listen_fd, NULL, NULL);
      if (c >= 0) {
        if (n < SERVE_MAX_FDS) { set_nodelay(c); fds[n].fd = c; fds[n].events = POLLIN; fds[n].revents = 0; n++; }
        else close(c);
      }
    }
    for (nfds_t i = 2; i < n; i++) {
      if (!fds[i].revents) continue;
      if ((fds[i].revents & (POLLERR | POLLHUP | POLLNVAL)) || on_readable(fds[i].fd) < 0) {
        if (on_close) on_close(fds[i].fd);
        close(fds[i].fd);
        fds[i] = fds[--n];
        i--;
      }
    }
  }
}

#endif
