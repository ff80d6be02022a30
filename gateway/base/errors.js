'use strict';

/**
 * Every failure nines reports carries a stable `code` (NINES_ERR_*). Callers match on `code`,
 * never on the message text. The table below is the single source: docs/error-codes.md's table and the
 * Node-RED message catalogs are written from it.
 *
 * Errors cross worker threads and MQTT as plain `{code, message, details}` (see `toJSON` and
 * `fromJSON`), because structured clone keeps only message and stack of an Error.
 */

/** @type {Record<string, {status: string, meaning: string}>} */
const CODES = {
  NINES_ERR_INVALID_ARG: { status: 'bad argument', meaning: 'An option, config field or msg property failed validation; the message names the field, the value and the rule.' },
  NINES_ERR_INVALID_TARGET: { status: 'bad target', meaning: 'A target URL (ascii://, modbus+tcp://, modbus+tls://, modbus+rtu://, modbus+rtutcp://) could not be parsed or has an unsupported scheme or option.' },
  NINES_ERR_INVALID_COMMAND: { status: 'bad command', meaning: 'An ASCII command was rejected before sending (prefix, address, case, printable characters, CR/LF, length).' },
  NINES_ERR_INVALID_OP: { status: 'bad operation', meaning: 'A Modbus operation was rejected before sending (function code, address, quantity, values, unit id).' },
  NINES_ERR_INVALID_VALUE: { status: 'bad value', meaning: 'A value to write does not fit its tag or type (out of range, not a whole number for an integer type, not finite, too long); nothing was written. details names the tag or value and the type.' },
  NINES_ERR_WRITE_BACKLOG: { status: 'write: backlog', meaning: 'A write command was refused on arrival: its device already has mqtt.writes.queue commands waiting; nothing was written. Commands are never queued without limit, so none is written late.' },
  NINES_ERR_WRITE_EXPIRED: { status: 'write: expired', meaning: 'A write was not sent: it would have started more than its maximum age (mqtt.writes.maxAge, or a shorter maxAgeMs in the command) after the command arrived; nothing of it was written. A setpoint written late is a hazard.' },
  NINES_ERR_WRITE_UNKNOWN: { status: 'write: unknown', meaning: 'A write went out but its outcome is unknown: it timed out, its connection dropped or its device was removed after the request was sent, so the device may have executed it (written: "unknown"). details.cause holds the underlying error. Read the value back before writing again.' },
  NINES_ERR_CONFIG: { status: 'bad config', meaning: 'A gateway config file failed schema validation; details.errors lists each field path and rule.' },
  NINES_ERR_CONNECT_TIMEOUT: { status: 'connect timeout', meaning: 'The TCP connection or serial port did not open within the connect timeout (details.connectTimeoutMs).' },
  NINES_ERR_CONNECT_FAILED: { status: 'connect failed', meaning: 'The connection was refused or failed (details.cause holds the system error code, e.g. ECONNREFUSED).' },
  NINES_ERR_TLS_UNKNOWN_CA: { status: 'tls: unknown CA', meaning: 'Modbus/TCP Security: the device\'s certificate is not signed by a CA nines trusts (tls.ca), or is self-signed; nothing was sent. details.cause holds the TLS error code (e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE, SELF_SIGNED_CERT_IN_CHAIN).' },
  NINES_ERR_TLS_CERT_EXPIRED: { status: 'tls: cert expired', meaning: 'Modbus/TCP Security: the device\'s certificate has expired (or is not valid yet: details.cause CERT_NOT_YET_VALID; check the clocks); nothing was sent.' },
  NINES_ERR_TLS_HOSTNAME_MISMATCH: { status: 'tls: wrong name', meaning: 'Modbus/TCP Security: the device\'s certificate does not name the host dialled (or tls.servername) in its subjectAltName; nothing was sent. details.cause is ERR_TLS_CERT_ALTNAME_INVALID.' },
  NINES_ERR_TLS_CLIENT_CERT_REQUIRED: { status: 'tls: cert required', meaning: 'Modbus/TCP Security: the device requires a client certificate and nines presented none (set tls.cert and tls.key); nothing was sent. details.cause holds the TLS alert (certificate required, or handshake failure on TLS 1.2).' },
  NINES_ERR_TLS_CLIENT_CERT_REJECTED: { status: 'tls: cert rejected', meaning: 'Modbus/TCP Security: the device refused nines\' client certificate (signed by a CA it does not trust, expired, or otherwise bad); nothing was sent. details.cause holds the TLS alert, e.g. ERR_SSL_TLSV1_ALERT_UNKNOWN_CA.' },
  NINES_ERR_TLS_HANDSHAKE_FAILED: { status: 'tls: handshake', meaning: 'Modbus/TCP Security: the TLS handshake failed for another reason (no protocol version or cipher in common, a device that does not speak TLS on that port, a certificate that is otherwise invalid); nothing was sent. details.cause holds the TLS error code.' },
  NINES_ERR_CONNECTION_CLOSED: { status: 'connection lost', meaning: 'The connection closed while a request was in flight or queued; the client reconnects with backoff.' },
  NINES_ERR_NOT_CONNECTED: { status: 'not connected', meaning: 'The request was not sent: the device is down (no connection up, reconnecting with backoff), or the client is not reconnecting. A down device fails requests at once, so no backlog builds up to be replayed.' },
  NINES_ERR_CLOSED: { status: 'closed', meaning: 'The client was closed by its owner; pending requests are rejected with this code.' },
  NINES_ERR_UNIT_DOWN: { status: 'unit down', meaning: 'The request was not sent: its unit on a shared line (an RTU slave, a unit id behind a gateway) stopped answering and is left alone for its backoff, so it does not hold the line its neighbours share. A job counts it as skipped. details.unit, details.retryInMs say which and when it is probed again.' },
  NINES_ERR_REPLY_TIMEOUT: { status: 'timeout', meaning: 'No complete reply within the request timeout. The device may be silent by design (wrong address, bad checksum, unknown command).' },
  NINES_ERR_QUEUE_FULL: { status: 'queue full', meaning: 'The bounded queue of this job or node on its device (or of one client) is full; the request was not sent and is counted as dropped. Also the Sparkplug hold (mqtt.sparkplug.hold) dropping its oldest held DATA while the primary host is offline; details.dropped counts them.' },
  NINES_ERR_BAD_CHECKSUM: { status: 'bad checksum', meaning: 'A reply checksum (ASCII sum or Modbus RTU CRC) does not match; details has the raw bytes.' },
  NINES_ERR_BAD_REPLY: { status: 'bad reply', meaning: 'A reply could not be parsed or does not fit the request; details has the raw bytes and the request.' },
  NINES_ERR_FRAME_TOO_LONG: { status: 'frame too long', meaning: 'A reply line exceeded the frame limit (255 bytes for ASCII) and was discarded.' },
  NINES_ERR_DEVICE_INVALID: { status: 'device: invalid', meaning: 'The device answered "?" (recognised command, invalid parameter or absent channel).' },
  NINES_ERR_DEVICE_IGNORED: { status: 'device: ignored', meaning: 'The device answered a bare "!" to an output write: its host watchdog has tripped and the write was ignored.' },
  NINES_ERR_MODBUS_EXCEPTION: { status: 'modbus exception', meaning: 'The Modbus device answered with an exception; details.exceptionCode and details.exceptionName say which.' },
  NINES_ERR_NO_VALUE: { status: 'no value', meaning: 'A tag\'s quality, not a failed request: its register was read and holds no value, a float that is NaN or ±Infinity, or a float32 at or beyond ±3.4e38 (the "no value" sentinel of many meters). The tag is published as null with this code.' },
  NINES_ERR_BAD_BCD: { status: 'bad bcd', meaning: 'A tag\'s quality, not a failed request: a bcd or lbcd register holds a nibble above 9, so it is no BCD number (a device still starting, or a wrong type in the tag map). The tag is published as null with this code.' },
  NINES_ERR_UNKNOWN_ENUM: { status: 'unknown enum', meaning: 'A tag\'s quality, not a failed request: an enum tag read a raw value its map has no label for. The tag is published as null with this code; add the value to the enum.' },
  NINES_ERR_SCALE_FACTOR: { status: 'no scale factor', meaning: 'A tag\'s quality, not a failed request: a tag scaled from another register (scaleFrom) has no usable exponent, as its scale register was not read or holds a value beyond ±10 (SunSpec writes -32768 for "not implemented"). The tag is published as null with this code.' },
  NINES_ERR_FC_UNSUPPORTED: { status: 'function unsupported', meaning: 'The Modbus device lacks a function code nines asked for: it answered exception 1 (illegal function) to FC8, FC22, FC23 or FC43; details.fc names it. (FC1-6, 15 and 16 keep NINES_ERR_MODBUS_EXCEPTION: some devices answer exception 1 for an address they lack.)' },
  NINES_ERR_PIPELINE_UNSUPPORTED: { status: 'one in flight', meaning: 'A warning, not a failed request: a Modbus TCP device set to take several requests per connection (maxInflight > 1) left overlapping requests unanswered or closed the connection on them, so nines fell back to one request in flight for it (health.inflight.effective is 1) until it is restarted.' },
  NINES_ERR_BAD_HISTOGRAM: { status: 'bad histogram', meaning: 'An encoded histogram was rejected before or during decoding (size cap, foreign header, corrupt data).' },
  NINES_ERR_SERIAL_UNAVAILABLE: { status: 'no serial support', meaning: 'The optional serialport package could not be loaded; install it to use modbus+rtu targets.' },
  NINES_ERR_PORT_IN_USE: { status: 'port in use', meaning: 'A server (simulator, embedded broker) could not listen because its port is taken.' },
  NINES_ERR_WORKER: { status: 'worker failed', meaning: 'A worker thread died or failed to start; its jobs are restarted and the death is reported.' },
  NINES_ERR_MQTT: { status: 'mqtt error', meaning: 'The MQTT publisher failed to connect or publish; polling goes on and summaries are buffered (bounded).' },
  NINES_ERR_HTTP_NOT_FOUND: { status: 'http: not found', meaning: 'The metrics endpoint or the status page has nothing at that path for that method (HTTP 404 or 405); nothing was changed.' },
  NINES_ERR_HTTP_BAD_REQUEST: { status: 'http: bad request', meaning: 'An HTTP request to the metrics endpoint or the status page was refused for its headers or body (HTTP 400, 406 or 431): an Accept header naming no served format, a body on a GET, malformed or oversized headers; nothing was changed.' },
  NINES_ERR_HTTP_UNAUTHORIZED: { status: 'http: unauthorized', meaning: 'An HTTP request to the metrics endpoint or the status page lacked the configured username and password, or they did not match (HTTP 401).' },
  NINES_ERR_HTTP_TOO_MANY_LOGINS: { status: 'http: locked out', meaning: 'An HTTP request to the metrics endpoint or the status page was refused (HTTP 429, with Retry-After) because of wrong logins: from its address (a lockout that doubles with each further one), or from everywhere (then only addresses that logged in rightly are served); nothing was changed.' },
  NINES_ERR_SPARKPLUG: { status: 'sparkplug: refused', meaning: 'A Sparkplug B command (NCMD or DCMD) was refused: a payload that does not decode, an unknown metric, a wrong datatype or value, a device that is not born, or a DCMD while writes by DCMD are off; nothing was changed. details names the topic and the metric.' },
  NINES_ERR_SCAN_BUSY: { status: 'scan: busy', meaning: 'A scan from the Node-RED device dialog was refused: a scan of the same line is running (two on one line would spoil each other\'s answers), or as many lines as may be scanned at once are; nothing was sent.' },
  NINES_ERR_IO: { status: 'file error', meaning: 'A file nines writes (an HdrHistogram interval log, the MQTT spool) could not be created or written; details.file names it and details.cause holds the system error code (e.g. EACCES, ENOSPC). A spool that fails leaves its messages to the memory buffer.' }
};

