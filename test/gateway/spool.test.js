'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Spool } = require('../../gateway/runtime/mqtt/spool');
const { encodeRecord, decodeRecord, crc32, tableCrc32 } = require('../../gateway/runtime/mqtt/spool-record');
const { NinesError } = require('../../gateway/base/errors');

const payload = (n, size = 1000) => Buffer.from(JSON.stringify({ seq: n, pad: 'x'.repeat(size) }));
const rec = (job, seq, size) => ({ kind: 'latency', job, seq, time: 1000 + seq, payload: payload(seq, size) });

/** Waits until the background fdatasync has made what was written available to next(). */
async function durable (spool) {
  for (let i = 0; i < 200 && spool._durablePos < spool._writePos; i++) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Everything next() hands out now, acknowledged or not. */
function takeAll (spool, { ack = true } = {}) {
  const out = [];
  for (let e = spool.next(); e; e = spool.next()) {
    out.push(e);
    if (ack) spool.ack(e);
  }
  return out;
}

describe('gateway/runtime/mqtt/spool', () => {
  let dir;
  const open = (opts = {}) => {
    const s = new Spool({ dir, maxBytes: 1024 * 1024, syncIntervalMs: 0, ...opts });
    s.open();
    return s;
  };
  beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nines-spool-test-')); });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  describe('records', () => {
    it('frame a record with its CRC-32, and find a torn, flipped or mislabelled one', () => {
      const buf = encodeRecord({ kind: 'value', job: 'jöb', seq: -1, time: 1.5e12, payload: Buffer.from('{"ts":1}') });
      const d = decodeRecord(buf, 0);
      assert.deepEqual({ ...d.rec, payload: d.rec.payload.toString() }, { kind: 'value', job: 'jöb', seq: -1, time: 1.5e12, payload: '{"ts":1}', flags: 0 });
      assert.equal(d.next, buf.length);
      assert.equal(decodeRecord(buf.subarray(0, buf.length - 1), 0).bad, 'short');
      const flipped = Buffer.from(buf);
      flipped[buf.length - 2] ^= 1;
      assert.equal(decodeRecord(flipped, 0).bad, 'checksum');
      const huge = Buffer.from(buf);
      huge.writeUInt32LE(0xffffffff, 0);
      assert.equal(decodeRecord(huge, 0).bad, 'length');
    });

    it('the table CRC-32 (Node 20 before 20.15) agrees with zlib\'s', () => {
      for (const s of ['', 'a', '123456789', 'x'.repeat(1000)]) assert.equal(tableCrc32(Buffer.from(s)), crc32(Buffer.from(s)));
      assert.equal(tableCrc32(Buffer.from('123456789')), 0xcbf43926);
    });
  });

  it('hands records out in the order written, only once they are durable, and keeps the unacknowledged ones across a reopen', async () => {
    let s = open({ syncIntervalMs: 50 });
    for (let i = 0; i < 10; i++) s.append(rec('a', i));
    assert.equal(s.next(), undefined, 'nothing is handed out before its fdatasync');
    await durable(s);
    const first = takeAll(s, { ack: false });
    assert.deepEqual(first.map((e) => e.rec.seq), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const e of first.slice(0, 4)) s.ack(e);
    s.ack(first[6]); // out of order: the cursor stays at 4 until 4 and 5 are acknowledged
    s.close();
    s = open();
    assert.equal(s.length, 6);
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [4, 5, 6, 7, 8, 9]);
    assert.deepEqual(s.jobs.get('a'), { seq: 9, end: 1009 });
    s.close();
  });

  it('rewind() hands out again, in order, what was out and not acknowledged', async () => {
    const s = open();
    for (let i = 0; i < 5; i++) s.append(rec('a', i));
    await durable(s);
    const out = takeAll(s, { ack: false });
    s.ack(out[0]);
    s.ack(out[1]);
    s.rewind();
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [2, 3, 4]);
    assert.equal(s.length, 0);
    s.close();
  });

  it('when full, drops the oldest segment and counts what in it was never delivered, per job; the cap holds on disk', async () => {
    const drops = [];
    const s = open({ onDrop: (kind, job, n) => drops.push([kind, job, n]) });
    for (let i = 0; i < 2000; i++) s.append(rec(i % 2 ? 'b' : 'a', i, 500));
    const onDisk = fs.readdirSync(dir).filter((f) => f.endsWith('.seg')).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
    assert.ok(onDisk <= 1024 * 1024, `${onDisk} bytes of segments on disk`);
    assert.equal(onDisk, s.bytes);
    const dropped = drops.reduce((n, d) => n + d[2], 0);
    await durable(s);
    const left = takeAll(s).map((e) => e.rec.seq);
    // the oldest went, the rest is contiguous to the newest: every record delivered or counted
    assert.equal(left[left.length - 1], 1999);
    assert.equal(left[0], dropped);
    assert.equal(left.length + dropped, 2000);
    assert.ok(drops.every(([kind]) => kind === 'latency'));
    const byJob = {};
    for (const [, job, n] of drops) byJob[job] = (byJob[job] || 0) + n;
    assert.equal(byJob.a + byJob.b, dropped);
    assert.ok(Math.abs(byJob.a - byJob.b) <= 1);
    s.close();
  });

  it('counts nothing as dropped that was delivered before the cap was reached', async () => {
    const drops = [];
    const s = open({ onDrop: (kind, job, n) => drops.push(n) });
    for (let i = 0; i < 3000; i++) {
      s.append(rec('a', i, 500));
      if (i % 100 === 99) { await durable(s); takeAll(s); }
    }
    assert.deepEqual(drops, []);
    s.close();
  });

  it('a record handed out whose segment was dropped counts only if it is then not acknowledged', async () => {
    const drops = [];
    const s = open({ onDrop: (kind, job, n) => drops.push(n) });
    s.append(rec('a', 0, 500));
    s.append(rec('a', 1, 500));
    await durable(s);
    const [e0, e1] = takeAll(s, { ack: false });
    for (let i = 2; i < 2000; i++) s.append(rec('a', i, 500));
    s.ack(e0); // delivered after all
    s.rewind(); // e1 was lost with its segment
    const total = drops.reduce((n, d) => n + d, 0);
    await durable(s);
    const left = takeAll(s).map((e) => e.rec.seq);
    assert.equal(left.length + total + 1, 2000, `${left.length} left, ${total} counted dropped, 1 delivered`);
    assert.ok(e1);
    s.close();
  });

  it('cuts off a torn tail at open (a crash mid-write) and keeps every whole record before it', async () => {
    let s = open();
    for (let i = 0; i < 5; i++) s.append(rec('a', i));
    s.close();
    const seg = fs.readdirSync(dir).find((f) => f.endsWith('.seg'));
    const file = path.join(dir, seg);
    const whole = fs.statSync(file).size;
    fs.appendFileSync(file, encodeRecord(rec('a', 5)).subarray(0, 40));
    s = open();
    assert.equal(s.counts.corruptBytes, 40);
    assert.equal(fs.statSync(file).size, whole);
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [0, 1, 2, 3, 4]);
    // and appends go on after the last good record
    s.append(rec('a', 5));
    await durable(s);
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [5]);
    s.close();
  });

  it('a flipped bit loses only its record: the reader resynchronises at the next one, and the loss is counted for its job', () => {
    let s = open();
    // a0 b0 a1 b1 a2 b2: each job's seqs go up by one
    for (let i = 0; i < 6; i++) s.append(rec(i % 2 ? 'b' : 'a', i >> 1));
    s.close();
    const file = path.join(dir, fs.readdirSync(dir).find((f) => f.endsWith('.seg')));
    const buf = fs.readFileSync(file);
    const third = decodeRecord(buf, decodeRecord(buf, 0).next).next;
    const thirdBytes = decodeRecord(buf, third).next - third;
    buf[third + 100] ^= 0x40;
    fs.writeFileSync(file, buf);
    const drops = [];
    s = open({ onDrop: (kind, job, n) => drops.push([kind, job, n]) });
    assert.deepEqual(takeAll(s).map((e) => `${e.rec.job}${e.rec.seq}`), ['a0', 'b0', 'b1', 'a2', 'b2']);
    assert.deepEqual(drops, [['latency', 'a', 1]]);
    assert.equal(s.counts.corruptBytes, thirdBytes);
    s.close();
  });

  it('keeps each job\'s last seq after its records were delivered and their segments deleted', async () => {
    let s = open();
    for (let i = 0; i < 1500; i++) s.append(rec(i % 2 ? 'b' : 'a', i, 500));
    await durable(s);
    takeAll(s);
    s.checkpoint();
    assert.equal(fs.readdirSync(dir).filter((f) => f.endsWith('.seg')).length, 1, 'delivered segments are deleted');
    s.close();
    s = open();
    assert.deepEqual(Object.fromEntries(s.jobs), { a: { seq: 1498, end: 2498 }, b: { seq: 1499, end: 2499 } });
    assert.equal(s.length, 0);
    s.close();
  });

  it('keeps what its owner asks in its checkpoint (the drop counts)', () => {
    let s = open({ extra: () => ({ dropped: { a: 3 } }) });
    s.close();
    s = open();
    assert.deepEqual(s.savedExtra, { dropped: { a: 3 } });
    s.close();
  });

  it('a full disk (ENOSPC) is NINES_ERR_IO; the half-written record is cut back and the next append goes to a new segment', async () => {
    let full = false;
    const fakeFs = {
      ...fs,
      writeSync: (fd, buf, off, len) => {
        // a short write of 10 bytes, then the error: as a disk that fills mid-record does
        if (full === true) { full = 'torn'; return fs.writeSync(fd, buf, off, Math.min(len, 10)); }
        if (full === 'torn') {
          const err = new Error('ENOSPC: no space left on device, write');
          err.code = 'ENOSPC';
          throw err;
        }
        return fs.writeSync(fd, buf, off, len);
      }
    };
    const s = new Spool({ dir, maxBytes: 1024 * 1024, syncIntervalMs: 0, fs: fakeFs });
    s.open();
    s.append(rec('a', 0));
    full = true;
    assert.throws(() => s.append(rec('a', 1)), (err) => err instanceof NinesError && err.code === 'NINES_ERR_IO' && err.details.cause === 'ENOSPC');
    full = false;
    s.append(rec('a', 2));
    await durable(s);
    assert.deepEqual(takeAll(s).map((e) => e.rec.seq), [0, 2]);
    assert.equal(fs.readdirSync(dir).filter((f) => f.endsWith('.seg')).length, 2);
    s.close();
    const again = new Spool({ dir, maxBytes: 1024 * 1024 });
    again.open();
    assert.equal(again.counts.corruptBytes, 0, 'no torn record left between good ones');
    again.close();
  });

  it('a folder it cannot create is NINES_ERR_IO naming it', () => {
    const file = path.join(dir, 'a-file');
    fs.writeFileSync(file, '');
    const s = new Spool({ dir: path.join(file, 'spool'), maxBytes: 1024 * 1024 });
    assert.throws(() => s.open(), (err) => err.code === 'NINES_ERR_IO' && err.message.includes('a-file'));
  });
});
