'use strict';

/**
 * Reads the correlation drill's wire trace (wire-trace-preload.js) and finds every RTU reply that
 * reached the gateway after it had written a newer request: the replies a master that matches by shape
 * could take for the newer request's. Each is put in one class, by when it was written, relayed and read
 * (the window: timeout + quiet period after the old request's write, within which nines promises never
 * to take a reply for another's):
 * - the gateway's fault, which the drill must never find:
 *   - `early-write`: the gateway wrote the newer request inside the old one's window;
 *   - `read-late`: the reply reached the gateway's port inside the window (on a serial port: serialport's
 *     binding found the port readable; on a socket: the simulator wrote it), but the gateway read it only
 *     after writing the newer request;
 * - beyond what any master can tell apart:
 *   - `arrived-late`: the reply reached the gateway's port only after the window (the simulator, or the
 *     PTY relay, descheduled on a busy machine);
 * - consequences of one of those:
 *   - `released-by-foreign`: the hold after the old request's timeout ended early because a reply came,
 *     as it should for the reply owed, but that reply was another's (a later one's);
 *   - `cascade`: the old request had itself been ended by a reply that was not its own, so its own reply
 *     came while the next was on the wire;
 * - `other-unit`: a reply of another unit than the one just asked, told apart by its address.
 * `taken`: no reply and no timeout of the newer request came before it, so the gateway took it for that
 * request's reply (a wrong value, unless its values happen to match).
 */

const fs = require('node:fs');
const path = require('node:path');

/** An FC3 reply for two registers: unit, 3, 4, four data bytes, CRC */
const REPLY_BYTES = 9;
/** A gap between chunks longer than this starts a new frame (t3.5 at 115200 baud is 0.3 ms) */
const FRAME_GAP_NS = 5000000n;

/**
 * socat's record of what it relayed (helpers/pty.js dumpTo), on this machine's monotonic clock.
 * @param {string} file
 * @param {bigint} wallMinusMonoNs the wall clock less the monotonic one, ns
 * @returns {{toB: boolean, ns: bigint, hex: string}[]} toB: from end a (the simulator's) to end b (the gateway's)
 */
function readSocatDump (file, wallMinusMonoNs) {
  const out = [];
  if (!fs.existsSync(file)) return out;
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  // socat 1.7.4 prints microseconds in nine digits (".000048783"): a file whose fractions all stay below
  // 10^6 is read as microseconds
  const fractions = lines.map((l) => /^[<>] \S+ \d\d:\d\d:\d\d\.(\d{9})/.exec(l)).filter(Boolean).map((m) => Number(m[1]));
  const scale = fractions.every((f) => f < 1e6) ? 1000n : 1n;
  for (let i = 0; i < lines.length; i++) {
    const m = /^([<>]) (\d{4})\/(\d\d)\/(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{9})\s+length=(\d+)/.exec(lines[i]);
    if (m === null) continue;
    const wallMs = Date.UTC(+m[2], +m[3] - 1, +m[4], +m[5], +m[6], +m[7]);
    const ns = BigInt(wallMs) * 1000000n + BigInt(m[8]) * scale - wallMinusMonoNs;
    let hex = '';
    for (let j = i + 1; j < lines.length && lines[j].startsWith(' '); j++) hex += lines[j].slice(0, 49).replace(/\s+/g, '');
    out.push({ toB: m[1] === '>', ns, hex });
  }
  return out;
}

/**
 * @param {string} dir the trace folder
 * @param {{windowMs: number, devices: {match: string, sim: string, socat?: string}[], wallMinusMonoNs?: bigint}} o
 *   each RTU device: how its target URL starts as the gateway traces it, its simulator's trace label, and
 *   socat's dump when a PTY pair relays it (socat: the relay's time, `relayMs`)
 * @returns {{device: string, replies: number, suspects: object[]}[]} per device: the replies read and the suspects
 */
