'use strict';

/**
 * A pair of linked pseudo-terminals from socat, for serial tests without hardware: bytes written to one end are
 * read at the other, as through a null-modem cable (no baud-rate timing).
 *
 *   const pty = await createPtyPair();   // pty.a, pty.b: paths of the two ends (symlinks in a temp dir)
 *   ...                                  // open pty.a with the simulator, pty.b with the client
 *   await pty.close();                   // kills socat, removes the temp dir
 *
 * Needs Debian's socat. The promise resolves once socat reports its transfer loop started and both links exist.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { assertTools } = require('./system-tools');

/** How long socat may take to create the pair before the helper gives up, ms */
const START_TIMEOUT_MS = 5000;
/** socat's -d -d log line once both ends are open */
const READY_RE = /starting data transfer loop/;

/** socat processes still running; killed if the test process exits without closing them (a failed hook, ^C) */
const live = new Set();
let exitHookInstalled = false;

function killLiveOnExit () {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

/**
 * @typedef {object} PtyPair
 * @property {string} a path of one end
 * @property {string} b path of the other end
 * @property {string} dir the temp dir holding the links
 * @property {import('node:child_process').ChildProcess} socat
 * @property {() => Promise<void>} close kills socat (waits for it to exit) and removes the links; idempotent
 */

/**
 * Starts socat with two linked PTYs.
 * @param {object} [options]
 * @param {number} [options.timeoutMs=5000] how long to wait for socat, ms
 * @param {string} [options.dumpTo] a file for socat's own record of what it relays (-x -v: one line per
 *   transfer, `> YYYY/MM/DD hh:mm:ss.uuuuuu  length=N …` for a → b, `<` for b → a, then the bytes)
 * @returns {Promise<PtyPair>}
 */
function createPtyPair ({ timeoutMs = START_TIMEOUT_MS, dumpTo } = {}) {
  // no socat: say so now, with the install line, instead of after timeoutMs
  assertTools(['socat']);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-pty-'));
  const a = path.join(dir, 'a');
  const b = path.join(dir, 'b');
  const socat = spawn('socat', ['-d', '-d', ...(dumpTo ? ['-x', '-v'] : []), `pty,raw,echo=0,link=${a}`, `pty,raw,echo=0,link=${b}`],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  if (dumpTo) {
    const out = fs.createWriteStream(dumpTo);
    socat.stderr.on('data', (d) => out.write(d));
    socat.once('exit', () => out.end());
  }
  let log = '';
  let exited = false;
  live.add(socat);
  killLiveOnExit();
  const exitedP = new Promise((resolve) => socat.once('exit', () => {
    exited = true;
    live.delete(socat);
    resolve();
  }));

  let closing = null;
  const close = () => {
    if (!closing) {
      closing = (async () => {
        if (!exited) socat.kill('SIGTERM');
        await exitedP;
        fs.rmSync(dir, { recursive: true, force: true });
      })();
    }
    return closing;
  };

  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socat.stderr.removeListener('data', onLog);
      // Keep draining socat's log so a full pipe never blocks it.
      socat.stderr.resume();
      if (err) close().then(() => reject(err), () => reject(err));
      else resolve({ a, b, dir, socat, close });
    };
    const onLog = (chunk) => {
      log += chunk;
      if (READY_RE.test(log) && fs.existsSync(a) && fs.existsSync(b)) finish();
    };
    const timer = setTimeout(() => finish(new Error(`socat did not create a PTY pair within ${timeoutMs} ms; log: ${log}`)), timeoutMs);
    socat.stderr.setEncoding('utf8');
    socat.stderr.on('data', onLog);
    socat.once('error', (err) => finish(new Error(`cannot start socat (apt-get install socat): ${err.message}`)));
    socat.once('exit', (code, signal) => finish(new Error(`socat exited (${code ?? signal}) before the PTYs were ready; log: ${log}`)));
  });
}

module.exports = { createPtyPair };
