'use strict';

/**
 * "Scan line" in the Modbus device dialog, on the Node-RED admin API: the same scan as `nines scan`
 * (gateway/commission/scan.js) against the line the dialog holds, which finds the units, identifies
 * each (FC43) and maps what each answers. A scan only reads; it never writes to a device.
 * - POST nines-scan {transport, host, port, path, baudRate, parity, dataBits, stopBits, units?,
 *   timeout?, map?}: checks the request, answers at once with the scan's id and its bounds (how long
 *   finding the units takes at most, and the hard cap on the whole scan), then scans. A second scan
 *   of a line while one runs is refused (409, NINES_ERR_SCAN_BUSY): two scans on one line would
 *   answer each other's requests with timeouts.
 * - GET nines-scan/<id>: its state (running, done, failed), the units found so far, and when done
 *   the report (identities and maps per unit), its text table, the unit list to put in the dialog,
 *   and a starter CSV tag sheet per unit (the tag list dialogs import it).
 * Both need the write permission: a scan sends requests to devices on a plant's lines.
 */

const crypto = require('node:crypto');
const { NinesError, toNinesError } = require('../../gateway/base/errors');
const D = require('../../gateway/commission/defaults');
const { scanLine, normalizeScanOptions, parseUnitRange, lineUrl } = require('../../gateway/commission/scan');
const { discoveryBoundMs } = require('../../gateway/commission/discover');
const { modbusDevice } = require('./device-config');

const PERMISSION = 'nines-scan.write';
/**
 * Hard cap on a scan from the dialog (ms): shorter than the command line's, as someone waits in an
 * open dialog; discovery of 247 unit ids at the default 50 ms timeout on a serial line takes at most
 * 247 × 110 ms ≈ 27 s of it
 */
const ADMIN_SCAN_MAX_DURATION_MS = 2 * 60 * 1000;
/** Scans kept for GET after they end, the oldest dropped first */
const KEPT_SCANS = 16;
/** Lines scanned at once from the editor (each holds a connection and a loop of requests) */
const MAX_RUNNING = 4;
/** The dialog's fields that say where the line is; the rest of a device's settings play no part */
const LINE_FIELDS = Object.freeze(['transport', 'host', 'port', 'path', 'baudRate', 'parity', 'dataBits', 'stopBits']);
/** The starter config's device name: its tag sheets are named <name>-unit<id>.csv */
const SHEET_PREFIX = 'scan';

/** Admin apps the endpoints were added to */
const registered = new WeakSet();
/** @type {Map<string, object>} id → scan, in start order */
const scans = new Map();
/** @type {Set<string>} the lines being scanned */
const busyLines = new Set();

/**
 * Adds the endpoints to RED.httpAdmin, once per admin app.
 * @param {object} RED
 */
function registerScanAdmin (RED) {
  const app = RED.httpAdmin;
  if (!app || registered.has(app)) return;
  registered.add(app);
  const perm = RED.auth && RED.auth.needsPermission ? RED.auth.needsPermission(PERMISSION) : (req, res, next) => next();
  app.post('/nines-scan', perm, (req, res) => {
    let scan;
    try {
      scan = startScan(req.body);
    } catch (err) {
      const e = toNinesError(err, 'NINES_ERR_INVALID_ARG');
      res.status(e.code === 'NINES_ERR_SCAN_BUSY' ? 409 : 400).json({ error: { code: e.code, message: e.message, field: e.details && e.details.field } });
      return;
    }
    res.status(202).json(view(scan));
  });
  app.get('/nines-scan/:id', perm, (req, res) => {
    const scan = scans.get(req.params.id);
    if (scan === undefined) {
      res.status(404).json({ error: { code: 'NINES_ERR_INVALID_ARG', message: `no scan ${JSON.stringify(req.params.id)} (the last ${KEPT_SCANS} are kept)` } });
      return;
    }
    res.json(view(scan));
  });
}

/**
 * Checks a scan request once and starts the scan.
 * @param {unknown} body the dialog's line fields and the scan's options
 * @returns {object} the scan's record
 * @throws {NinesError} NINES_ERR_INVALID_ARG / NINES_ERR_INVALID_TARGET naming the field;
 *   NINES_ERR_SCAN_BUSY when the line is being scanned, or MAX_RUNNING lines are
 */
