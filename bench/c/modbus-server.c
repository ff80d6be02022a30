/*
 * The reference Modbus TCP server: libmodbus's own request handling (modbus_tcp_listen, modbus_receive,
 * modbus_reply) over a 10,000-entry mapping per bank, holding register i = i. Many connections at once
 * through the shared poll loop; TCP_NODELAY on each accepted socket.
 *   modbus-server [port]
 */
#include <errno.h>
#include <modbus.h>
#include "serve.h"

static modbus_t *ctx;
static modbus_mapping_t *map;

static int on_readable(int fd) {
  uint8_t query[MODBUS_TCP_MAX_ADU_LENGTH];
  modbus_set_socket(ctx, fd);
  int rc = modbus_receive(ctx, query);
  if (rc > 0) return modbus_reply(ctx, query, rc, map) < 0 ? -1 : 0;
  return rc == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  ctx = modbus_new_tcp("127.0.0.1", argc > 1 ? atoi(argv[1]) : 0);
  map = modbus_mapping_new(10000, 10000, 10000, 10000);
  if (!ctx || !map) { fprintf(stderr, "libmodbus: %s\n", modbus_strerror(errno)); return 1; }
  for (int i = 0; i < 10000; i++) { map->tab_registers[i] = (uint16_t)i; map->tab_input_registers[i] = (uint16_t)i; }
  int s = modbus_tcp_listen(ctx, 512);
  if (s < 0) { fprintf(stderr, "modbus_tcp_listen: %s\n", modbus_strerror(errno)); return 1; }
  serve(s, on_readable, NULL);
  modbus_mapping_free(map);
  modbus_free(ctx);
  return 0;
}
