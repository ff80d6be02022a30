'use strict';

const assert = require('node:assert/strict');
const Long = require('long');
const { tagDatatype, wireValue, qualityProperties, tagMetric, latencyMetrics } = require('../../gateway/runtime/sparkplug/metrics');
const { encodePayload, decodePayload } = require('../../gateway/runtime/sparkplug/codec');

describe('Sparkplug metrics from tags', () => {
  it('gives each tag type its Sparkplug datatype, and a scaled integer or float32 a Double', () => {
    const want = { bool: 'Boolean', bit: 'Boolean', int16: 'Int16', uint16: 'UInt16', int32: 'Int32', uint32: 'UInt32', int64: 'Int64', uint64: 'UInt64', float32: 'Float', float64: 'Double', string: 'String' };
    for (const [type, dt] of Object.entries(want)) assert.equal(tagDatatype({ type, scale: 1, offset: 0 }), dt, type);
    assert.equal(tagDatatype({ type: 'int16', scale: 0.1, offset: 0 }), 'Double');
    assert.equal(tagDatatype({ type: 'uint32', scale: 1, offset: -40 }), 'Double');
    assert.equal(tagDatatype({ type: 'float32', scale: 2, offset: 0 }), 'Double');
    assert.equal(tagDatatype({ type: 'float64', scale: 2, offset: 0 }), 'Double');
  });

  it('keeps every digit of a 64-bit value through the protobuf, also beyond 2^53 and below zero', () => {
    const cases = [['UInt64', 18446744073709551615n], ['Int64', -9223372036854775808n], ['Int64', -5], ['UInt64', '9007199254740993']];
    for (const [type, v] of cases) {
      const w = wireValue(type, v);
      assert.ok(Long.isLong(w));
      const back = decodePayload(encodePayload({ metrics: [{ name: 'x', type, value: w }] })).metrics[0].value;
      assert.equal(back.toString(), String(v), `${type} ${v}`);
    }
    const neg = decodePayload(encodePayload({ metrics: [{ name: 'x', type: 'Int16', value: wireValue('Int16', -1234) }] })).metrics[0].value;
    assert.equal(neg, -1234);
  });

  it('sends a value its datatype cannot carry as null, never as a made-up one', () => {
    assert.equal(wireValue('Boolean', 1), null);
    assert.equal(wireValue('String', 5), null);
    assert.equal(wireValue('Int64', 1.5), null);
    assert.equal(wireValue('Double', 'x'), null);
    assert.equal(wireValue('Double', undefined), null);
    const m = tagMetric({ name: 'x', datatype: 'Boolean', unit: null }, { value: 3, quality: 'ok', ts: 1 }, false);
    assert.equal(m.value, null);
    // a reply that decoded to something its tag cannot be is a bad reply
    assert.equal(m.properties.Quality.value, 24);
    assert.equal(m.properties['nines.error'].value, 'NINES_ERR_BAD_REPLY');
  });

  it('maps quality to the OPC DA codes of the Quality property, with the nines code beside a bad one', () => {
    assert.deepEqual(qualityProperties('ok'), { Quality: { type: 'Int32', value: 192 } });
    assert.deepEqual(qualityProperties('initial'), { Quality: { type: 'Int32', value: 32 } });
    assert.equal(qualityProperties('NINES_ERR_NOT_CONNECTED').Quality.value, 8);
    assert.equal(qualityProperties('NINES_ERR_REPLY_TIMEOUT').Quality.value, 24);
    assert.equal(qualityProperties('NINES_ERR_MODBUS_EXCEPTION').Quality.value, 4);
    assert.deepEqual(qualityProperties('NINES_ERR_QUEUE_FULL'), { Quality: { type: 'Int32', value: 0 }, 'nines.error': { type: 'String', value: 'NINES_ERR_QUEUE_FULL' } });
  });

  it('gives each job nine latency metrics, stamped with the end of their interval, null before the first', () => {
    const none = latencyMetrics('j', null, true);
    assert.deepEqual(none.map((m) => m.name), ['p50', 'p90', 'p99', 'p99_9', 'max', 'count', 'errors', 'timeouts', 'skipped'].map((s) => `Latency/j/${s}`));
    assert.ok(none.every((m) => m.value === null));
    const end = '2026-11-24T00:00:10.000Z';
    const some = latencyMetrics('j', { p50: 1.5, p90: 2, p99: 3, p99_9: 4, max: 5, count: 100, errors: 2, timeouts: 1, skipped: 0, end }, false);
    assert.ok(some.every((m) => m.timestamp === Date.parse(end)));
    assert.equal(some.find((m) => m.name === 'Latency/j/p99').value, 3);
    assert.equal(some.find((m) => m.name === 'Latency/j/count').value.toNumber(), 100);
    assert.equal(some[0].properties, undefined, 'units only in births');
    assert.equal(none[0].properties.engUnit.value, 'ms');
  });
});
