'use strict';

/**
 * "Units on line" of the Modbus device config node: the reader the dialog and the runtime share
 * (resources/nines-units.js), and what the runtime builds from it (nodes/lib/device-config.js).
 */

const assert = require('node:assert/strict');
const { parse, format, unitName } = require('../../resources/nines-units');
const { modbusDevice } = require('../../nodes/lib/device-config');
const { NinesError } = require('../../gateway/base/errors');

const BASE = { transport: 'tcp', host: '127.0.0.1', port: 502, unitId: 1, timeout: 300 };

describe('units on a line: the list reader', () => {
  it('reads ids and ranges separated by commas or spaces, in the order given', () => {
    assert.deepEqual(parse('1-4, 12', 'rtu'), { ids: [1, 2, 3, 4, 12], error: null });
    assert.deepEqual(parse(' 7 1 - 2 ', 'rtutcp'), { ids: [7, 1, 2], error: null });
    assert.deepEqual(parse('3\u20135', 'rtu'), { ids: [3, 4, 5], error: null }, 'an en dash, as documents print ranges');
    assert.equal(parse('1-247', 'rtu').ids.length, 247);
  });

  it('reads an empty field as one unit, not a line', () => {
    for (const v of ['', '   ', undefined, null]) assert.deepEqual(parse(v, 'tcp'), { ids: null, error: null });
  });

  it('takes 1-247 on a serial line and 0-247 or 255 on Modbus TCP', () => {
    assert.match(parse('0-3', 'rtu').error, /unit id 0: unit ids are 1-247 on a serial line \(0 is broadcast/);
    assert.match(parse('255', 'rtutcp').error, /unit id 255: unit ids are 1-247/);
    assert.match(parse('240-250', 'rtu').error, /unit id 248/);
    assert.deepEqual(parse('0, 255', 'tcp').ids, [0, 255]);
    assert.match(parse('250', 'tcp').error, /unit id 250: unit ids are 0-247 or 255 on Modbus TCP/);
  });

  it('refuses what is not a list of ids, a range that runs backwards, an id twice, and more than 247 units', () => {
    assert.match(parse('a', 'tcp').error, /has "a", which is neither a unit id nor a range/);
    assert.match(parse('1,,2', 'tcp').error, /an empty item/);
    assert.match(parse('1-10,', 'tcp').error, /an empty item/);
    assert.match(parse('1-2-3', 'tcp').error, /neither a unit id nor a range/);
    assert.match(parse('1.5', 'tcp').error, /neither/);
    assert.match(parse('10-1', 'tcp').error, /the range 10-1, which runs backwards/);
    assert.match(parse('1-5, 3', 'tcp').error, /unit id 3 twice/);
    assert.match(parse('0-247, 255', 'tcp').error, /more than 247 units/);
    assert.match(parse(12, 'tcp').error, /must be text/);
  });

  it('writes a list short for messages, and names a unit by its id', () => {
    assert.equal(format([5, 1, 2, 3, 9, 10]), '1-3, 5, 9-10');
    assert.equal(unitName(3), 'unit-3');
  });
});

describe('units on a line: the device config node\'s spec', () => {
  it('makes each id a unit named unit-<id> with the default unit backoff', () => {
    const { spec } = modbusDevice({ ...BASE, units: '1-3' }, 'dev');
    assert.deepEqual(spec.units.map((u) => [u.name, u.unitId, u.backoff]), [1, 2, 3].map((id) => [`unit-${id}`, id, { initialMs: 1000, maxMs: 10000 }]));
  });

  it('leaves a device without the field (a flow saved before it existed) a single unit', () => {
    assert.equal(modbusDevice(BASE, 'dev').spec.units, null);
    assert.equal(modbusDevice({ ...BASE, units: '' }, 'dev').spec.units, null);
  });

  it('refuses a list the transport does not take, or one without the device\'s unit id, naming the field', () => {
    const cases = [
      [{ transport: 'rtutcp', port: 4001, units: '0-3' }, /units has unit id 0: unit ids are 1-247/],
      [{ transport: 'rtu', path: '/dev/ttyUSB0', units: '1, 300' }, /units has "300"|unit id 300/],
      [{ units: '2-4' }, /units must include the device's unit id 1 \(the unit of the nodes that name none\); got "2-4"/],
      [{ units: ['1'] }, /units must be text/]
    ];
    for (const [extra, message] of cases) {
      assert.throws(() => modbusDevice({ ...BASE, ...extra }, 'dev'), (err) => {
        assert.ok(err instanceof NinesError);
        assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
        assert.equal(err.details.field, 'units');
        assert.match(err.message, message);
        return true;
      }, JSON.stringify(extra));
    }
  });
});
