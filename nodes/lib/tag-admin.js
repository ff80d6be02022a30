'use strict';

/**
 * The editor's side of the tag list, on the Node-RED admin API: the dialogs of nines-poll,
 * nines-modbus-read and nines-modbus-write (resources/nines-tags.js) ask here instead of carrying
 * rules of their own, so the browser never re-implements the core's tag rules:
 * - GET  nines-tags/schema: tables per protocol, the types each takes and its default type, the
 *   word/byte orders, register widths; what the rows offer and show;
 * - POST nines-tags/check {protocol, device?, tags}: the core's problems with their paths
 *   ([3, 'address']) and each in plain words by row ("row 4, address: …; got …"), and, for a clean
 *   list, the reads one poll takes and the tags a write can write;
 * - POST nines-tags/sheet {protocol, device?, text}: a CSV tag sheet parsed into rows, with each
 *   problem's line and column; a malformed sheet gives the line (and column) and no rows.
 * A deployed device config node lends its request limits; a new one the protocol's.
 */

const { checkTags, parseTagSheet, planReads, tagContext, tagFields, readTag, MODBUS_TABLES, ASCII_TABLES, NUMERIC_TYPES, MAX_TAGS, KEYS } = require('../../gateway/tags');
const { TYPES, ORDERS } = require('../../gateway/values/registers');
const { toNinesError } = require('../../gateway/base/errors');
const { rawTags, NUMBER_FIELDS, NUMBER_TEXT } = require('./tag-list');

const PERMISSION = 'nines-tags.read';
/** Admin apps the endpoints were added to (each node file registers them; the first one does it) */
const registered = new WeakSet();

/**
 * Adds the endpoints to RED.httpAdmin, once per admin app.
 * @param {object} RED
 */
function registerTagAdmin (RED) {
  const app = RED.httpAdmin;
  if (!app || registered.has(app)) return;
  registered.add(app);
  const perm = RED.auth && RED.auth.needsPermission ? RED.auth.needsPermission(PERMISSION) : (req, res, next) => next();
  app.get('/nines-tags/schema', perm, (req, res) => res.json(schema()));
  app.post('/nines-tags/check', perm, (req, res) => answer(res, () => checkList(RED, req.body)));
  app.post('/nines-tags/sheet', perm, (req, res) => answer(res, () => readSheet(RED, req.body)));
}

/** Runs a handler; a request the handler cannot take gets a 400 with its coded error. */
function answer (res, fn) {
  try {
    res.json(fn());
  } catch (err) {
    const e = toNinesError(err, 'NINES_ERR_INVALID_ARG');
    res.status(400).json({ error: { code: e.code, message: e.message } });
  }
}

let cachedSchema = null;

/**
 * What the dialog offers, from the core's own tables: per protocol each table's kind, the types it
 * takes (its default first) and whether it is writable; the orders; register widths.
 * @returns {object}
 */
function schema () {
  if (cachedSchema !== null) return cachedSchema;
  const tables = (protocol, defs) => {
    const ctx = editorContext(protocol);
    const out = {};
    for (const [name, t] of Object.entries(defs)) {
      // the type the core gives a tag of this table with no type
      const def = checkTags([{ name: 'probe', table: name, address: 0 }], ctx).tags[0].type;
      const types = t.kind === 'registers' ? [...NUMERIC_TYPES, 'bit', 'bits', 'string'] : [def];
      const offered = [def, ...types.filter((x) => x !== def)];
      const fields = Object.fromEntries(offered.map((type) => [type, tagFields(t.kind, type)]));
      out[name] = { kind: t.kind, writable: t.writable, max: t.max === undefined ? 65535 : t.max, types: offered, fields };
    }
    return out;
  };
  const words = {};
  for (const t of NUMERIC_TYPES) words[t] = TYPES[t].words;
  cachedSchema = {
    protocols: { modbus: { tables: tables('modbus', MODBUS_TABLES) }, ascii: { tables: tables('ascii', ASCII_TABLES) } },
    orders: ORDERS,
    numericTypes: NUMERIC_TYPES,
    words,
    fields: KEYS,
    // what the runtime takes as a number typed as text (tag-list.js rawTag), and in which fields
    numberText: NUMBER_TEXT.source,
    numberFields: NUMBER_FIELDS
  };
  return cachedSchema;
}

/** The context of an editor request: a deployed device's limits, else the protocol's. */
function contextFor (RED, body) {
  if (!body || typeof body !== 'object') throw new TypeError('the request body must be a JSON object');
  const protocol = body.protocol;
  if (protocol !== 'ascii' && protocol !== 'modbus') throw new TypeError(`protocol must be "ascii" or "modbus"; got ${JSON.stringify(protocol)}`);
  const device = typeof body.device === 'string' && body.device !== '' ? RED.nodes.getNode(body.device) : null;
  if (device && device.protocol === protocol && device.spec) return tagContext(device.spec.target, device.spec);
  return editorContext(protocol);
}

