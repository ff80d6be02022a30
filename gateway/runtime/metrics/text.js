'use strict';

/**
 * The text expositions: Prometheus 0.0.4 and OpenMetrics 1.0, from the same families as the
 * protobuf one (protobuf.js).
 *
 * The text formats have no native histograms, so a latency histogram is written with its classic
 * `le` buckets (classic-buckets.js), its count and its sum; a histogram without classic buckets
 * (gateway.metrics.buckets: []) is its count, sum and the `+Inf` bucket. Each job's quantiles of
 * the last interval are a summary beside it (interval-quantiles.js).
 *
 * The `le` and `quantile` label values are written as Prometheus writes the bounds it reads from
 * the protobuf exposition (Go's shortest float, with ".0" on a whole number: 1 s is le="1.0",
 * 10 µs le="1e-05"), which is also what Prometheus 3 turns a text format's values into: a series
 * keeps one name whichever exposition a Prometheus negotiates, and a query that names a bucket
 * finds it.
 */

const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** @param {number} v @returns {string} */
function num (v) {
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (Number.isNaN(v)) return 'NaN';
  return String(v);
}

/**
 * A float as Go's strconv.FormatFloat(v, 'g', -1, 64) writes it, with ".0" added when it has no
 * "." and no exponent: Prometheus's formatOpenMetricsFloat, which names the `le` and `quantile`
 * labels of what it scrapes.
 * @param {number} v
 * @returns {string}
 */
function labelFloat (v) {
  if (!Number.isFinite(v)) return num(v);
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = v.toExponential().split('e');
  const exp = Number(expText);
  let out;
  // Go's shortest 'g' switches to an exponent below 1e-4 and from 1e6 (le="1e+06"); JavaScript
  // below 1e-6 and from 1e21. Both write the shortest digits that read back the same number.
  if (exp < -4 || exp >= 6) out = `${mantissa}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  else out = String(v);
  return /[.e]/.test(out) ? out : `${out}.0`;
}

/**
 * labelFloat's results: the `le` and `quantile` values are a few dozen numbers written on every
 * scrape (a bound per bucket line: 31 × 3 per job by default), so each is formatted once. Bounded,
 * in case a caller ever hands it values without end.
 */
const labelFloats = new Map();
const LABEL_FLOATS_MAX = 4096;

/** @param {number} v @returns {string} labelFloat(v), from the cache */
function cachedLabelFloat (v) {
  let text = labelFloats.get(v);
  if (text === undefined) {
    text = labelFloat(v);
    if (labelFloats.size < LABEL_FLOATS_MAX) labelFloats.set(v, text);
  }
  return text;
}

/** @param {string} v @returns {string} */
const escapeLabel = (v) => String(v).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/**
 * A sample's labels, formatted once and shared by its lines (a histogram has one per bucket).
 * @param {Record<string, string>} labels
 * @returns {{plain: string, open: string}} plain: `{a="b"}` or ''; open: `{a="b",` or `{`, for
 *   a line that adds one more pair and the closing brace
 */
function labelSet (labels) {
  const inner = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',');
  return inner === '' ? { plain: '', open: '{' } : { plain: `{${inner}}`, open: `{${inner},` };
}

/**
 * @param {import('./collector').Family[]} families
 * @param {{openMetrics?: boolean}} [opts]
 * @returns {string}
 */
function encodeText (families, { openMetrics = false } = {}) {
  const lines = [];
  for (const f of families) {
    // 0.0.4 names a counter by its series (…_total); OpenMetrics by its family, the series adds _total
    const family = f.type === 'counter' && !openMetrics ? `${f.name}_total` : f.name;
    const help = openMetrics ? escapeLabel(f.help) : f.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
    lines.push(`# HELP ${family} ${help}`, `# TYPE ${family} ${f.type}`);
    if (openMetrics && f.unit) lines.push(`# UNIT ${family} ${f.unit}`);
    for (const s of f.samples) {
      if (f.type === 'histogram') {
        const l = labelSet(s.labels);
        // one prefix per sample, not per bucket line: the lines differ only in le and count
        const prefix = `${f.name}_bucket${l.open}`;
        for (const b of s.classic || []) {
          if (b.le !== Infinity) lines.push(`${prefix}le="${cachedLabelFloat(b.le)}"} ${num(b.cumulative)}`);
        }
        lines.push(`${prefix}le="+Inf"} ${num(s.count)}`);
        lines.push(`${f.name}_sum${l.plain} ${num(s.sum)}`);
        lines.push(`${f.name}_count${l.plain} ${num(s.count)}`);
      } else if (f.type === 'summary') {
        const l = labelSet(s.labels);
        for (const q of s.quantiles) lines.push(`${f.name}${l.open}quantile="${cachedLabelFloat(q.quantile)}"} ${num(q.value)}`);
        lines.push(`${f.name}_sum${l.plain} ${num(s.sum)}`);
        lines.push(`${f.name}_count${l.plain} ${num(s.count)}`);
      } else {
        const name = f.type === 'counter' ? `${f.name}_total` : f.name;
        lines.push(`${name}${labelSet(s.labels).plain} ${num(s.value)}`);
      }
    }
  }
  if (openMetrics) lines.push('# EOF');
  return lines.join('\n') + '\n';
}

module.exports = { encodeText, labelFloat, PROMETHEUS_CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE };
