'use strict';

/**
 * Fault suite: the gateway itself goes away (SIGTERM, SIGKILL) during a broker outage, with a disk
 * spool; and a spool whose disk fills up. Issue 12 "store and forward" and issue 14 item 6 (values
 * survive outages too, each with its read time).
 */

const assert = require('node:assert/strict');
const { startRig, stopGateway, accounting, report, waitFor, sleep } = require('./harness');

const JOBS = [
  { name: 'a', rate: 100, values: { mode: 'every', maxRate: '5/s' } },
  { name: 'b', rate: 50 }
];

describe('faults: the gateway stops or dies during an outage, with a disk spool', function () {
  this.timeout(60000);
  let rig;
  afterEach(async () => { if (rig) await rig.cleanup(); rig = null; });

  async function restartDuringOutage (id, signal) {
    rig = await startRig({ id, jobs: JOBS, spool: true });
    const g1 = rig.startGateway();
    await waitFor(() => JOBS.every((j) => rig.sub.latency(j.name).length >= 2) && rig.sub.values('a').length >= 2, `summaries and values before the outage (stderr: ${rig.stderr})`);
    await rig.brokerDown('stop');
    const downAt = Date.now();
    await sleep(1000);
    const goneAt = Date.now();
    if (signal === 'SIGTERM') {
      const exit = await stopGateway(rig, g1);
      assert.equal(exit.code, 0, `exit code (stderr: ${rig.stderr})`);
    } else {
      await g1.kill();
    }
    await sleep(300);
    const g2 = rig.startGateway();
    await sleep(700);
    const backAt = await rig.brokerUp();
    await waitFor(() => rig.firstMessageAfter(backAt) !== null, 'the restarted gateway on the broker', rig.reconnectMaxMs + 5000);
    const recoveryMs = rig.firstMessageAfter(backAt) - backAt;
    await waitFor(() => JOBS.every((j) => rig.sub.latency(j.name).some((m) => m.json.end > backAt)), 'summaries from after the outage');
    const exit = await stopGateway(rig, g2);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.at > backAt && m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    for (const [job, f] of Object.entries(figures)) {
      assert.equal(f.dropped, 0, `${job}: dropped`);
      // one stream across the restart: seq and time go on where the first process left them
      assert.equal(f.runs, 1, `${job}: one unbroken run of seqs`);
      // exactly once: a kill during an outage leaves nothing acknowledged and unrecorded
      assert.equal(f.duplicates, 0, `${job}: seqs delivered twice`);
    }
    // the summary that spans the restart counts the downtime's slots as skipped
    const spanning = rig.sub.latency('a').find((m) => m.json.start < goneAt + 300 && m.json.end > goneAt + 300);
    assert.ok(spanning && spanning.json.skipped >= 100 * 0.3 - 5, `the downtime counted as skipped: ${spanning && JSON.stringify({ start: spanning.json.start, end: spanning.json.end, skipped: spanning.json.skipped })}`);
    // values (issue 14 item 6): those read during the outage came afterwards, in order, with their read time
    const values = rig.sub.values('a').map((m) => ({ at: m.at, ts: m.json.ts }));
    for (let i = 1; i < values.length; i++) assert.ok(values[i].ts > values[i - 1].ts, `value ts in order: ${values[i - 1].ts} then ${values[i].ts}`);
    const late = values.filter((v) => v.ts > downAt && v.ts < goneAt);
    assert.ok(late.length >= 3, `values read during the outage were delivered: ${late.length}`);
    assert.ok(late.every((v) => v.at >= backAt), 'and only once the broker was back, with their read time');
    const maxLateMs = Math.max(...late.map((v) => v.at - v.ts));
    return { figures, recoveryMs, valuesDuringOutage: late.length, maxValueDelayMs: maxLateMs };
  }

  it('SIGKILL during a broker outage, restart: every seq arrives exactly once, the stream goes on, values keep their read time', async () => {
    const r = await restartDuringOutage('f-spool-kill', 'SIGKILL');
    report('gateway SIGKILLed during a broker outage, with a spool', r);
  });

  it('SIGTERM during a broker outage, restart: the spool keeps what could not be sent, nothing dropped', async () => {
    const r = await restartDuringOutage('f-spool-term', 'SIGTERM');
    report('gateway SIGTERMed during a broker outage, with a spool', r);
  });

  it('a disk-full spool (a 32 KiB tmpfs): NINES_ERR_IO reported, polling goes on, the memory buffer takes over, nothing dropped', async () => {
    rig = await startRig({ id: 'f-spool-full', jobs: JOBS, spool: { maxBytes: '4MiB' }, interval: '100ms' });
    const g = rig.startGatewayOnTinyDisk(32);
    await waitFor(() => JOBS.every((j) => rig.sub.latency(j.name).length >= 2), `summaries (stderr: ${rig.stderr})`);
    await rig.brokerDown('stop');
    await waitFor(() => /NINES_ERR_IO/.test(rig.stderr), 'the disk to fill up', 15000);
    assert.match(rig.stderr, /ENOSPC|no space left/i);
    await sleep(500);
    const backAt = await rig.brokerUp();
    await waitFor(() => rig.firstMessageAfter(backAt) !== null, 'the gateway on the broker', rig.reconnectMaxMs + 5000);
    const recoveryMs = rig.firstMessageAfter(backAt) - backAt;
    await waitFor(() => JOBS.every((j) => rig.sub.latency(j.name).some((m) => m.json.end > backAt)), 'summaries from after the outage');
    const exit = await stopGateway(rig, g);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    for (const [job, f] of Object.entries(figures)) assert.equal(f.dropped, 0, `${job}: dropped`);
    const last = rig.sub.status().filter((m) => m.json && m.json.spool).pop().json;
    const writeErrors = (last.spool.latency ? last.spool.latency.writeErrors : 0) + (last.spool.value ? last.spool.value.writeErrors : 0);
    assert.ok(writeErrors > 0, `the status counts what the disk refused: ${JSON.stringify(last.spool)}`);
    report('spool on a full disk (32 KiB tmpfs)', { figures, recoveryMs, writeErrors });
  });
});
