'use strict';

const RESERVED_NAME = '__proto__';

/** Magic numbers of nines, each with one home. Units are in the names. */
module.exports = Object.freeze({
  ASCII_DEFAULT_PORT: 9500,
  MODBUS_TCP_DEFAULT_PORT: 502,
  /** Modbus/TCP Security (MBAP over TLS): the port the Modbus Organization registered for it */
  MODBUS_TLS_DEFAULT_PORT: 802,
  SIM_ASCII_PORT: 9500,
  SIM_MODBUS_PORT: 5020,
  /** RTU-over-TCP simulator: the port of a Moxa NPort's first serial port in TCP server mode */
  SIM_MODBUS_RTUTCP_PORT: 4001,
  /** Modbus/TCP Security simulator: 802 is a privileged port, so the simulator takes 5802 */
  SIM_MODBUS_TLS_PORT: 5802,
  MQTT_DEFAULT_PORT: 1883,
  MQTT_DEFAULT_PREFIX: 'nines',
  /**
   * The one name refused wherever a user's name becomes a key (devices, units, tag groups, tags,
   * jobs): an object keyed by it changes its prototype instead of holding it, so the name would
   * vanish from configs, statuses and `{ tag: value }` payloads. Other names Object.prototype has
   * (`constructor`, `toString`) are plain names: every lookup by a name checks own properties.
   */
  RESERVED_NAME,
  /** A lookahead that refuses RESERVED_NAME, for the name patterns */
  NOT_RESERVED: `(?!${RESERVED_NAME}$)`,

  /** ASCII frame cap: longer input is discarded up to the next CR [OURS] */
  ASCII_MAX_LINE_BYTES: 255,
  ASCII_PREFIXES: '#$%@~',
  ASCII_ADDRESS_DEFAULT: '01',

  DEFAULT_TIMEOUT_MS: 1000,
  DEFAULT_CONNECT_TIMEOUT_MS: 5000,
  /** Idle time before the first TCP keep-alive probe on a device socket (drivers/open-socket.js) */
  TCP_KEEPALIVE_MS: 10000,
  /**
   * TLS 1.3 only: after our side of the handshake is done, the server may still refuse our client
   * certificate (its alert comes one round trip later). The socket is handed over at the server's
   * first word (a session ticket, or the alert), or after this long at most (drivers/open-socket.js)
   */
  TLS13_VERDICT_MS: 500,
  DEFAULT_QUEUE_MAX: 64,
  /** After a timeout, bytes arriving within this window are taken as the late reply and dropped */
  ASCII_DRAIN_MS: 50,

  BACKOFF_INITIAL_MS: 100,
  BACKOFF_MAX_MS: 10000,
  BACKOFF_FACTOR: 2,
  /**
   * A silent unit on a line is probed after this, doubling to the max: each probe holds the line for
   * a timeout, so they must be rare (industrial masters demote a silent slave for about 10 s too)
   */
  UNIT_BACKOFF_INITIAL_MS: 1000,
  UNIT_BACKOFF_MAX_MS: 10000,

  /** Histogram configuration, the same everywhere so every histogram merges with every other */
  HIST_LOWEST_NS: 1,
  HIST_HIGHEST_NS: 3600 * 1e9,
  HIST_DIGITS: 3,
  /** Cap on an encoded histogram accepted from outside (base64 characters) */
  HIST_MAX_ENCODED_CHARS: 256 * 1024,

  MODBUS_MAX_READ_BITS: 2000,
  MODBUS_MAX_READ_REGISTERS: 125,
  MODBUS_MAX_WRITE_BITS: 1968,
  MODBUS_MAX_WRITE_REGISTERS: 123,
  /** FC23 read/write multiple registers: registers read (§6.17) */
  MODBUS_MAX_READ_WRITE_READ_REGISTERS: 125,
  /** FC23: registers written (§6.17) */
  MODBUS_MAX_READ_WRITE_WRITE_REGISTERS: 121,
  /**
   * Write function codes a device may lack (a device's unsupportedFunctionCodes): FC5, 6, 15 and 16
   * each have one that stands in (tags/write.js); FC22 has none, and a write of a part of a
   * register to a device that lacks it is refused
   */
  MODBUS_LACKABLE_WRITE_FCS: Object.freeze([5, 6, 15, 16, 22]),
  /** Registers or bits a coalesced tag read may skip between two tags unless the device says otherwise */
  TAGS_MAX_GAP: 16,
  MODBUS_TCP_MAX_ADU: 260,
  MODBUS_RTU_MAX_ADU: 256,

  /** Modbus simulators: default size of each bank (coils, discrete inputs, holding and input registers) */
  SIM_MODBUS_BANK_SIZE: 10000,
  /** Modbus TCP simulator: open connections allowed before new ones are refused (counted) */
  SIM_MODBUS_MAX_CONNECTIONS: 32,
  /** Modbus simulators: requests waiting for a delayed reply per connection (or serial line); more are dropped and counted */
  SIM_MODBUS_MAX_PENDING: 64,
  /** Modbus TCP simulator: stop reading a connection whose unsent replies exceed this, until it drains */
  SIM_MODBUS_MAX_WRITE_BUFFER_BYTES: 1024 * 1024,
  /** Modbus RTU simulator: floor of the inter-frame silence used to end a frame of unknown length or resync after
   * garbage; PTYs and USB adapters deliver bytes in bursts, so the 3.5-character time alone (4 ms at 9600) is too tight */
  SIM_MODBUS_RTU_MIN_GAP_MS: 10,
  /** Modbus simulators, animate option: input register 0 counts up once per this period */
  SIM_MODBUS_ANIMATE_COUNTER_MS: 100,
  /** Modbus simulators, animate option: input register 1 is 1000 + 1000·sin(2πt / period) */
  SIM_MODBUS_ANIMATE_SINE_PERIOD_MS: 10000,
  SIM_MODBUS_ANIMATE_SINE_AMPLITUDE: 1000,
  /** Modbus simulators, animate option: discrete input 0 toggles once per this period */
  SIM_MODBUS_ANIMATE_TOGGLE_MS: 1000
});
