'use strict';

/**
 * Where the demo publishes when port 1883 is taken (issue 21: `npm start` failed when Debian's
 * mosquitto package had started a broker there): a broker that lets anyone in is used, anything
 * else there makes the embedded broker move to a free port; each said in one line.
 */

const assert = require('node:assert/strict');
const net = require('node:net');
const { demoBroker } = require('../../gateway/cli/demo');
const { startEmbeddedBroker } = require('../../gateway/runtime/mqtt/broker');
const { freePort } = require('../helpers/mosquitto');

describe('the demo\'s broker when its port is taken', () => {
  it('keeps the embedded broker on its port when the port is free', async () => {
    const said = [];
    assert.equal(await demoBroker({ say: (l) => said.push(l), port: await freePort() }), null);
    assert.deepEqual(said, []);
  });

  it('publishes to an MQTT broker already there that lets anyone in, and says so', async () => {
    const broker = await startEmbeddedBroker({ port: 0 });
    try {
      const said = [];
      const port = Number(new URL(broker.url).port);
      assert.deepEqual(await demoBroker({ say: (l) => said.push(l), port }), { url: `mqtt://127.0.0.1:${port}` });
      assert.equal(said.length, 1);
      assert.match(said[0], new RegExp(`port ${port} has an MQTT broker that lets anyone in: the demo publishes to it`));
      assert.match(said[0], new RegExp(`npx nines watch mqtt://127\\.0\\.0\\.1:${port}`));
    } finally {
      await broker.close();
    }
  });

  it('moves the embedded broker to a free port when something else holds the port, or a broker that wants a login', async () => {
    // a TCP service that is not MQTT: accepts and says nothing
    const sockets = new Set();
    const silent = net.createServer((s) => { sockets.add(s); s.on('error', () => {}); });
    await new Promise((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const locked = await startEmbeddedBroker({ port: 0, username: 'u', password: 'p' });
    try {
      for (const port of [silent.address().port, Number(new URL(locked.url).port)]) {
        const said = [];
        assert.deepEqual(await demoBroker({ say: (l) => said.push(l), port, connectTimeoutMs: 500 }), { embeddedPort: 0 });
        assert.match(said.join('\n'), new RegExp(`port ${port} is taken by something that is not an MQTT broker open to the demo: the demo's embedded broker listens on a free port`));
      }
    } finally {
      for (const s of sockets) s.destroy();
      silent.close();
      await locked.close();
    }
  });
});
