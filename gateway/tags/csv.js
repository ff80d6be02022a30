'use strict';

/**
 * Tag sheets: a tag list as CSV, the way plants keep their IO lists (one row per tag, exported from
 * a spreadsheet). The header names the columns, in any order and case, the tag fields of spec.js:
 *
 *   name,table,address,type,order,scale,unit,deadband
 *   boiler_temp,holding,100,float32,CDAB,0.1,°C,0.2
 *   pump_on,coil,3,,,,,
 *
 * A cell holds what the field holds in YAML: a bits tag's `bit` a range (4-6), an `enum` its pairs
 * as text (0=off|1=heat|2=cool, tags/enum.js), `byte` high or low, `scaleFrom` a tag name.
 *
 * Comma, semicolon (spreadsheets in locales with a decimal comma) or tab separated, found from the
 * header; quotes as RFC 4180; empty cells are absent fields; lines starting with # are comments.
 * Every problem names its line and column, the sheet's own coordinates, and the field: a malformed
 * sheet (an unclosed quote, a row with more cells than the header) as much as a tag that fails the
 * tag rules. Parsing is csv-parse's, a well-kept parser with the RFC's quoting rules.
 */

const { NinesError } = require('../base/errors');
const { checkTags, KEYS } = require('./spec');

/** Largest sheet read (bytes): 10,000 tags of about 100 characters */
const MAX_SHEET_BYTES = 2 * 1024 * 1024;
const INTEGER_FIELDS = Object.freeze(['address', 'bit', 'length']);
const NUMBER_FIELDS = Object.freeze(['scale', 'offset', 'deadband']);
const BOOLEAN_FIELDS = Object.freeze(['readOnly']);
/** A range of bits (a bits tag's `bit`), kept as text for the tag rules */
const BIT_RANGE_TEXT = /^\d+\s*-\s*\d+$/;
/** header spelling (lower case, no spaces, _ or -) → field */
const COLUMNS = Object.freeze(Object.fromEntries(KEYS.map((k) => [k.toLowerCase(), k])));

/**
 * Parses a tag sheet into raw tags (not yet checked against the tag rules).
 * @param {string} text
 * @returns {{tags: object[], rows: Array<{line: number, columns: Record<string, number>}>}} rows[i] says
 *   where tag i came from: its line and the 1-based column of each field
 * @throws {NinesError} NINES_ERR_INVALID_ARG with details {line, column?, field?}
 */
function parseTagSheet (text) {
  if (typeof text !== 'string') throw sheetError(`a tag sheet must be text; got ${typeof text}`, {});
  if (Buffer.byteLength(text) > MAX_SHEET_BYTES) throw sheetError(`a tag sheet may hold at most ${MAX_SHEET_BYTES} bytes`, {});
  const body = text.replace(/^\uFEFF/, ''); // a BOM, as spreadsheets write it
  const firstLine = (body.split(/\r?\n/).find((l) => l.trim() !== '' && !l.startsWith('#')) || '');
  const delimiter = [',', ';', '\t'].map((d) => [d, firstLine.split(d).length]).sort((a, b) => b[1] - a[1])[0][0];
  const { parse } = require('csv-parse/sync');
  let records;
  try {
    records = parse(body, { delimiter, comment: '#', comment_no_infix: true, skip_empty_lines: true, trim: true, info: true, relax_column_count: false });
  } catch (err) {
    throw sheetError(`tag sheet line ${err.lines || '?'}: ${csvProblem(err, firstLine.split(delimiter).length)}`, { line: err.lines, cause: err.code });
  }
  if (records.length === 0) throw sheetError('a tag sheet needs a header row naming its columns (name, table, address, type, …)', { line: 1 });
  const header = records[0].record;
  const headerLine = records[0].info.lines;
  const fields = header.map((h, c) => {
    const field = COLUMNS[String(h).toLowerCase().replace(/[\s_-]+/g, '')];
    if (field === undefined) throw sheetError(`tag sheet line ${headerLine}, column ${c + 1}: ${JSON.stringify(h)} is not a tag field (known: ${KEYS.join(', ')})`, { line: headerLine, column: c + 1 });
    return field;
  });
  const dup = fields.find((f, c) => fields.indexOf(f) !== c);
  if (dup !== undefined) throw sheetError(`tag sheet line ${headerLine}: column ${JSON.stringify(dup)} appears twice`, { line: headerLine, field: dup });
  const tags = [];
  const rows = [];
  for (const { record, info } of records.slice(1)) {
    const tag = {};
    const columns = {};
    record.forEach((cell, c) => {
      const field = fields[c];
      columns[field] = c + 1;
      if (cell === '') return;
      tag[field] = typed(field, cell, info.lines, c + 1);
    });
    tags.push(tag);
    rows.push({ line: info.lines, columns });
  }
  return { tags, rows };
}

