'use strict';

// Modbus/TCP Security against an implementation nobody here wrote: pymodbus's TLS client reads and
// writes the nines simulator serving TLS, and the nines client reads pymodbus's TLS server
// (StartAsyncTlsServer, on Python's ssl: OpenSSL), pipelined, and is refused by it with a coded error when
// it brings no client certificate, or one from a CA that server does not trust. Both ends verify each
// other's certificates (test/helpers/tls-certs.js) and frame MBAP inside TLS, as the spec has it
// (test/fixtures/pymodbus-tls.py says why pymodbus needs its socket framer for that).

const assert = require('node:assert/strict');
const { createClient } = require('../../gateway/drivers/modbus');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { runPymodbusTlsClient, startPymodbusTlsServer } = require('../helpers/pymodbus');
const { makeCerts } = require('../helpers/tls-certs');
const { rejectionOf } = require('./helpers');

describe('Modbus/TCP Security interop with pymodbus', function () {
  this.timeout(30000);
  let certs;
  const cleanup = [];
  before(() => { certs = makeCerts(); });
  afterEach(async () => { while (cleanup.length) await cleanup.pop()(); });

  it('pymodbus\'s TLS client reads and writes the nines simulator, presenting its role', async () => {
    const sim = await createModbusTcpSimulator({ port: 0, tls: { cert: certs.server.pem, key: certs.server.key, ca: certs.ca.pem } });
    cleanup.push(() => sim.close());
    sim.model.setRegisters('holdingRegisters', 0, [10, 20, 30, 40]);
    const out = await runPymodbusTlsClient({
      port: sim.port, ca: certs.ca.file, cert: certs.client.file, key: certs.client.keyFile,
      ops: [{ read: [0, 4] }, { write: [100, [7, 8]] }, { read: [100, 2] }]
    });
    assert.deepEqual(out, [[10, 20, 30, 40], true, [7, 8]]);
    assert.deepEqual(sim.model.getRegisters('holdingRegisters', 100, 2), [7, 8]);
    assert.deepEqual(sim.clientRoles, ['Operator']);
    assert.equal(sim.stats.requests, 3);
  });

  describe('the nines client against pymodbus\'s TLS server', () => {
    let server;
    beforeEach(async () => {
      server = await startPymodbusTlsServer({ ca: certs.ca.file, cert: certs.server.file, key: certs.server.keyFile });
      cleanup.push(() => server.close());
    });

    /** A client of pymodbus's server with these tls options */
    function client (tls, opts = {}) {
      const c = createClient(`modbus+tls://127.0.0.1:${server.port}?unitId=1`, { tls, reconnect: false, ...opts });
      cleanup.push(() => c.close());
      return c;
    }

    it('reads it with a client certificate, four requests in flight at once', async () => {
      const c = client({ ca: certs.ca.pem, cert: certs.client.pem, key: certs.client.key }, { maxInflight: 4 });
      const replies = await Promise.all([0, 10, 20, 30, 40, 50, 60, 70].map((a) => c.request({ fc: 3, address: a, quantity: 2 })));
      assert.deepEqual(replies.map((r) => r.data), [0, 10, 20, 30, 40, 50, 60, 70].map((a) => [5 * a, 5 * a + 5]));
      assert.equal(c.stats.resets, 0);
    });

    it('is refused without a client certificate: NINES_ERR_TLS_CLIENT_CERT_REQUIRED', async () => {
      const err = await rejectionOf(client({ ca: certs.ca.pem }).connect());
      assert.equal(err.code, 'NINES_ERR_TLS_CLIENT_CERT_REQUIRED', err.message);
    });

    it('is refused with a client certificate from a CA it does not trust: NINES_ERR_TLS_CLIENT_CERT_REJECTED', async () => {
      const err = await rejectionOf(client({ ca: certs.ca.pem, cert: certs.otherClient.pem, key: certs.otherClient.key }).connect());
      assert.equal(err.code, 'NINES_ERR_TLS_CLIENT_CERT_REJECTED', err.message);
    });

    it('refuses it when it does not trust the CA that signed its certificate: NINES_ERR_TLS_UNKNOWN_CA', async () => {
      const err = await rejectionOf(client({ ca: certs.otherCa.pem, cert: certs.client.pem, key: certs.client.key }).connect());
      assert.equal(err.code, 'NINES_ERR_TLS_UNKNOWN_CA', err.message);
    });
  });
});