function startScan (body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', 'a scan request must be a JSON object of the device dialog\'s fields', { field: 'body' });
  }
  const fields = {};
  for (const f of LINE_FIELDS) if (body[f] !== undefined) fields[f] = body[f];
  // the device config node's own reader: the same rules and field names as a deploy
  const { target } = modbusDevice({ ...fields, unitId: 1 }, 'scan');
  const line = lineUrl(target.url);
  const units = parseUnitRange(body.units === undefined || body.units === '' ? `${D.SCAN_FIRST_UNIT}-${D.SCAN_LAST_UNIT}` : String(body.units), 'units');
  const opts = normalizeScanOptions({ units, timeoutMs: number(body.timeout), map: body.map !== false, maxDurationMs: ADMIN_SCAN_MAX_DURATION_MS });
  if (target.protocol !== 'modbus+tcp' && units.includes(0)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', 'units must not hold 0 on a serial line, where unit 0 is broadcast (no unit answers it)', { field: 'units', value: body.units });
  }
  if (busyLines.has(line)) {
    throw new NinesError('NINES_ERR_SCAN_BUSY', `a scan of ${line} is running; wait for it to end (at most ${ADMIN_SCAN_MAX_DURATION_MS / 1000} s)`, { line });
  }
  if (busyLines.size >= MAX_RUNNING) {
    throw new NinesError('NINES_ERR_SCAN_BUSY', `${busyLines.size} lines are being scanned, the most at once; wait for one to end`, { running: busyLines.size });
  }
  const scan = {
    id: crypto.randomUUID(),
    line,
    state: 'running',
    units: units.length,
    boundMs: discoveryBoundMs(units.length, opts),
    maxDurationMs: opts.maxDurationMs,
    timeoutMs: opts.timeoutMs,
    found: [],
    started: Date.now(),
    result: null,
    error: null
  };
  busyLines.add(line);
  keep(scan);
  scanLine(target, { ...opts, onProgress: (e) => { if (e.kind === 'unit') scan.found.push(e.unitId); } }).then((report) => {
    scan.state = 'done';
    scan.result = result(report);
  }, (err) => {
    const e = toNinesError(err);
    scan.state = 'failed';
    scan.error = { code: e.code, message: e.message };
  }).finally(() => {
    scan.elapsedMs = Date.now() - scan.started;
    busyLines.delete(line);
  });
  return scan;
}

/** A field as typed: undefined when empty (the default), a number when it reads as one, else as it is (refused with its value) */
function number (v) {
  if (v === undefined || v === null || v === '') return undefined;
  return typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
}

/** Keeps a scan for GET, dropping the oldest that has ended when there are too many */
function keep (scan) {
  scans.set(scan.id, scan);
  for (const [id, s] of scans) {
    if (scans.size <= KEPT_SCANS) break;
    if (s.state !== 'running') scans.delete(id);
  }
}

/**
 * What the dialog shows of a finished scan.
 * @param {import('../../gateway/commission/scan').ScanReport} report
 * @returns {{report: object, text: string, unitList: string, sheets: Record<string, string>}}
 */
function result (report) {
  const { formatReport, compact } = require('../../gateway/commission/report');
  const { starterFiles } = require('../../gateway/commission/starter');
  const sheets = {};
  if (report.units.some((u) => u.map)) {
    const { files } = starterFiles(report, { name: SHEET_PREFIX });
    for (const u of report.units) {
      const file = `${SHEET_PREFIX}-unit${u.unitId}.csv`;
      if (files[file] !== undefined) sheets[u.unitId] = files[file];
    }
  }
  return { report, text: formatReport(report), unitList: compact(report.units.map((u) => u.unitId)), sheets };
}

/** A scan as the API shows it */
function view (s) {
  const out = { id: s.id, state: s.state, line: s.line, units: s.units, boundMs: s.boundMs, maxDurationMs: s.maxDurationMs, timeoutMs: s.timeoutMs, found: s.found };
  if (s.elapsedMs !== undefined) out.elapsedMs = s.elapsedMs;
  if (s.result !== null) Object.assign(out, s.result);
  if (s.error !== null) out.error = s.error;
  return out;
}

module.exports = { registerScanAdmin, PERMISSION, ADMIN_SCAN_MAX_DURATION_MS };
