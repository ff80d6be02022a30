'use strict';

/**
 * Property tests for the decoders that take untrusted input: whatever they are given, they return
 * a well-formed result or throw a NinesError with one of their documented codes; never another
 * exception, never a huge allocation (the generators cap every size). test/fuzz/*.test.js run
 * each property a few hundred to a few thousand times in `npm test`; test/long/fuzz.test.js runs
 * each 1,000,000 times.
 */

const assert = require('node:assert/strict');
const zlib = require('node:zlib');
const fc = require('fast-check');
const { NinesError } = require('../../gateway/base/errors');
const { decodeHistogram, MAX_HIGHEST_TRACKABLE_NS } = require('../../gateway/latency/histogram-decode');
const { parseLatencyPayload, latencyPayload } = require('../../gateway/latency/summary');
const { Recorder } = require('../../gateway/latency/recorder');
const { parseReply } = require('../../gateway/drivers/ascii/reply');
const { AsciiFramer } = require('../../gateway/drivers/ascii/framer');
const { decodeResponsePdu, encodeRequestPdu, responsePduLength } = require('../../gateway/drivers/modbus/pdu');
const { rtuResponseLength, rtuCrcOk, readMbap, rtuFrame } = require('../../gateway/drivers/modbus/frame');
const { decodeRegisters, TYPES, ORDERS } = require('../../gateway/values/registers');

/**
 * Runs fn: a result goes to check, an exception must be a NinesError with one of codes.
 * @param {() => *} fn
 * @param {string[]} codes
 * @param {(result: *) => void} [check]
 */
function resultOrCoded (fn, codes, check) {
  let result;
  try {
    result = fn();
  } catch (err) {
    if (!(err instanceof NinesError)) throw new Error(`uncoded ${err && err.name}: ${err && err.message}`, { cause: err });
    assert.ok(codes.includes(err.code), `unexpected code ${err.code}: ${err.message}`);
    assert.equal(typeof err.message, 'string');
    return;
  }
  if (check) check(result);
}

/** Any value a JSON payload, a config or a careless caller might hand over, bigints included */
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.bigInt(),
  fc.constantFrom(undefined, null, NaN, Infinity, -Infinity, -0, '', [], {})
);

// ---- histograms ----------------------------------------------------------------------------

const OUTER_COOKIE = 0x1c849314;
const INNER_COOKIE = 0x1c849313;

/** One ZigZag LEB128 varint (no 9-byte form needed for these sizes) */
function varint (n) {
  let z = n >= 0 ? n * 2 : -n * 2 - 1;
  const out = [];
  do {
    const b = z % 128;
    z = Math.floor(z / 128);
    out.push(z > 0 ? b | 0x80 : b);
  } while (z > 0);
  return out;
}

/** Field values that are right, nearly right, or anything */
const int32Field = (good) => fc.oneof(fc.constant(good), fc.integer({ min: -2, max: 5 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }));
const int64Field = (good) => fc.oneof(
  fc.constant(good),
  fc.bigInt({ min: 2n, max: BigInt(MAX_HIGHEST_TRACKABLE_NS) }),
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n })
);

/** The counts payload: a mix of counts and zero runs (as varints), or raw bytes */
const countsPayload = fc.oneof(
  fc.array(fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: -40000, max: -1 }), fc.integer({ min: 0, max: 2 ** 52 })), { maxLength: 64 })
    .map((xs) => Buffer.from(xs.flatMap(varint))),
  fc.uint8Array({ maxLength: 256 }).map((u) => Buffer.from(u))
);

