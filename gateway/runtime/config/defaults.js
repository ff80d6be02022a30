'use strict';

const C = require('../../base/constants');
const DL = require('../../devices/limits');
const JL = require('../../jobs/limits');

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
   * Largest MQTT packet the embedded broker takes from a client (mqtt.embedded.maxPacketSize); a
   * connection sending a larger one is closed before its body arrives. The largest packet the
   * gateway's own summaries make is about 330 KiB (one encoded histogram of at most 256 KiB plus
   * 64 KiB of JSON, latency/summary.js), so 1 MiB leaves a margin of three; the gateway's own
   * client is not limited (it publishes what the gateway makes). Worst case held per client:
   * MQTT_MAX_INFLIGHT QoS 2 messages of this size awaiting PUBREL, 32 MiB.
   */
  MQTT_EMBEDDED_MAX_PACKET_BYTES: 1024 * 1024,
  /** mqtt.embedded.maxPacketSize at least this: a CONNECT with a long client id, user and password fits */
  MQTT_EMBEDDED_MIN_PACKET_BYTES: 1024,
  /** The MQTT limit itself: a Remaining Length of 268,435,455 plus the 5-byte fixed header */
  MQTT_EMBEDDED_MAX_PACKET_LIMIT: 268435460,
  /**
   * Open client connections of the embedded broker (mqtt.embedded.maxClients); more are closed at
   * accept and counted. A gateway serves a handful (its own publisher and Sparkplug session, a few
   * subscribers); 64 stays well under the process's file limit. The bound on memory clients can
   * make the broker hold is then 64 × 32 MiB (QoS 2 messages withheld from PUBREL, see above).
   */
  MQTT_EMBEDDED_MAX_CLIENTS: 64,
  MQTT_EMBEDDED_MAX_CLIENTS_LIMIT: 10000,
  /**
   * Messages the publisher hands to mqtt.js before their acknowledgement, and QoS 2 messages a
   * client of the embedded broker may have awaiting PUBREL (aedes' maxInflightInbound, 1000 by
   * itself): the same number, so the gateway's own publisher is never cut off by its own broker.
   */
  MQTT_MAX_INFLIGHT: 32,

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
  /**
   * The metrics endpoint and the status page (http/serve.js). A request must bring its headers
   * within HTTP_HEADERS_TIMEOUT_MS and be read whole within HTTP_REQUEST_TIMEOUT_MS, else 408 and
   * the connection is closed; Node checks these every HTTP_CONNECTIONS_CHECK_MS (its own 30 s
   * made a 10 s timeout fire after up to 40 s). An idle keep-alive connection closes after
   * HTTP_KEEP_ALIVE_TIMEOUT_MS (Node's 5 s; a scrape every 15 s opens a new one, which is cheap).
   */
  HTTP_HEADERS_TIMEOUT_MS: 10000,
  HTTP_REQUEST_TIMEOUT_MS: 30000,
  HTTP_CONNECTIONS_CHECK_MS: 1000,
  HTTP_KEEP_ALIVE_TIMEOUT_MS: 5000,
  /** Node's default 16 KiB is more than a scrape or a browser needs */
  HTTP_MAX_HEADER_BYTES: 8192,
  /**
   * Open connections of each (gateway.metrics.maxConnections, gateway.http.maxConnections); more
   * are closed at accept. A Prometheus server holds one or two, a browser up to six per page.
   */
  HTTP_MAX_CONNECTIONS: 32,
  HTTP_MAX_CONNECTIONS_LIMIT: 10000,
  /**
   * Wrong logins (http/login-throttle.js): free per client address before a lockout, the first
   * lockout (doubling with each further failure, up to the max), and an overall bound: past
   * HTTP_LOGIN_GLOBAL_FAILURES in a window, only addresses that logged in rightly are served until
   * it ends. At most HTTP_LOGIN_TRACKED_ADDRESSES addresses are remembered (about 100 B each).
   */
  HTTP_LOGIN_FREE_FAILURES: 5,
  HTTP_LOGIN_LOCKOUT_MIN_MS: 1000,
  HTTP_LOGIN_LOCKOUT_MAX_MS: 60000,
  HTTP_LOGIN_GLOBAL_FAILURES: 100,
  HTTP_LOGIN_GLOBAL_WINDOW_MS: 60000,
  HTTP_LOGIN_TRACKED_ADDRESSES: 4096,
  /** The status page's percentiles and curves cover this many of the latest intervals, merged */
  HTTP_WINDOW_INTERVALS: 6,
  HTTP_WINDOW_MAX_INTERVALS: 360,

  /** Device and job limits live with the builders (devices/limits.js, jobs/limits.js); the schema states them */
  DEVICE_QUEUE_LIMIT: DL.MAX_QUEUE,
  DEVICE_MAX_CONNECTIONS_LIMIT: DL.MAX_CONNECTIONS,
  DEVICE_MAX_INFLIGHT_LIMIT: DL.MAX_INFLIGHT,
  JOB_MAX_CONNECTIONS: JL.MAX_CONNECTIONS,
  CATCH_UP_POLICIES: JL.POLICIES,
  VALUES_MODES: JL.VALUE_MODES,
  VALUES_MAX_RATE_PER_SEC: JL.VALUES_MAX_RATE_PER_SEC
});
