'use strict';

const assert = require('node:assert/strict');
const { AsciiFramer } = require('../../gateway/drivers/ascii/framer');

function collect (opts) {
  const lines = [];
  let overflows = 0;
  const framer = new AsciiFramer({ onLine: (l) => lines.push(l), onOverflow: () => overflows++, ...opts });
  return { framer, lines, overflows: () => overflows };
}

/** Deterministic PRNG so a failing split can be replayed. */
function lcg (seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

const STREAM = '>00FF\r!01ED-588\r>\r!0100000\r?01\r!00FF00\r';
const LINES = ['>00FF', '!01ED-588', '>', '!0100000', '?01', '!00FF00'];

describe('ascii framer', () => {
  it('emits each line without its CR when the input comes a byte at a time', () => {
    const { framer, lines } = collect();
    for (const b of Buffer.from(STREAM)) framer.push(Buffer.from([b]));
    assert.deepEqual(lines, LINES);
    assert.equal(framer.bufferedBytes, 0);
  });

  it('emits every line of a chunk holding several replies', () => {
    const { framer, lines } = collect();
    framer.push(Buffer.from(STREAM));
    assert.deepEqual(lines, LINES);
  });

  it('gives the same lines for every two-way split of the input', () => {
    const buf = Buffer.from(STREAM);
    for (let i = 0; i <= buf.length; i++) {
      const { framer, lines } = collect();
      framer.push(buf.subarray(0, i));
      framer.push(buf.subarray(i));
      assert.deepEqual(lines, LINES, `split at ${i}`);
    }
  });

  it('gives the same lines for 500 random multi-way splits', () => {
    const random = lcg(42);
    const buf = Buffer.from(STREAM.repeat(3));
    for (let n = 0; n < 500; n++) {
      const { framer, lines } = collect();
      let i = 0;
      while (i < buf.length) {
        const len = 1 + Math.floor(random() * 12);
        framer.push(buf.subarray(i, i + len));
        i += len;
      }
      assert.deepEqual(lines, [...LINES, ...LINES, ...LINES]);
    }
  });

  it('emits the line at once when its CR arrives, keeping the tail for the next line', () => {
    const { framer, lines } = collect();
    framer.push('>00F');
    assert.deepEqual(lines, []);
    assert.equal(framer.bufferedBytes, 4);
    framer.push('F\r>0');
    assert.deepEqual(lines, ['>00FF']);
    assert.equal(framer.bufferedBytes, 2);
  });

  it('passes garbage before a good line as its own line and then the good line', () => {
    const { framer, lines } = collect();
    framer.push(Buffer.from([0x00, 0xff, 0x41, 0x0d]));
    framer.push('>00FF\r');
    assert.deepEqual(lines, ['\x00\xffA', '>00FF']);
  });

  it('discards a 300-byte line up to its CR, counts it, and then emits the next good line', () => {
    const { framer, lines, overflows } = collect();
    framer.push('X'.repeat(300) + '\r>00FF\r');
    assert.deepEqual(lines, ['>00FF']);
    assert.equal(overflows(), 1);
    assert.equal(framer.discardedFrames, 1);
    assert.equal(framer.discardedBytes, 300);
  });

  it('discards an over-long line that arrives a byte at a time, never holding more than 255 bytes', () => {
    const { framer, lines, overflows } = collect();
    for (let i = 0; i < 300; i++) {
      framer.push('Y');
      assert.ok(framer.bufferedBytes <= 255);
    }
    assert.equal(framer.discarding, true);
    assert.equal(overflows(), 1, 'announced once, when the limit is crossed');
    framer.push('\r>\r');
    assert.deepEqual(lines, ['>']);
    assert.equal(framer.discardedFrames, 1);
    assert.equal(framer.discardedBytes, 300);
  });

  it('keeps a line of exactly 255 bytes and drops one of 256', () => {
    const { framer, lines } = collect();
    framer.push('A'.repeat(255) + '\r' + 'B'.repeat(256) + '\r');
    assert.deepEqual(lines, ['A'.repeat(255)]);
    assert.equal(framer.discardedFrames, 1);
  });

  it('honours a smaller maxLineBytes', () => {
    const { framer, lines } = collect({ maxLineBytes: 4 });
    framer.push('>00FF\r>0F\r');
    assert.deepEqual(lines, ['>0F']);
  });

  it('ignores stray LF bytes and counts them [OURS]', () => {
    const { framer, lines } = collect();
    framer.push('>00FF\r\n!01\n\r');
    assert.deepEqual(lines, ['>00FF', '!01']);
    assert.equal(framer.ignoredLf, 2);
  });

  it('drops empty lines and counts them [OURS]', () => {
    const { framer, lines } = collect();
    framer.push('\r\r>\r');
    assert.deepEqual(lines, ['>']);
    assert.equal(framer.emptyLines, 2);
  });

  it('dropPartial forgets an unfinished line and counts its bytes', () => {
    const { framer, lines } = collect();
    framer.push('>00');
    assert.equal(framer.dropPartial(), 3);
    framer.push('>01FF\r');
    assert.deepEqual(lines, ['>01FF']);
    assert.equal(framer.discardedBytes, 3);
  });

  it('dropPartial does not end the discarding of an over-long line', () => {
    const { framer, lines } = collect();
    framer.push('Z'.repeat(256));
    framer.dropPartial();
    framer.push('ZZ\r>\r');
    assert.deepEqual(lines, ['>']);
  });

  it('emits line events when no callback is given', () => {
    const framer = new AsciiFramer();
    const lines = [];
    let overflow = null;
    framer.on('line', (l) => lines.push(l));
    framer.on('overflow', (info) => { overflow = info; });
    framer.push('>\r' + 'Q'.repeat(400) + '\r');
    assert.deepEqual(lines, ['>']);
    assert.deepEqual(overflow, { maxLineBytes: 255 });
  });

  it('reads bytes as latin1 so every byte value survives', () => {
    const { framer, lines } = collect();
    framer.push(Buffer.from([0x21, 0x80, 0xfe, 0x0d]));
    assert.deepEqual(Buffer.from(lines[0], 'latin1'), Buffer.from([0x21, 0x80, 0xfe]));
  });
});
