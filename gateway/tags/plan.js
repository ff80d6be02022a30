'use strict';

/**
 * Coalescing: the fewest requests that read every tag of a poll.
 *
 * Modbus: tags are grouped by table, sorted by address, and merged into one read while the gap
 * between a read's end and the next tag is at most `maxGap` registers (or bits), and the read stays
 * within the device's request limit (maxRegistersPerRequest ≤ 125, maxBitsPerRequest ≤ 2000). A tag
 * is never split across two reads. Greedy left-to-right merging gives the fewest reads: a read that
 * may take a run of tags may take any shorter run of them too (its span and its gaps only shrink),
 * so a greedy run always ends at or beyond the matching run of any other plan, and never needs more
 * runs. test/tags/plan.test.js checks it against an exhaustive minimum.
 *
 * ASCII (ED series): every input and output line comes from one `@AA`; each counter is one `#AAN`,
 * each analog channel one `$AA6n`: the protocol has no ranged read of those.
 *
 * A plan is plain data (it crosses to a worker thread). The reader (reader.js) splits a read that
 * the device refuses with an exception (a hole in its map) with splitBlock().
 */

const ascii = require('../drivers/ascii/command');
const { tableInfo } = require('./spec');

/**
 * @typedef {object} Block one request of a poll
 * @property {string} table
 * @property {number[]} tags indexes into the tag list, by address
 * @property {number} [fc] Modbus: 1-4
 * @property {number} [address] Modbus: first register or bit read
 * @property {number} [quantity] Modbus: registers or bits read
 * @property {string} [command] ASCII: the command that reads the block
 */

/**
 * @typedef {object} PlanContext
 * @property {'ascii'|'modbus+tcp'|'modbus+rtu'|'modbus+rtutcp'} protocol
 * @property {number} maxGap registers or bits a read may skip between two tags
 * @property {number} maxRegistersPerRequest
 * @property {number} maxBitsPerRequest
 * @property {string} [address] ASCII: the module's address, two hex digits
 */

/**
 * Plans the reads of a poll.
 * @param {import('./spec').Tag[]} tags a checked list (spec.js)
 * @param {PlanContext} ctx
 * @returns {Block[]}
 */
function planReads (tags, ctx) {
  if (ctx.protocol === 'ascii') return planAscii(tags, ctx.address);
  const byTable = new Map();
  tags.forEach((t, i) => {
    if (!byTable.has(t.table)) byTable.set(t.table, []);
    byTable.get(t.table).push(i);
  });
  const blocks = [];
  // tables in protocol order, so a plan reads the same way whatever order the tags were listed in
  for (const table of ['coil', 'discrete', 'holding', 'input']) {
    const list = byTable.get(table);
    if (list === undefined) continue;
    list.sort((a, b) => tags[a].address - tags[b].address || tags[a].span - tags[b].span || a - b);
    blocks.push(...mergeRun(tags, list, table, ctx));
  }
  return blocks;
}

/**
 * Greedy merge of one table's tags (sorted by address).
 * @param {import('./spec').Tag[]} tags
 * @param {number[]} list indexes, sorted by address
 * @param {string} table
 * @param {PlanContext} ctx
 * @returns {Block[]}
 */
function mergeRun (tags, list, table, ctx) {
  const info = tableInfo(ctx.protocol, table);
  const limit = info.kind === 'bits' ? ctx.maxBitsPerRequest : ctx.maxRegistersPerRequest;
  const blocks = [];
  let block = null;
  let end = -1; // last address the block reads
  for (const i of list) {
    const t = tags[i];
    const tEnd = t.address + t.span - 1;
    if (block !== null) {
      const newEnd = Math.max(end, tEnd);
      if (t.address - end - 1 <= ctx.maxGap && newEnd - block.address + 1 <= limit) {
        block.tags.push(i);
        end = newEnd;
        block.quantity = end - block.address + 1;
        continue;
      }
    }
    block = { table, fc: info.fc, address: t.address, quantity: t.span, tags: [i] };
    end = tEnd;
    blocks.push(block);
  }
  return blocks;
}

/** @returns {Block[]} */
function planAscii (tags, address) {
  const blocks = [];
  const lines = [];
  tags.forEach((t, i) => {
    if (t.table === 'input' || t.table === 'output') lines.push(i);
    else blocks.push({ table: t.table, command: t.table === 'counter' ? ascii.readCounter(address, t.address) : ascii.readAnalog(address, t.address), tags: [i] });
  });
  if (lines.length !== 0) blocks.unshift({ table: 'lines', command: ascii.readAll(address), tags: lines });
  return blocks;
}

/**
 * Splits a Modbus read in two by its tags, for a device that refused the merged read: each half is
 * read on its own, so the tags that can be read still are, and the hole ends up in a read of its
 * own. Tags that share their first register (bits of one register) stay together.
 * @param {Block} block
 * @param {import('./spec').Tag[]} tags
 * @returns {Block[]|null} two blocks, or null when the block cannot be split further
 */
function splitBlock (block, tags) {
  const list = block.tags;
  // the cut nearest the middle that does not separate tags starting at the same address
  const mid = list.length >> 1;
  let cut = -1;
  for (let d = 0; d < list.length && cut < 0; d++) {
    for (const c of [mid - d, mid + d]) {
      if (c > 0 && c < list.length && tags[list[c]].address !== tags[list[c - 1]].address) { cut = c; break; }
    }
  }
  if (cut < 0) return null;
  return [list.slice(0, cut), list.slice(cut)].map((part) => {
    let start = Infinity;
    let end = -1;
    for (const i of part) {
      start = Math.min(start, tags[i].address);
      end = Math.max(end, tags[i].address + tags[i].span - 1);
    }
    return { table: block.table, fc: block.fc, address: start, quantity: end - start + 1, tags: part };
  });
}

module.exports = { planReads, splitBlock };
