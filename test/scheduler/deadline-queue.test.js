'use strict';

/**
 * The deadline driver's queue (scheduler/deadline-queue.js) gives waiters out in deadline order,
 * ties in the order they came, every one exactly once, whatever order they came in and however
 * the head and the compaction fall: checked against a plain sorted list.
 */

const assert = require('node:assert/strict');
const fc = require('fast-check');
const { DeadlineQueue } = require('../../gateway/scheduler/deadline-queue');
const { allocatedPerCycle } = require('../helpers/alloc');

/** A step: add a waiter `back` ns before the latest deadline so far (0: in order), or take what is due `ahead` ns past the earliest */
const stepArb = fc.oneof(
  fc.record({ op: fc.constant('add'), back: fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: 0, max: 50 })) }),
  fc.record({ op: fc.constant('take'), ahead: fc.integer({ min: -5, max: 40 }) })
);

describe('scheduler/deadline-queue: earliest first, each waiter once', () => {
  it('matches a sorted list (stable for equal deadlines) over random adds and takes', () => {
    fc.assert(fc.property(fc.array(stepArb, { maxLength: 600 }), (steps) => {
      const q = new DeadlineQueue();
      const model = [];
      let latest = 0;
      let id = 0;
      for (const s of steps) {
        if (s.op === 'add') {
          latest += 3;
          const w = { at: latest - s.back, id: id++ };
          q.add(w);
          // stable: after every waiter of the same or an earlier deadline
          let i = model.length;
          while (i > 0 && model[i - 1].at > w.at) i--;
          model.splice(i, 0, w);
        } else {
          const now = (model.length ? model[0].at : latest) + s.ahead;
          const out = [];
          const n = q.takeDue(now, out);
          const want = [];
          while (model.length && model[0].at <= now) want.push(model.shift());
          assert.equal(n, want.length);
          assert.deepEqual(out.map((w) => w.id), want.map((w) => w.id));
        }
        assert.equal(q.length, model.length);
        for (let i = 0; i < Math.min(3, model.length); i++) assert.equal(q.get(i).id, model[i].id);
      }
    }), { numRuns: 300, seed: 20 });
  });

  it('keeps its array near the queue\'s size: taken slots are reclaimed, not kept', () => {
    const q = new DeadlineQueue();
    const out = [];
    // 1,000 waiters always queued, one taken and one added per step, as a thread of 1,000 jobs runs
    for (let i = 0; i < 1000; i++) q.add({ at: i });
    for (let t = 0; t < 100000; t++) {
      out.length = 0;
      assert.equal(q.takeDue(t, out), 1);
      q.add({ at: t + 1000 });
    }
    assert.equal(q.length, 1000);
    assert.ok(q._items.length <= 2 * 1000 + 64, `array of ${q._items.length} for 1,000 waiters`);
  });

  it('fills `out` from the slot asked, and lets a caller keep its slots: no array per release', function () {
    const q = new DeadlineQueue();
    const out = ['kept'];
    for (const at of [5, 1, 3]) q.add({ at });
    assert.equal(q.takeDue(3, out, 1), 2);
    assert.deepEqual(out.map((w) => (typeof w === 'string' ? w : w.at)), ['kept', 1, 3]);
    assert.equal(q.get(0).at, 5);
    // the driver's pattern: a queue that empties at every release, taken into slot 0 of the same
    // array, the slot cleared after the wake. One waiter object, added again each cycle: a fresh
    // one would count its own bytes, and more while V8 has not yet compiled the loop (an
    // allocation memento behind each literal), which put a bound on them at the mercy of the
    // compiler's timing (76 bytes a cycle in one run of the whole suite)
    const empties = new DeadlineQueue();
    const waiter = { at: 0 };
    const due = [];
    const cycles = (n) => {
      for (let i = 0; i < n; i++) {
        empties.add(waiter);
        due[empties.takeDue(0, due, 0) - 1] = undefined;
      }
    };
    const perCycle = allocatedPerCycle(cycles, 100000);
    assert.ok(perCycle < 8, `${perCycle.toFixed(1)} bytes a cycle`);
  });
});
