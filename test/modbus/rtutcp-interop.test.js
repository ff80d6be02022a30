'use strict';

/**
 * RTU over TCP with peers nobody here wrote:
 *  - a serial server built from socat: a TCP listener bridged to one end of a PTY pair, the nines RTU simulator on
 *    the other end, as a Moxa NPort in TCP server mode bridges its port to an RS-485 line; the nines
 *    modbus+rtutcp:// client reads and writes through it, and keeps the pauses a line that needs them asks for;
 *  - pymodbus (Debian's 3.0) with its RTU framer over TCP: its client against `nines sim rtutcp`, and its server
 *    read by the nines client;
 *  - mbpoll (libmodbus), which speaks RTU only on a serial port: through a socat "virtual COM port" (a PTY
 *    bridged to TCP, as a serial server's COM-port driver does) to `nines sim rtutcp`.
 */

const assert = require('node:assert/strict');
const { spawn, execFile } = require('node:child_process');
const { createClient } = require('../../gateway/drivers');
const { createModbusRtuSimulator } = require('../../gateway/simulators/modbus');
const { createPair } = require('./rtu-helpers');
const { startChildSim } = require('../helpers/child-sim');
const { runPymodbusRtuTcpClient, startPymodbusRtuTcpServer } = require('../helpers/pymodbus');
const { assertTools } = require('../helpers/system-tools');

/** How long socat may take to start listening, ms */
const SOCAT_START_MS = 5000;

/**
 * Starts socat with -d -d, whose log says when it is ready, and resolves once the log matches `ready`.
 * @param {string[]} args socat's addresses and options
 * @param {RegExp} ready
 * @returns {Promise<{match: RegExpExecArray, close: () => Promise<void>}>}
 */
function startSocat (args, ready) {
  assertTools(['socat']);
  return new Promise((resolve, reject) => {
    const child = spawn('socat', ['-d', '-d', ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((done) => child.once('exit', done));
    let log = '';
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`socat was not ready within ${SOCAT_START_MS} ms: ${log}`)); }, SOCAT_START_MS);
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`socat exited (${code}): ${log}`)); });
    child.stderr.setEncoding('utf8');
    // the listener stays once ready: it keeps draining the log so a full pipe never blocks socat
    child.stderr.on('data', (d) => {
      if (log === null) return;
      log += d;
      const match = ready.exec(log);
      if (!match) return;
      clearTimeout(timer);
      log = null;
      resolve({
        match,
        close: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        }
      });
    });
  });
}

/**
 * socat as a serial server: `TCP-LISTEN` on 127.0.0.1 and a free port, bridged to the serial device `path`. One
 * client at a time (max-children=1), as most serial servers take per port; each connection opens the device anew.
 * @param {string[]} serialSide socat's address for the serial side, e.g. [`${pty},raw,echo=0`]
 * @returns {Promise<{port: number, close: () => Promise<void>}>}
 */
async function socatListener (serialSide) {
  // -t 0.05: after a client leaves, its child lingers that long (socat's default, 0.5 s, would hold the next
  // client's first request for half a second, as a slow serial server does)
  const { match, close } = await startSocat(['-t', '0.05', 'TCP-LISTEN:0,bind=127.0.0.1,reuseaddr,fork,max-children=1', ...serialSide],
    /listening on AF=2 127\.0\.0\.1:(\d+)/);
  return { port: Number(match[1]), close };
}

/**
 * socat as a serial server's COM-port driver: a PTY (at `link`) bridged to a TCP port, so a serial-only master
 * reaches an RTU-over-TCP device.
 * @param {string} link path of the PTY link to create
 * @param {number} port
 * @returns {Promise<{close: () => Promise<void>}>}
 */
function socatVirtualCom (link, port) {
  return startSocat([`PTY,raw,echo=0,link=${link}`, `TCP:127.0.0.1:${port}`], /starting data transfer loop/);
}

