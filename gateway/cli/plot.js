'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parse } = require('./args');
const { NinesError } = require('../base/errors');

const USAGE = `Usage: nines plot a.hgrm [b.hgrm …] -o plot.svg [--title TEXT]

Draws a percentile plot (HdrHistogram style: latency against a log "nines" axis, 90% … 99.999%)
of one or more .hgrm files, one line each, as an SVG file.

Options:
  -o, --output <file>   where to write the SVG (default plot.svg)
  --title <text>        the plot's title
`;

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    output: { type: 'string', short: 'o', default: 'plot.svg' },
    title: { type: 'string' }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  if (positionals.length === 0) throw new NinesError('NINES_ERR_INVALID_ARG', `nines plot needs at least one .hgrm file\n\n${USAGE}`);
  const { parseHgrm, percentilePlotSvg } = require('../latency');
  const series = positionals.map((file) => {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `cannot read ${file}: ${err.message}`, { file });
    }
    let rows;
    try {
      rows = parseHgrm(text).rows;
    } catch (err) {
      // name the file: with several, "text line 1 …" alone does not say which (issue 21)
      throw new NinesError(err.code || 'NINES_ERR_INVALID_ARG', `${file} is not a percentile distribution (.hgrm): ${err.message}`, { ...(err.details || {}), file });
    }
    return { label: path.basename(file).replace(/\.hgrm$/, ''), rows };
  });
  const svg = percentilePlotSvg(series, { title: values.title || 'Latency by percentile', unit: 'ms' });
  fs.writeFileSync(values.output, svg);
  process.stdout.write(`wrote ${values.output} (${series.length} series)\n`);
  return 0;
}

module.exports = { main, USAGE };
