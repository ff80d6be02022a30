'use strict';

const { EventEmitter } = require('node:events');

/**
 * A client that opens a new connection for every request and closes it after the reply, to measure
 * what a connection per request costs against a reused one (the Chronicle network-latency contrast;
 * latency-method.md). Its replies' `sentNs` is taken before the connect, so service time includes
 * the TCP handshake, as the caller experiences it.
 */
class ReconnectEachClient extends EventEmitter {
  /**
   * @param {string|object} target
   * @param {object} [opts] driver options (timeoutMs, connectTimeoutMs)
   * @param {(target: any, opts: object) => any} factory the driver factory (drivers/index.js createClient)
   */
  constructor (target, opts, factory) {
    super();
    this.target = target;
    this.opts = { ...opts, reconnect: false };
    this.factory = factory;
    this.state = 'idle';
    this.stats = { requests: 0, ok: 0, errors: 0, connects: 0 };
  }

  /** Nothing to open in advance. @returns {Promise<void>} */
  async connect () {
    this.state = 'connected';
  }

  /**
   * @param {any} op
   * @param {{timeoutMs?: number}} [o]
   * @returns {Promise<object>} the reply, sentNs taken before the connect
   */
  async request (op, o) {
    this.stats.requests++;
    const startNs = process.hrtime.bigint();
    const c = this.factory(this.target, this.opts);
    c.on('error', () => {});
    try {
      await c.connect();
      this.stats.connects++;
      const reply = await c.request(op, o);
      reply.sentNs = startNs;
      this.stats.ok++;
      return reply;
    } catch (err) {
      this.stats.errors++;
      err.sentNs = startNs;
      throw err;
    } finally {
      await c.close();
    }
  }

  /** @returns {Promise<void>} */
  async close () {
    this.state = 'closed';
  }
}

module.exports = { ReconnectEachClient };
