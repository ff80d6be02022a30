'use strict';

/**
 * The status page's HTML, rendered on the server from the same snapshot status.json serves, so
 * the page is complete without JavaScript; assets/status.js then keeps it live. Every value is
 * escaped: job, device and error texts come from the config and from devices.
 */

/** @param {unknown} s @returns {string} */
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** @param {number|null|undefined} v ms @returns {string} */
function ms (v) {
  if (v === null || v === undefined) return '–';
  if (v >= 1000) return `${(v / 1000).toPrecision(3)} s`;
  if (v >= 1) return `${v.toPrecision(3)} ms`;
  return `${(v * 1000).toPrecision(3)} µs`;
}

const PCTS = ['p50', 'p90', 'p99', 'p99_9', 'p99_99', 'max'];

/**
 * @param {ReturnType<import('./status').StatusModel['snapshot']>} s
 * @returns {string}
 */
function renderPage (s) {
  const jobRows = s.jobs.map((j) => {
    const w = j.window;
    return `<tr data-job="${esc(j.name)}"><td class="name">${esc(j.name)}</td><td class="name">${esc(j.device)}</td>` +
      `<td class="state-${esc(j.deviceState)}">${esc(j.deviceState)}</td><td>${j.seq === null ? '–' : j.seq}</td>` +
      `<td${j.fellBehind ? ' class="behind"' : ''}>${j.rate === null ? '–' : `${j.rate.toFixed(1)}/s`}</td>` +
      `<td>${w.count}</td><td>${w.errors}</td><td>${w.timeouts}</td><td>${w.skipped}</td>` +
      PCTS.map((k) => `<td class="pct ${k}">${ms(w[k])}</td>`).join('') + '</tr>';
  }).join('\n');
  const deviceRows = s.devices.map((d) => `<tr><td class="name">${esc(d.name)}</td><td class="state-${esc(d.state)}">${esc(d.state)}</td>` +
    `<td class="name">${esc(d.since)}</td><td>${d.connections ? `${d.connections.open} / ${d.connections.max}` : '–'}</td>` +
    `<td class="name">${d.lastError ? esc(d.lastError.code) : ''}</td><td class="name diagnostics">${esc(d.diagnosticsText || '')}</td></tr>`).join('\n');
  const plots = s.jobs.map((j) => `<figure><img data-job="${esc(j.name)}" data-seq="${j.seq === null ? '' : j.seq}" loading="lazy" alt="percentile curve of ${esc(j.name)}" ` +
    `src="plot/${encodeURIComponent(j.name)}.svg?seq=${j.seq === null ? '' : j.seq}"><figcaption>${esc(j.name)} · ${esc(j.target)}</figcaption></figure>`).join('\n');
  const windowText = `${s.windowIntervals} interval${s.windowIntervals === 1 ? '' : 's'} of ${s.intervalMs / 1000} s`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nines · ${esc(s.gateway)}</title>
<link rel="icon" href="assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="assets/status.css">
<script src="assets/status.js" defer></script>
</head>
<body data-interval-ms="${s.intervalMs}">
<h1>nines gateway ${esc(s.gateway)}</h1>
<p class="meta">version ${esc(s.version)} · started ${esc(s.started)} · percentiles of the latest ${windowText}, from the merged histograms ·
<span id="updated">as of ${esc(s.now)}</span></p>
<h2>Jobs</h2>
<table id="jobs"><thead><tr><th class="name">job</th><th class="name">device</th><th>device state</th><th>seq</th><th>rate</th><th>count</th><th>errors</th><th>timeouts</th><th>skipped</th>
<th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>p99.99</th><th>max</th></tr></thead>
<tbody id="jobs-body">
${jobRows}
</tbody></table>
<h2>Devices</h2>
<table id="devices"><thead><tr><th class="name">device</th><th>state</th><th class="name">since</th><th>connections</th><th class="name">last error</th><th class="name">FC8 counters</th></tr></thead>
<tbody id="devices-body">
${deviceRows}
</tbody></table>
<h2>Response time by percentile</h2>
<div class="plots">
${plots}
</div>
</body>
</html>
`;
}

module.exports = { renderPage };
