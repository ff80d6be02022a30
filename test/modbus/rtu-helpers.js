'use strict';

/**
 * RTU test helpers: a small scriptable RTU responder on one end of a socat PTY pair (for the faults
 * modbus-serial's ServerSerial cannot produce: bad CRCs, late and foreign frames, garbage), and a socat
 * pair on fixed link paths, so a test can make a "serial port" disappear and come back at the same path.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { SerialPort } = require('serialport');
const { rtuRequestLength, rtuFrame } = require('../../gateway/drivers/modbus/frame');
const { assertTools } = require('../helpers/system-tools');

/**
 * Opens `portPath` and calls onRequest for every complete request frame.
 * @param {string} portPath
 * @param {(req: {unitId: number, pdu: Buffer, atNs: bigint, index: number}, r: Responder) => void} onRequest
 * @returns {Promise<Responder>}
 */
async function startResponder (portPath, onRequest) {
  const port = new SerialPort({ path: portPath, baudRate: 115200, autoOpen: false });
  await new Promise((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  port.on('error', () => {});
  let acc = Buffer.alloc(0);
  const r = {
    port,
    requests: [],
    /** hrtime of each write the responder made */
    writes: [],
    /** Writes raw bytes. @param {Buffer} buf */
    write (buf) {
      r.writes.push(process.hrtime.bigint());
      port.write(buf);
    },
    /** Writes a well-formed RTU frame. @param {number} unitId @param {Buffer} pdu */
    frame (unitId, pdu) {
      r.write(rtuFrame(unitId, pdu));
    },
    close: () => new Promise((resolve) => (port.isOpen ? port.close(() => resolve()) : resolve()))
  };
  port.on('data', (chunk) => {
    acc = Buffer.concat([acc, chunk]);
    for (;;) {
      const n = rtuRequestLength(acc);
      if (n <= 0 || acc.length < n) break;
      const req = { unitId: acc[0], pdu: Buffer.from(acc.subarray(1, n - 2)), atNs: process.hrtime.bigint(), index: r.requests.length };
      acc = acc.subarray(n);
      r.requests.push(req);
      onRequest(req, r);
    }
  });
  return r;
}

/**
 * @typedef {Awaited<ReturnType<typeof startResponder>>} Responder
 */

/**
 * A socat PTY pair whose ends are links at fixed paths in `dir`: after close(), starting another pair
 * with the same dir brings "the same" ports back.
 * @param {string} dir
 * @returns {Promise<{a: string, b: string, close: () => Promise<void>}>}
 */
async function socatPair (dir) {
  // no socat: say so now, with the install line, instead of polling for links that never come
  assertTools(['socat']);
  const a = path.join(dir, 'a');
  const b = path.join(dir, 'b');
  const socat = spawn('socat', [`pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`], { stdio: 'ignore' });
  const exited = new Promise((resolve) => socat.once('exit', resolve));
  for (let i = 0; i < 500 && !(fs.existsSync(a) && fs.existsSync(b)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!(fs.existsSync(a) && fs.existsSync(b))) {
    socat.kill();
    throw new Error('socat did not create the PTY links');
  }
  return {
    a,
    b,
    close: async () => {
      if (socat.exitCode === null && socat.signalCode === null) socat.kill('SIGTERM');
      await exited;
    }
  };
}

/**
 * A socat PTY pair in a fresh temp dir, removed on close (our own, so the core tests do not depend on
 * test/helpers/pty.js, which another engineer owns).
 * @returns {Promise<{a: string, b: string, dir: string, close: () => Promise<void>}>}
 */
async function createPair () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-modbus-pty-'));
  try {
    const pair = await socatPair(dir);
    return {
      a: pair.a,
      b: pair.b,
      dir,
      close: async () => {
        await pair.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    };
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

module.exports = { startResponder, socatPair, createPair };
