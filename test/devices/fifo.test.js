'use strict';

const assert = require('node:assert/strict');
const { Fifo } = require('../../gateway/base/fifo');
const { allocatedPerCycle } = require('../helpers/alloc');

describe('Fifo', function () {
  it('gives items back in the order they came, and undefined when empty', function () {
    const q = new Fifo();
    assert.equal(q.shift(), undefined);
    for (let i = 0; i < 5; i++) q.push(i);
    assert.equal(q.length, 5);
    assert.equal(q.peek(), 0);
    assert.deepEqual([q.shift(), q.shift()], [0, 1]);
    q.push(5);
    assert.deepEqual(q.clear(), [2, 3, 4, 5]);
    assert.equal(q.length, 0);
    assert.equal(q.peek(), undefined);
  });

  it('keeps its order across compactions of a long queue', function () {
    const q = new Fifo();
    let next = 0;
    let expect = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 3000; i++) q.push(next++);
      for (let i = 0; i < 2500; i++) assert.equal(q.shift(), expect++);
    }
    assert.equal(q.length, next - expect);
    assert.ok(q._items.length < 2 * q.length + 1024, 'the dead prefix is dropped');
    while (q.length) assert.equal(q.shift(), expect++);
    assert.equal(expect, next);
  });

  it('removes the items a predicate picks and keeps the rest in order', function () {
    const q = new Fifo();
    for (let i = 0; i < 10; i++) q.push(i);
    q.shift();
    assert.deepEqual(q.removeWhere((x) => x % 3 === 0), [3, 6, 9]);
    assert.deepEqual(q.clear(), [1, 2, 4, 5, 7, 8]);
  });

  it('allocates nothing to empty and fill again: it keeps its array', function () {
    // a fixed-rate lane's wait empties the deadline driver's queue at every request; a fresh array
    // each time cost a backing store on the next push, 184 bytes a cycle
    const q = new Fifo();
    const cycles = (n) => { for (let i = 0; i < n; i++) { q.push(i); q.push(i); q.shift(); q.shift(); } };
    const perCycle = allocatedPerCycle(cycles, 200000);
    assert.ok(perCycle < 4, `${perCycle.toFixed(1)} bytes a cycle`);
    assert.equal(q.length, 0);
    q.push('a');
    assert.equal(q.shift(), 'a');
  });

  it('gives up a large emptied array rather than hold it', function () {
    const q = new Fifo();
    for (let i = 0; i < 5000; i++) q.push(i);
    while (q.length) q.shift();
    assert.ok(q._items.length <= 1024, `${q._items.length} slots kept for an empty queue`);
  });
});
