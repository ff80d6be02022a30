'use strict';

const C = require('../../base/constants');

/**
 * Defaults of the gateway config, each with one home. Units are in the names. The loader fills
 * these in, so the rest of the gateway never has to guess what an omitted field means.
 */
module.exports = Object.freeze({
  /** Job names, device names and gateway.id become MQTT topic levels: no `/ + #`, no spaces */
  NAME_PATTERN: `^${C.NOT_RESERVED}[A-Za-z0-9_.-]{1,64}$`,
  /** The prefix may have several levels (`site-a/nines`) but no wildcards or empty levels */
  PREFIX_PATTERN: '^[A-Za-z0-9_.-]{1,64}(/[A-Za-z0-9_.-]{1,64}){0,7}$',

  GATEWAY_INTERVAL_MS: 10000,
  GATEWAY_MIN_INTERVAL_MS: 100,
  GATEWAY_MAX_INTERVAL_MS: 24 * 3600 * 1000,
  GATEWAY_MAX_WORKERS: 256,

  /**
   * Size limits, checked before anything is built per job or device, so a runaway generated
   * config fails at once instead of after seconds and gigabytes (200,000 jobs once took 17 s and
   * 1.4 GB to pass --check). 10,000 jobs is beyond any one edge gateway: at the default 10 s
   * interval they publish 1,000 latency summaries a second, and each job holds its histograms
   * and queue; --check of 10,000 jobs takes about 2 s and 200 MB. Each device opens at least one
   * socket or serial port, so the process's file limit (often 1024) binds before 10,000 devices
   * does. Larger installations split the config across gateways (gateway.id keeps them apart).
   */
  CONFIG_MAX_JOBS: 10000,
  CONFIG_MAX_DEVICES: 10000,
  /**
   * Largest config file (or text) read, in bytes: 4 MiB holds 10,000 jobs of about 400 bytes,
   * comments included. Parsing YAML costs about 1.3 s and 140 MB per MiB, so this also bounds
   * the time and memory spent before the job and device limits can be checked.
   */
  CONFIG_MAX_BYTES: 4 * 1024 * 1024,
  /**
   * `nines run --watch` reloads a changed config file once its size and times have held still for
   * this long: a file written in pieces (a script's `cat` then `>>` half a second later) must not be
   * applied half-written, which removed jobs and added them back (issue 18). Editors that save by
   * renaming a finished file over the old one settle at once and wait only this.
   */
  CONFIG_WATCH_SETTLE_MS: 1000,
  /** A file still changing after this long is reported (NINES_ERR_CONFIG) and waited for further */
  CONFIG_WATCH_MAX_WAIT_MS: 30000,

  MQTT_EMBEDDED_HOST: '127.0.0.1',
  MQTT_EMBEDDED_PORT: C.MQTT_DEFAULT_PORT,
  MQTT_QOS: 1,
  MQTT_PROTOCOL_VERSION: 4,
  /** Latency summaries kept while the broker is away; the oldest are dropped (and counted) past it */
  MQTT_BUFFER_MAX: 1000,
  MQTT_BUFFER_MAX_LIMIT: 1000000,
  /** The disk spool's cap when mqtt.spool gives none; half for summaries, half for values */
  MQTT_SPOOL_MAX_BYTES: 256 * 1000 * 1000,
  MQTT_SPOOL_MIN_BYTES: 1024 * 1024,
  /** At most one fdatasync round per this: a power loss loses at most this much of what was not yet published */
  MQTT_SPOOL_SYNC_MS: 100,
  MQTT_KEEPALIVE_MS: 30000,
  MQTT_CONNECT_TIMEOUT_MS: 10000,
  /** At most one error message per job per this window; the rest are counted into the next one */
  MQTT_ERRORS_MIN_INTERVAL_MS: 1000,
  MQTT_RECONNECT_INITIAL_MS: 500,
  MQTT_RECONNECT_MAX_MS: 30000,
  /** Environment variable that may hold mqtt.password, so it need not sit in the file */
  MQTT_PASSWORD_ENV: 'NINES_MQTT_PASSWORD',
  /** Environment variable that may hold mqtt.embedded.password (the login the embedded broker asks of clients) */
  MQTT_EMBEDDED_PASSWORD_ENV: 'NINES_MQTT_EMBEDDED_PASSWORD',

  /**
   * Writes by tag over MQTT (mqtt.writes): commands that may wait per device, and the most time from
   * a command's arrival to the moment its write starts. Past either it is refused, never written
   * late: a setpoint half a minute old is a hazard. 2 s covers an operator's click and a device's
   * usual queue; at 50 writes/s a device drains 100 waiting commands in those same 2 s, so the
   * queue bound only bites on a flood.
   */
  MQTT_WRITES_QUEUE_MAX: 100,
  MQTT_WRITES_QUEUE_LIMIT: 10000,
  MQTT_WRITES_MAX_AGE_MS: 2000,
  MQTT_WRITES_MIN_AGE_MS: 10,
  MQTT_WRITES_MAX_AGE_LIMIT_MS: 60000,
  /** The write counters in the retained status are republished at most this often while they change */
  MQTT_WRITES_STATUS_MIN_INTERVAL_MS: 1000,

  /** The metrics endpoint (gateway.metrics) and the status page (gateway.http): off unless configured, loopback unless set otherwise */
  METRICS_LISTEN_HOST: '127.0.0.1',
  METRICS_LISTEN_PORT: 9464,
  HTTP_LISTEN_HOST: '127.0.0.1',
  HTTP_LISTEN_PORT: 9465,
  /** Environment variables that may hold gateway.metrics.password and gateway.http.password */
  METRICS_PASSWORD_ENV: 'NINES_METRICS_PASSWORD',
  HTTP_PASSWORD_ENV: 'NINES_HTTP_PASSWORD',
  /** The status page's percentiles and curves cover this many of the latest intervals, merged */
  HTTP_WINDOW_INTERVALS: 6,
  HTTP_WINDOW_MAX_INTERVALS: 360,

  DEVICE_TIMEOUT_MS: C.DEFAULT_TIMEOUT_MS,
  DEVICE_CONNECT_TIMEOUT_MS: C.DEFAULT_CONNECT_TIMEOUT_MS,
  DEVICE_QUEUE_MAX: C.DEFAULT_QUEUE_MAX,
  DEVICE_QUEUE_LIMIT: 100000,
  /** Most PLCs and I/O modules accept 1-8 TCP connections: one unless the user says otherwise */
  DEVICE_MAX_CONNECTIONS: 1,
  DEVICE_MAX_CONNECTIONS_LIMIT: 64,
  /** Pipelining is opt-in (default 1, devices/spec.js): most devices serve one request per connection at a time */
  DEVICE_MAX_INFLIGHT_LIMIT: 64,
  DEVICE_BACKOFF_MIN_MS: C.BACKOFF_INITIAL_MS,
  DEVICE_BACKOFF_MAX_MS: C.BACKOFF_MAX_MS,

  JOB_CONNECTIONS: 1,
  JOB_MAX_CONNECTIONS: 64,
  /** Poll jobs monitor: after a stall, missed slots are skipped and counted, never sent late (design.md) */
  JOB_CATCH_UP: 'skip',
  CATCH_UP_POLICIES: Object.freeze(['burst', 'capped', 'skip']),

  VALUES_MODES: Object.freeze(['off', 'on-change', 'every']),
  /** Values are published at most this often per job unless values.maxRate says otherwise */
  VALUES_MAX_RATE_PER_SEC: 10
});