/** A device not yet deployed: the protocol's limits; an ASCII address only to plan with */
function editorContext (protocol) {
  return tagContext(protocol === 'ascii' ? { protocol: 'ascii', address: '01' } : { protocol: 'modbus+tcp' }, {});
}

/**
 * @returns {{count: number, problems: Array<{path: Array<string|number>, value: unknown, rule: string, text: string}>,
 *   rows: Array<{table: string, type: string, fields: string[]}|null>, addressBase: 0|1, reads?: number, writable?: number}}
 */
function checkList (RED, body) {
  const ctx = contextFor(RED, body);
  const raw = rawTags(body.tags);
  const { tags, problems } = checkTags(raw, ctx);
  const out = {
    count: Array.isArray(body.tags) ? body.tags.length : 0,
    problems: problems.map((p) => ({ ...p, text: problemText(rowPlace(p.path), p) })),
    // each row as the core reads it (canonical table and type, the fields it takes), so the dialog
    // shows a row spelled "HR" / "INT" the fields the core applies to holding / int16
    rows: Array.isArray(raw) && raw.length <= MAX_TAGS ? raw.map((r) => readTag(r, ctx)) : [],
    addressBase: ctx.addressBase
  };
  if (problems.length === 0) {
    out.reads = planReads(tags, ctx).length;
    // what a write node can write of the list (a tag on a read-only table, or readOnly, is refused)
    out.writable = tags.filter((t) => !t.readOnly).length;
  }
  return out;
}

/**
 * @returns {{tags: object[], problems: object[]}|{error: {code: string, message: string, line?: number, column?: number, field?: string}}}
 */
function readSheet (RED, body) {
  const ctx = contextFor(RED, body);
  let sheet;
  try {
    sheet = parseTagSheet(body.text);
  } catch (err) {
    const e = toNinesError(err, 'NINES_ERR_INVALID_ARG');
    const d = e.details || {};
    return { error: { code: e.code, message: e.message, line: d.line, column: d.column, field: d.field } };
  }
  if (sheet.tags.length === 0) return { error: { code: 'NINES_ERR_INVALID_ARG', message: 'the tag sheet holds a header but no tag', line: 2 } };
  const { problems } = checkTags(sheet.tags, ctx);
  const located = problems.map((p) => {
    const index = typeof p.path[0] === 'number' ? p.path[0] : undefined;
    const row = index === undefined ? undefined : sheet.rows[index];
    const field = typeof p.path[1] === 'string' ? p.path[1] : undefined;
    const line = row ? row.line : undefined;
    const column = row && field ? row.columns[field] : undefined;
    const where = `line ${line === undefined ? '?' : line}${column === undefined ? '' : `, column ${column}`}${field ? ` (${field})` : ''}`;
    return { path: p.path, line, column, field, value: p.value, rule: p.rule, text: problemText(where, p) };
  }).sort((a, b) => (a.line || 0) - (b.line || 0) || (a.column || 0) - (b.column || 0));
  return { tags: sheet.tags, problems: located };
}

/**
 * Where a problem of the dialog's list is, as the dialog numbers its rows (from 1): "row 3, address",
 * "row 3", "the tag list".
 * @param {Array<string|number>} path the core's path ([2, 'address'])
 * @returns {string}
 */
function rowPlace (path) {
  if (typeof path[0] !== 'number') return 'the tag list';
  return `row ${path[0] + 1}${path.length > 1 ? `, ${path.slice(1).join('.')}` : ''}`;
}

/**
 * A problem in plain words, its place first: `row 3, address: must be an integer from 0 to 65535 …;
 * got "abc"`. A field left empty "is required" (the core's rule follows), rather than "nothing must be …".
 * @param {string} where rowPlace(), or a sheet's line and column
 * @param {{path: Array<string|number>, value: unknown, rule: string}} p the core's problem
 * @returns {string}
 */
function problemText (where, p) {
  if (p.path.length === 0) return `${where}: ${p.rule}`;
  if (p.value === undefined) return `${where}: is required${/^must /.test(p.rule) ? `; it ${p.rule}` : ` (${p.rule})`}`;
  return `${where}: ${p.rule}; got ${show(p.value)}`;
}

function show (v) {
  const text = JSON.stringify(v);
  return text.length > 60 ? text.slice(0, 59) + '…' : text;
}

module.exports = { registerTagAdmin, schema, PERMISSION };