/** A V2 compressed histogram built field by field, each field right or wrong */
const structuredHistogram = fc.record({
  innerCookie: fc.oneof(fc.constant(INNER_COOKIE), fc.integer({ min: 0, max: 2 ** 32 - 1 })),
  lengthDelta: fc.oneof(fc.constant(0), fc.integer({ min: -3, max: 3 })),
  offset: int32Field(1),
  digits: int32Field(3),
  lowest: int64Field(1n),
  highest: int64Field(3600n * 10n ** 9n),
  ratio: fc.oneof(fc.constantFrom(1n, 0x3ff0000000000000n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
  payload: countsPayload,
  outerCookie: fc.oneof(fc.constant(OUTER_COOKIE), fc.integer({ min: 0, max: 2 ** 32 - 1 })),
  outerDelta: fc.oneof(fc.constant(0), fc.integer({ min: -3, max: 3 })),
  level: fc.integer({ min: 0, max: 9 })
}).map((f) => {
  const head = Buffer.alloc(40);
  head.writeUInt32BE(f.innerCookie, 0);
  head.writeUInt32BE(Math.max(0, f.payload.length + f.lengthDelta), 4);
  head.writeInt32BE(f.offset, 8);
  head.writeInt32BE(f.digits, 12);
  head.writeBigInt64BE(f.lowest, 16);
  head.writeBigInt64BE(f.highest, 24);
  head.writeBigUInt64BE(f.ratio, 32);
  const body = zlib.deflateSync(Buffer.concat([head, f.payload]), { level: f.level });
  const outer = Buffer.alloc(8);
  outer.writeUInt32BE(f.outerCookie, 0);
  outer.writeUInt32BE(Math.max(0, body.length + f.outerDelta), 4);
  return Buffer.concat([outer, body]).toString('base64');
});

/** Strings: anything, base64 of anything, or a "HISTF" start with anything after it */
const histogramText = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u).toString('base64')),
  fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/='), maxLength: 200 }).map((s) => 'HISTFAAAA' + s),
  structuredHistogram
);

/** A decoded histogram is consistent: counts add up, min <= max, all within 1 h */
function checkHistogramResult (h) {
  assert.ok(Number.isSafeInteger(h.totalCount) && h.totalCount >= 0, `totalCount ${h.totalCount}`);
  if (h.totalCount > 0) {
    assert.ok(h.maxValue >= 0 && h.maxValue <= MAX_HIGHEST_TRACKABLE_NS, `maxValue ${h.maxValue}`);
  }
}

const histogramDecode = fc.property(
  fc.oneof(histogramText, anyValue),
  (input) => resultOrCoded(() => decodeHistogram(input), ['NINES_ERR_BAD_HISTOGRAM'], checkHistogramResult)
);

// ---- latency payloads ----------------------------------------------------------------------

/** A valid payload: a recorder's snapshot of a few replies, as the gateway publishes it */
function validPayload () {
  let t = 1700000000000;
  const r = new Recorder({ clock: { nowMs: () => t }, policy: 'skip' });
  for (const ns of [120000, 250000, 4000000]) r.recordOk(ns, ns - 1000, 1000);
  r.recordTimeout(1e9, 1e9, 2000);
  t += 10000;
  return latencyPayload(r.snapshot(), { gateway: 'edge-1', job: 'j', target: 'ascii://127.0.0.1:9500', op: '@01' });
}
const VALID_PAYLOAD = validPayload();

const payloadObject = fc.record({
  drop: fc.subarray(Object.keys(VALID_PAYLOAD), { maxLength: 3 }),
  set: fc.dictionary(fc.oneof(fc.constantFrom(...Object.keys(VALID_PAYLOAD), 'service', 'lag'), fc.string({ maxLength: 8 })),
    fc.oneof(anyValue, histogramText), { maxKeys: 3 })
}).map(({ drop, set }) => {
  const p = { ...VALID_PAYLOAD, ...set };
  for (const k of drop) delete p[k];
  return p;
});

/** JSON text of a generated payload (bigints, which JSON lacks, as numbers) */
function toJson (p) {
  return JSON.stringify(p, (_, v) => (typeof v === 'bigint' ? Number(v) : v));
}

const latencyPayloadParse = fc.property(
  fc.oneof(
    payloadObject,
    payloadObject.map(toJson),
    payloadObject.map((p) => Buffer.from(toJson(p))),
    fc.json({ maxDepth: 3 }),
    fc.string({ maxLength: 100 }),
    fc.uint8Array({ maxLength: 200 }),
    anyValue
  ),
  (input) => resultOrCoded(() => parseLatencyPayload(input), ['NINES_ERR_INVALID_ARG', 'NINES_ERR_BAD_HISTOGRAM'], (out) => {
    assert.equal(typeof out, 'object');
    assert.ok(out.histogram && Number.isSafeInteger(out.histogram.totalCount));
  })
);

// ---- ASCII replies -------------------------------------------------------------------------

/** Commands of every reply kind the parser knows */
const COMMANDS = ['@01', '@01FF', '#01', '#011', '#010', '#01000F', '#0110FF', '$012', '$016', '$01F', '$01M', '$01C', '$01L0',
  '$01LS', '~01', '~01WT', '~01WE', '~010', '%0101400600', '#01N', '#010+10.000', '$0160', '$018C0', '#**', '$01RS', '@AA', 'X'];

