'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parse, posInt, flagErrors } = require('./args');
const { NinesError } = require('../base/errors');
const D = require('../commission/defaults');

const USAGE = `Usage: nines scan <target> [options]

Commissioning: find the Modbus units on a line, identify each (FC43/14 device identification),
map which addresses each answers per table, print a table, and write a starter config with a tag
sheet per unit. A scan only reads (FC3 to find, FC43 to identify, FC1-4 to map); it never writes.

Targets:  modbus+rtutcp://10.0.0.9:4001            RTU slaves behind a serial server
          modbus+rtu:///dev/ttyUSB0?baudRate=9600   a serial line
          modbus+tcp://10.0.0.8:502                 a Modbus TCP device or gateway
Options:
  --units <ids>         unit ids to ask: a range or a list (default ${D.SCAN_FIRST_UNIT}-${D.SCAN_LAST_UNIT}; 0-${D.SCAN_MAX_UNIT})
  --timeout <d>         wait for each answer (default ${D.SCAN_TIMEOUT_MS}ms); on a serial line the line is
                        then held quiet as long again, so each silent unit id costs twice this
  --addresses <a-b>     addresses mapped per table (default 0-${D.SCAN_LAST_ADDRESS})
  --steps <list>        probe steps across a hole (default ${D.SCAN_STEPS.join(',')}): every readable run that
                        starts at a multiple of the last step, or is that long, is found; 1 probes
                        every address
  --budget <n>          requests the map of one unit may take (default ${D.SCAN_REQUESTS_PER_UNIT})
  --max-duration <d>    hard cap on the whole scan (default ${D.SCAN_MAX_DURATION_MS / 60000}min)
  --no-map              find and identify only
  --write-config <dir>  write <name>.yaml (the line as one device, a unit and a job per unit found)
                        and <name>-unit<id>.csv (one tag per readable address: uint16 or bool)
  --name <name>         the device's name in the written config (default line1)
  --json                print the report as JSON

Before it starts it prints the bound on finding the units (unit ids x (timeout + quiet period + ${D.SCAN_SLACK_MS} ms));
a unit id whose worst case no longer fits in it is not asked, and is named.
Exit status: 0 at least one unit found; 2 none; 1 invalid arguments or the line failed.
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    units: { type: 'string', default: `${D.SCAN_FIRST_UNIT}-${D.SCAN_LAST_UNIT}` },
    timeout: { type: 'string' },
    addresses: { type: 'string' },
    steps: { type: 'string' },
    budget: { type: 'string' },
    'max-duration': { type: 'string' },
    'no-map': { type: 'boolean', default: false },
    'write-config': { type: 'string' },
    name: { type: 'string', default: 'line1' },
    json: { type: 'boolean', default: false }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length !== 1) throw new NinesError('NINES_ERR_INVALID_ARG', `nines scan takes one target; got ${positionals.length} (nines scan --help)`);
  const { scanLine, parseUnitRange, normalizeScanOptions } = require('../commission/scan');
  const opts = { units: parseUnitRange(values.units, 'units'), map: !values['no-map'] };
  // durations go as written: the scan reads them with the one duration reader (below, naming the flag)
  if (values.timeout !== undefined) opts.timeoutMs = values.timeout;
  if (values['max-duration'] !== undefined) opts.maxDurationMs = values['max-duration'];
  if (values.budget !== undefined) opts.requestsPerUnit = posInt(values.budget, 'budget');
  if (values.addresses !== undefined) {
    const m = /^(\d{1,5})-(\d{1,5})$/.exec(values.addresses);
    if (!m) throw new NinesError('NINES_ERR_INVALID_ARG', `addresses must be a range such as 0-9999; got "${values.addresses}"`, { field: 'addresses', value: values.addresses });
    opts.addresses = [Number(m[1]), Number(m[2])];
  }
  if (values.steps !== undefined) opts.steps = values.steps.split(',').map((s) => Number(s.trim()));
  // checked here, before the line is opened, so a refusal names the flag
  Object.assign(opts, flagErrors(() => normalizeScanOptions(opts), { timeout: '--timeout', maxDuration: '--max-duration' }));
  if (!/^[A-Za-z][\w-]*$/.test(values.name)) throw new NinesError('NINES_ERR_INVALID_ARG', `name must be a device name (a letter, then letters, digits, _ or -); got "${values.name}"`, { field: 'name', value: values.name });
  const out = (s) => { if (!values.json) process.stdout.write(s); };
  opts.onProgress = (e) => {
    if (e.kind === 'start') {
      out(`asking ${e.units} unit id(s) on ${positionals[0]}: timeout ${e.timeoutMs} ms${e.serial ? `, quiet ${e.quietMs} ms after each` : ''}; ` +
        `finding them takes at most ${(e.boundMs / 1000).toFixed(1)} s\n`);
    } else if (e.kind === 'unit') {
      out(`  unit ${e.unitId} answers\n`);
    }
  };
  const report = await scanLine(positionals[0], opts);
  if (values.json) process.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else process.stdout.write('\n' + require('../commission/report').formatReport(report));
  if (values['write-config'] !== undefined && report.units.length > 0) {
    if (!opts.map) throw new NinesError('NINES_ERR_INVALID_ARG', '--write-config needs the map: drop --no-map', { field: 'write-config' });
    const dir = values['write-config'];
    const { files, config } = require('../commission/starter').starterFiles(report, { name: values.name });
    fs.mkdirSync(dir, { recursive: true });
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text);
    out(`wrote ${Object.keys(files).map((f) => path.join(dir, f)).join(', ')}; check it with: nines run ${path.join(dir, config)} --check\n`);
  }
  return report.units.length > 0 ? 0 : 2;
}

module.exports = { main, USAGE };
