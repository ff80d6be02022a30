'use strict';

/**
 * What a scan writes for the integrator to start from: a gateway config with the line as one device,
 * each unit found as one of its units with a tag sheet, and one job per unit; and the tag sheets,
 * one tag per readable address, typed conservatively (uint16 for a register, bool for a bit), named
 * by table and address (hr_200, ir_0, coil_5, di_3). `nines run --check` accepts them as written;
 * the integrator then renames, types and scales the tags that matter and deletes the rest.
 */

const D = require('./defaults');
const { TABLES } = require('./scan');

/** Table → tag name prefix */
const PREFIX = Object.freeze({ coil: 'coil', discrete: 'di', input: 'ir', holding: 'hr' });
/** Poll rate of each starter job: slow, as befits a first look */
const STARTER_RATE = '1/s';

/**
 * @param {import('./scan').ScanReport} report
 * @param {{name?: string, maxTags?: number}} [o] name: the device's (default line1)
 * @returns {{files: Record<string, string>, config: string}} file name → text (the config is
 *   `<name>.yaml`, its tag sheets `<name>-unit<id>.csv`), and the config's name
 */
function starterFiles (report, o = {}) {
  const name = o.name || 'line1';
  const maxTags = o.maxTags || D.SCAN_MAX_TAGS_PER_UNIT;
  const files = {};
  const units = report.units.filter((u) => u.map);
  const lines = [
    `# Written by nines scan ${report.target}: a starter. Rename, type and scale the tags that matter,`,
    '# delete the rest, and set the rates; every tag here is uint16 (registers) or bool (bits).',
    'devices:',
    `  ${name}:`,
    `    target: ${JSON.stringify(report.target)}`,
    '    # merged reads stay inside what the scan found readable: a gap may be a hole',
    '    maxGap: 0',
    '    units:'
  ];
  const jobs = [];
  for (const u of units) {
    const unit = `unit${u.unitId}`;
    const sheet = `${name}-${unit}.csv`;
    const who = describe(u.identity);
    lines.push(`      # ${who}`);
    const { text, count } = tagSheet(u, maxTags, `${who}, unit ${u.unitId} of ${report.target}`);
    if (count === 0) {
      lines.push(`      ${unit}: { unitId: ${u.unitId} }   # no readable address found`);
      continue;
    }
    files[sheet] = text;
    lines.push(`      ${unit}: { unitId: ${u.unitId}, tags: { scan: { csv: ${sheet} } } }`);
    jobs.push(`  - { name: ${name}-${unit}, device: ${name}, unit: ${unit}, tags: scan, rate: ${STARTER_RATE} }`);
  }
  lines.push('jobs:', ...jobs, '');
  const config = `${name}.yaml`;
  files[config] = lines.join('\n');
  return { files, config };
}

/**
 * @param {import('./identify').Identity} id
 * @returns {string} "Vendor ProductCode revision (product name)", or what is known of it
 */
function describe (id) {
  if (!id.supported) return 'no device identification (FC43)';
  const parts = [id.vendorName, id.productCode, id.revision].filter(Boolean).join(' ');
  return id.productName ? `${parts} (${id.productName})` : parts;
}

/**
 * One unit's tag sheet.
 * @param {import('./scan').UnitReport} u
 * @param {number} maxTags
 * @param {string} title
 * @returns {{text: string, count: number}}
 */
function tagSheet (u, maxTags, title) {
  const rows = [`# ${title.replace(/\n/g, ' ')}`, 'name,table,address,type'];
  const left = [];
  let count = 0;
  for (const { table } of TABLES) {
    const m = u.map[table];
    if (!m) continue;
    const type = table === 'coil' || table === 'discrete' ? 'bool' : 'uint16';
    for (const [first, last] of m.ranges) {
      let a = first;
      for (; a <= last && count < maxTags; a++, count++) rows.push(`${PREFIX[table]}_${a},${table},${a},${type}`);
      if (a <= last) left.push(`${table} ${a}-${last}`);
    }
  }
  if (left.length) rows.push(`# left out (at most ${maxTags} tags per unit): ${left.join(', ')}`);
  return { text: rows.join('\n') + '\n', count };
}

module.exports = { starterFiles, describe };
