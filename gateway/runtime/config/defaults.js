'use strict';

/**
 * Defaults of the gateway config, each with one home. Units are in the names. The loader fills
 * these in, so the rest of the gateway never has to guess what an omitted field means.
 *
 * The defaults of MQTT (mqtt/defaults.js: names and topics, the publisher, the embedded broker, the
 * write commands, the value rate) and of the HTTP faces (http/defaults.js) live beside the modules
 * that use them and are merged in here: the config is the edge that checks them, so it depends on
 * those modules' defaults, never the reverse.
 */
module.exports = Object.freeze({
  ...require('../mqtt/defaults'),
  ...require('../http/defaults'),

  /** The summary interval's bounds; its default is a job's (jobs/limits.js INTERVAL_MS) */
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
  CONFIG_WATCH_MAX_WAIT_MS: 30000
  // Device and job limits live with the builders (devices/limits.js, jobs/limits.js): the schema and
  // the checks take them from there, not from aliases here
});
