'use strict';

/**
 * The text expositions: Prometheus 0.0.4 and OpenMetrics 1.0, from the same families as the
 * protobuf one (protobuf.js).
 *
 * The text formats have no native histograms (Prometheus 2.x scrapes those only as protobuf), so
 * a histogram that is native only is written as its count, sum and the `+Inf` bucket: exact
 * merges of counts and means, no percentiles. Percentiles need the protobuf exposition, which
 * Prometheus asks for when its native histograms are on.
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

/** @param {string} v @returns {string} */
const escapeLabel = (v) => String(v).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

/** @param {Record<string, string>} labels @param {string} [extra] an already formatted pair @returns {string} */
function labelText (labels, extra) {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  if (extra) parts.push(extra);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/**
 * @param {import('./families').Family[]} families
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
        for (const b of s.classic || []) {
          if (b.le !== Infinity) lines.push(`${f.name}_bucket${labelText(s.labels, `le="${num(b.le)}"`)} ${num(b.cumulative)}`);
        }
        lines.push(`${f.name}_bucket${labelText(s.labels, 'le="+Inf"')} ${num(s.count)}`);
        lines.push(`${f.name}_sum${labelText(s.labels)} ${num(s.sum)}`);
        lines.push(`${f.name}_count${labelText(s.labels)} ${num(s.count)}`);
      } else {
        const name = f.type === 'counter' ? `${f.name}_total` : f.name;
        lines.push(`${name}${labelText(s.labels)} ${num(s.value)}`);
      }
    }
  }
  if (openMetrics) lines.push('# EOF');
  return lines.join('\n') + '\n';
}

module.exports = { encodeText, PROMETHEUS_CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE };
