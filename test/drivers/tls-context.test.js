'use strict';

// A modbus+tls device builds its secure context once (tls-options.js): checking its spec builds it, and
// every connection the device opens shares it; a spec copied to another thread builds its own, once. An
// option object changed since is checked and built again, so the memory never hides a new certificate
// or a bad field. Builds are counted by wrapping node:tls's createSecureContext, which still builds each.

const assert = require('node:assert/strict');
const tls = require('node:tls');
const { checkTlsOptions, tlsAsText } = require('../../gateway/drivers/tls-options');
const { createClient } = require('../../gateway/drivers/modbus');
const { Device, buildDeviceSpec } = require('../../gateway/devices');
const { trustDeviceSpec } = require('../../gateway/devices/spec');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { makeCerts } = require('../helpers/tls-certs');

describe('TLS secure context: built once per device', function () {
  this.timeout(15000);
  let certs;
  let builds = 0;
  const real = tls.createSecureContext;
  const cleanup = [];
  before(() => { certs = makeCerts(); });
  afterEach(async () => {
    tls.createSecureContext = real;
    while (cleanup.length) await cleanup.pop()();
  });

  /** Counts the secure contexts built from now on (each still built by Node) */
  function countBuilds () {
    builds = 0;
    tls.createSecureContext = function (...args) {
      builds++;
      return real.apply(this, args);
    };
  }

  const good = () => ({ ca: certs.ca.pem, cert: certs.client.pem, key: certs.client.key });

  async function simulator () {
    const sim = await createModbusTcpSimulator({ port: 0, tls: { cert: certs.server.pem, key: certs.server.key, ca: certs.ca.pem } });
    sim.model.setRegisters('holdingRegisters', 0, [7, 8]);
    cleanup.push(() => sim.close());
    return sim;
  }

  it('builds a device\'s context when its spec is checked, and its three connections share it', async () => {
    const sim = await simulator();
    countBuilds();
    const spec = buildDeviceSpec({ name: 'plc', target: sim.url, maxConnections: 3, tls: good() });
    assert.equal(builds, 1, 'checking the spec builds the context');
    const device = new Device(spec);
    cleanup.push(() => device.close());
    await device.open();
    const user = device.user('hr');
    const replies = await Promise.all([1, 2, 3, 4, 5, 6].map(() => user.request({ fc: 3, address: 0, quantity: 2 })));
    for (const r of replies) assert.deepEqual(r.data, [7, 8]);
    assert.equal(sim.stats.connections, 3, 'three TLS connections were made');
    assert.deepEqual(sim.clientRoles, ['Operator', 'Operator', 'Operator'], 'each presented the client certificate');
    assert.equal(builds, 1, 'and none built a context of its own');
  });

  it('builds once more for a spec copied as to a worker thread, and the copy\'s connections share that one', async () => {
    const sim = await simulator();
    const spec = buildDeviceSpec({ name: 'plc', target: sim.url, maxConnections: 2, tls: good() });
    countBuilds();
    const device = new Device(trustDeviceSpec(structuredClone(spec)));
    cleanup.push(() => device.close());
    await device.open();
    assert.deepEqual((await device.user('hr').request({ fc: 3, address: 0, quantity: 2 })).data, [7, 8]);
    assert.equal(sim.stats.connections, 2);
    assert.equal(builds, 1);
  });

  it('gives the same context for the same option object, and for the text tlsAsText made of it', () => {
    countBuilds();
    const given = { ...good(), cert: Buffer.from(certs.client.pem) };
    const a = checkTlsOptions(given);
    assert.equal(checkTlsOptions(given), a);
    const text = tlsAsText(given);
    assert.equal(typeof text.cert, 'string');
    assert.equal(checkTlsOptions(text), a);
    const c1 = createClient('modbus+tls://127.0.0.1:802', { tls: text });
    const c2 = createClient('modbus+tls://127.0.0.1:802', { tls: text });
    cleanup.push(() => c1.close(), () => c2.close());
    assert.equal(builds, 1);
    // an equal object that is not the same one is checked and built afresh
    assert.notEqual(checkTlsOptions(good()), a);
    assert.equal(builds, 2);
  });

  it('checks and builds again an option object changed since: a new CA, a Buffer rewritten in place, a field added', () => {
    const given = good();
    const first = checkTlsOptions(given);
    given.ca = certs.otherCa.pem;
    const second = checkTlsOptions(given);
    assert.notEqual(second, first);
    assert.notEqual(second.secureContext, first.secureContext);
    assert.equal(checkTlsOptions(given), second);

    const buf = { ca: Buffer.from(certs.ca.pem) };
    const before = checkTlsOptions(buf);
    Buffer.from(certs.otherCa.pem).copy(buf.ca, 0, 0, buf.ca.length);
    assert.notEqual(checkTlsOptions(buf), before, 'the Buffer\'s bytes changed, so its context is built again');

    given.rejectUnauthorized = false;
    assert.throws(() => checkTlsOptions(given), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'tls.rejectUnauthorized');
    delete given.rejectUnauthorized;
    given.key = certs.server.key;
    assert.throws(() => checkTlsOptions(given), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'tls.key');
  });
});
