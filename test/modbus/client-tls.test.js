'use strict';

// Modbus/TCP Security (modbus+tls://): the Modbus client against the simulator serving TLS, with
// certificates made by openssl for this run (test/helpers/tls-certs.js). A relay between the two records
// every byte the client sends, so "nothing in clear" is checked on the wire, not assumed: the request's
// PDU never appears in it, and a refused handshake leaves the simulator's request counter at 0.

const assert = require('node:assert/strict');
const net = require('node:net');
const { once } = require('node:events');
const { createClient } = require('../../gateway/drivers/modbus');
const { parseTarget } = require('../../gateway/drivers/target');
const { openSocket } = require('../../gateway/drivers/open-socket');
const { checkTlsOptions } = require('../../gateway/drivers/tls-options');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');
const { makeCerts } = require('../helpers/tls-certs');
const { rejectionOf } = require('./helpers');
const { nines } = require('../helpers/nines-cli');

/** FC3 at 0x0A0B, two registers: its PDU is what must never cross the wire in clear */
const READ = Object.freeze({ fc: 3, address: 0x0A0B, quantity: 2 });
const READ_PDU = Buffer.from('030a0b0002', 'hex');

/**
 * A TCP relay to port `to` that records what the client sends.
 * @returns {Promise<{port: number, sent: () => Buffer, close: () => Promise<void>}>}
 */
async function startRelay (to) {
  const chunks = [];
  const sockets = new Set();
  const server = net.createServer((a) => {
    const b = net.connect({ host: '127.0.0.1', port: to });
    for (const s of [a, b]) { sockets.add(s); s.on('error', () => {}); s.on('close', () => { sockets.delete(s); a.destroy(); b.destroy(); }); }
    a.on('data', (d) => { chunks.push(Buffer.from(d)); b.write(d); });
    b.on('data', (d) => a.write(d));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: server.address().port,
    sent: () => Buffer.concat(chunks),
    close: () => new Promise((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); })
  };
}

