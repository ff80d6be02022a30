'use strict';

// nines-modbus-device over Modbus/TCP Security: its certificates come from Node-RED's own tls-config
// node (file paths here, as a user sets them in the dialog), through the one device-spec builder.

const assert = require('node:assert/strict');
const { helper, roundTrip, expectError, waitStatus } = require('./harness');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { makeCerts } = require('../helpers/tls-certs');
const tlsConfigNode = require('@node-red/nodes/core/network/05-tls.js');
const deviceNode = require('../../nodes/nines-modbus-device');
const readNode = require('../../nodes/nines-modbus-read');

/** A core tls-config node with these files (paths), verifying the server's certificate unless told */
function tlsConfig (files, extra = {}) {
  return { id: 'tlsconf', type: 'tls-config', cert: '', key: '', ca: '', verifyservercert: true, servername: '', ...files, ...extra };
}
function device (port, extra = {}) {
  return { id: 'dev', type: 'nines-modbus-device', transport: 'tls', host: '127.0.0.1', port, unitId: 1, timeout: 500, tls: 'tlsconf', ...extra };
}
function reader (extra = {}) {
  return { id: 'a', type: 'nines-modbus-read', device: 'dev', fc: 3, address: 4, quantity: 2, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, wires: [['out']], ...extra };
}

describe('nines-modbus-device over TLS (Modbus/TCP Security)', function () {
  this.timeout(15000);
  let sim;
  let certs;
  before(() => { certs = makeCerts(); return helper.startServer(); });
  after(() => helper.stopServer());
  beforeEach(async () => {
    sim = await createModbusTcpSimulator({ port: 0, tls: { cert: certs.server.pem, key: certs.server.key, ca: certs.ca.pem } });
    sim.model.setRegisters('holdingRegisters', 4, [11, 22]);
  });
  afterEach(async () => {
    await helper.unload();
    await sim.close();
  });

  const files = () => ({ ca: certs.ca.file, cert: certs.client.file, key: certs.client.keyFile });

  it('reads through a modbus+tls target with the certificates of a tls-config node, presenting the role', async () => {
    await helper.load([tlsConfigNode, deviceNode, readNode], [tlsConfig(files()), device(sim.port), reader(), { id: 'out', type: 'helper' }]);
    assert.equal(helper.getNode('dev').target, `modbus+tls://127.0.0.1:${sim.port}?unitId=1`);
    const msg = await roundTrip(helper.getNode('a'), helper.getNode('out'), {});
    assert.deepEqual(msg.payload, [11, 22]);
    assert.deepEqual(sim.clientRoles, ['Operator']);
  });

  it('defaults to port 802', async () => {
    await helper.load([tlsConfigNode, deviceNode], [tlsConfig(files()), device('')]);
    assert.equal(helper.getNode('dev').target, 'modbus+tls://127.0.0.1:802?unitId=1');
  });

  it('shows a device that wants a client certificate as tls: cert required, and sends it nothing', async () => {
    await helper.load([tlsConfigNode, deviceNode, readNode], [tlsConfig({ ca: certs.ca.file }), device(sim.port), reader(), { id: 'out', type: 'helper' }]);
    await waitStatus(helper.getNode('a'), (s) => s.fill === 'red' && s.text === 'tls: cert required', 'tls: cert required');
    assert.equal(sim.stats.requests, 0);
  });

  it('refuses a tls-config node with "Verify server certificate" off, as a coded error on its user nodes', async () => {
    await helper.load([tlsConfigNode, deviceNode, readNode], [tlsConfig(files(), { verifyservercert: false }), device(sim.port), reader(), { id: 'out', type: 'helper' }]);
    const a = helper.getNode('a');
    await waitStatus(a, (s) => s.fill === 'red' && s.text === 'bad argument', 'bad argument');
    const err = await expectError(a, {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /Verify server certificate" off: nines always verifies/);
    assert.equal(sim.stats.connections + sim.stats.tlsRejected, 0, 'no connection was even tried');
  });

  it('names the TLS configuration when its key does not belong to its certificate', async () => {
    await helper.load([tlsConfigNode, deviceNode, readNode], [tlsConfig({ ...files(), key: certs.server.keyFile }), device(sim.port), reader(), { id: 'out', type: 'helper' }]);
    const err = await expectError(helper.getNode('a'), {});
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    assert.match(err.message, /tls \(the TLS configuration\): tls\.key must be the private key of tls\.cert/);
  });
});