describe('RTU over TCP through a serial server built from socat (TCP listener ↔ PTY ↔ nines RTU simulator)', function () {
  this.timeout(20000);
  let pty, sim, server;
  const clients = [];
  before(async () => {
    pty = await createPair();
    sim = await createModbusRtuSimulator({ path: pty.a, baudRate: 115200, modelOptions: { unitIds: [1, 2], preset: 'pattern' } });
    server = await socatListener([`${pty.b},raw,echo=0`]);
  });
  after(async () => {
    for (const c of clients) await c.close();
    if (server) await server.close();
    if (sim) await sim.close();
    if (pty) await pty.close();
  });
  afterEach(async () => {
    // one client at a time, as the serial server allows
    while (clients.length) await clients.pop().close();
  });

  function client (opts = {}) {
    const c = createClient(`modbus+rtutcp://127.0.0.1:${server.port}?unitId=1&baudRate=115200`, { timeoutMs: 1000, ...opts });
    clients.push(c);
    return c;
  }

  it('reads registers, coils and inputs equal to the model\'s, from both units of the line', async () => {
    const c = client();
    assert.deepEqual((await c.request('3:0:10')).data, sim.model.getRegisters('holdingRegisters', 0, 10));
    assert.deepEqual((await c.request('4:5:3')).data, [1005, 1006, 1007]);
    assert.deepEqual((await c.request('1:0:8')).data, [false, true, false, true, false, true, false, true]);
    assert.deepEqual((await c.request({ fc: 3, address: 20, quantity: 2, unitId: 2 })).data, [20, 21]);
    const s = c.stats;
    assert.equal(s.ok, 4);
    assert.equal(s.badFrames + s.badReplies + s.lateReplies + s.timeouts, 0);
  });

  it('writes registers and a coil that the model then holds, and reads them back', async () => {
    const c = client();
    await c.request('16:300=11,22,33');
    await c.request('6:303=44');
    await c.request('5:12=on');
    assert.deepEqual(sim.model.getRegisters('holdingRegisters', 300, 4), [11, 22, 33, 44]);
    assert.equal(sim.model.getBit('coils', 12), true);
    assert.deepEqual((await c.request('3:300:4')).data, [11, 22, 33, 44]);
  });

  it('polls a line that needs a pause between frames with interFrameDelay, where without it every other poll times out', async () => {
    const quirky = await createPair();
    const line = await createModbusRtuSimulator({ path: quirky.a, baudRate: 115200, needsInterFrameDelayMs: 40 });
    const bridge = await socatListener([`${quirky.b},raw,echo=0`]);
    try {
      const url = `modbus+rtutcp://127.0.0.1:${bridge.port}?unitId=1&baudRate=115200`;
      const poll = async (opts) => {
        const c = createClient(url, { timeoutMs: 200, ...opts });
        let ok = 0;
        try {
          for (let i = 0; i < 6; i++) await c.request('3:0:2').then(() => ok++, () => {});
        } finally {
          await c.close();
        }
        return ok;
      };
      assert.ok(await poll({}) <= 4, 'without the setting some polls time out');
      const dropped = line.stats.tooSoonAfterReply;
      assert.ok(dropped >= 2);
      assert.equal(await poll({ interFrameDelayMs: 60, timeoutMs: 500 }), 6);
      assert.equal(line.stats.tooSoonAfterReply, dropped);
    } finally {
      await bridge.close();
      await line.close();
      await quirky.close();
    }
  });
});

describe('RTU over TCP with pymodbus (Debian 3.0, ModbusRtuFramer over TCP)', function () {
  this.timeout(30000);

  it('pymodbus\'s client reads and writes `nines sim rtutcp` (a child process), unit ids 1 and 3', async () => {
    const sim = await startChildSim('rtutcp', ['--unit-id', '1,3']);
    try {
      const port = Number(new URL(sim.url.replace('modbus+rtutcp:', 'http:')).port);
      const one = await runPymodbusRtuTcpClient({ port, unit: 1, ops: [{ write: [10, [7, 8, 9]] }, { read: [9, 5] }, { coil: [3, true] }, { coils: [0, 5] }] });
      assert.deepEqual(one, [true, [0, 7, 8, 9, 0], true, [false, false, false, true, false]]);
      const three = await runPymodbusRtuTcpClient({ port, unit: 3, ops: [{ read: [10, 3] }] });
      assert.deepEqual(three, [[7, 8, 9]], 'the units share the simulator\'s model');
    } finally {
      await sim.stop();
    }
  });

  it('the nines client reads and writes pymodbus\'s RTU-over-TCP server, both of its units', async () => {
    const server = await startPymodbusRtuTcpServer();
    const c = createClient(`modbus+rtutcp://127.0.0.1:${server.port}?unitId=1`, { timeoutMs: 2000 });
    try {
      assert.deepEqual((await c.request('3:0:5')).data, [0, 2, 4, 6, 8]);
      assert.deepEqual((await c.request({ fc: 3, address: 4, quantity: 2, unitId: 2 })).data, [12, 15]);
      await c.request('16:50=123,456');
      assert.deepEqual((await c.request('3:50:2')).data, [123, 456]);
      const s = c.stats;
      assert.equal(s.badFrames + s.badReplies + s.lateReplies + s.timeouts, 0);
    } finally {
      await c.close();
      await server.close();
    }
  });
});

describe('RTU over TCP with mbpoll (libmodbus) through a socat virtual COM port', function () {
  this.timeout(20000);
  before(() => assertTools(['mbpoll', 'socat']));

  it('reads and writes `nines sim rtutcp` as a serial RTU master', async () => {
    const sim = await startChildSim('rtutcp');
    const pty = await createPair(); // only for its temp dir: the link below is made by the bridge
    const link = `${pty.dir}/com`;
    const port = Number(new URL(sim.url.replace('modbus+rtutcp:', 'http:')).port);
    const bridge = await socatVirtualCom(link, port);
    const mbpoll = (args) => new Promise((resolve) => {
      execFile('mbpoll', ['-m', 'rtu', '-b', '115200', '-P', 'none', '-a', '1', '-o', '1', ...args], { timeout: 5000, killSignal: 'SIGKILL' },
        (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr }));
    });
    try {
      const w = await mbpoll(['-t', '4', '-r', '1', link, '5', '6', '7']);
      assert.equal(w.code, 0, w.stderr);
      assert.match(w.stdout, /Written 3 references/);
      const r = await mbpoll(['-t', '4', '-r', '1', '-c', '4', '-1', link]);
      assert.equal(r.code, 0, r.stderr);
      const values = [...r.stdout.matchAll(/^\[(\d+)\]:\s+(-?\d+)\s*$/gm)].map((m) => Number(m[2]));
      assert.deepEqual(values, [5, 6, 7, 0]);
    } finally {
      await bridge.close();
      await pty.close();
      await sim.stop();
    }
  });
});
