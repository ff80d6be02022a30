'use strict';

// The function-code table (function-codes.js) against what the encoder, the reply check and the RTU
// framer do with each code, and the one FC43/14 walk (frame.js DeviceIdWalk): its length agrees with
// the simulator's encoder for any object list, a cut reply always needs more, and it reads each byte
// once however the reply arrives.

const assert = require('node:assert/strict');
const fc = require('fast-check');
const { FCS, LIST, REPLY, SUPPORTED_FCS, traitsOf, echoLength, responsePduLength } = require('../../gateway/drivers/modbus/function-codes');
const { DeviceIdWalk, deviceIdReplyLength, rtuRequestLength, rtuResponseLength, rtuFrame, FC43_HEADER, MAX_PDU_LENGTH } = require('../../gateway/drivers/modbus/frame');
const { encodeRequestPdu, decodeResponsePdu, LACKABLE_FCS } = require('../../gateway/drivers/modbus/pdu');
const { validateOp, changesDevice } = require('../../gateway/drivers/modbus/op');
const { buildIdentity, answerIdentification } = require('../../gateway/simulators/modbus/identity');

const hex = (s) => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** One op of each function code and a normal reply PDU to it, as the spec lays it out */
const SAMPLES = [
  [{ fc: 1, address: 0, quantity: 9 }, '01 02 FF01'],
  [{ fc: 2, address: 4, quantity: 3 }, '02 01 05'],
  [{ fc: 3, address: 0, quantity: 2 }, '03 04 0001 0002'],
  [{ fc: 4, address: 8, quantity: 1 }, '04 02 0007'],
  [{ fc: 5, address: 3, value: true }, '05 0003 FF00'],
  [{ fc: 6, address: 10, value: 123 }, '06 000A 007B'],
  [{ fc: 8, subFunction: 11 }, '08 000B 0005'],
  [{ fc: 15, address: 0, values: [1, 0, 1] }, '0F 0000 0003'],
  [{ fc: 16, address: 0, values: [1, 2] }, '10 0000 0002'],
  [{ fc: 22, address: 7, andMask: 0xFFF7, orMask: 8 }, '16 0007 FFF7 0008'],
  [{ fc: 23, address: 0, quantity: 2, writeAddress: 10, values: [1] }, '17 04 0001 0002'],
  [{ fc: 43, readCode: 1 }, '2B 0E 01 01 00 00 02 00 03 414243 01 01 58']
];

