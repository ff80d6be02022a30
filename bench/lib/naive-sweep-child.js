'use strict';

/**
 * Question 4's contrast, in its own process so the bench can pin it: the naive loop most people
 * write, `setInterval(poll, 1000 / rate)`, no deadline, no waiting for the previous reply, on the
 * nines driver, one step per offered rate, each on its own connection, closed at the end. Past its
 * capacity it leaves tens of thousands of requests queued: on a shared connection they went on
 * loading the server through the next steps. What is still queued 2 s after a step fails at the
 * close and counts as an error, with its latency so far. Latency from the intended send time
 * t0 + k / rate, as the sweep's.
 *
 *   node naive-sweep-child.js '<json>'   {port, rates, stepMs}
 *
 * Prints one JSON line: per step the histogram (encoded), the rate it offered and the errors.
 */

const { setTimeout: sleep } = require('node:timers/promises');
const { ninesClient } = require('./modbus-clients');
const { createHist, record, encode } = require('./hist');

const now = process.hrtime.bigint;

async function naiveStep (port, rate, stepMs) {
  const client = await ninesClient(port);
  const h = createHist();
  const periodMs = 1000 / rate;
  let k = 0;
  let errors = 0;
  let pending = 0;
  const t0 = now();
  const timer = setInterval(() => {
    const intended = t0 + BigInt(Math.round(k * periodMs * 1e6));
    k++;
    pending++;
    client.read().then(() => record(h, now() - intended), () => { errors++; record(h, now() - intended); })
      .finally(() => { pending--; });
  }, periodMs);
  await sleep(stepMs);
  clearInterval(timer);
  const sentFor = Number(now() - t0) / 1e9;
  for (let i = 0; i < 200 && pending > 0; i++) await sleep(10); // in-flight requests still count
  await client.close();
  for (let i = 0; i < 200 && pending > 0; i++) await sleep(10); // the close fails what was left
  return { rate, hist: encode(h), errors, reqPerSec: k / sentFor };
}

async function main () {
  const o = JSON.parse(process.argv[2]);
  const steps = [];
  for (const rate of o.rates) steps.push(await naiveStep(o.port, rate, o.stepMs));
  process.stdout.write(JSON.stringify({ steps }) + '\n');
}

main().catch((err) => { process.stderr.write(`${err.stack || err}\n`); process.exitCode = 1; });
