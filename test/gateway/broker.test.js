'use strict';

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const mqtt = require('mqtt');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');

describe('gateway/runtime/mqtt/broker: the embedded broker', () => {
  let broker;
  afterEach(async () => {
    if (broker) await broker.close();
    broker = null;
  });

  it('listens on a free loopback port with port 0 and gives its URL', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    assert.equal(broker.host, '127.0.0.1');
    assert.ok(broker.port > 0);
    assert.equal(broker.url, `mqtt://127.0.0.1:${broker.port}`);
  });

  it('carries messages between plain mqtt.js clients, retained ones included', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const pub = await mqtt.connectAsync(broker.url);
    await pub.publishAsync('t/retained', 'kept', { qos: 1, retain: true });
    const sub = await mqtt.connectAsync(broker.url);
    const got = once(sub, 'message');
    await sub.subscribeAsync('t/#', { qos: 1 });
    const [topic, payload, packet] = await got;
    assert.equal(topic, 't/retained');
    assert.equal(payload.toString(), 'kept');
    assert.equal(packet.retain, true);
    await Promise.all([pub.endAsync(), sub.endAsync()]);
  });

  it('reports a port in use with NINES_ERR_PORT_IN_USE and a hint', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    await assert.rejects(startEmbeddedBroker({ port: broker.port }), (err) => {
      assert.equal(err.code, 'NINES_ERR_PORT_IN_USE');
      assert.equal(err.message, `port ${broker.port} on 127.0.0.1 is in use: another broker is running? set mqtt.url to use it`);
      assert.deepEqual(err.details, { host: '127.0.0.1', port: broker.port, cause: 'EADDRINUSE' });
      return true;
    });
  });

  it('rejects a bad port with NINES_ERR_INVALID_ARG', async () => {
    await assert.rejects(startEmbeddedBroker({ port: 70000 }), { code: 'NINES_ERR_INVALID_ARG' });
    await assert.rejects(startEmbeddedBroker({ port: 1.5 }), { code: 'NINES_ERR_INVALID_ARG' });
  });

  it('close() closes client sockets too, MQTT clients and silent ones alike', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const client = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    const raw = net.connect(broker.port, '127.0.0.1');
    await once(raw, 'connect');
    // a socket that never sends CONNECT is not an aedes client yet; close() must still end it
    const clientClosed = once(client, 'close');
    const rawClosed = once(raw, 'close');
    assert.equal(broker.clientCount(), 2);
    await broker.close();
    await Promise.all([clientClosed, rawClosed]);
    assert.equal(broker.clientCount(), 0);
    await client.endAsync(true);
    broker = null;
  });

  it('frees its port on close, so a broker can start again on the same port', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    const port = broker.port;
    const c = await mqtt.connectAsync(broker.url, { reconnectPeriod: 0 });
    await broker.close();
    broker = await startEmbeddedBroker({ port });
    assert.equal(broker.port, port);
    await c.endAsync(true);
  });

  it('close() can be called twice', async () => {
    broker = await startEmbeddedBroker({ port: 0 });
    await Promise.all([broker.close(), broker.close()]);
    await broker.close();
    broker = null;
  });
});
