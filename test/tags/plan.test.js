'use strict';

const assert = require('node:assert/strict');
const fc = require('fast-check');
const { buildTags, tagContext } = require('../../gateway/tags/spec');
const { planReads, splitBlock } = require('../../gateway/tags/plan');
const { parseTarget } = require('../../gateway/drivers/target');

const TARGET = parseTarget('modbus+tcp://127.0.0.1:502?unitId=1');

/**
 * The fewest reads, by exhaustive dynamic programming over the sorted tags of one table: best[k] =
 * min over j ≤ k of best[j-1] + 1, where tags j..k fit one read (span within the limit, every gap
 * between consecutive tags at most maxGap). Independent of the planner's greedy merge.
 */
function minimumReads (tags, maxGap, limit) {
  const sorted = tags.slice().sort((a, b) => a.address - b.address);
  const n = sorted.length;
  const best = new Array(n + 1).fill(Infinity);
  best[0] = 0;
  for (let k = 1; k <= n; k++) {
    let end = -1;
    for (let j = k; j >= 1; j--) {
      const t = sorted[j - 1];
      // a run j..k: the run's end is the furthest end among its tags
      end = Math.max(end, t.address + t.span - 1);
      let ok = end - sorted[j - 1].address + 1 <= limit;
      let reach = sorted[j - 1].address + sorted[j - 1].span - 1;
      for (let i = j; i < k && ok; i++) {
        if (sorted[i].address - reach - 1 > maxGap) ok = false;
        reach = Math.max(reach, sorted[i].address + sorted[i].span - 1);
      }
      if (ok) best[k] = Math.min(best[k], best[j - 1] + 1);
    }
  }
  return best[n];
}

/**
 * Exactly `count` non-overlapping tags at random over `registers` registers: uint16 (1), float32 (2)
 * or float64 (4) registers each. Placement: `count` sorted slack points in [0, registers - total
 * span], each tag at its slack point plus the spans of the tags before it.
 */
const scattered = (count, registers) => fc.array(fc.constantFrom('uint16', 'float32', 'float64'), { minLength: count, maxLength: count })
  .chain((types) => {
    const spans = types.map((t) => ({ uint16: 1, float32: 2, float64: 4 }[t]));
    const total = spans.reduce((a, b) => a + b, 0);
    return fc.tuple(fc.constant(types), fc.constant(spans), fc.array(fc.integer({ min: 0, max: registers - total }), { minLength: count, maxLength: count }));
  })
  .map(([types, spans, slack]) => {
    slack.sort((a, b) => a - b);
    let before = 0;
    return types.map((type, i) => {
      const tag = { name: `t${i}`, table: 'holding', address: slack[i] + before, type };
      before += spans[i];
      return tag;
    });
  });

describe('tags/plan: the fewest requests for a poll', () => {
  it('50 tags scattered over 300 registers take the minimum number of reads for each maxGap', () => {
    fc.assert(fc.property(scattered(50, 300), fc.constantFrom(0, 1, 4, 16, 64), fc.constantFrom(8, 32, 125), (raw, maxGap, limit) => {
      const ctx = { ...tagContext(TARGET, { maxGap, maxRegistersPerRequest: limit }) };
      const tags = buildTags(raw, ctx);
      assert.equal(tags.length, 50);
      assert.ok(tags[49].address + tags[49].span <= 300);
      const plan = planReads(tags, ctx);
      assert.equal(plan.length, minimumReads(tags, maxGap, limit));
      // every tag is read exactly once, whole, within a read that respects the limit
      const seen = plan.flatMap((b) => b.tags);
      assert.deepEqual(seen.slice().sort((a, b) => a - b), tags.map((_, i) => i));
      for (const b of plan) {
        assert.ok(b.quantity <= limit);
        for (const i of b.tags) assert.ok(tags[i].address >= b.address && tags[i].address + tags[i].span <= b.address + b.quantity);
      }
    }), { seed: 9, numRuns: 300 });
  });

  it('merges across a gap of maxGap registers, not one more', () => {
    const ctx = tagContext(TARGET, { maxGap: 16 });
    const tags = (gap) => buildTags([{ name: 'a', table: 'holding', address: 0 }, { name: 'b', table: 'holding', address: 1 + gap }], ctx);
    assert.deepEqual(planReads(tags(16), ctx).map((b) => [b.address, b.quantity]), [[0, 18]]);
    assert.deepEqual(planReads(tags(17), ctx).map((b) => [b.address, b.quantity]), [[0, 1], [18, 1]]);
  });

  it('never exceeds the protocol limits: 125 registers, 2000 bits', () => {
    const ctx = tagContext(TARGET, {});
    const regs = buildTags(Array.from({ length: 200 }, (_, i) => ({ name: `r${i}`, table: 'input', address: i })), ctx);
    assert.deepEqual(planReads(regs, ctx).map((b) => b.quantity), [125, 75]);
    const bits = buildTags(Array.from({ length: 2500 }, (_, i) => ({ name: `c${i}`, table: 'coil', address: i })), ctx);
    assert.deepEqual(planReads(bits, ctx).map((b) => [b.fc, b.quantity]), [[1, 2000], [1, 500]]);
  });

  it('reads each table with its own function code, in protocol order', () => {
    const ctx = tagContext(TARGET, {});
    const tags = buildTags([
      { name: 'ir', table: 'input', address: 0 }, { name: 'hr', table: 'holding', address: 0 },
      { name: 'di', table: 'discrete', address: 0 }, { name: 'co', table: 'coil', address: 0 }
    ], ctx);
    assert.deepEqual(planReads(tags, ctx).map((b) => b.fc), [1, 2, 3, 4]);
  });

  it('keeps the bits of one register in one read, also when splitting', () => {
    const ctx = tagContext(TARGET, {});
    const tags = buildTags([
      { name: 'b0', table: 'holding', address: 5, type: 'bit', bit: 0 }, { name: 'b1', table: 'holding', address: 5, type: 'bit', bit: 1 },
      { name: 'w', table: 'holding', address: 9 }
    ], ctx);
    const [block] = planReads(tags, ctx);
    assert.deepEqual([block.address, block.quantity, block.tags], [5, 5, [0, 1, 2]]);
    const halves = splitBlock(block, tags);
    assert.deepEqual(halves.map((b) => [b.address, b.quantity, b.tags]), [[5, 1, [0, 1]], [9, 1, [2]]]);
    assert.equal(splitBlock(halves[0], tags), null);
  });

  it('plans an ED-588 as one @AA for every line, and one request per counter or analog channel', () => {
    const target = parseTarget('ascii://127.0.0.1:9500?address=02');
    const ctx = tagContext(target);
    const tags = buildTags([
      { name: 'door', table: 'input', address: 3 }, { name: 'parts', table: 'counter', address: 1 },
      { name: 'lamp', table: 'output', address: 0 }, { name: 'v', table: 'analog', address: 2 }
    ], ctx);
    assert.deepEqual(planReads(tags, ctx).map((b) => [b.command, b.tags]), [['@02', [0, 2]], ['#021', [1]], ['$0262', [3]]]);
  });
});