const asciiLine = fc.oneof(
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc.tuple(fc.constantFrom('>', '!', '?', '', '='), fc.constantFrom('01', '02', 'ZZ', ''),
    fc.string({ unit: fc.constantFrom(...'0123456789ABCDEFabcdef+-.\r'), maxLength: 30 })).map(([a, b, c]) => a + b + c)
);

const asciiReply = fc.property(
  asciiLine, fc.constantFrom(...COMMANDS), fc.boolean(),
  (line, command, checksum) => resultOrCoded(() => parseReply(line, { command, checksum }),
    ['NINES_ERR_BAD_CHECKSUM', 'NINES_ERR_DEVICE_INVALID', 'NINES_ERR_DEVICE_IGNORED', 'NINES_ERR_BAD_REPLY'],
    (reply) => assert.equal(typeof reply, 'object'))
);

/** Bytes rich in CR and LF, split into chunks anywhere */
const asciiChunks = fc.array(
  fc.oneof(fc.uint8Array({ maxLength: 80 }).map((u) => Buffer.from(u)), fc.string({ unit: fc.constantFrom('\r', '\n', 'A', '>', '0'), maxLength: 40 }).map((s) => Buffer.from(s, 'latin1'))),
  { maxLength: 12 }
);

const asciiFramer = fc.property(asciiChunks, fc.integer({ min: 1, max: 300 }), (chunks, maxLineBytes) => {
  const feed = (pieces) => {
    const lines = [];
    const f = new AsciiFramer({ maxLineBytes, onLine: (l) => lines.push(l), onOverflow: () => {} });
    for (const c of pieces) {
      f.push(c);
      assert.ok(f.bufferedBytes <= maxLineBytes, `holds ${f.bufferedBytes} bytes, more than ${maxLineBytes}`);
    }
    return lines;
  };
  const lines = feed(chunks);
  for (const l of lines) {
    assert.ok(l.length <= maxLineBytes, `line of ${l.length} bytes`);
    assert.ok(!l.includes('\r'), 'a line holds a CR');
  }
  // the same bytes, one at a time, make the same lines
  const all = Buffer.concat(chunks);
  assert.deepEqual(feed([...all].map((b) => Buffer.from([b]))), lines);
});

// ---- Modbus --------------------------------------------------------------------------------

/** A valid op (the op is ours, not untrusted: only the reply is) */
const modbusOp = fc.oneof(
  fc.record({ fc: fc.constantFrom(1, 2), address: fc.integer({ min: 0, max: 63536 }), quantity: fc.integer({ min: 1, max: 2000 }) }),
  fc.record({ fc: fc.constantFrom(3, 4), address: fc.integer({ min: 0, max: 65411 }), quantity: fc.integer({ min: 1, max: 125 }) }),
  fc.record({ fc: fc.constant(5), address: fc.integer({ min: 0, max: 65535 }), value: fc.boolean() }),
  fc.record({ fc: fc.constant(6), address: fc.integer({ min: 0, max: 65535 }), value: fc.integer({ min: 0, max: 65535 }) }),
  fc.record({ fc: fc.constant(15), address: fc.integer({ min: 0, max: 64000 }), values: fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }) }),
  fc.record({ fc: fc.constant(16), address: fc.integer({ min: 0, max: 65000 }), values: fc.array(fc.integer({ min: 0, max: 65535 }), { minLength: 1, maxLength: 20 }) })
);

/** The right reply PDU to op, with random data where a device chooses it */
function rightReply (op, data) {
  if (op.fc <= 4) {
    const n = responsePduLength(op) - 2;
    const b = Buffer.alloc(2 + n);
    b[0] = op.fc;
    b[1] = n;
    for (let i = 0; i < n; i++) b[2 + i] = data[i % data.length];
    return b;
  }
  return encodeRequestPdu(op).subarray(0, 5); // FC5/6/15/16 echo address and value or quantity
}

/** A reply PDU to op: random bytes, an exception, or the right one, perhaps cut, grown or with one byte changed */
const replyPdu = (op) => fc.oneof(
  fc.uint8Array({ maxLength: 260 }).map((u) => Buffer.from(u)),
  fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 3 })).map(([code, len]) => Buffer.from([op.fc | 0x80, code, 0]).subarray(0, len)),
  fc.record({
    data: fc.uint8Array({ minLength: 1, maxLength: 16 }),
    cut: fc.constantFrom(0, 0, 0, 1, 2),
    extra: fc.constantFrom(0, 0, 0, 1),
    change: fc.option(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { freq: 2 })
  }).map(({ data, cut, extra, change }) => {
    let b = rightReply(op, data);
    if (change) b[change[0] % b.length] = change[1];
    if (extra) b = Buffer.concat([b, Buffer.from([0])]);
    return b.subarray(0, Math.max(0, b.length - cut));
  })
);

