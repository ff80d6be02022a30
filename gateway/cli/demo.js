'use strict';

const net = require('node:net');
const C = require('../base/constants');

/**
 * The demo `nines run` starts with no config: simulated devices, the embedded broker, and jobs that
 * show what nines measures, including a device with a long tail (rare spikes a mean would hide).
 * Simulators take their usual ports (ED-588 9500, ED-560 9501, Modbus 5020) when free, so the
 * example flows find them; a taken port is reported and a free one used instead. The port is tried,
 * not tested first: a port found free can be taken by another process before the simulator listens.
 */

/** @returns {Promise<boolean>} */
function portFree (port, host = '127.0.0.1') {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

/**
 * Starts the demo simulators and returns a raw (unvalidated) gateway config for them.
 * @param {{say: (line: string) => void}} io
 * @returns {Promise<{config: object, sims: Array<{close: Function}>}>}
 */
async function startDemo ({ say }) {
  const { createAsciiSimulator } = require('../simulators/ascii');
  const { createModbusTcpSimulator } = require('../simulators/modbus');
  const sims = [];
  /** start(port) on the wanted port, or on a free one when it is taken */
  const startOn = async (want, label, start) => {
    try {
      return await start(want);
    } catch (err) {
      if (err.code !== 'NINES_ERR_PORT_IN_USE') throw err;
      say(`port ${want} is taken (another simulator running?): the demo's ${label} uses a free port instead`);
      return start(0);
    }
  };
  try {
    const ed588 = await startOn(C.SIM_ASCII_PORT, 'ED-588', (port) => createAsciiSimulator({ model: 'ED-588', port, animate: true }));
    sims.push(ed588);
    const ed560 = await startOn(C.SIM_ASCII_PORT + 1, 'ED-560', (port) => createAsciiSimulator({ model: 'ED-560', port }));
    sims.push(ed560);
    // a device with a long tail: a little jitter and rare spikes, like the Brainboxes tables show
    const tail = await createAsciiSimulator({ model: 'ED-588', port: 0, faults: 'latency=0.2ms-0.6ms,spike=1/500:15ms,spike=1/5000:60ms' });
    sims.push(tail);
    const plc = await startOn(C.SIM_MODBUS_PORT, 'Modbus TCP', (port) => createModbusTcpSimulator({ port, modelOptions: { unitIds: [1], animate: true } }));
    sims.push(plc);
    for (const [label, s] of [['ED-588', ed588], ['ED-560', ed560], ['ED-588 (tail)', tail], ['Modbus TCP', plc]]) say(`simulator ${label.padEnd(13)} ${s.url}`);
    const config = {
      gateway: { id: 'demo', interval: '2s' },
      devices: {
        ed588: { target: ed588.url, timeout: '500ms' },
        ed560: { target: ed560.url, timeout: '500ms', allowWrites: true }, // its job sets the analog outputs
        tail: { target: tail.url, timeout: '500ms' },
        plc1: {
          target: plc.url,
          timeout: '500ms',
          maxConnections: 4,
          // named, typed values: the simulator's animated input registers (a counter and a slow sine)
          tags: {
            process: [
              { name: 'counter', table: 'input', address: 0, description: 'counts every 100 ms' },
              { name: 'level', table: 'input', address: 1, scale: 0.05, unit: '%', deadband: 0.5 },
              { name: 'pump_on', table: 'coil', address: 0 }
            ]
          }
        }
      },
      jobs: [
        { name: 'ed588-inputs', device: 'ed588', command: '@01', rate: '500/s', values: { mode: 'on-change', maxRate: '2/s' } },
        { name: 'ed588-long-tail', device: 'tail', command: '@01', rate: '200/s' },
        { name: 'ed560-set4', device: 'ed560', generator: '#AA1N0F', rate: '100/s' },
        { name: 'plc1-tags', device: 'plc1', tags: 'process', rate: '100/s', values: { mode: 'on-change', maxRate: '2/s' } },
        { name: 'plc1-hr-4conn', device: 'plc1', read: { fc: 3, address: 0, quantity: 10 }, rate: '1000/s', connections: 4 }
      ]
    };
    return { config, sims };
  } catch (err) {
    await Promise.allSettled(sims.map((s) => s.close()));
    throw err;
  }
}

/**
 * Where the demo publishes when no --mqtt is given (issue 21: `npm start` failed when port 1883 was
 * taken, which installing Debian's mosquitto package does). The embedded broker on `port` when it
 * is free; else, when an MQTT broker there lets anyone in, that broker (so `nines watch` and
 * `mosquitto_sub` on their default port see the demo); else the embedded broker on a free port.
 * Says which.
 * @param {{say: (line: string) => void, port?: number, host?: string, connectTimeoutMs?: number}} o
 * @returns {Promise<{url: string}|{embeddedPort: number}|null>} null: the embedded broker on `port`
 */
async function demoBroker ({ say, port = C.MQTT_DEFAULT_PORT, host = '127.0.0.1', connectTimeoutMs = 2000 }) {
  if (await portFree(port, host)) return null;
  const url = `mqtt://${host}:${port}`;
  const mqtt = require('mqtt');
  const client = await mqtt.connectAsync(url, { reconnectPeriod: 0, connectTimeout: connectTimeoutMs }).catch(() => null);
  if (client !== null) {
    await client.endAsync(true).catch(() => {});
    say(`port ${port} has an MQTT broker that lets anyone in: the demo publishes to it, not to an embedded broker ` +
      `(watch with: npx nines watch ${url}; to use an embedded broker instead, stop that one or give --mqtt)`);
    return { url };
  }
  say(`port ${port} is taken by something that is not an MQTT broker open to the demo: the demo's embedded broker ` +
    'listens on a free port instead (its URL follows; watch with: npx nines watch <that URL>)');
  return { embeddedPort: 0 };
}

module.exports = { startDemo, portFree, demoBroker };
