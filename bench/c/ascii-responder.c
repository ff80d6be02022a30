/*
 * The ASCII floor: a DCON-style responder that answers each CR-terminated command at once, with
 * TCP_NODELAY and no model behind it: "@AA" -> ">00FF", "$AAM" -> "!AAED-588", anything else -> "?AA".
 * Reply sizes match the nines ED-588 simulator's, so the two servers do the same wire work.
 *   ascii-responder [port]
 */
#include <errno.h>
#include "serve.h"

#define MAX_FD 65536
#define LINE_MAX_BYTES 255

static unsigned char line[MAX_FD][LINE_MAX_BYTES + 1];
static unsigned short len[MAX_FD];

/* Builds the reply to one command (without its CR) into out; returns its length including the CR. */
static size_t answer(const unsigned char *cmd, size_t n, char *out) {
  char aa[3] = { n >= 3 ? (char)cmd[1] : '0', n >= 3 ? (char)cmd[2] : '0', 0 };
  if (n == 3 && cmd[0] == '@') return (size_t)sprintf(out, ">00FF\r");
  if (n == 4 && cmd[0] == '$' && cmd[3] == 'M') return (size_t)sprintf(out, "!%sED-588\r", aa);
  return (size_t)sprintf(out, "?%s\r", aa);
}

static int on_readable(int fd) {
  static unsigned char buf[4096];
  static char out[4096 * 12];
  if (fd >= MAX_FD) return -1;
  ssize_t r = read(fd, buf, sizeof(buf));
  if (r <= 0) return (r < 0 && errno == EAGAIN) ? 0 : -1;
  size_t o = 0;
  for (ssize_t i = 0; i < r; i++) {
    if (buf[i] == '\r') { o += answer(line[fd], len[fd], out + o); len[fd] = 0; }
    else if (len[fd] < LINE_MAX_BYTES) line[fd][len[fd]++] = buf[i];
    else len[fd] = 0; /* over-long line: discard, as the devices do */
  }
  if (o && write(fd, out, o) < 0) return -1;
  return 0;
}

static void on_close(int fd) { if (fd < MAX_FD) len[fd] = 0; }

int main(int argc, char **argv) {
  serve(serve_listen(argc > 1 ? atoi(argv[1]) : 0), on_readable, on_close);
  return 0;
}