function analyseWire (dir, { windowMs, devices, wallMinusMonoNs = 0n }) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.trace'));
  const read = (prefix) => files.filter((f) => f.startsWith(prefix + '-'))
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => l.split(' ')));
  const gateway = read('gateway');
  const polls = gateway.filter((e) => e[0] === 'p').map((e) => BigInt(e[1])).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const windowNs = BigInt(windowMs) * 1000000n;
  return devices.map(({ match, sim, socat }) => {
    const relays = socat ? readSocatDump(path.join(dir, socat), wallMinusMonoNs).filter((r) => r.toB) : [];
    const events = gateway.filter((e) => e[2].startsWith(match)).map((e) => ({ kind: e[0], ns: BigInt(e[1]), hex: e[3] }));
    events.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
    const simEvents = read(sim).map((e) => ({ kind: e[0], ns: BigInt(e[1]), unit: Number(e[2]), address: Number(e[3]) }));
    simEvents.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
    const simLast = (kind, unit, address, beforeNs) => {
      let found = null;
      for (const e of simEvents) {
        if (e.ns > beforeNs) break;
        if (e.kind === kind && e.unit === unit && e.address === address) found = e;
      }
      return found;
    };
    const writes = []; // {ns, unit, address}
    let since = null; // since the last write: a reply or a timeout came
    let buf = '';
    let lastRx = 0n;
    let replies = 0;
    const suspects = [];
    /** @type {Map<object, string>} a timed-out write → what ended its hold: 'own' (its reply) or 'foreign' */
    const released = new Map();
    for (const e of events) {
      if (e.kind === 'w') {
        const b = Buffer.from(e.hex, 'hex');
        writes.push({ ns: e.ns, unit: b[0], address: b.readUInt16BE(2), endedBy: null });
        since = null;
        buf = '';
        continue;
      }
      if (e.kind === 't') {
        since = since || 'timeout';
        const w = writes[writes.length - 1];
        if (w !== undefined && w.endedBy === null) w.endedBy = 'timeout';
        buf = '';
        continue;
      }
      if (buf !== '' && e.ns - lastRx > FRAME_GAP_NS) buf = '';
      lastRx = e.ns;
      buf += e.hex;
      if (buf.length < REPLY_BYTES * 2) continue;
      const frame = Buffer.from(buf.slice(0, REPLY_BYTES * 2), 'hex');
      buf = buf.slice(REPLY_BYTES * 2);
      replies++;
      const unit = frame[0];
      const address = frame.readUInt16BE(3) - unit * 1000;
      const last = writes[writes.length - 1];
      if (last === undefined) continue;
      if (last.endedBy === 'timeout' && !released.has(last)) released.set(last, last.unit === unit && last.address === address ? 'own' : 'foreign');
      if (last.unit === unit && last.address === address) {
        since = since || 'reply';
        if (last.endedBy === null) last.endedBy = 'reply';
        continue;
      }
      let own = null;
      for (let i = writes.length - 1; i >= 0; i--) if (writes[i].unit === unit && writes[i].address === address) { own = writes[i]; break; }
      if (own === null) continue;
      const x = simLast('x', unit, address, e.ns);
      const q = x === null ? null : simLast('q', unit, address, x.ns);
      const ms = (ns) => Number(ns) / 1e6;
      // a reply of another unit is told apart by its address: only one of the unit just written can be taken for its reply
      const frameHex = frame.toString('hex');
      const arrivedAtLeast = (ns) => x === null || ns >= x.ns;
      let relay = null;
      for (const r of relays) {
        if (r.ns > e.ns + 1000000n) break;
        if (x !== null && r.ns >= x.ns - 1000000n && r.hex.includes(frameHex.slice(0, 10))) { relay = r; break; }
      }
      let timedOut = null;
      for (const t of events) if (t.kind === 't' && t.ns > own.ns && t.ns < last.ns) { timedOut = t; break; }
      // the port closed or opened between the two writes
      const reopened = events.some((t) => (t.kind === 'o' || t.kind === 'c') && t.ns > own.ns && t.ns < last.ns);
      // on a serial port: when the binding first found the port readable once the simulator had written the reply
      let polledAt = null;
      if (socat) for (const p of polls) { if (p > e.ns) break; if (arrivedAtLeast(p)) { polledAt = p; break; } }
      // when the reply reached the gateway's port: on a serial port, when serialport's binding found it readable (socat's
      // relay writes to the PTY's other end, and the kernel's tty layer can take tens of ms more on a busy machine); on a
      // socket, when the simulator wrote it (loopback)
      const arrived = polledAt !== null ? { ns: polledAt } : relay !== null ? relay : x;
      let cls;
      if (last.unit !== unit) cls = 'other-unit';
      else if (own.endedBy === 'foreign') cls = 'cascade';
      else if (last.ns - own.ns < windowNs) cls = timedOut !== null && released.get(own) === 'foreign' ? 'released-by-foreign' : 'early-write';
      else if (arrived === null) cls = 'unknown';
      else cls = arrived.ns - own.ns >= windowNs ? 'arrived-late' : 'read-late';
      suspects.push({
        cls,
        taken: since === null && last.unit === unit,
        unit,
        address,
        nextUnit: last.unit,
        nextAddress: last.address,
        readMs: ms(e.ns - own.ns), // the old request's write → its reply read
        nextWriteMs: ms(last.ns - own.ns), // the old request's write → the newer request's write
        simInMs: q === null ? null : ms(q.ns - own.ns), // → the simulator took the request in
        simOutMs: x === null ? null : ms(x.ns - own.ns), // → the simulator wrote its reply
        relayMs: relay === null ? null : ms(relay.ns - own.ns), // → socat relayed it to the gateway's end
        arrivedMs: arrived === null ? null : ms(arrived.ns - own.ns), // → it reached the gateway's port
        polledMs: polledAt === null ? null : ms(polledAt - own.ns), // → serialport found the port readable
        timeoutMs: timedOut === null ? null : ms(timedOut.ns - own.ns), // → the old request timed out
        reopened
      });
      if (since === null && last.unit === unit && last.endedBy === null) last.endedBy = 'foreign';
      since = since || 'foreign';
    }
    return { device: match, replies, suspects };
  });
}

