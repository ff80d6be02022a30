'use strict';

const mqtt = require('mqtt');

/**
 * An MQTT subscriber that keeps every latency summary the gateways publish under `prefix`, by
 * gateway id and job, as a user's subscriber would see them.
 * @param {string} brokerUrl
 * @param {string} prefix the gateways' topic prefix
 * @returns {Promise<{sub: import('mqtt').MqttClient, published: Map<string, Map<string, object[]>>}>}
 *   published: gateway id → job → payloads, in arrival order
 */
async function collectLatency (brokerUrl, prefix) {
  const sub = mqtt.connect(brokerUrl, { reconnectPeriod: 200 });
  await new Promise((resolve, reject) => { sub.once('connect', resolve); sub.once('error', reject); });
  const published = new Map();
  sub.on('message', (topic, payload) => {
    const [, gw, job, kind] = topic.split('/');
    if (kind !== 'latency') return;
    if (!published.has(gw)) published.set(gw, new Map());
    const byJob = published.get(gw);
    if (!byJob.has(job)) byJob.set(job, []);
    byJob.get(job).push(JSON.parse(payload.toString()));
  });
  await sub.subscribeAsync(`${prefix}/#`, { qos: 1 });
  return { sub, published };
}

module.exports = { collectLatency };
