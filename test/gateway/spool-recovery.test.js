'use strict';

/**
 * The spool after damage and after a full disk (issue 18, majors 2 and 3): only damaged records are
 * lost, each counted for its job; a disk full of delivered records is freed without a new file.
 */

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const fc = require('fast-check');
const { Spool } = require('../../gateway/runtime/mqtt/spool');
const { StateFile } = require('../../gateway/runtime/mqtt/spool-state');
const { encodeRecord, walkRecords } = require('../../gateway/runtime/mqtt/spool-record');

const rec = (job, seq, size = 300) => ({ kind: 'latency', job, seq, time: 1000 + seq, payload: Buffer.from(JSON.stringify({ job, seq, pad: 'x'.repeat(size) })) });
const value = (job, ts) => ({ kind: 'value', job, time: ts, payload: Buffer.from(JSON.stringify({ ts })) });

async function durable (spool) {
  for (let i = 0; i < 200 && spool._durablePos < spool._writePos; i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

function takeAll (spool) {
  const out = [];
  for (let e = spool.next(); e; e = spool.next()) { out.push(e); spool.ack(e); }
  return out;
}

const segFiles = (dir) => fs.readdirSync(dir).filter((f) => f.endsWith('.seg')).sort();

/** XORs `len` bytes at `at` of the one segment file with 0x5a: every byte changes. */
function damage (dir, at, len) {
  const file = path.join(dir, segFiles(dir)[0]);
  const buf = fs.readFileSync(file);
  for (let i = at; i < at + len; i++) buf[i] ^= 0x5a;
  fs.writeFileSync(file, buf);
  return buf;
}

/**
 * The node:fs module on a disk of `limit` bytes (the folder's files together): a write that would
 * grow a file past it throws ENOSPC, as a full disk does; overwriting allocated bytes does not.
 */
function smallDisk (dir, limit) {
  const used = () => fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  return {
    ...fs,
    writeSync (fd, buf, off, len, pos) {
      const size = fs.fstatSync(fd).size;
      const end = (pos === undefined || pos === null ? size : pos) + len;
      if (end > size && used() + end - size > limit) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return fs.writeSync(fd, buf, off, len, pos);
    }
  };
}

describe('gateway/runtime/mqtt/spool: damage and a full disk', () => {
  let dir;
  const drops = [];
  const open = (opts = {}) => {
    const s = new Spool({ dir, maxBytes: 1024 * 1024, syncIntervalMs: 0, onDrop: (kind, job, n) => drops.push([kind, job, n]), ...opts });
    s.open();
    return s;
  };
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-spool-rec-')); drops.length = 0; });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('resynchronises after any damage: every record clear of it is read back, and nothing else (property)', () => {
    const records = [];
    for (let i = 0; i < 40; i++) records.push(encodeRecord(rec(i % 3 ? 'a' : 'bb', i, (i * 37) % 200)));
    const whole = Buffer.concat(records);
    const spans = [];
    for (let off = 0, i = 0; i < records.length; off += records[i].length, i++) spans.push({ i, start: off, end: off + records[i].length });
    fc.assert(fc.property(
      fc.array(fc.record({ at: fc.nat(whole.length - 1), len: fc.integer({ min: 1, max: 300 }), xor: fc.integer({ min: 1, max: 255 }) }), { minLength: 1, maxLength: 3 }),
      (hits) => {
        const buf = Buffer.from(whole);
        const hit = (s) => hits.some((h) => h.at < s.end && h.at + h.len > s.start);
        for (const h of hits) for (let i = h.at; i < Math.min(buf.length, h.at + h.len); i++) buf[i] ^= h.xor;
        const got = [];
        walkRecords(buf, 0, (r, off) => got.push(`${off}:${r.seq}`));
        assert.deepEqual(got, spans.filter((s) => !hit(s)).map((s) => `${s.start}:${s.i}`));
      }
    ), { numRuns: 300, seed: 20261125 });
  });

  it('64 damaged bytes mid-segment: only the records they touch are lost, counted per job; a reopen does not count them again', () => {
    let s = open();
    // a0 b0 a1 b1 …: each job's seqs go up by one
    for (let i = 0; i < 40; i++) s.append(rec(i % 2 ? 'b' : 'a', i >> 1));
    s.close();
    const a10 = 20 * encodeRecord(rec('a', 0)).length;
    const b10 = a10 + encodeRecord(rec('a', 10)).length;
    // 64 bytes across the end of record 20 (a10) and the start of record 21 (b10)
    damage(dir, b10 - 32, 64);
    s = open();
    const got = takeAll(s).map((e) => `${e.rec.job}${e.rec.seq}`);
    assert.equal(got.length, 38);
    assert.ok(!got.includes('a10') && !got.includes('b10'), got.join(' '));
    assert.deepEqual(drops.sort(), [['latency', 'a', 1], ['latency', 'b', 1]]);
    assert.equal(s.counts.corruptBytes, 2 * (b10 - a10), 'the two records, not the rest of the segment');
    s.close();
    drops.length = 0;
    s = open();
    assert.deepEqual(drops, [], 'counted once');
    s.close();
  });

  /**
   * Ten summaries of job a, checkpointed; `harm(size)` takes the last three; then the spool is
   * opened again and must count them, hand out the seven left, and number on after all ten.
   */
  function loseTheLastThree (harm) {
    const s = open();
    for (let i = 0; i < 10; i++) s.append(rec('a', i));
    s.checkpoint();
    s.close();
    harm(encodeRecord(rec('a', 0)).length);
    const again = open();
    assert.deepEqual(takeAll(again).map((e) => e.rec.seq), [0, 1, 2, 3, 4, 5, 6]);
    assert.deepEqual(drops, [['latency', 'a', 3]]);
    // where the stream stands is not moved back: no seq used twice, no time called skipped
    assert.deepEqual(again.jobs.get('a'), { seq: 9, end: 1009 });
    again.close();
    drops.length = 0;
    open().close();
    assert.deepEqual(drops, [], 'counted once');
  }

  it('damage at the log\'s tail: the checkpoint\'s numbers count what was lost, once, and the job numbers on after it', () => {
    loseTheLastThree((size) => damage(dir, 7 * size + 10, 3 * size - 10));
  });

  it('a log cut short (a power loss took records not yet durable): what the checkpoint knew of is counted once, and the job numbers on after it', () => {
    loseTheLastThree((size) => fs.truncateSync(path.join(dir, segFiles(dir)[0]), 7 * size));
  });

  it('rot found while running is skipped too, and counted for its job', async () => {
    const s = open();
    for (let i = 0; i < 6; i++) s.append(rec(i % 2 ? 'b' : 'a', i >> 1));
    await durable(s);
    const size = encodeRecord(rec('a', 0)).length;
    damage(dir, 3 * size + 50, 8); // b1, after open
    assert.deepEqual(takeAll(s).map((e) => `${e.rec.job}${e.rec.seq}`), ['a0', 'b0', 'a1', 'a2', 'b2']);
    assert.deepEqual(drops, [['latency', 'b', 1]]);
    assert.equal(s.length, 0, 'nothing left waiting that will never come');
    s.close();
  });

  it('values are numbered per job, so their damage is counted per job too', () => {
    let s = open();
    for (let i = 0; i < 12; i++) s.append(value(i % 3 ? 'v' : 'w', 5000 + i));
    s.close();
    const size = encodeRecord({ ...value('v', 5000), seq: 1 }).length;
    damage(dir, 3 * size + 5, 10);
    s = open();
    assert.equal(takeAll(s).length, 11);
    assert.deepEqual(drops, [['value', 'w', 1]]);
    s.close();
  });

  it('a summary the disk refused (sent from memory) is no loss of the spool\'s when damage lies next to it', () => {
    let fail = false;
    const flaky = { ...fs, writeSync: (...a) => { if (fail) throw Object.assign(new Error('EIO'), { code: 'EIO' }); return fs.writeSync(...a); } };
    let s = open({ fs: flaky });
    for (let i = 0; i < 4; i++) s.append(rec('a', i));
    fail = true;
    assert.throws(() => s.append(rec('a', 4)), { code: 'NINES_ERR_IO' });
    s.noteJob(rec('a', 4)); // as SpoolStore does when memory takes it
    fail = false;
    for (let i = 5; i < 8; i++) s.append(rec('a', i));
    s.close();
    const first = segFiles(dir)[0];
    const buf = fs.readFileSync(path.join(dir, first));
    buf[buf.length - 5] ^= 0x5a; // the last of seqs 0-3
    fs.writeFileSync(path.join(dir, first), buf);
    s = open();
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [0, 1, 2, 5, 6, 7]);
    assert.deepEqual(drops, [], 'seq 3 lost, 4 went by memory: the gap 2→5 crosses a break, so it is not the spool\'s to count');
    s.close();
  });

  it('a disk full of delivered records is freed without a new file, and the refused write goes in (no checkpoint asked for)', async () => {
    const errors = [];
    const disk = smallDisk(dir, 48 * 1024);
    const s = open({ fs: disk, maxBytes: 4 * 1024 * 1024, onError: (err) => errors.push(err) });
    let n = 0;
    for (;;) {
      try { s.append(rec('a', n, 1000)); n++; } catch (err) { assert.equal(err.details.cause, 'ENOSPC'); break; }
      assert.ok(n < 1000, 'the small disk never filled');
    }
    await durable(s);
    assert.equal(takeAll(s).length, n);
    s.append(rec('a', n, 1000));
    await durable(s);
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [n]);
    assert.deepEqual(errors, []);
    assert.equal(segFiles(dir).length, 1, segFiles(dir).join(' '));
    s.close();
  });

  describe('the checkpoint file', () => {
    it('a write torn by a crash leaves the previous checkpoint, and the next write goes in place', () => {
      const st = new StateFile(fs, dir, () => {});
      st.read();
      for (let i = 1; i <= 3; i++) st.write({ v: 1, n: i });
      st.close();
      const file = path.join(dir, 'state.slots');
      const size = fs.statSync(file).size;
      const buf = fs.readFileSync(file);
      // generation 3 went to slot 1: tear it
      buf[size / 2 + 20] ^= 0xff;
      fs.writeFileSync(file, buf);
      const again = new StateFile(fs, dir, () => {});
      assert.deepEqual(again.read(), { v: 1, n: 2 });
      const ino = fs.statSync(file).ino;
      again.write({ v: 1, n: 4 });
      again.close();
      assert.equal(fs.statSync(file).ino, ino, 'written in place');
      assert.deepEqual(new StateFile(fs, dir, () => {}).read(), { v: 1, n: 4 });
    });

    it('a spool\'s state.json from before is read, and replaced by the slots', () => {
      fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify({ v: 1, jobs: { a: { seq: 7, end: 9 } }, extra: { dropped: { a: 2 } } }));
      const s = open();
      assert.deepEqual(s.jobs.get('a'), { seq: 7, end: 9 });
      assert.deepEqual(s.savedExtra, { dropped: { a: 2 } });
      assert.ok(!fs.existsSync(path.join(dir, 'state.json')));
      s.close();
      assert.deepEqual(open().jobs.get('a'), { seq: 7, end: 9 });
    });
  });
});