describe('modbus function-code table', () => {
  it('holds every function code nines speaks, once, and nothing else', () => {
    assert.deepEqual(SUPPORTED_FCS, [1, 2, 3, 4, 5, 6, 8, 15, 16, 22, 23, 43]);
    assert.deepEqual(SAMPLES.map(([op]) => op.fc), LIST.map((t) => t.fc));
    assert.equal(FCS.length, 256);
    for (let code = 0; code < 256; code++) assert.equal(traitsOf(code) !== null, SUPPORTED_FCS.includes(code), `FC${code}`);
    for (const bad of [undefined, '3', 3.5, -1, 256, NaN]) assert.equal(traitsOf(bad), null, String(bad));
    assert.ok(Object.isFrozen(FCS) && LIST.every(Object.isFrozen));
  });

  it('says how long each request is, as the encoder makes it and the RTU framer reads it', () => {
    for (const [raw] of SAMPLES) {
      const t = FCS[raw.fc];
      const pdu = encodeRequestPdu(raw);
      if (t.requestCountAt === 0) assert.equal(pdu.length, t.requestPdu, `FC${raw.fc}`);
      else assert.equal(pdu[t.requestCountAt], pdu.length - t.requestCountAt - 1, `FC${raw.fc}: the byte count counts the bytes after it`);
      const adu = rtuFrame(1, pdu);
      assert.equal(rtuRequestLength(adu), adu.length, `FC${raw.fc}`);
    }
  });

  it('says how long each reply is, and what it carries, as the reply check and the RTU framer find it', () => {
    for (const [raw, replyHex] of SAMPLES) {
      const t = FCS[raw.fc];
      const op = validateOp(raw);
      const reply = hex(replyHex);
      const decoded = decodeResponsePdu(reply, op);
      assert.equal(decoded.buffer !== undefined, t.reads !== null, `FC${raw.fc}: a buffer of what was read`);
      if (t.reads === 'bits') assert.ok(decoded.data.every((v) => typeof v === 'boolean'));
      if (t.reads === 'registers') assert.deepEqual(decoded.buffer, reply.subarray(2));
      if (t.replyLength === REPLY.WALKED) assert.equal(responsePduLength(op), 0);
      else assert.equal(responsePduLength(op), reply.length, `FC${raw.fc}`);
      const adu = rtuFrame(1, reply);
      assert.equal(rtuResponseLength(adu), adu.length, `FC${raw.fc}`);
      // a reply a byte short of its length is refused, whatever the kind
      assert.throws(() => decodeResponsePdu(reply.subarray(0, reply.length - 1), op), { code: 'NINES_ERR_BAD_REPLY' }, `FC${raw.fc}`);
    }
  });

  it('says how much of its request each fixed-length reply repeats: a changed echoed byte is refused', () => {
    // FC5/6: address and value; FC8 (a counter): the sub-function; FC15/16: address and quantity; FC22: all of it
    const ECHOED = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 5, 6: 5, 8: 3, 15: 5, 16: 5, 22: 7, 23: 0, 43: 0 };
    for (const [raw, replyHex] of SAMPLES) {
      const op = validateOp(raw);
      const n = echoLength(op);
      assert.equal(n, ECHOED[op.fc], `FC${op.fc}`);
      for (let i = 1; i < n; i++) {
        const reply = hex(replyHex);
        reply[i] ^= 0x01;
        assert.throws(() => decodeResponsePdu(reply, op), { code: 'NINES_ERR_BAD_REPLY' }, `FC${op.fc} byte ${i}`);
      }
    }
    // FC8's counters answer with the count: only the sub-function is repeated
    assert.equal(echoLength(validateOp({ fc: 8, subFunction: 11 })), 3);
    assert.equal(echoLength(validateOp({ fc: 8, subFunction: 0, data: 7 })), 5);
  });

  it('says which codes write, which may be broadcast on RTU, and which a device may lack', () => {
    for (const [raw] of SAMPLES) {
      const t = FCS[raw.fc];
      const op = validateOp(raw);
      if (t.kind !== 'diagnostics') assert.equal(changesDevice(op), t.writes, `FC${raw.fc}`);
      if (t.broadcast) assert.ok(t.writes, `FC${raw.fc}: only writes go to unit 0, which answers nothing`);
      const ex = Buffer.from([raw.fc | 0x80, 1]);
      assert.throws(() => decodeResponsePdu(ex, op), { code: t.lackable ? 'NINES_ERR_FC_UNSUPPORTED' : 'NINES_ERR_MODBUS_EXCEPTION' }, `FC${raw.fc}`);
    }
    assert.deepEqual(LACKABLE_FCS, [8, 22, 23, 43]);
    assert.equal(changesDevice(validateOp({ fc: 8, subFunction: 10 })), true);
    assert.equal(changesDevice(validateOp({ fc: 8, subFunction: 12 })), false);
  });
});

/**
 * An FC43/14 reply PDU from the simulator's encoder: the objects of `identity` from object 0 (extended
 * stream), as many as fit one PDU.
 * @returns {Buffer}
 */
function encodedReply (identity) {
  return answerIdentification(identity, hex('2B 0E 03 00'), 0, 4, -1, (code, ex) => Buffer.from([code | 0x80, ex]));
}

