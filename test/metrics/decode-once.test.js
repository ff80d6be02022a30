'use strict';

/**
 * With the metrics endpoint and the status page both on, a summary's histograms are decoded once
 * and the same decoded histograms reach both (runtime/summary-histograms.js), where each face used
 * to decode the response histogram on its own. The decoder is the real one, counted.
 */

const assert = require('node:assert/strict');
const { EventEmitter } = require('node:events');
const { startIntegrations } = require('../../gateway/runtime/integrations');
const { validateConfig } = require('../../gateway/runtime/config');
const { createHistogram, recordNs, encodeHistogram, decodeHistogram } = require('../../gateway/latency');

/** @param {number[]} valuesNs @returns {string} encoded */
function encoded (valuesNs) {
  const h = createHistogram();
  for (const v of valuesNs) recordNs(h, v);
  return encodeHistogram(h);
}

describe('runtime/summary-histograms: one decode per summary for every face', () => {
  let gw, integrations, calls, made;

  beforeEach(async () => {
    const config = validateConfig({
      gateway: { id: 'gw-decode', metrics: { listen: '127.0.0.1:0' }, http: { listen: '127.0.0.1:0' } },
      devices: { plc: { target: 'modbus+tcp://127.0.0.1:5020?unitId=1' } },
      jobs: [{ name: 'j', device: 'plc', read: { fc: 3, address: 0, quantity: 1 }, rate: '10/s' }]
    }, { env: {} });
    // only what startIntegrations reads of a gateway: its config, version, events and publisher
    gw = Object.assign(new EventEmitter(), { config, version: 'test', publisher: null });
    calls = new Map();
    made = new Map();
    const decode = (text) => {
      calls.set(text, (calls.get(text) || 0) + 1);
      made.set(text, decodeHistogram(text));
      return made.get(text);
    };
    integrations = await startIntegrations(gw, { decode });
  });

  afterEach(() => integrations.close());

  it('decodes the response, service and lag histograms once each, and both faces take them', () => {
    const hist = encoded([1e6, 2e6, 3e6]);
    const hists = { service: encoded([5e5, 1e6, 1.5e6]), lag: encoded([1e3, 2e3, 30e3]) };
    const payload = { v: 1, job: 'j', seq: 0, end: Date.now(), count: 3, ok: 3, errors: 0, timeouts: 0, skipped: 0, p50: 2, p99: 3, max: 3, hist };
    gw.emit('summary', 'j', payload, hists);

    assert.deepEqual([...calls.values()], [1, 1, 1], 'three histograms, each decoded once');
    assert.deepEqual([...calls.keys()].sort(), [hist, hists.service, hists.lag].sort());
    const m = gw.metrics.collector.jobs.get('j');
    assert.equal(m.counts.ok, 3);
    assert.deepEqual([m.hist.response.count, m.hist.service.count, m.hist.lag.count], [3, 3, 3]);
    const page = gw.status.model.snapshot().jobs.find((j) => j.name === 'j');
    assert.equal(page.window.intervals, 1);
    assert.equal(page.window.ok, 3);
    assert.equal(gw.status.model.jobs.get('j').window.acc.totalCount, 3);
    assert.equal(gw.status.model.jobs.get('j').window.ring[0], made.get(hist), 'the page keeps the shared histogram, not a second decode');
  });

  it('a summary of a job no face shows is not decoded', () => {
    gw.emit('summary', 'gone', { hist: encoded([1e6]), ok: 1, errors: 0, timeouts: 0, skipped: 0 }, null);
    assert.equal(calls.size, 0);
  });

  it('a histogram that does not decode is reported once, and neither face takes the summary', () => {
    const reports = [];
    gw.on('job-error', (job, err) => reports.push([job, err.code]));
    gw.emit('summary', 'j', { hist: 'not a histogram', ok: 1, errors: 0, timeouts: 0, skipped: 0 }, null);
    assert.equal(reports.length, 1, 'one report, not one per face');
    assert.equal(reports[0][0], 'j');
    assert.match(reports[0][1], /^NINES_ERR_/);
    assert.equal(gw.metrics.collector.jobs.get('j').counts.ok, 0);
    assert.equal(gw.status.model.jobs.get('j').window.intervals, 0);
  });
});
