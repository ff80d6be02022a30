'use strict';

/** Magic numbers of nines, each with one home. Units are in the names. */
module.exports = Object.freeze({
  ASCII_DEFAULT_PORT: 9500,
  MODBUS_TCP_DEFAULT_PORT: 502,
  SIM_ASCII_PORT: 9500,
  SIM_MODBUS_PORT: 5020,
  MQTT_DEFAULT_PORT: 1883,
  MQTT_DEFAULT_PREFIX: 'nines',

  /** ASCII frame cap: longer input is discarded up to the next CR [OURS] */
  ASCII_MAX_LINE_BYTES: 255,
  ASCII_PREFIXES: '#$%@~',
  ASCII_ADDRESS_DEFAULT: '01',

  DEFAULT_TIMEOUT_MS: 1000,
  DEFAULT_CONNECT_TIMEOUT_MS: 5000,
  DEFAULT_QUEUE_MAX: 64,
  /** After a timeout, bytes arriving within this window are taken as the late reply and dropped */
  ASCII_DRAIN_MS: 50,

  BACKOFF_INITIAL_MS: 100,
  BACKOFF_MAX_MS: 10000,
  BACKOFF_FACTOR: 2,

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
  MODBUS_TCP_MAX_ADU: 260,
  MODBUS_RTU_MAX_ADU: 256
});
