'use strict';

const { collectLatency } = require('./latency-sub');
const { until } = require('./wait');
const { Gateway } = require('../../gateway/runtime/gateway');
const { validateConfig } = require('../../gateway/runtime/config');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

/**
 * The rig of the scraper tests (test/integrations/prometheus*.test.js): an embedded broker, an MQTT
 * subscriber keeping every latency summary, and two gateways (gw-a, gw-b) each polling its own
 * Modbus simulator for a fixed count, their metrics endpoints on 127.0.0.1. The scrapers come after
 * the gateways (they need the endpoints' addresses), so the rig hands over the targets and waits,
 * once every job has ended, for each scraper to hold every interval.
 */

const IDS = ['gw-a', 'gw-b'];

/**
 * @param {object} o
 * @param {string} o.prefix the gateways' topic prefix
 * @param {string[]} o.faults the simulators' fault specs, one per gateway
 * @param {(g: {id: string, brokerUrl: string, simUrl: string, index: number}) => object} o.config the raw
 *   config of a gateway (validated here); its gateway.id is `id`, mqtt.prefix `prefix`
 * @param {(gatewayId: string, job: string, payload: object, hists: object) => void} [o.onSummary] each
 *   'summary' event of either gateway
 * @returns {Promise<{published: Map<string, Map<string, object[]>>, gateways: Gateway[], targets: string[], waitScraped: (scrapers: Map<string, {query: Function}>) => Promise<number>, stop: () => Promise<void>}>}
 *   published: gateway id → job → payloads received over MQTT; targets: host:port of each metrics
 *   endpoint; waitScraped: resolves, once every job of both gateways has ended, with the count of
 *   intervals when the subscriber and each scraper hold them all; stop: ends it all (whatever started)
 */
async function startTwoGateways ({ prefix, faults, config, onSummary = () => {} }) {
  const parts = { broker: null, sub: null, sims: [], gateways: [] };
  const stop = async () => {
    for (const gw of parts.gateways) await gw.stop().catch(() => {});
    if (parts.sub) await parts.sub.endAsync();
    for (const s of parts.sims) await s.close();
    if (parts.broker) await parts.broker.close();
  };
  try {
    parts.broker = await startEmbeddedBroker({ host: '127.0.0.1', port: 0 });
    const { sub, published } = await collectLatency(parts.broker.url, prefix);
    parts.sub = sub;
    for (const spec of faults) parts.sims.push(await createModbusTcpSimulator({ port: 0, faults: spec }));
    let summaries = 0;
    const ended = [];
    for (const [index, id] of IDS.entries()) {
      const gw = new Gateway(validateConfig(config({ id, brokerUrl: parts.broker.url, simUrl: parts.sims[index].url, index }), { env: {} }));
      gw.on('summary', (job, payload, h) => { summaries++; onSummary(id, job, payload, h); });
      const jobs = gw.config.jobs.length;
      let done = 0;
      ended.push(new Promise((resolve) => gw.on('end', () => { if (++done === jobs) resolve(); })));
      parts.gateways.push(gw);
    }
    await Promise.all(parts.gateways.map((gw) => gw.start()));
    const received = () => [...published.values()].reduce((n, byJob) => n + [...byJob.values()].reduce((m, list) => m + list.length, 0), 0);
    const waitScraped = async (scrapers) => {
      await Promise.all(ended);
      // every summary is in: each scraper's next scrape after the end holds the final values
      await until(() => received() === summaries, 'every interval reached the MQTT subscriber', 30000);
      for (const [name, s] of scrapers) {
        await until(async () => {
          const r = await s.query('sum(nines_job_intervals_total)');
          return r.length === 1 && Number(r[0].value[1]) === summaries;
        }, `${name} has every interval`, 30000, { everyMs: 200 });
      }
      return summaries;
    };
    return { published, gateways: parts.gateways, targets: parts.gateways.map((gw) => new URL(gw.metrics.url).host), waitScraped, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

module.exports = { startTwoGateways };
