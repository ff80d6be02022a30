'use strict';

/**
 * What the gateway's two MQTT sessions (the publisher, and the Sparkplug edge node's session) do
 * alike with one mqtt.js connection, so that a fix to how a connection is opened or torn down
 * reaches both.
 */

/**
 * Opens one connection attempt. MQTT.js's own retry is off (reconnectPeriod 0): the caller
 * reconnects with backoff, each attempt a fresh client with an empty outgoing store. Clean session,
 * no offline queue of QoS 0 messages, no resubscribing (the caller subscribes on every connect).
 * mqtt.js is loaded on first use.
 * @param {string} url
 * @param {{clientId: string, username?: string, password?: string, protocolVersion: number,
 *   keepaliveMs: number, connectTimeoutMs: number, tls?: object}} o
 * @param {{topic: string, payload: Buffer, qos: 0|1|2, retain: boolean}} will
 * @returns {import('mqtt').MqttClient}
 */
function connectOnce (url, o, will) {
  const mqtt = require('mqtt');
  return mqtt.connect(url, {
    clientId: o.clientId,
    username: o.username,
    password: o.password,
    protocolVersion: o.protocolVersion,
    keepalive: Math.ceil(o.keepaliveMs / 1000),
    connectTimeout: o.connectTimeoutMs,
    reconnectPeriod: 0,
    clean: true,
    queueQoSZero: false,
    resubscribe: false,
    will,
    ...(o.tls || {})
  });
}

/**
 * Runs fn(done) and waits for done() or for the deadline, whichever is first.
 * @param {number} deadline epoch ms
 * @param {(done: () => void) => void} fn
 * @returns {Promise<void>}
 */
function until (deadline, fn) {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    fn(() => { clearTimeout(timer); resolve(); });
  });
}

/**
 * Ends a connection now, whatever the broker does (frozen, half-open). MQTT.js's end(true) is a
 * no-op once end(false) is pending (it waits for acks that a frozen broker never sends, and its
 * keepalive would hold the process for 1.5 x keepalive), so the socket is destroyed too. Without a
 * DISCONNECT the broker then sends the last will.
 * @param {import('mqtt').MqttClient} client
 */
function destroyClient (client) {
  client.end(true);
  if (client.stream && !client.stream.destroyed) client.stream.destroy();
}

module.exports = { connectOnce, until, destroyClient };
