'use strict';

/**
 * Fault suite, issue 18 majors 2 and 3: a spool that filled its disk recovers by itself, and a
 * damaged spool loses only the damaged records, each a counted drop, with no poll called skipped
 * that was not.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { startRig, stopGateway, accounting, report, waitFor, sleep } = require('./harness');
const { decodeRecord } = require('../../gateway/runtime/mqtt/spool-record');
const { assertTools } = require('../helpers/system-tools');

/** The latency log's segments as the gateway sees them (its tmpfs is in its own mount namespace). */
function segments (dir) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.seg')).sort().map((name) => ({ name, size: fs.statSync(path.join(dir, name)).size }));
}

/** The last status the subscriber saw that was sent after `since`. */
function statusAfter (rig, since) {
  const s = rig.sub.status().filter((m) => m.at >= since && m.json && m.json.state === 'online').pop();
  return s && s.json;
}

describe('faults: the spool recovers from a full disk and from damage', function () {
  this.timeout(90000);
  let rig;
  afterEach(async () => { if (rig) await rig.cleanup(); rig = null; });

  it('a disk the spool filled is freed once its records are delivered: a second outage is spooled again, nothing lost beyond what the first counted', async () => {
    assertTools(['unshare']);
    const jobs = [{ name: 'a', rate: 100, values: { mode: 'every', maxRate: '5/s' } }];
    // a memory buffer of 10: with the disk still full, a 2 s outage (20 summaries) would drop some
    rig = await startRig({ id: 'f-spool-refill', jobs, spool: { maxBytes: '4MiB' }, interval: '100ms', mqtt: { buffer: 10 } });
    const g = rig.startGatewayOnTinyDisk(64);
    const latencyDir = path.join(`/proc/${g.child.pid}/root`, rig.config.mqtt.spool.dir, 'latency');
    await waitFor(() => rig.sub.latency('a').length >= 2, `summaries (stderr: ${rig.stderr})`);
    // first outage: the spool fills the disk (ENOSPC), memory takes the rest
    await rig.brokerDown('stop');
    await waitFor(() => /ENOSPC/.test(rig.stderr), 'the disk to fill up', 20000);
    const full = segments(latencyDir);
    await sleep(300);
    const back1 = await rig.brokerUp();
    await waitFor(() => rig.sub.latency('a').some((m) => m.json.end > back1), 'summaries from after the first outage', rig.reconnectMaxMs + 10000);
    const after1 = statusAfter(rig, back1);
    const dropped1 = after1.dropped.total;
    // the spool writes again by itself: what was delivered is freed, and a new segment takes records
    await waitFor(() => segments(latencyDir).some((s) => s.size > 0 && !full.some((f) => f.name === s.name)), `the spool to write again (segments when full: ${JSON.stringify(full)}, now: ${JSON.stringify(segments(latencyDir))})`, 20000);
    const rewritingAt = Date.now();
    // second outage: longer than the memory buffer holds, within what the freed disk holds
    await rig.brokerDown('stop');
    const down2 = Date.now();
    await sleep(2000);
    const back2 = await rig.brokerUp();
    await waitFor(() => rig.sub.latency('a').some((m) => m.json.end > back2), 'summaries from after the second outage', rig.reconnectMaxMs + 10000);
    const exit = await stopGateway(rig, g);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.json && m.json.reason === 'stopped'), 'the stopped status');
    const figures = accounting(rig);
    // every seq gap is a counted drop (accounting), and none came after the first outage
    assert.equal(figures.a.dropped, dropped1, `dropped: ${dropped1} after the first outage, ${figures.a.dropped} at the end`);
    // 20 summaries against a memory buffer of 10, none dropped: the disk took them
    const during2 = rig.sub.latency('a').filter((m) => m.json.end > down2 && m.json.end < back2).length;
    assert.ok(during2 >= 15, `summaries of the second outage delivered: ${during2}`);
    report('spool fills its disk, recovers, second outage', { figures, dropped1, during2, rewriteWaitMs: rewritingAt - back1 });
  });

  it('64 damaged bytes mid-segment of a real spool: only the damaged summaries are missing, each a counted drop of its job, and no poll is called skipped that was not', async () => {
    const jobs = [{ name: 'a', rate: 100 }, { name: 'b', rate: 50 }];
    rig = await startRig({ id: 'f-spool-damage', jobs, spool: true, interval: '100ms' });
    const g1 = rig.startGateway();
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).length >= 2), `summaries before the outage (stderr: ${rig.stderr})`);
    await rig.brokerDown('stop');
    const downAt = Date.now();
    await sleep(3000);
    await g1.kill();
    // 64 bytes halfway through the outage's summaries, across the boundary of two (of both jobs, mostly)
    const dir = path.join(rig.config.mqtt.spool.dir, 'latency');
    const file = path.join(dir, segments(dir).pop().name);
    const buf = fs.readFileSync(file);
    const recs = [];
    for (let off = 0; off < buf.length;) {
      const d = decodeRecord(buf, off);
      assert.ok(!d.bad, `the spool as written is whole (${d.bad} at ${off})`);
      recs.push({ off, end: d.next, job: d.rec.job, seq: d.rec.seq, time: d.rec.time, payload: d.rec.payload.toString() });
      off = d.next;
    }
    const outage = recs.filter((r) => r.time > downAt + 300);
    assert.ok(outage.length >= 20, `summaries spooled during the outage: ${outage.length}`);
    const mid = outage[Math.floor(outage.length / 2)];
    const at = mid.end - 32;
    for (let i = at; i < at + 64; i++) buf[i] ^= 0xa5;
    fs.writeFileSync(file, buf);
    const damaged = recs.filter((r) => r.off < at + 64 && r.end > at);
    const lostBytes = damaged.reduce((n, r) => n + r.end - r.off, 0);
    const g2 = rig.startGateway();
    await sleep(500);
    const backAt = await rig.brokerUp();
    await waitFor(() => jobs.every((j) => rig.sub.latency(j.name).some((m) => m.json.end > backAt)), 'summaries from after the restart', rig.reconnectMaxMs + 10000);
    const exit = await stopGateway(rig, g2);
    assert.equal(exit.code, 0);
    await waitFor(() => rig.sub.status().some((m) => m.at > backAt && m.json && m.json.reason === 'stopped'), 'the stopped status');
    // per job: the seq gaps equal the status's drop count (accounting), and they are the damaged records
    const figures = accounting(rig);
    for (const j of jobs) {
      const want = damaged.filter((r) => r.job === j.name).map((r) => r.seq);
      const seen = new Set(rig.sub.latency(j.name).map((m) => m.json.seq));
      const missing = [];
      for (let s = 0; s <= figures[j.name].last; s++) if (!seen.has(s)) missing.push(s);
      assert.deepEqual(missing, want, `${j.name}: the seqs missing are the damaged ones`);
      assert.equal(figures[j.name].dropped, want.length, `${j.name}: counted as dropped`);
      assert.equal(figures[j.name].duplicates, 0, `${j.name}: no seq twice`);
      // no summary made up: each seq the killed gateway spooled arrives as it wrote it (its skipped
      // polls are its poller's own), and the restarted one's summaries cover only the time after
      // the last summary spooled, so none of them can call skipped a poll that was polled
      const spooled = new Map(recs.filter((r) => r.job === j.name).map((r) => [r.seq, r]));
      const spooledUntil = Math.max(...[...spooled.values()].map((r) => r.time));
      for (const m of rig.sub.latency(j.name)) {
        const r = spooled.get(m.json.seq);
        if (r) assert.equal(m.raw, r.payload, `${j.name} seq ${m.json.seq} arrives as the first gateway spooled it (it came with start ${m.json.start}, ${m.json.skipped} polls skipped)`);
        else assert.ok(m.json.start >= spooledUntil, `${j.name} seq ${m.json.seq} of the restarted gateway starts at ${m.json.start}, before the last summary spooled ended (${spooledUntil}), calling ${m.json.skipped} polls skipped`);
      }
    }
    const last = rig.sub.status().filter((m) => m.json && m.json.spool).pop().json;
    assert.equal(last.spool.latency.corruptBytes, lostBytes, 'the damaged records\' bytes, not the rest of the segment');
    report('64 bytes damaged mid-segment of a real spool', { figures, damaged: damaged.map((r) => `${r.job}:${r.seq}`), lostBytes, segmentBytes: buf.length });
  });
});