/** Random identities: some of the named objects 0-5 and some extended ones, of printable text */
const text = fc.string({ minLength: 1, maxLength: 80, unit: fc.constantFrom(...'ABCxyz019 -._/') });
const identities = fc.record({
  vendorName: text,
  productCode: fc.option(text, { nil: undefined }),
  revision: fc.option(text, { nil: undefined }),
  modelName: fc.option(text, { nil: undefined }),
  objects: fc.dictionary(fc.integer({ min: 0x80, max: 0xFF }).map(String), text, { maxKeys: 40 })
}).map((r) => buildIdentity(Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined))));

describe('modbus FC43/14 walk', () => {
  it('finds the length the encoder made, for any object list; a cut reply always needs more; a whole one parses back (fast-check)', () => {
    fc.assert(fc.property(identities, (identity) => {
      const pdu = encodedReply(identity);
      assert.equal(pdu[0], 43);
      const adu = rtuFrame(1, pdu);
      assert.equal(deviceIdReplyLength(adu, 1), adu.length);
      assert.equal(new DeviceIdWalk().start(0, MAX_PDU_LENGTH).walk(pdu, pdu.length), pdu.length);
      for (let n = 0; n < adu.length - 2; n++) {
        const got = deviceIdReplyLength(adu.subarray(0, n), 1);
        assert.ok(got === 0 || got > n, `cut at ${n} of ${adu.length}: got ${got}, which is neither "need more" nor a length past the cut`);
      }
      const objects = decodeResponsePdu(pdu, { fc: 43, readCode: 3 }).data.objects;
      assert.equal(objects.length, pdu[6]);
      let off = FC43_HEADER;
      for (const [id, value] of objects) {
        assert.equal(id, pdu[off]);
        assert.equal(value, pdu.toString('latin1', off + 2, off + 2 + pdu[off + 1]));
        off += 2 + pdu[off + 1];
      }
    }), { seed: 43, numRuns: 300 });
  });

  it('resumed as the bytes come one at a time, reads each object header once and ends where a fresh walk does (fast-check)', () => {
    fc.assert(fc.property(identities, (identity) => {
      const pdu = encodedReply(identity);
      let reads = 0;
      const counted = new Proxy(pdu, { get: (t, k) => { if (typeof k === 'string' && /^\d+$/.test(k)) reads++; return Reflect.get(t, k); } });
      const walk = new DeviceIdWalk().start(0, MAX_PDU_LENGTH);
      let end = 0;
      let calls = 0;
      for (let n = 1; n <= pdu.length && end === 0; n++) {
        end = walk.walk(counted, n);
        calls++;
        if (end === 0) assert.ok(walk.need > n, 'a walk that needs more says up to where, past what it has');
      }
      assert.equal(end, pdu.length);
      // MEI type and object count once, then one length byte per object: linear in the reply, not per byte given
      assert.equal(reads, 2 + pdu[6], `${reads} bytes read over ${calls} calls for ${pdu[6]} objects`);
      // asked again, a finished walk answers the same without reading
      assert.equal(walk.walk(counted, pdu.length), pdu.length);
      assert.equal(reads, 2 + pdu[6]);
    }), { seed: 14, numRuns: 200 });
  });

  it('refuses another MEI type, and a reply longer than its limit, and keeps refusing', () => {
    const pdu = hex('2B 0E 01 01 00 00 02 00 03 414243 01 01 58');
    const other = Buffer.from(pdu);
    other[1] = 0x0D;
    assert.equal(new DeviceIdWalk().start(0, MAX_PDU_LENGTH).walk(other, other.length), -1);
    const walk = new DeviceIdWalk().start(0, pdu.length - 1);
    assert.equal(walk.walk(pdu, pdu.length), -1);
    assert.equal(walk.walk(pdu, pdu.length), -1, 'a walk that refused stays refused');
    assert.equal(new DeviceIdWalk().start(0, pdu.length).walk(pdu, pdu.length), pdu.length);
  });
});
