'use strict';

const { filterMatches } = require('./topics');

/**
 * The topic filters the publisher's connection takes messages on (the gateway's command topics), each
 * with its handler. A clean session forgets subscriptions, so every new connection subscribes again.
 */
class Subscriptions {
  constructor () {
    /** @type {Map<string, (topic: string, payload: Buffer) => void>} topic filter → handler */
    this._handlers = new Map();
  }

  /**
   * @param {string} filter an MQTT topic filter
   * @param {(topic: string, payload: Buffer) => void} onMessage
   * @param {import('mqtt').MqttClient|null} client the connected client, if any: subscribed at once
   */
  add (filter, onMessage, client) {
    this._handlers.set(filter, onMessage);
    if (client) client.subscribe(filter, { qos: 1 });
  }

  /** @param {import('mqtt').MqttClient} client a new connection */
  subscribeAll (client) {
    for (const filter of this._handlers.keys()) client.subscribe(filter, { qos: 1 });
  }

  /** @param {string} topic @param {Buffer} payload a message that arrived: to every handler whose filter matches */
  dispatch (topic, payload) {
    for (const [filter, fn] of this._handlers) if (filterMatches(filter, topic)) fn(topic, payload);
  }
}

module.exports = { Subscriptions };
