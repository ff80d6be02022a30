'use strict';

/**
 * Which exposition a scrape gets, from its Accept header (RFC 9110 §12.5.1 with q-values), the
 * way Prometheus negotiates: Prometheus 2.x with native histograms on asks for
 * `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited`
 * first, then OpenMetrics, then `text/plain;version=0.0.4`; without them it asks for the text
 * formats only. A request with no Accept header, or a wildcard (curl, a browser), gets the 0.0.4 text.
 *
 * An Accept header that names none of the three (and no wildcard) is answered 406, never with a
 * format the client did not ask for.
 */

/** Formats in the server's order of preference, for ties in q */
const FORMATS = Object.freeze(['protobuf', 'openmetrics', 'text']);
/** A header longer than this is refused rather than parsed (Node's own limit is 16 KiB for all headers) */
const MAX_ACCEPT_CHARS = 4096;

/**
 * @param {string} range a media range without parameters, lower case
 * @param {Record<string, string>} params
 * @returns {string|null} the format it names
 */
function formatOf (range, params) {
  if (range === 'application/vnd.google.protobuf') {
    if (params.proto === 'io.prometheus.client.MetricFamily' && params.encoding === 'delimited') return 'protobuf';
    return null;
  }
  if (range === 'application/openmetrics-text') return 'openmetrics';
  if (range === 'text/plain') return params.version === undefined || params.version === '0.0.4' ? 'text' : null;
  return null;
}

/**
 * @param {string|undefined} accept the Accept header
 * @returns {{format: string|null, reason?: string}} format protobuf | openmetrics | text, or
 *   null with the reason when nothing acceptable was asked for
 */
function negotiate (accept) {
  if (accept === undefined || accept.trim() === '') return { format: 'text' };
  if (accept.length > MAX_ACCEPT_CHARS) return { format: null, reason: `Accept header is ${accept.length} characters; at most ${MAX_ACCEPT_CHARS}` };
  const best = new Map(); // format → q
  for (const part of accept.split(',')) {
    const [rawRange, ...rawParams] = part.split(';');
    const range = rawRange.trim().toLowerCase();
    if (range === '') continue;
    const params = {};
    let q = 1;
    for (const p of rawParams) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const key = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
      if (key === 'q') {
        q = Number(value);
        if (!(q >= 0 && q <= 1)) return { format: null, reason: `Accept header has q=${JSON.stringify(value)}; q is a number from 0 to 1` };
      } else params[key] = value;
    }
    // a wildcard gets the plain text, the one format every reader (curl, a browser) can show
    const names = range === '*/*' || range === 'text/*' ? ['text'] : [formatOf(range, params)];
    for (const name of names) if (name && (!best.has(name) || best.get(name) < q)) best.set(name, q);
  }
  let pick = null;
  for (const name of FORMATS) {
    const q = best.get(name);
    if (q !== undefined && q > 0 && (pick === null || q > best.get(pick))) pick = name;
  }
  if (pick === null) return { format: null, reason: `Accept header ${JSON.stringify(accept.slice(0, 200))} names none of the expositions served: ${CONTENT_TYPES_LIST}` };
  return { format: pick };
}

const CONTENT_TYPES_LIST = 'application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited, application/openmetrics-text, text/plain;version=0.0.4';

module.exports = { negotiate, FORMATS };
