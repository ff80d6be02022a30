'use strict';

/*
 * The status page's live update, in plain browser JavaScript served by the gateway (no framework,
 * nothing from the network): every interval it reads status.json, rewrites the two tables and
 * reloads each job's percentile plot when the job has a new interval. Text goes in through
 * textContent only, never as HTML. Without JavaScript the page still shows the server-rendered
 * tables and plots as of its loading.
 */
(function () {
  const jobsBody = document.getElementById('jobs-body');
  const devicesBody = document.getElementById('devices-body');
  const updated = document.getElementById('updated');
  const intervalMs = Number(document.body.dataset.intervalMs) || 10000;

  function ms (v) {
    if (v === null || v === undefined) return '–';
    if (v >= 1000) return (v / 1000).toPrecision(3) + ' s';
    if (v >= 1) return v.toPrecision(3) + ' ms';
    return (v * 1000).toPrecision(3) + ' µs';
  }

  function cell (row, text, cls) {
    const td = document.createElement('td');
    td.textContent = text;
    if (cls) td.className = cls;
    row.appendChild(td);
    return td;
  }

  function renderJobs (jobs) {
    const rows = [];
    for (const j of jobs) {
      const tr = document.createElement('tr');
      tr.dataset.job = j.name;
      const w = j.window;
      cell(tr, j.name, 'name');
      cell(tr, j.device, 'name');
      cell(tr, j.deviceState, 'state-' + j.deviceState);
      cell(tr, j.seq === null ? '–' : String(j.seq));
      cell(tr, j.rate === null ? '–' : j.rate.toFixed(1) + '/s', j.fellBehind ? 'behind' : '');
      cell(tr, String(w.count));
      cell(tr, String(w.errors));
      cell(tr, String(w.timeouts));
      cell(tr, String(w.skipped));
      for (const k of ['p50', 'p90', 'p99', 'p99_9', 'p99_99', 'max']) cell(tr, ms(w[k])).className = 'pct ' + k;
      rows.push(tr);
    }
    jobsBody.replaceChildren(...rows);
  }

  function renderDevices (devices) {
    const rows = devices.map(function (d) {
      const tr = document.createElement('tr');
      cell(tr, d.name, 'name');
      cell(tr, d.state, 'state-' + d.state);
      cell(tr, d.since, 'name');
      cell(tr, d.connections ? d.connections.open + ' / ' + d.connections.max : '–');
      cell(tr, d.lastError ? d.lastError.code : '', 'name');
      cell(tr, d.diagnosticsText || '', 'name diagnostics');
      return tr;
    });
    devicesBody.replaceChildren(...rows);
  }

  /** The Sparkplug edge node in the footer: born or waiting, and the DATA held for its primary host */
  function sparkplugText (sp) {
    if (!sp) return '';
    let t = ' · Sparkplug ' + (sp.online ? 'born' : 'not born');
    if (sp.primaryHost) t += ', primary host ' + sp.primaryHost.id + (sp.primaryHost.online ? ' online' : ' offline');
    if (sp.held) {
      t += ', ' + sp.held.count + ' held';
      if (sp.held.oldestAgeMs !== null) t += ' (oldest ' + Math.round(sp.held.oldestAgeMs / 1000) + ' s)';
      t += ', ' + sp.held.dropped + ' dropped';
    }
    return t;
  }

  function refreshPlots (jobs) {
    for (const j of jobs) {
      const img = document.querySelector('img[data-job="' + CSS.escape(j.name) + '"]');
      if (!img || j.seq === null || img.dataset.seq === String(j.seq)) continue;
      img.dataset.seq = String(j.seq);
      img.src = 'plot/' + encodeURIComponent(j.name) + '.svg?seq=' + j.seq;
    }
  }

  async function tick () {
    try {
      const res = await fetch('status.json', { cache: 'no-store', credentials: 'same-origin' });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const s = await res.json();
      renderJobs(s.jobs);
      renderDevices(s.devices);
      refreshPlots(s.jobs);
      updated.textContent = 'updated ' + new Date(s.now).toLocaleTimeString() + ' · MQTT ' + (s.mqtt.connected ? 'connected' : 'not connected') +
        ', ' + s.mqtt.buffered + ' buffered, ' + s.mqtt.dropped + ' dropped' + sparkplugText(s.sparkplug);
      document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
    } catch (err) {
      updated.textContent = 'cannot reach the gateway (' + err.message + '); retrying';
    }
    setTimeout(tick, Math.max(500, Math.min(intervalMs, 10000)));
  }

  setTimeout(tick, Math.min(intervalMs, 1000));
})();