/**
 * Parses a tag sheet and checks its tags (spec.js); problems name the sheet's line and column.
 * @param {string} text
 * @param {import('./spec').TagContext} ctx
 * @param {string} [source='tag sheet'] the sheet's name in messages (a file path)
 * @returns {import('./spec').Tag[]}
 * @throws {NinesError} NINES_ERR_INVALID_ARG; details.problems lists {line, column, field, value, rule}
 */
function loadTagSheet (text, ctx, source = 'tag sheet') {
  const { tags, rows } = parseTagSheet(text);
  if (tags.length === 0) throw sheetError(`${source} holds a header but no tag`, { line: 2 });
  const { tags: checked, problems } = checkTags(tags, ctx);
  if (problems.length === 0) return checked;
  const located = problems.map((p) => {
    const row = typeof p.path[0] === 'number' ? rows[p.path[0]] : undefined;
    const field = typeof p.path[1] === 'string' ? p.path[1] : undefined;
    return {
      line: row ? row.line : undefined,
      column: row && field && row.columns[field] !== undefined ? row.columns[field] : undefined,
      field,
      value: p.value,
      rule: p.rule
    };
  }).sort((a, b) => (a.line || 0) - (b.line || 0) || (a.column || 0) - (b.column || 0));
  const text1 = (p) => `${source} line ${p.line === undefined ? '?' : p.line}${p.column === undefined ? '' : `, column ${p.column}`}${p.field ? ` (${p.field})` : ''}: ${JSON.stringify(p.value) ?? 'nothing'} ${p.rule}`;
  const message = located.length === 1 ? text1(located[0]) : `${located.length} problems in ${source}:\n  ${located.map(text1).join('\n  ')}`;
  throw new NinesError('NINES_ERR_INVALID_ARG', message, { line: located[0].line, column: located[0].column, field: located[0].field, problems: located });
}

/** csv-parse's error in the sheet's words (headerCells: the header's cells, for a row of another length) */
function csvProblem (err, headerCells) {
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') return 'a quote opened on this line is never closed';
  if (err.code === 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH' && Array.isArray(err.record)) return `has ${err.record.length} cells, but the header names ${headerCells} columns`;
  return err.message.replace(/^[^:]*: /, '');
}

/** A cell as its field's type. */
function typed (field, cell, line, column) {
  if (field === 'bit' && BIT_RANGE_TEXT.test(cell)) return cell;
  if (INTEGER_FIELDS.includes(field) || NUMBER_FIELDS.includes(field)) {
    // a decimal comma from a semicolon-separated sheet (0,1) reads as 0.1
    const n = Number(cell.replace(/^(-?\d+),(\d+)$/, '$1.$2'));
    if (!Number.isFinite(n) || (INTEGER_FIELDS.includes(field) && !Number.isInteger(n))) {
      throw sheetError(`tag sheet line ${line}, column ${column} (${field}): ${JSON.stringify(cell)} is not ${INTEGER_FIELDS.includes(field) ? 'a whole number' : 'a number'}`, { line, column, field });
    }
    return n;
  }
  if (BOOLEAN_FIELDS.includes(field)) {
    const v = cell.toLowerCase();
    if (['true', 'yes', '1', 'y'].includes(v)) return true;
    if (['false', 'no', '0', 'n'].includes(v)) return false;
    throw sheetError(`tag sheet line ${line}, column ${column} (${field}): ${JSON.stringify(cell)} is not true or false`, { line, column, field });
  }
  return cell;
}

function sheetError (message, details) {
  return new NinesError('NINES_ERR_INVALID_ARG', message, details);
}

module.exports = { parseTagSheet, loadTagSheet, MAX_SHEET_BYTES };