/** Base class of every error nines raises. */
class NinesError extends Error {
  /**
   * @param {string} code one of the NINES_ERR_* codes
   * @param {string} message states the fact and the value
   * @param {object} [details] structured context (raw bytes as hex, the command, the field path…)
   */
  constructor (code, message, details) {
    super(message);
    this.name = 'NinesError';
    this.code = code;
    if (details !== undefined) this.details = details;
  }

  /** @returns {{code: string, message: string, details?: object}} a form that survives postMessage and JSON */
  toJSON () {
    const out = { code: this.code, message: this.message };
    if (this.details !== undefined) out.details = this.details;
    return out;
  }
}

/**
 * Rebuilds a NinesError from its JSON form (from a worker or an MQTT payload).
 * @param {{code?: string, message?: string, details?: object}} obj
 * @returns {NinesError}
 */
function fromJSON (obj) {
  const code = obj && typeof obj.code === 'string' ? obj.code : 'NINES_ERR_WORKER';
  const message = obj && typeof obj.message === 'string' ? obj.message : 'unknown error';
  return new NinesError(code, message, obj ? obj.details : undefined);
}

/**
 * Wraps anything thrown into a NinesError, keeping it when it already is one.
 * @param {unknown} err
 * @param {string} [code] the code to use for a foreign error
 * @returns {NinesError}
 */
function toNinesError (err, code = 'NINES_ERR_BAD_REPLY') {
  if (err instanceof NinesError) return err;
  const e = /** @type {any} */ (err);
  const out = new NinesError(code, e && e.message ? e.message : String(err), e && e.code ? { cause: e.code } : undefined);
  return out;
}

/** @param {unknown} err @param {string} code @returns {boolean} */
function isCode (err, code) {
  return !!err && /** @type {any} */ (err).code === code;
}

module.exports = { NinesError, CODES, fromJSON, toNinesError, isCode };
