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
  const byTime = (a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0);
  const gateway = read('gateway');
  const polls = gateway.filter((e) => e[0] === 'p').map((e) => BigInt(e[1])).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const windowNs = BigInt(windowMs) * 1000000n;
  return devices.map(({ match, sim, socat }) => {
    const relays = socat ? readSocatDump(path.join(dir, socat), wallMinusMonoNs).filter((r) => r.toB) : [];
    const gw = gateway.filter((e) => e[0] !== 'p' && e[2].startsWith(match)).map((e) => ({ src: 'gw', kind: e[0], ns: BigInt(e[1]), hex: e[3] }));
    const simEvents = read(sim).filter((e) => e[0] === 'q' || e[0] === 'x').map((e) => ({ src: 'sim', kind: e[0], ns: BigInt(e[1]), unit: Number(e[2]), address: Number(e[3]) }));
    // one timeline: the gateway's writes, reads, timeouts and reconnects, and the simulator's requests
    // taken in (q) and replies written (x), all on the machine's monotonic clock
    const events = gw.concat(simEvents).sort(byTime);
    // Who each reply belongs to, by the simulator's own record rather than by its shape. Each pipe (a
    // PTY relay, a socket) is first in, first out, and the simulator answers in order: its q is the
    // first write not yet taken in that has its unit and address, its x answers the first unanswered q
    // of them, and a reply read is the first x of its unit and address not read yet. What comes before
    // the match in its pipe is passed over for good (a request the simulator could not frame, a reply
    // lost to a reconnect), so one loss cannot shift every match after it. A reply to A read while B is
    // on the wire is then taken for B even when A and B read the same address (its value happens to be
    // right, but B's own reply is left to be taken for the next request), which a match by address
    // alone cannot see
    /** @returns {{items: object[], head: number, take: (unit: number, address: number) => object|null}} */
    const pipe = () => ({
      items: [],
      head: 0,
      take (unit, address) {
        for (let i = this.head; i < this.items.length; i++) {
          const it = this.items[i];
          if (it.unit === unit && it.address === address) { this.head = i + 1; return it; }
        }
        return null;
      }
    });
    // every write, in order ({ns, unit, address, endedBy: null|'own'|'foreign'|'timeout', released:
    // null|'own'|'foreign', timeoutNs}); those from `head` on are not taken in by the simulator yet
    const toSim = pipe();
    const inSim = pipe(); // requests taken in, until answered
    const toGateway = pipe(); // replies written, until the gateway reads them
    const writes = toSim.items;
    let buf = '';
    let lastRx = 0n;
    let replies = 0;
    const suspects = [];
    const ms = (ns) => Number(ns) / 1e6;
    for (const e of events) {
      if (e.src === 'sim') {
        if (e.kind === 'q') inSim.items.push({ ns: e.ns, unit: e.unit, address: e.address, write: toSim.take(e.unit, e.address) });
        else toGateway.items.push({ ns: e.ns, unit: e.unit, address: e.address, q: inSim.take(e.unit, e.address) });
        continue;
      }
      if (e.kind === 'w') {
        const b = Buffer.from(e.hex, 'hex');
        const w = { ns: e.ns, unit: b[0], address: b.readUInt16BE(2), endedBy: null, released: null, timeoutNs: null };
        writes.push(w);
        buf = '';
        continue;
      }
      if (e.kind === 'o' || e.kind === 'c') {
        // a reconnect: what was in the pipes is lost
        toSim.head = toSim.items.length;
        toGateway.head = toGateway.items.length;
        buf = '';
        continue;
      }
      if (e.kind === 't') {
        const w = writes[writes.length - 1];
        if (w !== undefined && w.endedBy === null) { w.endedBy = 'timeout'; w.timeoutNs = e.ns; }
        buf = '';
        continue;
      }
      if (buf !== '' && e.ns - lastRx > FRAME_GAP_NS) buf = '';
      lastRx = e.ns;
      buf += e.hex;
      // a chunk may hold more than one frame (a foreign unit's reply and then ours, read together)
      while (buf.length >= REPLY_BYTES * 2) {
        const frame = Buffer.from(buf.slice(0, REPLY_BYTES * 2), 'hex');
        buf = buf.slice(REPLY_BYTES * 2);
        replies++;
        const unit = frame[0];
        const address = frame.readUInt16BE(3) - unit * 1000;
        const x = toGateway.take(unit, address);
        const q = x === null ? null : x.q;
        const own = q === null ? null : q.write;
        const last = writes[writes.length - 1];
        if (last === undefined) continue;
        // the gateway takes a reply of the unit on the wire for that request's; one that arrives while the
        // line is held after a timeout and fits the timed-out request ends the hold
        const taken = last.endedBy === null && last.unit === unit;
        if (taken) last.endedBy = own === last ? 'own' : 'foreign';
        else if (last.endedBy === 'timeout' && last.released === null && last.unit === unit) last.released = own === last ? 'own' : 'foreign';
        if (own === last) continue;
        // a reply read after a newer request was written (or with no request of its own traced)
        const frameHex = frame.toString('hex');
        let relay = null;
        for (const r of relays) {
          if (r.ns > e.ns + 1000000n) break;
          if (x !== null && r.ns >= x.ns - 1000000n && r.hex.includes(frameHex.slice(0, 10))) { relay = r; break; }
        }
        // on a serial port: when the binding first found the port readable once the simulator had written the reply
        let polledAt = null;
        // (after socat relayed it, when its record shows the relay: a poll before that was for other bytes)
        const relayedAt = relay !== null ? relay.ns : x !== null ? x.ns : null;
        if (socat && relayedAt !== null) for (const p of polls) { if (p > e.ns) break; if (p >= relayedAt) { polledAt = p; break; } }
        // when the reply reached the gateway's port: on a serial port, when serialport's binding found it readable (socat's
        // relay writes to the PTY's other end, and the kernel's tty layer can take tens of ms more on a busy machine); on a
        // socket, when the simulator wrote it (loopback)
        const arrived = polledAt !== null ? { ns: polledAt } : relay !== null ? relay : x;
        let cls;
        if (last.unit !== unit) cls = 'other-unit';
        else if (own === null) cls = 'unknown';
        else if (own.endedBy === 'foreign') cls = 'cascade';
        else if (last.ns - own.ns < windowNs) cls = own.endedBy === 'timeout' && own.released === 'foreign' ? 'released-by-foreign' : 'early-write';
        else cls = arrived.ns - own.ns >= windowNs ? 'arrived-late' : 'read-late';
        const from = own === null ? last.ns : own.ns;
        suspects.push({
          cls,
          taken,
          unit,
          address,
          nextUnit: last.unit,
          nextAddress: last.address,
          readMs: ms(e.ns - from), // the old request's write → its reply read
          nextWriteMs: ms(last.ns - from), // the old request's write → the newer request's write
          simInMs: q === null ? null : ms(q.ns - from), // → the simulator took the request in
          simOutMs: x === null ? null : ms(x.ns - from), // → the simulator wrote its reply
          relayMs: relay === null ? null : ms(relay.ns - from), // → socat relayed it to the gateway's end
          arrivedMs: arrived === null ? null : ms(arrived.ns - from), // → it reached the gateway's port
          polledMs: polledAt === null ? null : ms(polledAt - from), // → serialport found the port readable
          timeoutMs: own === null || own.timeoutNs === null ? null : ms(own.timeoutNs - from) // → the old request timed out
        });
      }
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
      lines.push(`  ${s.cls}: unit ${s.unit} address ${s.address} read ${s.readMs.toFixed(1)} ms after its write, for unit ${s.nextUnit} address ${s.nextAddress} written at ${s.nextWriteMs.toFixed(1)} ms; simulator in ${s.simInMs === null ? '?' : s.simInMs.toFixed(1)}, out ${s.simOutMs === null ? '?' : s.simOutMs.toFixed(1)}${s.relayMs === null ? '' : `, relayed ${s.relayMs.toFixed(1)}`}${s.polledMs === null ? '' : `, polled ${s.polledMs.toFixed(1)}`}; timed out at ${s.timeoutMs === null ? '-' : s.timeoutMs.toFixed(1)} ms`);
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
