'use strict';

const assert = require('node:assert/strict');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const { settleYoungGeneration } = require('../../gateway/base/settle-heap');

/**
 * base/settle-heap.js: a measuring worker thread empties its young generation before measuring
 * (start-up's survivors promoted), without a global `gc` appearing, and a main thread is left alone.
 */

const MODULE = path.join(__dirname, '../../gateway/base/settle-heap.js');

/** Runs `settleYoungGeneration` in a fresh worker thread that holds young objects first. */
function inWorker () {
  const source = `
    const v8 = require('node:v8');
    const { parentPort } = require('node:worker_threads');
    const { settleYoungGeneration } = require(${JSON.stringify(MODULE)});
    const young = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;
    // live objects, as start-up leaves: they survive collections, so only promotion empties the space
    const kept = [];
    for (let i = 0; i < 50000; i++) kept.push({ i, name: 'tag' + i });
    const before = young();
    const collected = settleYoungGeneration();
    const after = young();
    parentPort.postMessage({ collected, before, after, kept: kept.length, globalGc: typeof globalThis.gc });
  `;
  return new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  });
}

describe('settling a measuring thread\'s young generation (base/settle-heap.js)', () => {
  it('in a worker thread: the young generation is emptied, what is live survives, and no global gc appears', async () => {
    const r = await inWorker();
    assert.equal(r.collected, true);
    assert.equal(r.kept, 50000);
    // 2.7-3.9 MB young before (Node 20, 22, 24), a few hundred bytes after: the young generation is
    // emptied, not merely collected once (a survivor is promoted only at its second collection)
    assert.ok(r.after <= 64 * 1024, `${r.after} bytes still young (${r.before} before)`);
    assert.equal(r.globalGc, 'undefined');
  });

  it('on a main thread: nothing is collected (its loop may be Node-RED\'s)', () => {
    assert.equal(settleYoungGeneration(), false);
    assert.equal(typeof globalThis.gc, 'undefined');
  });
});
