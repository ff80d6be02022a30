'use strict';

// A modbus+tls device in the gateway's config (Modbus/TCP Security): devices.<name>.tls names PEM files,
// read once at load into the device spec, with each problem reported at its field's path; the spec holds
// plain text, so it crosses to a worker thread, and a device built from it polls the TLS simulator.

const assert = require('node:assert/strict');
const { validateConfig, redactConfig } = require('../../gateway/runtime/config');
const { Device } = require('../../gateway/devices');
const { trustDeviceSpec } = require('../../gateway/devices/spec');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { makeCerts } = require('../helpers/tls-certs');

/** A config of one modbus+tls device with this tls section, and one job on it */
function config (tls, target = 'modbus+tls://127.0.0.1:5802?unitId=1') {
  return {
    gateway: { id: 'edge-1' },
    devices: { plc: { target, tls } },
    jobs: [{ name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 2 }, rate: '10/s' }]
  };
}

/** The one problem of a refused config: [path, rule] */
function problem (raw, baseDir) {
  try {
    validateConfig(raw, { baseDir });
  } catch (err) {
    assert.equal(err.code, 'NINES_ERR_CONFIG');
    assert.equal(err.details.errors.length, 1, JSON.stringify(err.details.errors));
    return [err.details.errors[0].path, err.details.errors[0].rule];
  }
  assert.fail('the config was accepted');
}

describe('config: a modbus+tls device (Modbus/TCP Security)', function () {
  this.timeout(15000);
  let certs;
  before(() => { certs = makeCerts(); });

  it('reads the CA, certificate and key files once, relative to the config, into the device spec', () => {
    const c = validateConfig(config({ ca: 'ca.crt', cert: 'client.crt', key: 'client.key', servername: 'localhost' }), { baseDir: certs.dir });
    const tls = c.devices.plc.tls;
    assert.deepEqual([tls.ca, tls.cert, tls.key, tls.servername], [certs.ca.pem, certs.client.pem, certs.client.key, 'localhost']);
    assert.equal(c.devices.plc.target.port, 5802);
    // printed configs carry no key material
    assert.deepEqual(redactConfig(c).devices.plc.tls, { ca: '<ca>', cert: '<cert>', key: '<key>', servername: 'localhost' });
    assert.equal(c.devices.plc.tls.key, certs.client.key, 'redacting copies, the config keeps its key');
  });

  it('reports each problem at its field: a missing file, a file with no PEM, a key of another certificate, half a pair, a switch it does not offer, tls on a plain target', () => {
    const d = certs.dir;
    let [at, rule] = problem(config({ ca: 'nope.crt' }), d);
    assert.deepEqual([at, /cannot be read: .*nope\.crt: no such file/.test(rule)], ['devices.plc.tls.ca', true]);
    [at, rule] = problem(config({ ca: 'client.key' }), d);
    assert.deepEqual([at, /PEM certificates/.test(rule)], ['devices.plc.tls.ca', true]);
    [at, rule] = problem(config({ ca: 'ca.crt', cert: 'client.crt', key: 'server.key' }), d);
    assert.deepEqual([at, /private key of tls\.cert/.test(rule)], ['devices.plc.tls.key', true]);
    [at, rule] = problem(config({ cert: 'client.crt' }), d);
    assert.deepEqual([at, /is required with tls\.cert/.test(rule)], ['devices.plc.tls.key', true]);
    [at, rule] = problem(config({ ca: 'ca.crt', rejectUnauthorized: false }), d);
    assert.deepEqual([at, /always verifies/.test(rule)], ['devices.plc.tls.rejectUnauthorized', true]);
    [at, rule] = problem(config({ ca: 'ca.crt' }, 'modbus+tcp://127.0.0.1:502'), d);
    assert.deepEqual([at, /modbus\+tls:\/\/ devices only/.test(rule)], ['devices.plc.tls', true]);
  });

  it('builds a device whose spec, copied as to a worker thread, polls the TLS simulator with the client certificate', async () => {
    const sim = await createModbusTcpSimulator({ port: 0, tls: { cert: certs.server.pem, key: certs.server.key, ca: certs.ca.pem } });
    sim.model.setRegisters('holdingRegisters', 0, [7, 8]);
    let device;
    try {
      const c = validateConfig(config({ ca: 'ca.crt', cert: 'client.crt', key: 'client.key' }, sim.url), { baseDir: certs.dir });
      device = new Device(trustDeviceSpec(structuredClone(c.devices.plc)));
      const reply = await device.user('hr').request({ fc: 3, address: 0, quantity: 2 });
      assert.deepEqual(reply.data, [7, 8]);
      assert.deepEqual(sim.clientRoles, ['Operator']);
    } finally {
      if (device) await device.close();
      await sim.close();
    }
  });
});
