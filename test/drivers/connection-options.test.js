'use strict';

/**
 * The options both driver clients share (gateway/drivers/connection-options.js): one set of rules,
 * checked in each client's constructor, each protocol adding its own options.
 */

const assert = require('node:assert/strict');
const { normalizeConnectionOptions, checkTimeoutMs, timeoutArg, MAX_TIMER_MS } = require('../../gateway/drivers/connection-options');
const { AsciiClient } = require('../../gateway/drivers/ascii');
const { ModbusClient } = require('../../gateway/drivers/modbus');
const { normalizeOptions } = require('../../gateway/drivers/modbus/client-options');

const CLIENTS = [
  { name: 'AsciiClient', make: (opts) => new AsciiClient('ascii://127.0.0.1:9500', opts), kind: 'an ASCII client option' },
  { name: 'ModbusClient', make: (opts) => new ModbusClient('modbus+tcp://127.0.0.1:502', opts), kind: 'a Modbus client option' }
];

/** Bad shared options and the field each error must name */
const BAD = [
  [{ timeoutMs: 0 }, 'timeoutMs'],
  [{ timeoutMs: 1.5 }, 'timeoutMs'],
  [{ timeoutMs: MAX_TIMER_MS + 1 }, 'timeoutMs'],
  [{ connectTimeoutMs: -1 }, 'connectTimeoutMs'],
  [{ queueMax: -1 }, 'queueMax'],
  [{ queueMax: 1.5 }, 'queueMax'],
  [{ queueMax: 1e6 + 1 }, 'queueMax'],
  [{ reconnect: 'yes' }, 'reconnect'],
  [{ random: 0.5 }, 'random'],
  [{ backoff: 5 }, 'backoff'],
  [{ backoff: null }, 'backoff'],
  [{ backoff: { initialMs: 0 } }, 'backoff.initialMs'],
  [{ backoff: { initialMs: 100, maxMs: 50 } }, 'backoff.maxMs'],
  [{ backoff: { factor: 3 } }, 'backoff.factor'],
  [{ timeout: 500 }, 'timeout'],
  ['fast', 'options']
];

