'use strict';

/**
 * Defaults and limits of the gateway's HTTP faces, the metrics endpoint (metrics/) and the status
 * page (http/), each with one home. Units are in the names. The config (runtime/config/) checks
 * gateway.metrics and gateway.http against these and fills them in.
 */
module.exports = Object.freeze({
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
  /**
   * The classic `le` buckets of the metrics endpoint's latency histograms (gateway.metrics.buckets),
   * in ns: 10 µs … 10 s, five a decade at 1, 1.6, 2.5, 4, 6.3 (the R5 preferred numbers), so
   * neighbours are at most 1.6× apart. histogram_quantile interpolates linearly inside the bucket
   * that holds the rank, so its answer is off by at most that bucket's width: 60 % of the true value
   * (true value at a bucket's lower bound, estimate at its upper). The range starts at 10 µs for the
   * dispatch lag (the scheduler's own lateness, tens of µs) and ends at 10 s, past any device
   * timeout worth waiting for. 31 boundaries and +Inf: 34 series per histogram with _sum and
   * _count, 102 per job for the three. Prometheus's own default (11 buckets, 5 ms … 10 s, up to 2.5×
   * apart) is off by up to 150 % and starts above most devices' replies.
   */
  METRICS_BUCKETS_NS: Object.freeze([1e4, 1e5, 1e6, 1e7, 1e8, 1e9].flatMap((decade) => [1, 1.6, 2.5, 4, 6.3].map((m) => Math.round(m * decade))).concat([1e10])),
  /** At most this many classic buckets: each is one series per histogram per job (3 per job) */
  METRICS_MAX_BUCKETS: 60,
  /** The status page's percentiles and curves cover this many of the latest intervals, merged */
  HTTP_WINDOW_INTERVALS: 6,
  HTTP_WINDOW_MAX_INTERVALS: 360
});
