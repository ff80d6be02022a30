'use strict';

/**
 * Question 12's (and 14's) nines client, in its own process so the bench can pin it to a core (`taskset -c`)
 * apart from the server or beside it: one Modbus TCP connection with `inflight` requests in flight,
 * FC3 ×10 from address 0, unit 1, as question 1 reads; over TLS (Modbus/TCP Security) with `tls`.
 *
 *   node pipeline-child.js '<json>'   {port, inflight, count, durationMs, warmup, ratePerSec?, tls?}
 *                                     tls: {ca, cert, key} PEM file paths (closed loop only)
 *
 * Closed loop (no ratePerSec): `inflight` lanes on the one connection, each sending its next request
 * as soon as its reply is in, each request timed from just before the call to just after its promise
 * settles, as lib/closed-loop.js times every Node client (service time). At a fixed rate the nines
 * probe runs it (gateway/measure/probe.js, in a worker thread as `nines probe --rate` does), lanes
 * interleaved into one schedule, each request timed from its intended send time (response time), the
 * catch-up policy `burst` as the C client's (a request whose time has passed goes as soon as a lane
 * is free). The last stdout line is the JSON result with the HDR histogram encoded.
 */

const fs = require('node:fs');
const path = require('node:path');
const { createHist, record, encode } = require('./hist');

const ROOT = path.join(__dirname, '..', '..');
const now = process.hrtime.bigint;

/** @returns {Promise<object>} the closed-loop result */
async function closedLoop ({ port, inflight, count, durationMs, warmup, tls }) {
  const { createClient } = require(path.join(ROOT, 'gateway/drivers'));
  const { validateOp } = require(path.join(ROOT, 'gateway/drivers/modbus'));
  const secure = tls === undefined ? {} : { tls: { ca: fs.readFileSync(tls.ca), cert: fs.readFileSync(tls.cert), key: fs.readFileSync(tls.key) } };
  const client = createClient(`${tls === undefined ? 'modbus+tcp' : 'modbus+tls'}://127.0.0.1:${port}?unitId=1`,
    { timeoutMs: 1000, ...(inflight > 1 ? { maxInflight: inflight } : {}), ...secure });
  client.on('error', () => {});
  // the connect, handshake included over TLS (the first connect of a process: its code is cold)
  const c0 = now();
  await client.connect();
  const connectNs = Number(now() - c0);
  const op = validateOp({ fc: 3, address: 0, quantity: 10 });
  try {
    let left = warmup;
    const warm = async () => { while (left-- > 0) { try { await client.request(op); } catch { /* shows in the measured loop */ } } };
    await Promise.all(Array.from({ length: inflight }, warm));
    const hist = createHist();
    let n = 0;
    let errors = 0;
    let firstError;
    const cpu0 = process.cpuUsage();
    const start = now();
    const stop = start + BigInt(durationMs) * 1000000n;
    const lane = async () => {
      while (n < count) {
        const t0 = now();
        if (t0 >= stop) return;
        n++;
        try {
          await client.request(op);
        } catch (err) {
          errors++;
          if (firstError === undefined) firstError = `${err.code || ''} ${err.message}`.trim();
        }
        record(hist, now() - t0);
      }
    };
    await Promise.all(Array.from({ length: inflight }, lane));
    const elapsedNs = Number(now() - start);
    const cpu = process.cpuUsage(cpu0);
    // the client's own CPU per request (user + system, the whole process): what it costs besides the wire
    const cpuNsPerReq = Math.round((cpu.user + cpu.system) * 1000 / Math.max(1, hist.totalCount));
    return { hist: encode(hist), count: hist.totalCount, errors, elapsedNs, reqPerSec: hist.totalCount / (elapsedNs / 1e9), firstError, effectiveInflight: client.effectiveInflight, cpuNsPerReq, connectNs };
  } finally {
    await client.close();
  }
}

/** @returns {Promise<object>} the fixed-rate result */
async function fixedRate ({ port, inflight, durationMs, warmup, ratePerSec }) {
  const { runProbe } = require(path.join(ROOT, 'gateway/measure/probe'));
  const { runs } = await runProbe({
    target: `modbus+tcp://127.0.0.1:${port}?unitId=1`,
    read: { fc: 3, address: 0, quantity: 10 },
    connections: [1],
    inflight: [inflight],
    ratePerSec,
    policy: 'burst',
    durationMs,
    warmup,
    timeoutMs: 1000,
    inWorker: true
  }).promise;
  const r = runs[0];
  const failed = r.errors + r.timeouts;
  const first = Object.entries(r.errorsByCode)[0];
  return {
    hist: r.hist,
    count: r.ok + failed,
    errors: failed,
    elapsedNs: Math.round(r.elapsedMs * 1e6),
    reqPerSec: r.ratePerSec,
    offered: ratePerSec,
    fellBehind: r.fellBehind,
    firstError: first ? `${first[0]} ${first[1].sample}` : undefined,
    effectiveInflight: r.inflightEffective
  };
}

async function main () {
  const o = JSON.parse(process.argv[2]);
  const result = o.ratePerSec ? await fixedRate(o) : await closedLoop(o);
  process.stdout.write(JSON.stringify(result) + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
