'use strict';

/**
 * `diagnostics: 1s` on a gateway device: its FC8 counters reach the retained MQTT status and the
 * status page (its JSON and its table), with their growth since the read before; a device that
 * lacks FC8 says so there.
 */

const assert = require('node:assert/strict');
const mqtt = require('mqtt');
const { validateConfig } = require('../../gateway/runtime/config');
const { Gateway } = require('../../gateway/runtime/gateway');
const { createModbusTcpSimulator } = require('../../gateway/simulators/modbus');

describe('FC8 counters of a gateway device in its MQTT status and status page', function () {
  this.timeout(20000);
  let sims, gw, client;
  after(async () => {
    if (client) await new Promise((resolve) => client.end(true, {}, resolve));
    if (gw) await gw.stop();
    for (const s of sims || []) await s.close();
  });

  it('shows each device\'s counters and their growth, or that it lacks FC8', async () => {
    sims = [await createModbusTcpSimulator({ port: 0 }), await createModbusTcpSimulator({ port: 0, modelOptions: { lacks: [8] } })];
    gw = new Gateway(validateConfig({
      gateway: { id: 'diag', workers: 1, http: { listen: '127.0.0.1:0' } },
      mqtt: { embedded: { port: 0 } },
      devices: { plc: { target: sims[0].url, diagnostics: '1s' }, old: { target: sims[1].url, diagnostics: '1s' } },
      jobs: [{ name: 'hr', device: 'plc', read: { fc: 3, address: 0, quantity: 2 }, rate: '20/s' }, { name: 'hr2', device: 'old', read: { fc: 3, address: 0, quantity: 2 }, rate: '5/s' }]
    }, { env: {} }));
    await gw.start();
    client = await mqtt.connectAsync(gw.broker.url, { reconnectPeriod: 0 });
    let status = null;
    client.on('message', (t, p) => { status = JSON.parse(p.toString()); });
    await client.subscribeAsync('nines/diag/status', { qos: 1 });
    const end = Date.now() + 8000;
    const read = () => status && status.devices.plc && status.devices.plc.diagnostics && status.devices.plc.diagnostics.units[0].rounds >= 2 &&
      status.devices.old.diagnostics && status.devices.old.diagnostics.units[0].unsupported;
    while (!read()) {
      assert.ok(Date.now() < end, `no counters in the status: ${JSON.stringify(status && status.devices)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const u = status.devices.plc.diagnostics.units[0];
    assert.equal(status.devices.plc.diagnostics.periodMs, 1000);
    assert.match(u.at, /^\d{4}-\d\d-\d\dT/);
    // a poll at 20/s: about 20 reads a second between two rounds, and the round's own 8
    assert.ok(u.deltas.busMessages >= 10, JSON.stringify(u));
    assert.equal(status.devices.old.diagnostics.units[0].lastError.code, 'NINES_ERR_FC_UNSUPPORTED');

    const page = await (await fetch(gw.status.url + 'status.json')).json();
    const plc = page.devices.find((d) => d.name === 'plc');
    assert.ok(plc.diagnostics.units[0].rounds >= 2);
    assert.match(plc.diagnosticsText, /^unit 1: msgs \d+ \(\+\d+\) · CRC err 0 \(\+0\) · exc 0 \(\+0\) · no resp 0 \(\+0\)$/);
    assert.equal(page.devices.find((d) => d.name === 'old').diagnosticsText, 'unit 1: no FC8');
    const html = await (await fetch(gw.status.url)).text();
    assert.match(html, /<th class="name">FC8 counters<\/th>/);
    assert.match(html, /<td class="name diagnostics">unit 1: no FC8<\/td>/);
  });
});
