'use strict';

/**
 * The fenced code blocks of the README and the docs/ pages, and the shell commands in them, for
 * test/docs/snippets.test.js. Pure: reads files, runs nothing.
 *
 * A block may carry one HTML comment on the line right before its fence, saying how to take it:
 *   <!-- file: name -->         a file the page's other blocks use (a tag sheet, a gateway.yaml),
 *                               written under that name beside them
 *   <!-- fragment -->           YAML that is no config, even with a minimal one around it: parsed only
 *   <!-- payload: kind -->      a JSON payload, compared with what the gateway publishes
 *   <!-- output of: program --> a program's output, compared with what it printed in the walkthrough
 *   <!-- unchecked: why -->     a block the test cannot check: counted, and the count is held small
 */

const fs = require('node:fs');
const path = require('node:path');

const ROOT = path.join(__dirname, '..', '..');
/** The design records in docs/: their blocks are history and sketches, not instructions */
const RECORDS = new Set(['design.md', 'style.md', 'latency-method.md', 'ascii-protocol.md']);

/**
 * The documentation pages whose blocks are checked: README.md and docs/*.md but the records
 * (docs/reference/ is records too, and is not read).
 * @returns {string[]} paths relative to the repository root
 */
function docPages () {
  const pages = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && !RECORDS.has(f)).sort();
  return ['README.md', ...pages.map((f) => `docs/${f}`)];
}

/**
 * @typedef {object} Block
 * @property {string} page e.g. docs/gateway.md
 * @property {number} line 1-based line of the opening fence
 * @property {string} lang the fence's info string ('' when none)
 * @property {string} code
 * @property {{kind: string, arg: string}|null} mark the comment before the fence
 */

/**
 * @param {string} page relative to the repository root
 * @returns {Block[]}
 */
function blocksOf (page) {
  const lines = fs.readFileSync(path.join(ROOT, page), 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]);
    if (!open) continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`${page}:${i + 1}: a fence that does not close`);
    const m = i > 0 ? /^<!--\s*([a-z ]+?)(?::\s*(.*?))?\s*-->$/.exec(lines[i - 1]) : null;
    out.push({ page, line: i + 1, lang: open[1], code: lines.slice(i + 1, end).join('\n'), mark: m ? { kind: m[1], arg: m[2] || '' } : null });
    i = end;
  }
  return out;
}

/**
 * Splits shell text into commands, each a list of words: backslash-newline joins lines, `#`
 * starts a comment, `&&` and `;` separate commands, quotes group words (no expansion).
 * @param {string} text
 * @returns {string[][]}
 */
function shellCommands (text) {
  const commands = [];
  let words = [];
  let word = null;
  const endWord = () => { if (word !== null) words.push(word); word = null; };
  const endCommand = () => { endWord(); if (words.length) commands.push(words); words = []; };
  const src = text.replace(/\\\n/g, ' ');
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "'" || c === '"') {
      const close = src.indexOf(c, i + 1);
      if (close < 0) throw new Error(`unclosed ${c} in: ${text}`);
      word = (word || '') + src.slice(i + 1, close);
      i = close;
    } else if (c === '#' && word === null) {
      while (i < src.length && src[i] !== '\n') i++;
      endCommand();
    } else if (c === '\n' || c === ';') {
      endCommand();
    } else if (c === '&' && src[i + 1] === '&') {
      endCommand();
      i++;
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else {
      word = (word || '') + c;
    }
  }
  endCommand();
  return commands;
}

/**
 * The `nines` arguments of a command (`nines run x`, `npx nines run x`), or null for another program.
 * @param {string[]} words
 * @returns {string[]|null}
 */
function ninesArgs (words) {
  if (words[0] === 'nines') return words.slice(1);
  if (words[0] === 'npx' && words[1] === 'nines') return words.slice(2);
  return null;
}

/**
 * A copy of args with option `name`'s value replaced (or the option added).
 * @param {string[]} args
 * @param {string} name e.g. '--port'
 * @param {string} value
 * @returns {string[]}
 */
function withOption (args, name, value) {
  const out = args.slice();
  const i = out.indexOf(name);
  if (i >= 0) out[i + 1] = value;
  else out.push(name, value);
  return out;
}

module.exports = { ROOT, docPages, blocksOf, shellCommands, ninesArgs, withOption };