describe('modbus client over TLS (Modbus/TCP Security)', function () {
  this.timeout(15000);
  let certs;
  const cleanup = [];
  before(() => { certs = makeCerts(); });
  afterEach(async () => { while (cleanup.length) await cleanup.pop()(); });

  /** The simulator serving TLS (requiring client certs signed by the test CA unless told otherwise), behind a relay */
  async function start (simTls = {}) {
    const sim = await createModbusTcpSimulator({ port: 0, tls: { cert: certs.server.pem, key: certs.server.key, ca: certs.ca.pem, ...simTls } });
    sim.model.setRegisters('holdingRegisters', 0x0A0B, [4242, 17]);
    const relay = await startRelay(sim.port);
    cleanup.push(() => sim.close(), () => relay.close());
    return { sim, relay, url: `modbus+tls://127.0.0.1:${relay.port}?unitId=1` };
  }

  /** A client with these tls options, closed after the test */
  function client (url, tls, opts = {}) {
    const c = createClient(url, { tls, reconnect: false, connectTimeoutMs: 3000, ...opts });
    cleanup.push(() => c.close());
    return c;
  }

  const good = () => ({ ca: certs.ca.pem, cert: certs.client.pem, key: certs.client.key });

  it('reads through a verified TLS connection, presents the role in its certificate, and sends nothing in clear', async () => {
    const { sim, relay, url } = await start();
    const c = client(url, good(), { maxInflight: 4 });
    const replies = await Promise.all([1, 2, 3, 4].map(() => c.request(READ)));
    for (const r of replies) assert.deepEqual(r.data, [4242, 17]);
    assert.equal(sim.stats.requests, 4);
    assert.deepEqual(sim.clientRoles, ['Operator'], 'the simulator read the role extension (OID 1.3.6.1.4.1.50316.802.1) from our certificate');
    assert.equal(relay.sent()[0], 0x16, 'the first byte on the wire is a TLS handshake record');
    assert.equal(relay.sent().indexOf(READ_PDU), -1, 'the request PDU never crossed the wire in clear');
  });

  it('the relay does see the PDU of a request in clear (the check above can fail)', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    const relay = await startRelay(sim.port);
    cleanup.push(() => sim.close(), () => relay.close());
    const c = createClient(`modbus+tcp://127.0.0.1:${relay.port}?unitId=1`, { reconnect: false });
    cleanup.push(() => c.close());
    await c.request(READ);
    assert.ok(relay.sent().indexOf(READ_PDU) > 0);
  });

  // Each refusal: its own code, the certificate problem named, no Modbus byte at the simulator, nothing in clear
  const REFUSALS = [
    { name: 'a device certificate from a CA we do not trust', code: 'NINES_ERR_TLS_UNKNOWN_CA', tls: () => ({ ...good(), ca: certs.otherCa.pem }), cause: /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE/ },
    { name: 'a self-signed device certificate', code: 'NINES_ERR_TLS_UNKNOWN_CA', sim: () => ({ cert: certs.selfSigned.pem, key: certs.selfSigned.key }), tls: good, cause: /^DEPTH_ZERO_SELF_SIGNED_CERT$/ },
    { name: 'a CA certificate posing as the device\'s', code: 'NINES_ERR_TLS_HANDSHAKE_FAILED', sim: () => ({ cert: certs.ca.pem, key: certs.ca.key }), tls: good, cause: /^INVALID_PURPOSE$/ },
    { name: 'an expired device certificate', code: 'NINES_ERR_TLS_CERT_EXPIRED', sim: () => ({ cert: certs.expired.pem, key: certs.expired.key }), tls: good, cause: /^CERT_HAS_EXPIRED$/ },
    { name: 'a device certificate for another name', code: 'NINES_ERR_TLS_HOSTNAME_MISMATCH', tls: () => ({ ...good(), servername: 'plc7.example' }), cause: /^ERR_TLS_CERT_ALTNAME_INVALID$/ },
    { name: 'no client certificate where one is required (TLS 1.3)', code: 'NINES_ERR_TLS_CLIENT_CERT_REQUIRED', tls: () => ({ ca: certs.ca.pem }), cause: /CERTIFICATE_REQUIRED/ },
    { name: 'no client certificate where one is required (TLS 1.2)', code: 'NINES_ERR_TLS_CLIENT_CERT_REQUIRED', sim: () => ({ maxVersion: 'TLSv1.2' }), tls: () => ({ ca: certs.ca.pem }), cause: /HANDSHAKE_FAILURE/ },
    { name: 'a client certificate from a CA the device does not trust', code: 'NINES_ERR_TLS_CLIENT_CERT_REJECTED', tls: () => ({ ...good(), cert: certs.otherClient.pem, key: certs.otherClient.key }), cause: /./ }
  ];
  for (const r of REFUSALS) {
    it(`refuses ${r.name} with ${r.code}, and the device gets no Modbus byte`, async () => {
      const { sim, relay, url } = await start(r.sim ? r.sim() : {});
      const c = client(url, r.tls());
      const err = await rejectionOf(c.connect());
      assert.equal(err.code, r.code, err.message);
      assert.match(err.details.cause, r.cause);
      assert.match(err.message, /TLS handshake with 127\.0\.0\.1:\d+ failed: /);
      const after = await rejectionOf(c.request(READ));
      assert.equal(after.code, 'NINES_ERR_NOT_CONNECTED');
      assert.equal(sim.stats.requests, 0);
      assert.equal(relay.sent().indexOf(READ_PDU), -1);
    });
  }

  it('with reconnect on, reports the coded refusal on every attempt and never sends a request', async () => {
    const { sim, url } = await start();
    const c = client(url, { ca: certs.ca.pem }, { reconnect: true, backoff: { initialMs: 20, maxMs: 40 } });
    const codes = [];
    c.on('error', (err) => codes.push(err.code));
    await rejectionOf(c.connect());
    while (codes.length < 3) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual([...new Set(codes)], ['NINES_ERR_TLS_CLIENT_CERT_REQUIRED']);
    assert.equal(sim.stats.requests, 0);
  });

  it('counts the handshake in the connect timeout: a peer that accepts and never speaks TLS is NINES_ERR_CONNECT_TIMEOUT', async () => {
    const held = new Set();
    const mute = net.createServer((s) => { held.add(s); s.on('error', () => {}); s.resume(); });
    mute.listen(0, '127.0.0.1');
    await once(mute, 'listening');
    cleanup.push(() => new Promise((resolve) => { for (const s of held) s.destroy(); mute.close(() => resolve()); }));
    const c = client(`modbus+tls://127.0.0.1:${mute.address().port}`, good(), { connectTimeoutMs: 200 });
    const t0 = performance.now();
    const err = await rejectionOf(c.connect());
    assert.equal(err.code, 'NINES_ERR_CONNECT_TIMEOUT');
    assert.ok(performance.now() - t0 < 1500);
    // the abandoned attempt's socket is gone: the peer sees its end
    const [s] = held;
    if (!s.destroyed) await once(s, 'close');
  });

  it('fails at once, in a coded error, against a plain Modbus TCP device on that port', async () => {
    const sim = await createModbusTcpSimulator({ port: 0 });
    cleanup.push(() => sim.close());
    const c = client(`modbus+tls://127.0.0.1:${sim.port}`, good());
    const err = await rejectionOf(c.connect());
    assert.ok(['NINES_ERR_CONNECT_FAILED', 'NINES_ERR_TLS_HANDSHAKE_FAILED'].includes(err.code), err.code);
    assert.equal(sim.stats.requests, 0, 'the ClientHello is no Modbus request');
    assert.equal(sim.stats.badFrames, 1);
  });

  it('never calls back an attempt aborted during the handshake, and destroys its socket', async () => {
    const { sim } = await start();
    const endpoint = { host: '127.0.0.1', port: sim.port, url: sim.url, tls: checkTlsOptions(good()) };
    let called = 0;
    const attempt = openSocket(endpoint, 2000, () => { called++; });
    await new Promise((resolve) => attempt.abort(resolve));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(called, 0);
    assert.equal(sim.stats.open, 0);
  });

  it('hands over a verified TLS socket once, after the handshake, with none of the attempt\'s listeners', async () => {
    const { sim } = await start();
    const endpoint = { host: '127.0.0.1', port: sim.port, url: sim.url, tls: checkTlsOptions(good()) };
    const got = [];
    await new Promise((resolve) => openSocket(endpoint, 2000, (err, socket) => { got.push({ err, socket }); resolve(); }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(got.length, 1);
    const { err, socket } = got[0];
    assert.equal(err, null);
    assert.equal(socket.encrypted, true);
    assert.equal(socket.authorized, true);
    assert.match(socket.getProtocol(), /^TLSv1\.[23]$/);
    assert.equal(socket.listenerCount('error'), 0, 'none of the attempt\'s listeners is left');
    socket.destroy();
  });

  it('probes a modbus+tls target at a fixed rate in a worker thread, pipelined, the certificates crossing as text', async () => {
    const { runProbe } = require('../../gateway/measure/probe');
    const { sim } = await start();
    const { runs } = await runProbe({
      target: sim.url, read: { fc: 3, address: 0x0A0B, quantity: 2 }, tls: { ca: Buffer.from(certs.ca.pem), cert: certs.client.pem, key: certs.client.key },
      inflight: [4], ratePerSec: '500/s', count: 200, inWorker: true
    }).promise;
    assert.deepEqual([runs[0].ok, runs[0].errors, runs[0].timeouts, runs[0].thread], [200, 0, 0, 'worker']);
    assert.equal(sim.stats.requests, 200);
  });

  it('nines probe reads the certificate files its --ca, --cert and --key name, and reports a refusal by its code', async () => {
    const { sim } = await start();
    const probe = async (...args) => {
      const r = await nines(['probe', sim.url, '--read', '3:0:1', '--count', '20', ...args]);
      return { code: r.code, out: r.stdout + r.stderr };
    };
    const ok = await probe('--ca', certs.ca.file, '--cert', certs.client.file, '--key', certs.client.keyFile);
    assert.equal(ok.code, 0, ok.out);
    const refused = await probe('--ca', certs.ca.file);
    assert.equal(refused.code, 1);
    assert.match(refused.out, /NINES_ERR_TLS_CLIENT_CERT_REQUIRED/);
    const missing = await probe('--ca', '/nonexistent/ca.crt');
    assert.match(missing.out, /--ca \/nonexistent\/ca\.crt cannot be read: ENOENT/);
  });

  it('defaults to port 802, and keeps the scheme in the canonical URL', () => {
    const t = parseTarget('modbus+tls://plc.example?unitId=3');
    assert.deepEqual([t.protocol, t.port, t.unitId, t.url], ['modbus+tls', 802, 3, 'modbus+tls://plc.example:802?unitId=3']);
  });

  it('checks the tls option once, naming the field: no switch to skip verification, PEM only, cert and key together and matching', () => {
    const bad = (opts, field, rule, url = 'modbus+tls://127.0.0.1:1') => assert.throws(() => createClient(url, opts),
      (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === field && rule.test(err.message), `${field}: ${rule}`);
    bad({ tls: { ...good(), rejectUnauthorized: false } }, 'tls.rejectUnauthorized', /always verifies/);
    bad({ tls: { ca: '/etc/ssl/ca.pem' } }, 'tls.ca', /PEM certificates/);
    bad({ tls: { ca: certs.ca.pem, cert: certs.client.pem } }, 'tls.key', /is required with tls\.cert/);
    bad({ tls: { ca: certs.ca.pem, key: certs.client.key } }, 'tls.cert', /is required with tls\.key/);
    bad({ tls: { ca: certs.ca.pem, cert: certs.client.pem, key: certs.otherClient.key } }, 'tls.key', /private key of tls\.cert/);
    bad({ tls: { ...good(), servername: '127.0.0.1' } }, 'tls.servername', /DNS name/);
    bad({ tls: { ...good(), pasword: 'x' } }, 'tls.pasword', /not a tls option/);
    bad({ tls: good() }, 'tls', /modbus\+tls:\/\/ targets only/, 'modbus+tcp://127.0.0.1:1');
    // no tls option: Node's bundled root CAs, no client certificate
    assert.equal(createClient('modbus+tls://127.0.0.1:1').maxInflight, 1);
  });
});