const MODBUS_CODES = ['NINES_ERR_MODBUS_EXCEPTION', 'NINES_ERR_BAD_REPLY'];

const modbusPdu = fc.property(
  modbusOp.chain((op) => fc.tuple(fc.constant(op), replyPdu(op))),
  ([op, pdu]) => resultOrCoded(() => decodeResponsePdu(pdu, op), MODBUS_CODES, (r) => {
    if (op.fc <= 2) assert.equal(r.data.length, op.quantity);
    if (op.fc === 3 || op.fc === 4) {
      assert.equal(r.data.length, op.quantity);
      for (const w of r.data) assert.ok(Number.isInteger(w) && w >= 0 && w <= 0xffff);
    }
  })
);

/** RTU and TCP framing helpers over any bytes: lengths in range, CRC checks that only say yes or no */
const modbusFrame = fc.property(
  fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((u) => Buffer.from(u)),
    fc.tuple(fc.integer({ min: 0, max: 255 }), fc.uint8Array({ minLength: 1, maxLength: 253 })).map(([unit, pdu]) => rtuFrame(unit, Buffer.from(pdu)))
  ),
  (buf) => {
    const n = rtuResponseLength(buf);
    assert.ok(n === -1 || n === 0 || (n >= 5 && n <= 260), `RTU length ${n}`);
    assert.equal(typeof rtuCrcOk(buf), 'boolean');
    if (buf.length >= 7) {
      const h = readMbap(buf);
      assert.ok(h.aduLength >= 6 && h.aduLength <= 65541);
    }
  }
);

// ---- registers -----------------------------------------------------------------------------

const registerWords = fc.oneof(
  fc.array(fc.integer({ min: 0, max: 65535 }), { maxLength: 24 }),
  fc.uint8Array({ maxLength: 48 }).map((u) => Buffer.from(u)),
  fc.array(fc.oneof(fc.integer({ min: 0, max: 65535 }), anyValue), { maxLength: 6 }),
  anyValue
);

const registerOptions = fc.oneof(
  fc.record({
    type: fc.oneof(fc.constantFrom(...Object.keys(TYPES)), anyValue),
    order: fc.oneof(fc.constantFrom(...Object.keys(ORDERS), 'abcd'), anyValue),
    wordOrder: fc.oneof(fc.constantFrom('big', 'little'), anyValue),
    byteOrder: fc.oneof(fc.constantFrom('big', 'little'), anyValue),
    scale: fc.oneof(fc.double(), anyValue),
    offset: fc.oneof(fc.double(), anyValue),
    count: fc.oneof(fc.integer({ min: -2, max: 400 }), anyValue)
  }, { requiredKeys: [] }),
  anyValue
);

const registers = fc.property(registerWords, registerOptions, (words, opts) =>
  resultOrCoded(() => decodeRegisters(words, opts), ['NINES_ERR_INVALID_ARG'], (out) => {
    assert.ok(typeof out === 'string' || Array.isArray(out), typeof out);
  })
);

/** name → property; the names are the test titles */
const PROPERTIES = {
  'histogram-decode: any string or value gives a histogram or NINES_ERR_BAD_HISTOGRAM': histogramDecode,
  'summary: any payload gives a parsed summary or a coded error': latencyPayloadParse,
  'ascii reply: any line to any command gives a reply or a coded error': asciiReply,
  'ascii framer: any bytes in any split give the same bounded lines': asciiFramer,
  'modbus pdu: any reply PDU to any op gives data or a coded error': modbusPdu,
  'modbus frame: any bytes give an RTU length in range and a yes/no CRC': modbusFrame,
  'registers: any words and options give values or NINES_ERR_INVALID_ARG': registers
};

/**
 * Runs one property.
 * @param {string} name a key of PROPERTIES
 * @param {number} numRuns
 * @param {object} [params] more fast-check parameters (seed, path to replay a failure)
 */
function check (name, numRuns, params = {}) {
  fc.assert(PROPERTIES[name], { numRuns, ...params });
}

module.exports = { PROPERTIES, check, resultOrCoded };
