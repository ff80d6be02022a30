'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { NinesError } = require('../../base/errors');
const { checkConfig } = require('./validate');
const { Problems } = require('./problems');
const { checkLimits } = require('./limits');
const D = require('./defaults');

/**
 * Reads a gateway config from a file or from text, YAML or JSON, and validates it. Syntax errors
 * and validation problems carry the line and column in the source, so an editor can jump there.
 */

const FORMATS = ['yaml', 'json'];
/** yaml's own default: a config needs a few aliases, never a tree of them */
const YAML_MAX_ALIAS_COUNT = 100;

/**
 * Text or path? Text has a line break, starts like JSON, or has a "key: value" colon; a path
 * has none of these.
 * @param {string} s
 * @returns {boolean}
 */
function looksLikeText (s) {
  return /[\r\n]/.test(s) || /^\s*[{[]/.test(s) || /:\s/.test(s);
}

/** @returns {'yaml'|'json'|null} */
function formatFromExtension (file) {
  const ext = path.extname(file).toLowerCase();
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  if (ext === '.json') return 'json';
  return null;
}

/** @returns {'yaml'|'json'} JSON when the text starts with "{", YAML otherwise (YAML reads JSON too) */
function formatFromContent (text) {
  return /^\s*\{/.test(text) ? 'json' : 'yaml';
}

/** 1-based line and column of a character offset */
function linePos (text, offset) {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/** One problem with the document as a whole as a NINES_ERR_CONFIG error, with its position */
function documentError (source, rule, pos) {
  const where = `${source || '<text>'}:${pos.line}:${pos.column}`;
  return new NinesError('NINES_ERR_CONFIG', `invalid gateway config ${where}: ${rule}`, {
    source,
    errors: [{ path: '', value: undefined, rule, line: pos.line, column: pos.column }]
  });
}

/** One syntax error as a NINES_ERR_CONFIG error, with its position */
function syntaxError (source, format, rule, pos) {
  return documentError(source, `${format.toUpperCase()} syntax error: ${rule}`, pos);
}

/**
 * The config text is larger than CONFIG_MAX_BYTES.
 * @param {string|undefined} source
 * @param {number} bytes the size, or a lower bound of it
 * @param {boolean} [atLeast] whether `bytes` is a lower bound (the rest was not read)
 */
function tooLarge (source, bytes, atLeast = false) {
  const rule = `is ${atLeast ? 'over ' : ''}${bytes} bytes; at most ${D.CONFIG_MAX_BYTES} (${D.CONFIG_MAX_BYTES / 1048576} MiB)`;
  return new NinesError('NINES_ERR_CONFIG', `invalid gateway config ${source || '<text>'}: ${rule}`, {
    source, errors: [{ path: '', value: undefined, rule }]
  });
}

/**
 * Reads a file as UTF-8, but never more than CONFIG_MAX_BYTES + 1 bytes of it, so an oversized
 * file (or an endless pipe such as /dev/zero) costs no more memory than the limit.
 * @param {string} file absolute path
 * @returns {string}
 * @throws {NinesError} NINES_ERR_CONFIG past the limit; the fs error otherwise
 */
function readCapped (file) {
  const fd = fs.openSync(file, 'r');
  try {
    const st = fs.fstatSync(fd);
    if (st.isFile() && st.size > D.CONFIG_MAX_BYTES) throw tooLarge(file, st.size);
    const buf = Buffer.allocUnsafe(D.CONFIG_MAX_BYTES + 1);
    let n = 0;
    let got;
    // a pipe or a file still growing has no size up front: read until end or past the limit
    while (n < buf.length && (got = fs.readSync(fd, buf, n, buf.length - n, null)) > 0) n += got;
    if (n > D.CONFIG_MAX_BYTES) throw tooLarge(file, D.CONFIG_MAX_BYTES, true);
    return buf.toString('utf8', 0, n);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Parses YAML (also used for JSON, to find duplicate keys and positions, which JSON.parse gives
 * neither of).
 * @returns {{doc: import('yaml').Document, lineCounter: import('yaml').LineCounter}}
 */
function parseYamlDocument (text) {
  const YAML = require('yaml');
  const lineCounter = new YAML.LineCounter();
  const doc = YAML.parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  return { doc, lineCounter };
}

function yamlErrorRule (e, text) {
  let rule = String(e.message).split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
  if (e.code === 'BAD_SCALAR_START') rule += ' (quote ASCII commands and generator names, e.g. command: "@01")';
  // `command: #01` inside { … } comments out the rest of the line, and YAML then complains about
  // the unclosed brace somewhere below: name the likely cause
  const upTo = text.split('\n').slice(0, yamlErrorPos(e, text).line);
  const hashLine = upTo.findIndex((l) => /\b(command|generator)\s*:\s*#/.test(l));
  if (hashLine >= 0) rule += ` (line ${hashLine + 1}: a # after a space starts a YAML comment; quote commands, e.g. command: "#01")`;
  if (e.code === 'DUPLICATE_KEY') rule = 'a key appears twice in the same mapping (map keys must be unique)';
  return rule;
}

function yamlErrorPos (e, text) {
  if (e.linePos && e.linePos[0]) return { line: e.linePos[0].line, column: e.linePos[0].col };
  return linePos(text, e.pos ? e.pos[0] : 0);
}

/**
 * Where an error thrown while turning the YAML document into objects points: at the alias it
 * names ("Unresolved alias … : x"), else at the first alias (the only other cause in yaml 2 is
 * maxAliasCount, an alias bomb), else at the start.
 * @returns {{line: number, column: number}}
 */
function aliasPos (doc, lineCounter, message) {
  const YAML = require('yaml');
  const named = /: (\S+)$/.exec(message);
  let first;
  let match;
  YAML.visit(doc, {
    Alias (_, node) {
      if (!first) first = node;
      if (named && node.source === named[1]) { match = node; return YAML.visit.BREAK; }
      return undefined;
    }
  });
  const node = match || first;
  const p = lineCounter.linePos(node && node.range ? node.range[0] : 0);
  return { line: p.line, column: p.col };
}

/**
 * Counts the jobs and devices in the YAML document's own nodes (before any object is built).
 * A section that is an alias or not a list/mapping is left to the checks after toJS.
 * @returns {{jobs?: number, devices?: number}}
 */
function countDocSections (doc) {
  const YAML = require('yaml');
  if (!YAML.isMap(doc.contents)) return {};
  const jobs = doc.contents.get('jobs', true);
  const devices = doc.contents.get('devices', true);
  return {
    jobs: YAML.isSeq(jobs) ? jobs.items.length : undefined,
    devices: YAML.isMap(devices) ? devices.items.length : undefined
  };
}

/**
 * Maps a field path to the line and column of its key (or of the nearest parent that exists).
 * @returns {{line: number, column: number}|undefined}
 */
function locator (doc, lineCounter) {
  const YAML = require('yaml');
  return (segs) => {
    let node = doc.contents;
    let offset = node && node.range ? node.range[0] : undefined;
    for (const seg of segs) {
      if (YAML.isMap(node)) {
        const pair = node.items.find((p) => p.key && String(YAML.isScalar(p.key) ? p.key.value : p.key) === String(seg));
        if (!pair) break;
        const anchor = pair.key && pair.key.range ? pair.key : pair.value;
        if (anchor && anchor.range) offset = anchor.range[0];
        node = pair.value;
      } else if (YAML.isSeq(node) && typeof seg === 'number' && node.items[seg]) {
        node = node.items[seg];
        if (node.range) offset = node.range[0];
      } else {
        break;
      }
    }
    if (offset === undefined) return undefined;
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
}

/**
 * Parses the text into a plain object; throws NINES_ERR_CONFIG with line/column on a syntax error.
 * @returns {{obj: *, locate: Function|undefined}}
 */
function parse (text, format, source) {
  if (format === 'json') {
    let obj;
    try {
      obj = JSON.parse(text);
    } catch (err) {
      const m = /at position (\d+)/.exec(err.message);
      const rule = err.message.replace(/\s*\(line \d+ column \d+\)/, '').replace(/ in JSON at position \d+/, '');
      throw syntaxError(source, 'json', rule, linePos(text, m ? Number(m[1]) : text.length));
    }
    let locate;
    try {
      const { doc, lineCounter } = parseYamlDocument(text);
      const dup = doc.errors.find((e) => e.code === 'DUPLICATE_KEY');
      if (dup) throw syntaxError(source, 'json', yamlErrorRule(dup, text), yamlErrorPos(dup, text));
      if (!doc.errors.length) locate = locator(doc, lineCounter);
    } catch (err) {
      if (err instanceof NinesError) throw err;
      // positions are a convenience; valid JSON that YAML cannot read just goes without them
    }
    return { obj, locate };
  }
  const { doc, lineCounter } = parseYamlDocument(text);
  if (doc.errors.length) {
    const e = doc.errors[0];
    throw syntaxError(source, 'yaml', yamlErrorRule(e, text), yamlErrorPos(e, text));
  }
  const locate = locator(doc, lineCounter);
  const limits = new Problems();
  if (!checkLimits(countDocSections(doc), limits)) throw limits.toError({ source: source || '<text>', locate });
  let obj;
  try {
    // maxAliasCount bounds what aliases may expand to: a "billion laughs" document fails here
    obj = doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  } catch (err) {
    const rule = /Excessive alias count/.test(err.message)
      ? `YAML aliases expand too far (${err.message}); at most ${YAML_MAX_ALIAS_COUNT} alias expansions`
      : `YAML ${err.message}`;
    throw documentError(source, rule, aliasPos(doc, lineCounter, String(err.message)));
  }
  return { obj, locate };
}

/**
 * Loads and validates a gateway config.
 * @param {string|Buffer} pathOrText a file path, or the config text itself (text has a line
 *   break, a "key: value" colon, or starts with "{")
 * @param {object} [opts]
 * @param {'yaml'|'json'} [opts.format] default: from the file extension (.yaml .yml .json), else
 *   from the content ("{" → JSON, otherwise YAML)
 * @param {Record<string, string|undefined>} [opts.env=process.env] for NINES_MQTT_PASSWORD
 * @param {string} [opts.baseDir] where relative TLS paths start: default the file's directory,
 *   or the working directory for text
 * @returns {import('./validate').Config}
 * @throws {NinesError} NINES_ERR_CONFIG (unreadable file, larger than CONFIG_MAX_BYTES, syntax
 *   error or alias bomb with line/column, over CONFIG_MAX_JOBS or CONFIG_MAX_DEVICES, or
 *   validation problems in details.errors); NINES_ERR_INVALID_ARG for a bad argument
 */
function loadConfig (pathOrText, { format, env = process.env, baseDir } = {}) {
  if (format !== undefined && !FORMATS.includes(format)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `format must be "yaml" or "json"; got ${JSON.stringify(format)}`, { field: 'format', value: format });
  }
  let text;
  let file = null;
  if (Buffer.isBuffer(pathOrText)) {
    if (pathOrText.length > D.CONFIG_MAX_BYTES) throw tooLarge(undefined, pathOrText.length);
    text = pathOrText.toString('utf8');
  } else if (typeof pathOrText !== 'string' || pathOrText.trim() === '') {
    throw new NinesError('NINES_ERR_INVALID_ARG', `config must be a file path or the config text; got ${JSON.stringify(pathOrText)}`, { field: 'pathOrText', value: pathOrText });
  } else if (looksLikeText(pathOrText)) {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: measure exactly only when that could matter
    if (pathOrText.length * 3 > D.CONFIG_MAX_BYTES && Buffer.byteLength(pathOrText) > D.CONFIG_MAX_BYTES) {
      throw tooLarge(undefined, Buffer.byteLength(pathOrText));
    }
    text = pathOrText;
  } else {
    file = path.resolve(pathOrText);
    try {
      text = readCapped(file);
    } catch (err) {
      if (err instanceof NinesError) throw err;
      const why = err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.code === 'EISDIR' ? 'is a directory' : err.message;
      throw new NinesError('NINES_ERR_CONFIG', `cannot read gateway config ${file}: ${why}`, {
        source: file, errors: [{ path: '', value: file, rule: `cannot be read: ${why}` }], cause: err.code
      });
    }
  }
  text = text.replace(/^\uFEFF/, '');
  const fmt = format || (file && formatFromExtension(file)) || formatFromContent(text);
  const source = file || undefined;
  const { obj, locate } = parse(text, fmt, source);
  if (obj === null || obj === undefined) {
    const p = new Problems();
    p.add([], undefined, 'is empty; expected a mapping with the sections gateway, mqtt, devices and jobs');
    throw p.toError({ source });
  }
  const { config, problems } = checkConfig(obj, { env, baseDir: baseDir || (file ? path.dirname(file) : process.cwd()) });
  if (!config) throw problems.toError({ source: source || '<text>', locate });
  config.source = { path: file, format: fmt };
  return config;
}

module.exports = { loadConfig, looksLikeText };