/**
 * @param {ReturnType<typeof analyseWire>} result
 * @returns {string} one line per device and class, and each taken suspect
 */
function formatWire (result) {
  const lines = [];
  for (const { device, replies, suspects } of result) {
    const by = {};
    for (const s of suspects) by[s.cls] = (by[s.cls] || 0) + 1;
    const taken = suspects.filter((s) => s.taken);
    lines.push(`${device}: ${replies} replies read, ${suspects.length} after a newer write (${JSON.stringify(by)}), ${taken.length} taken`);
    for (const s of taken) {
      lines.push(`  ${s.cls}: unit ${s.unit} address ${s.address} read ${s.readMs.toFixed(1)} ms after its write, for unit ${s.nextUnit} address ${s.nextAddress} written at ${s.nextWriteMs.toFixed(1)} ms; simulator in ${s.simInMs === null ? '?' : s.simInMs.toFixed(1)}, out ${s.simOutMs === null ? '?' : s.simOutMs.toFixed(1)}${s.relayMs === null ? '' : `, relayed ${s.relayMs.toFixed(1)}`}${s.polledMs === null ? '' : `, polled ${s.polledMs.toFixed(1)}`}; timed out at ${s.timeoutMs === null ? '-' : s.timeoutMs.toFixed(1)} ms${s.reopened ? '; the port closed or opened between the writes' : ''}`);
    }
  }
  return lines.join('\n');
}

/** The classes that are the gateway's fault (above); `unknown` (a reply the simulator's trace lacks) is not excused */
const GATEWAY_FAULTS = Object.freeze(['early-write', 'read-late', 'unknown']);

/**
 * What the drill finds wrong, by the trace: taken replies of the gateway's making, and wrong values no
 * taken reply accounts for. On RTU a wrong value is excused only by a taken reply the trace puts beyond
 * the window (or after one); Modbus TCP and ASCII have no excuse.
 * @param {Map<string, {wrong: string[]}>} jobs the drill's jobs
 * @param {ReturnType<typeof analyseWire>} wire
 * @returns {string[]} what is wrong (empty: nothing)
 */
function unexcused (jobs, wire) {
  const out = [];
  for (const d of wire) {
    for (const s of d.suspects) if (s.taken && GATEWAY_FAULTS.includes(s.cls)) out.push(`${d.device}: ${s.cls}, unit ${s.unit} address ${s.address} read ${s.readMs.toFixed(1)} ms after its write, taken for address ${s.nextAddress} written at ${s.nextWriteMs.toFixed(1)} ms`);
  }
  const wrongOf = (prefix) => [...jobs].filter(([job]) => job.startsWith(prefix)).reduce((n, [, j]) => n + j.wrong.length, 0);
  const takenOn = (prefix) => wire.filter((d) => d.device.startsWith(prefix)).reduce((n, d) => n + d.suspects.filter((s) => s.taken).length, 0);
  const serial = wrongOf('rtu-');
  if (serial > takenOn('modbus+rtu:')) out.push(`serial RTU: ${serial} wrong values, ${takenOn('modbus+rtu:')} taken replies traced`);
  const overTcp = wrongOf('rtutcp-') + wrongOf('line-');
  if (overTcp > takenOn('modbus+rtutcp:')) out.push(`RTU over TCP: ${overTcp} wrong values, ${takenOn('modbus+rtutcp:')} taken replies traced`);
  for (const prefix of ['tcp1-', 'tcp8-', 'ed560-']) if (wrongOf(prefix) !== 0) out.push(`${prefix}: ${wrongOf(prefix)} wrong values`);
  return out;
}

module.exports = { analyseWire, formatWire, unexcused, GATEWAY_FAULTS };

// node test/faults/wire-analysis.js DIR: reads a kept trace again (its drill.json holds the drill's options)
if (require.main === module) {
  const dir = process.argv[2];
  const o = JSON.parse(fs.readFileSync(path.join(dir, 'drill.json'), 'utf8'));
  console.log(formatWire(analyseWire(dir, { ...o, wallMinusMonoNs: BigInt(o.wallMinusMonoNs) })));
}
