'use strict';

const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const hdr = require('hdr-histogram-js');
const C = require('../../gateway/base/constants');
const { createHistogram, recordNs, encodeHistogram, decodeHistogram } = require('../../gateway/latency/histogram');
const { MAX_HIGHEST_TRACKABLE_NS, MAX_INFLATED_BYTES } = require('../../gateway/latency/histogram-decode');
const { latencies, throwsCode, innerForm, compressed, inflateEncoding } = require('./support/helpers');

const BAD = 'NINES_ERR_BAD_HISTOGRAM';

/** @returns {string} an interval histogram encoded by nines */
function sample () {
  const h = createHistogram();
  for (const v of latencies(2000, 7)) recordNs(h, v);
  return encodeHistogram(h);
}

/**
 * Counts histogram constructions while fn runs: every JsHistogram subclass calls init() from its
 * constructor, so 0 means nothing was allocated from the header.
 * @param {() => void} fn
 * @returns {number}
 */
function constructionsDuring (fn) {
  const original = hdr.JsHistogram.prototype.init;
  let calls = 0;
  hdr.JsHistogram.prototype.init = function (...args) {
    calls++;
    return original.apply(this, args);
  };
  try {
    fn();
  } finally {
    hdr.JsHistogram.prototype.init = original;
  }
  return calls;
}

