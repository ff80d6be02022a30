'use strict';

/**
 * The gateway's HTTP faces, each off unless configured: the metrics endpoint (gateway.metrics,
 * metrics/) and the status page (gateway.http, http/). Both only listen to the gateway's events
 * ('summary', 'health') and read the publisher's stats; neither changes what the gateway does.
 * Each summary's histograms are decoded once and shared by both (summary-histograms.js).
 * Required only when configured, so a gateway without them loads none of their code.
 */

/**
 * @param {import('./gateway').Gateway} gw started up to its publisher; its pool not yet
 * @param {object} [opts]
 * @param {(encoded: string) => object} [opts.decode] the histogram decoder (latency's
 *   decodeHistogram): a test counts its calls through it
 * @returns {Promise<{setJobs: (config: object) => void, close: () => Promise<void>}>}
 */
async function startIntegrations (gw, { decode } = {}) {
  const g = gw.config.gateway;
  const servers = [];
  /** @type {import('./summary-histograms').SummaryFace[]} */
  const faces = [];
  const publisherStats = () => (gw.publisher ? gw.publisher.stats : null);
  try {
    if (g.metrics) {
      const { MetricsCollector } = require('./metrics/collector');
      const { startMetricsServer } = require('./metrics/server');
      const collector = new MetricsCollector({
        gateway: g.id,
        version: gw.version,
        jobs: metricJobs(gw.config),
        publisherStats,
        writeStats: () => (gw.writeCommands ? gw.writeCommands.stats : null),
        bucketsNs: g.metrics.bucketsNs
      });
      faces.push(collector);
      gw.on('health', (device, health) => collector.onHealth(device, health));
      const s = await startMetricsServer(collector, g.metrics);
      servers.push(s);
      gw.metrics = { collector, url: `${s.url}/metrics` };
      gw.emit('listening', { what: 'metrics', url: `${s.url}/metrics`, login: g.metrics.login ? g.metrics.login.username : null });
    }
    if (g.http) {
      const { StatusModel } = require('./http/status');
      const { startStatusServer } = require('./http/server');
      const model = new StatusModel({
        gateway: g.id,
        version: gw.version,
        intervalMs: g.intervalMs,
        windowIntervals: g.http.windowIntervals,
        jobs: pageJobs(gw.config),
        publisherStats,
        // the Sparkplug edge node starts after the page: read it when a snapshot is taken
        sparkplugStats: () => (gw.sparkplug ? gw.sparkplug.edge.stats : null)
      });
      faces.push(model);
      gw.on('health', (device, health) => model.onHealth(device, health));
      const s = await startStatusServer(model, g.http);
      servers.push(s);
      gw.status = { model, url: `${s.url}/` };
      gw.emit('listening', { what: 'status page', url: `${s.url}/`, login: g.http.login ? g.http.login.username : null });
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }
  if (faces.length > 0) {
    const { shareDecodedSummaries } = require('./summary-histograms');
    gw.on('summary', shareDecodedSummaries({ faces, onError: (job, err) => gw.emit('job-error', job, err), decode }));
  }
  return {
    /** After a config reload: the jobs to expose and show (runtime/reload.js) */
    setJobs (config) {
      if (gw.metrics) gw.metrics.collector.setJobs(metricJobs(config));
      if (gw.status) gw.status.model.setJobs(pageJobs(config));
    },
    close: () => Promise.all(servers.map((s) => s.close())).then(() => {})
  };
}

/** @returns {Record<string, string>} job → device */
function metricJobs (config) {
  return Object.fromEntries(config.jobs.map((j) => [j.name, j.device]));
}

/** @returns {Array<{name: string, device: string, target: string}>} */
function pageJobs (config) {
  return config.jobs.map((j) => ({ name: j.name, device: j.device, target: config.devices[j.device].target.url || String(config.devices[j.device].target) }));
}

module.exports = { startIntegrations };