for (const C of CLIENTS) {
  describe(`connection options: ${C.name}`, () => {
    it('rejects each bad shared option with NINES_ERR_INVALID_ARG naming it', () => {
      for (const [opts, field] of BAD) {
        assert.throws(() => C.make(opts), (err) => {
          assert.equal(err.code, 'NINES_ERR_INVALID_ARG', JSON.stringify(opts));
          assert.equal(err.details.field, field);
          assert.ok(err.message.startsWith(field + ' '), err.message);
          return true;
        }, JSON.stringify(opts));
      }
    });

    it('names the client and lists the known options when one is unknown', () => {
      assert.throws(() => C.make({ timeout: 500 }), (err) => {
        assert.match(err.message, new RegExp(`^timeout is not ${C.kind} \\(known: timeoutMs, connectTimeoutMs, queueMax, reconnect, backoff, random, `));
        return true;
      });
    });

    it('takes every shared duration as ms or as a string, in whole milliseconds', () => {
      const c = C.make({ timeoutMs: '250ms', connectTimeoutMs: '2s', interFrameDelayMs: '5ms', delayAfterConnectMs: 7, backoff: { initialMs: '50ms', maxMs: '1s' } });
      assert.equal(c.timeoutMs, 250);
      assert.equal(c.connectTimeoutMs, 2000);
      for (const [opts, field] of [[{ timeoutMs: 'soon' }, 'timeoutMs'], [{ timeoutMs: '0.5ms' }, 'timeoutMs'], [{ connectTimeoutMs: '0s' }, 'connectTimeoutMs'],
        [{ interFrameDelayMs: '2min' }, 'interFrameDelayMs'], [{ backoff: { maxMs: 'x' } }, 'backoff.maxMs']]) {
        assert.throws(() => C.make(opts), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === field, JSON.stringify(opts));
      }
    });

    it('refuses a bad per-request timeout, as a number or a string, naming timeoutMs', async () => {
      const c = C.make({ reconnect: false });
      const op = C.name === 'AsciiClient' ? '@01' : '3:0:1';
      for (const timeoutMs of ['soon', '0.5ms', 0, '-5']) {
        await assert.rejects(c.request(op, { timeoutMs }),
          (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'timeoutMs', String(timeoutMs));
      }
      await c.close();
    });

    it('fills in the defaults, and raises the backoff cap to a large initialMs given alone', () => {
      const c = C.make();
      assert.equal(c.timeoutMs, 1000);
      assert.equal(c.connectTimeoutMs, 5000);
      assert.equal(c.queueMax, 64);
      assert.equal(c.reconnect, true);
      assert.equal(C.make(null).timeoutMs, 1000);
      assert.doesNotThrow(() => C.make({ backoff: { initialMs: 20000 } }));
      assert.doesNotThrow(() => C.make({ timeoutMs: undefined, queueMax: 0, reconnect: false, random: () => 0.5 }));
    });
  });
}

describe('connection options: protocol differences', () => {
  it('each protocol\'s own durations take strings too', () => {
    assert.equal(new AsciiClient('ascii://127.0.0.1:9500', { drainMs: '20ms' }).drainMs, 20);
    assert.throws(() => new AsciiClient('ascii://127.0.0.1:9500', { drainMs: '1.5ms' }), (err) => err.details.field === 'drainMs');
    const o = normalizeOptions({ keepAliveMs: '30s', quietMs: '0.2s', turnaroundMs: '50ms', silenceUs: '1.1ms' });
    assert.deepEqual([o.keepAliveMs, o.quietMs, o.turnaroundMs, o.silenceUs], [30000, 200, 50, 1100]);
    assert.throws(() => normalizeOptions({ silenceUs: '2s' }), (err) => err.details.field === 'silenceUs');
    assert.throws(() => normalizeOptions({ keepAliveMs: 'often' }), (err) => err.details.field === 'keepAliveMs');
  });

  it('each protocol\'s own options are unknown to the other', () => {
    assert.throws(() => new AsciiClient('ascii://127.0.0.1:9500', { keepAliveMs: 1000 }), (err) => err.details.field === 'keepAliveMs');
    assert.throws(() => new AsciiClient('ascii://127.0.0.1:9500', { quietMs: 100 }), (err) => err.details.field === 'quietMs');
    assert.throws(() => new ModbusClient('modbus+tcp://127.0.0.1:502', { drainMs: 50 }), (err) => err.details.field === 'drainMs');
  });
});

describe('normalizeConnectionOptions', () => {
  it('hands protocol options back with their defaults, unchecked', () => {
    const o = normalizeConnectionOptions({ mode: 'x' }, 'test client', { mode: 'a', depth: 3 });
    assert.equal(o.mode, 'x');
    assert.equal(o.depth, 3);
    assert.deepEqual(o.backoff, { initialMs: 100, maxMs: 10000 });
  });

  it('reads every shared duration given as a string into whole ms', () => {
    const o = normalizeConnectionOptions({ timeoutMs: '1.5s', interFrameDelayMs: '5ms', delayAfterConnectMs: '0.25s', backoff: { initialMs: '50ms', maxMs: '1min' } }, 'test client', {});
    assert.deepEqual([o.timeoutMs, o.interFrameDelayMs, o.delayAfterConnectMs, o.backoff.initialMs, o.backoff.maxMs], [1500, 5, 250, 50, 60000]);
  });

  it('timeoutArg takes what checkTimeoutMs takes, and duration strings of whole ms', () => {
    assert.equal(timeoutArg(1), 1);
    assert.equal(timeoutArg('2s'), 2000);
    assert.equal(timeoutArg(' 500 ms '), 500);
    for (const v of [0, -1, 1.5, NaN, '0ms', '0.5ms', '-5', 'soon', MAX_TIMER_MS + 1, '25d']) {
      assert.throws(() => timeoutArg(v, 'x'), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'x', String(v));
    }
    // A string that does not come to whole ms is quoted as written, with the rule a device states (base/duration-field.js)
    assert.throws(() => timeoutArg('0.5ms'), (err) => err.details.value === '0.5ms' && err.message === 'timeoutMs must be a whole number of ms from 1ms to 2147483647ms; got "0.5ms"');
    assert.throws(() => timeoutArg(1.5), { details: { field: 'timeoutMs', value: 1.5, rule: 'must be a whole number of ms from 1ms to 2147483647ms' } });
    assert.throws(() => timeoutArg('soon'), { details: { field: 'timeoutMs', value: 'soon', rule: 'is not a duration; use e.g. "500ms", "10s", "2m" or a number of milliseconds' } });
  });

  it('checkTimeoutMs takes integers from 1 to 2^31-1 ms', () => {
    assert.equal(checkTimeoutMs(1), 1);
    assert.equal(checkTimeoutMs(MAX_TIMER_MS), MAX_TIMER_MS);
    for (const v of [0, -1, 1.5, NaN, '5', MAX_TIMER_MS + 1]) {
      assert.throws(() => checkTimeoutMs(v, 'x'), (err) => err.code === 'NINES_ERR_INVALID_ARG' && err.details.field === 'x', String(v));
    }
  });
});