describe('latency/histogram: decodeHistogram accepts', () => {
  it('what nines encodes, with the same percentiles', () => {
    const b64 = sample();
    const h = decodeHistogram(b64);
    const lib = hdr.decodeFromCompressedBase64(b64);
    for (const p of [0, 50, 90, 99, 99.9, 100]) assert.equal(h.getValueAtPercentile(p), lib.getValueAtPercentile(p));
    assert.equal(h.maxValue, lib.maxValue);
    assert.equal(h.minNonZeroValue, lib.minNonZeroValue);
    assert.equal(h.totalCount, lib.totalCount);
  });

  it('an autoResize library histogram that grew to 1 h (highestTrackableValue 2^42 - 1)', () => {
    const lib = hdr.build();
    lib.recordValue(1500);
    lib.recordValue(C.HIST_HIGHEST_NS);
    assert.equal(lib.highestTrackableValue, MAX_HIGHEST_TRACKABLE_NS);
    const h = decodeHistogram(hdr.encodeIntoCompressedBase64(lib));
    assert.equal(h.totalCount, 2);
    assert.equal(h.getValueAtPercentile(100), lib.getValueAtPercentile(100));
  });

  it('a small-range library histogram and an empty one', () => {
    const lib = hdr.build({ autoResize: false, highestTrackableValue: 2 });
    lib.recordValue(1);
    assert.equal(decodeHistogram(hdr.encodeIntoCompressedBase64(lib)).getValueAtPercentile(50), 1);
    const empty = decodeHistogram(encodeHistogram(createHistogram()));
    assert.equal(empty.totalCount, 0);
    assert.equal(empty.getValueAtPercentile(100), 0);
  });

  it('a Java-style header (normalizingIndexOffset 0, ratio as double 1.0)', () => {
    const inner = inflateEncoding(sample());
    inner.writeInt32BE(0, 8);
    inner.writeDoubleBE(1.0, 32);
    const h = decodeHistogram(compressed(inner));
    assert.deepEqual([50, 99, 100].map((p) => h.getValueAtPercentile(p)), [50, 99, 100].map((p) => decodeHistogram(sample()).getValueAtPercentile(p)));
  });

  it('zero runs that end exactly at the end of the declared range', () => {
    // one count of 3 at index 0, then zero counts to the end of a 2,048-count range (HTV 2047)
    const h = decodeHistogram(compressed(innerForm({ highest: 2047n, counts: [3, -2047] })));
    assert.equal(h.totalCount, 3);
    assert.equal(h.getValueAtPercentile(100), 0);
  });

  it('a count written as a 9-byte varint, whose last byte carries 8 bits', () => {
    const inner = innerForm({ counts: [] });
    // zigzag 6 (a count of 3), padded to the 9-byte LEB128-64b9B form
    const varint = Buffer.from([0x86, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
    const full = Buffer.concat([inner, varint]);
    full.writeUInt32BE(varint.length, 4);
    const h = decodeHistogram(compressed(full));
    assert.equal(h.totalCount, 3);
  });
});

describe('latency/histogram: decodeHistogram rejects', () => {
  it('a non-string, an empty string and a string over the size cap', () => {
    throwsCode(() => decodeHistogram(42), BAD, /must be a base64 string; got 42/);
    throwsCode(() => decodeHistogram(Buffer.from('HISTF')), BAD);
    throwsCode(() => decodeHistogram(''), BAD, /length 0/);
    throwsCode(() => decodeHistogram('A'.repeat(C.HIST_MAX_ENCODED_CHARS + 4)), BAD, /outside \[1, 262144\]/);
    throwsCode(() => decodeHistogram(sample(), { maxChars: 16 }), BAD, /outside \[1, 16\]/);
    throwsCode(() => decodeHistogram(sample(), { maxChars: -1 }), 'NINES_ERR_INVALID_ARG', /options.maxChars/);
  });

  it('text outside the base64 alphabet or of a wrong length', () => {
    throwsCode(() => decodeHistogram('HISTF!!!'), BAD, /not base64/);
    throwsCode(() => decodeHistogram(' ' + sample().slice(1)), BAD, /not base64/);
    throwsCode(() => decodeHistogram(sample() + 'A'), BAD, /not base64/);
    throwsCode(() => decodeHistogram('HI=S'), BAD, /not base64/);
  });

  it('a wrong outer cookie, such as an uncompressed or V1 encoding', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({}), { cookie: 0xdeadbeef })), BAD, /outer cookie is 0xdeadbeef, expected 0x1c849314/);
    throwsCode(() => decodeHistogram(innerForm({}).toString('base64')), BAD, /outer cookie is 0x1c849313/);
    throwsCode(() => decodeHistogram('AAAA'), BAD, /less than the 8-byte/);
  });

  it('a compressed length that does not match, and a body that is not zlib', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({}), { lengthDelta: 5 })), BAD, /compressed length field says/);
    const head = Buffer.alloc(8);
    head.writeUInt32BE(0x1c849314, 0);
    head.writeUInt32BE(8, 4);
    throwsCode(() => decodeHistogram(Buffer.concat([head, Buffer.from('notzlib!')]).toString('base64')), BAD, /not valid zlib/);
  });

  it('a zlib bomb, by capping the inflated size', () => {
    const bomb = Buffer.concat([innerForm({ payloadLength: 1e7 }), Buffer.alloc(1e7)]);
    const b64 = compressed(bomb);
    assert.ok(b64.length < C.HIST_MAX_ENCODED_CHARS, 'passes the size cap');
    throwsCode(() => decodeHistogram(b64), BAD, new RegExp(`more than ${MAX_INFLATED_BYTES} bytes`));
  });

  it('a wrong inner cookie or payload length', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({ cookie: 0x1c849301 }))), BAD, /inner cookie is 0x1c849301/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ counts: [1], payloadLength: 7 }))), BAD, /payload length field says 7/);
    throwsCode(() => decodeHistogram(compressed(Buffer.alloc(12))), BAD, /less than the 40-byte V2 header/);
  });

  it('a 5-digit header', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({ digits: 5 }))), BAD, /5 significant digits; nines histograms have 3/);
  });

  it('lowestDiscernibleValue other than 1', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({ lowest: 1000n }))), BAD, /lowestDiscernibleValue is 1000/);
  });

  it('highestTrackableValue 2^53, beyond 1 h, or below 2', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({ highest: 2n ** 53n }))), BAD, /highestTrackableValue 9007199254740992 is outside \[2, 4398046511103\]/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ highest: BigInt(MAX_HIGHEST_TRACKABLE_NS) + 1n }))), BAD, /highestTrackableValue/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ highest: 1n }))), BAD, /highestTrackableValue 1 is outside/);
  });

  it('the 60-character bomb of latency-notes §1.8 #12 before any histogram is allocated', () => {
    const bomb = compressed(innerForm({ digits: 5, highest: 2n ** 53n }));
    assert.ok(bomb.length <= 60, `${bomb.length} chars`);
    // The bomb is real: the library's unchecked decoder allocates millions of counts for it.
    assert.ok(hdr.decodeFromCompressedBase64(bomb).countsArrayLength > 4e6);
    let err;
    const constructions = constructionsDuring(() => {
      err = throwsCode(() => decodeHistogram(bomb), BAD, /5 significant digits/);
    });
    assert.equal(constructions, 0, 'no histogram was constructed');
    assert.ok(err);
  });

  it('a normalizingIndexOffset or conversion ratio no implementation writes', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({ offset: 7 }))), BAD, /normalizingIndexOffset is 7/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ ratio: 0x4000000000000000n }))), BAD, /integerToDoubleValueConversionRatio/);
  });

  it('counts or zero runs past the range the header declares, and truncated varints', () => {
    throwsCode(() => decodeHistogram(compressed(innerForm({ highest: 2047n, counts: [-2048, 1] }))), BAD, /go past the 2048/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ highest: 2047n, counts: [-5000] }))), BAD, /zero run goes past the 2048/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ counts: [-(2 ** 50)] }))), BAD, /zero run goes past/);
    throwsCode(() => decodeHistogram(compressed(innerForm({ counts: [2 ** 53] }))), BAD, /too large/);
    const inner = innerForm({ counts: [1000] });
    const cut = inner.subarray(0, inner.length - 1);
    cut.writeUInt32BE(cut.length - 40, 4);
    throwsCode(() => decodeHistogram(compressed(cut)), BAD, /ends inside a varint/);
  });

  it('an encoding whose deflate stream is cut short', () => {
    const b64 = sample();
    const buf = Buffer.from(b64, 'base64');
    const cut = buf.subarray(0, buf.length - 6);
    cut.writeUInt32BE(cut.length - 8, 4);
    assert.ok(zlib.inflateSync(buf.subarray(8)).length > 40, 'the untruncated body inflates');
    throwsCode(() => decodeHistogram(cut.toString('base64')), BAD, /not valid zlib/);
  });
});
