'use strict';

const assert = require('node:assert/strict');
const { FaultPlan, NO_FAULT, FAULTS_HELP } = require('../../gateway/simulators/faults');
const { NinesError } = require('../../gateway/base/errors');

/** A clock the test moves by hand (ms). */
function manualClock (start = 1000) {
  let t = start;
  const now = () => t;
  now.advance = (ms) => { t += ms; };
  return now;
}

function assertInvalid (fn, pattern) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof NinesError, `expected a NinesError, got ${err && err.name}`);
    assert.equal(err.code, 'NINES_ERR_INVALID_ARG');
    if (pattern) assert.match(err.message, pattern);
    return true;
  });
}

describe('FaultPlan', function () {
  describe('without faults', function () {
    it('returns the shared frozen NO_FAULT decision for every request', function () {
      for (const spec of [undefined, null, '', ' , ', {}]) {
        const plan = FaultPlan.parse(spec);
        assert.equal(plan.active, false);
        assert.equal(plan.refuse, false);
        assert.equal(plan.decide(), NO_FAULT);
        assert.equal(plan.decide(), plan.decide());
        assert.equal(plan.toString(), '');
        assert.deepEqual(plan.toJSON(), {});
      }
      assert.ok(Object.isFrozen(NO_FAULT));
      assert.deepEqual({ ...NO_FAULT }, { action: 'reply', delayMs: 0 });
    });

    it('treats zero-valued items as no fault', function () {
      const plan = FaultPlan.parse('latency=0ms,drop=0,garbage=0,close=0,spike=0:5ms');
      assert.equal(plan.active, false);
      assert.equal(plan.decide(), NO_FAULT);
    });

    it('returns a plan passed to parse unchanged', function () {
      const plan = FaultPlan.parse('drop=0.5');
      assert.equal(FaultPlan.parse(plan), plan);
    });
  });

  describe('parsing', function () {
    it('reads every item of the text form and writes it back canonically', function () {
      const plan = FaultPlan.parse(' latency=1ms-5ms, spike=1/10000:35ms ,spike=0.001:2s,drop=0.001,garbage=1/1000,close=0.0001,refuse,stall=2s@5s,stall=500ms@1s/20s,seed=42');
      assert.equal(plan.active, true);
      assert.equal(plan.refuse, true);
      assert.equal(plan.toString(),
        'latency=1ms-5ms,spike=1/10000:35ms,spike=1/1000:2s,drop=1/1000,garbage=1/1000,close=1/10000,refuse,stall=2s@5s,stall=500ms@1s/20s,seed=42');
      assert.deepEqual(plan.toJSON(), {
        latency: { min: 1, max: 5 },
        spikes: [{ p: 0.0001, ms: 35 }, { p: 0.001, ms: 2000 }],
        drop: 0.001,
        garbage: 0.001,
        close: 0.0001,
        refuse: true,
        stalls: [{ ms: 2000, atMs: 5000, everyMs: 0 }, { ms: 500, atMs: 1000, everyMs: 20000 }],
        seed: 42
      });
    });

    it('round-trips through toString and toJSON', function () {
      const text = 'latency=2.5ms,spike=0.3:10us,drop=0.25,stall=1.5s@0ms,seed=7';
      const plan = FaultPlan.parse(text);
      assert.equal(FaultPlan.parse(plan.toString()).toString(), plan.toString());
      assert.equal(FaultPlan.parse(plan.toJSON()).toString(), plan.toString());
      assert.deepEqual(FaultPlan.parse(JSON.parse(JSON.stringify(plan))).toJSON(), plan.toJSON());
    });

    it('accepts the object form with durations as text, numbers or {min, max}', function () {
      const plan = FaultPlan.parse({
        latency: { min: '1ms', max: 3 },
        spikes: [{ p: '1/100', ms: '20ms' }, '1/1000:1s'],
        drop: '0.01',
        refuse: 'on',
        stalls: [{ ms: '2s', atMs: '5s', everyMs: '20s' }, '1s@2s'],
        seed: 3
      });
      assert.equal(plan.toString(), 'latency=1ms-3ms,spike=1/100:20ms,spike=1/1000:1s,drop=1/100,refuse,stall=2s@5s/20s,stall=1s@2s,seed=3');
      assert.equal(FaultPlan.parse({ latency: '2ms' }).toString(), 'latency=2ms');
      assert.equal(FaultPlan.parse({ latency: 2 }).toString(), 'latency=2ms');
    });

    it('reads refuse=on/off', function () {
      assert.equal(FaultPlan.parse('refuse=on').refuse, true);
      assert.equal(FaultPlan.parse('refuse=off').refuse, false);
      assert.equal(FaultPlan.parse('refuse=off').active, false);
    });

    it('rejects bad items with NINES_ERR_INVALID_ARG naming the item', function () {
      assertInvalid(() => FaultPlan.parse('jitter=2ms'), /jitter=2ms/);
      assertInvalid(() => FaultPlan.parse('drop=2'), /drop.*drop=2.*probability/);
      assertInvalid(() => FaultPlan.parse('drop=-0.1'), /drop=-0.1/);
      assertInvalid(() => FaultPlan.parse('drop=abc'), /drop=abc/);
      assertInvalid(() => FaultPlan.parse('drop=1/0'), /drop=1\/0/);
      assertInvalid(() => FaultPlan.parse('drop'), /drop=VALUE/);
      assertInvalid(() => FaultPlan.parse('latency=fast'), /latency=fast/);
      assertInvalid(() => FaultPlan.parse('latency=5ms-1ms'), /minimum/);
      assertInvalid(() => FaultPlan.parse('latency=1ms-2ms-3ms'), /range/);
      assertInvalid(() => FaultPlan.parse('latency=2ms,latency=3ms'), /once/);
      assertInvalid(() => FaultPlan.parse('spike=35ms'), /PROBABILITY:DURATION/);
      assertInvalid(() => FaultPlan.parse('spike=1/10:soon'), /spike=1\/10:soon/);
      assertInvalid(() => FaultPlan.parse('stall=2s'), /DURATION@START/);
      assertInvalid(() => FaultPlan.parse('stall=0s@1s'), /above zero/);
      assertInvalid(() => FaultPlan.parse('stall=2s@1s/2s'), /period longer than the stall/);
      assertInvalid(() => FaultPlan.parse('refuse=maybe'), /on or off/);
      assertInvalid(() => FaultPlan.parse('seed=-1'), /seed/);
      assertInvalid(() => FaultPlan.parse('seed=1.5'), /seed/);
      assertInvalid(() => FaultPlan.parse('drop=0.6,close=0.5'), /at most 1/);
    });

    it('rejects bad object forms naming the field', function () {
      assertInvalid(() => FaultPlan.parse({ delay: '2ms' }), /faults\.delay.*unknown key/);
      assertInvalid(() => FaultPlan.parse({ spikes: { p: 1, ms: 1 } }), /faults\.spikes.*array/);
      assertInvalid(() => FaultPlan.parse({ spikes: [{ p: 2, ms: 1 }] }), /faults\.spikes\[0\]\.p/);
      assertInvalid(() => FaultPlan.parse({ stalls: [{ ms: 1, at: 2 }] }), /faults\.stalls\[0\]\.at/);
      assertInvalid(() => FaultPlan.parse({ latency: { min: 1, mean: 2 } }), /faults\.latency\.mean/);
      assertInvalid(() => FaultPlan.parse({ seed: 'abc' }), /faults\.seed/);
      assertInvalid(() => FaultPlan.parse(42), /faults/);
      assertInvalid(() => FaultPlan.parse(['drop=1']), /faults/);
    });

    it('rejects options that are not functions', function () {
      assertInvalid(() => FaultPlan.parse('', { random: 3 }), /random/);
      assertInvalid(() => FaultPlan.parse('', { now: 'soon' }), /now/);
    });

    it('documents every item in FAULTS_HELP', function () {
      for (const item of ['latency=', 'spike=', 'drop=', 'garbage=', 'close=', 'refuse', 'stall=', 'seed=']) {
        assert.ok(FAULTS_HELP.includes(item), item);
      }
    });
  });

  describe('decisions', function () {
    it('adds a fixed latency to every reply', function () {
      const plan = FaultPlan.parse('latency=2ms');
      for (let i = 0; i < 10; i++) assert.deepEqual(plan.decide(), { action: 'reply', delayMs: 2 });
    });

    it('repeats the same decisions for the same seed', function () {
      const spec = 'latency=1ms-5ms,spike=1/20:35ms,drop=0.05,garbage=0.05,close=0.05,seed=42';
      const a = FaultPlan.parse(spec);
      const b = FaultPlan.parse(spec);
      const c = FaultPlan.parse(spec.replace('seed=42', 'seed=43'));
      const da = []; const db = []; const dc = [];
      for (let i = 0; i < 500; i++) { da.push(a.decide()); db.push(b.decide()); dc.push(c.decide()); }
      assert.deepEqual(da, db);
      assert.notDeepEqual(da, dc);
      assert.deepEqual(a.garbage(), b.garbage());
    });

    it('prefers an injected random source over the seed', function () {
      const plan = FaultPlan.parse('drop=0.5,seed=1', { random: () => 0.25 });
      for (let i = 0; i < 5; i++) assert.equal(plan.decide().action, 'drop');
      const plan2 = FaultPlan.parse('drop=0.5,seed=1', { random: () => 0.75 });
      assert.equal(plan2.decide().action, 'reply');
    });

    it('draws actions with the configured probabilities (wide bounds over 20000 draws)', function () {
      const plan = FaultPlan.parse('drop=0.1,garbage=0.05,close=0.02,seed=9');
      const n = 20000;
      const count = { reply: 0, drop: 0, garbage: 0, close: 0 };
      for (let i = 0; i < n; i++) count[plan.decide().action]++;
      assert.ok(count.drop / n > 0.085 && count.drop / n < 0.115, `drop ${count.drop}`);
      assert.ok(count.garbage / n > 0.04 && count.garbage / n < 0.06, `garbage ${count.garbage}`);
      assert.ok(count.close / n > 0.013 && count.close / n < 0.027, `close ${count.close}`);
      assert.equal(count.reply + count.drop + count.garbage + count.close, n);
    });

    it('draws uniform latency within the range and spikes at their rate', function () {
      const plan = FaultPlan.parse('latency=1ms-5ms,spike=1/100:100ms,seed=5');
      const n = 20000;
      let sum = 0; let spikes = 0;
      for (let i = 0; i < n; i++) {
        const d = plan.decide();
        assert.equal(d.action, 'reply');
        const base = d.delayMs >= 100 ? d.delayMs - 100 : d.delayMs;
        if (d.delayMs >= 100) spikes++;
        assert.ok(base >= 1 && base <= 5, `delay ${d.delayMs}`);
        sum += base;
      }
      assert.ok(sum / n > 2.8 && sum / n < 3.2, `mean ${sum / n}`);
      assert.ok(spikes > 120 && spikes < 300, `spikes ${spikes}`);
    });

    it('returns fresh decision objects when faults are active', function () {
      const plan = FaultPlan.parse('latency=1ms');
      assert.notEqual(plan.decide(), plan.decide());
      assert.notEqual(plan.decide(), NO_FAULT);
    });
  });

  describe('stalls', function () {
    it('holds for the remaining time of a manual stall (injected clock)', function () {
      const now = manualClock();
      const plan = FaultPlan.parse(undefined, { now });
      assert.equal(plan.holdMs(), 0);
      plan.stall(100);
      assert.equal(plan.holdMs(), 100);
      now.advance(40);
      assert.equal(plan.holdMs(), 60);
      plan.stall('20ms'); // shorter than what is left: no change
      assert.equal(plan.holdMs(), 60);
      plan.stall('1s');
      assert.equal(plan.holdMs(), 1000);
      now.advance(1000);
      assert.equal(plan.holdMs(), 0);
      assert.equal(plan.active, false);
      assertInvalid(() => plan.stall(-5), /stall/);
    });

    it('applies scheduled stalls only between start() and stop()', function () {
      const now = manualClock();
      const plan = FaultPlan.parse('stall=2s@5s/20s', { now });
      assert.equal(plan.active, true);
      now.advance(6000);
      assert.equal(plan.holdMs(), 0, 'not armed yet');
      plan.start();
      now.advance(4999);
      assert.equal(plan.holdMs(), 0);
      now.advance(1);
      assert.equal(plan.holdMs(), 2000);
      now.advance(1500);
      assert.equal(plan.holdMs(), 500);
      now.advance(500);
      assert.equal(plan.holdMs(), 0);
      now.advance(18000); // 25 s after start: the second stall
      assert.equal(plan.holdMs(), 2000);
      plan.stop();
      assert.equal(plan.holdMs(), 0);
    });

    it('runs a one-shot scheduled stall once', function () {
      const now = manualClock();
      const plan = FaultPlan.parse('stall=100ms@50ms', { now });
      plan.start();
      now.advance(60);
      assert.equal(plan.holdMs(), 90);
      now.advance(100000);
      assert.equal(plan.holdMs(), 0);
    });

    it('ends a manual stall on stop() and on clear()', function () {
      const now = manualClock();
      const plan = FaultPlan.parse('', { now });
      plan.stall(500);
      plan.stop();
      assert.equal(plan.holdMs(), 0);
      plan.stall(500);
      plan.clear();
      assert.equal(plan.holdMs(), 0);
    });
  });

  describe('set, clear and garbage', function () {
    it('replaces the configuration with set() and removes it with clear()', function () {
      const plan = FaultPlan.parse('drop=1');
      assert.equal(plan.decide().action, 'drop');
      plan.set('latency=3ms,refuse');
      assert.deepEqual(plan.decide(), { action: 'reply', delayMs: 3 });
      assert.equal(plan.refuse, true);
      plan.set({ garbage: 1 });
      assert.equal(plan.decide().action, 'garbage');
      assert.equal(plan.refuse, false);
      plan.clear();
      assert.equal(plan.decide(), NO_FAULT);
      assert.equal(plan.active, false);
    });

    it('keeps the old configuration when set() gets a bad spec', function () {
      const plan = FaultPlan.parse('latency=3ms');
      assertInvalid(() => plan.set('latency=3ms,bogus=1'), /bogus/);
      assert.equal(plan.toString(), 'latency=3ms');
    });

    it('makes printable junk without CR or LF that never starts like a reply', function () {
      const plan = FaultPlan.parse('seed=11');
      for (let i = 0; i < 300; i++) {
        const junk = plan.garbage();
        assert.ok(Buffer.isBuffer(junk));
        assert.ok(junk.length >= 4 && junk.length <= 16, `length ${junk.length}`);
        for (const b of junk) assert.ok(b >= 0x20 && b <= 0x7E, `byte ${b}`);
        assert.ok(!'>!?'.includes(String.fromCharCode(junk[0])));
      }
      assert.equal(plan.garbage(100).length, 100);
      assertInvalid(() => plan.garbage(0), /garbage length/);
      assertInvalid(() => plan.garbage(256), /garbage length/);
    });
  });
});
