'use strict';

/**
 * HdrHistogram interval logs (`.hlog`, format 1.3, latency-notes §3), readable by Java's
 * HistogramLogProcessor and HistogramLogAnalyzer (which assume ns, as we record).
 *
 * Written here rather than with the library's HistogramLogWriter, which emits a stray blank line
 * after StartTime, does not check tags, and prints the raw (not highest-equivalent) max with a
 * µs-oriented default ratio (latency-notes §1.8 #9). Read here rather than with the library's
 * reader, which decodes without any check (§1.8 #12).
 */

const { checkHistogram, encodeHistogram, decodeHistogram } = require('./histogram');
const { checkSnapshot, HIST_FIELDS } = require('./snapshot');
const { NinesError } = require('../base/errors');
const { invalid, finite, plainObject } = require('./validate');

const LEGEND = '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"';
/** Readers split on commas and spaces (Java's scanner also on line breaks); Java's own check only catches 3-character tags. */
const TAG = /^[^\s,]+$/;
/** ns per ms: Interval_Max in ms, as Java's writer (ratio 1e6) and HistogramLogAnalyzer expect */
const MAX_RATIO = 1e6;
const YEAR_SEC = 365 * 24 * 3600;

/**
 * @param {unknown} tag
 * @returns {string}
 */
function checkTag (tag) {
  if (typeof tag !== 'string' || !TAG.test(tag)) {
    throw invalid('tag', tag, 'a non-empty string without commas, spaces or line breaks (readers split on them)');
  }
  return tag;
}

class HlogWriter {
  /**
   * Writes the header at once:
   * `#[nines <comment> unit=ns]`, `#[Histogram log format version 1.3]`,
   * `#[StartTime: <s.mmm> (seconds since epoch), <ISO date>]` and the legend.
   * @param {object} options
   * @param {string} [options.comment] e.g. "0.1.0 gateway=gw1 job=plc7"; no line breaks
   * @param {number} options.startTimeMs epoch ms; interval starts are written relative to it
   * @param {(text: string) => void} options.write receives whole lines, each ending in "\n"
   */
  constructor (options) {
    plainObject(options, 'options');
    const { comment, startTimeMs, write } = options;
    if (comment !== undefined && (typeof comment !== 'string' || /[\r\n]/.test(comment))) {
      throw invalid('options.comment', comment, 'a string without line breaks');
    }
    finite(startTimeMs, 'options.startTimeMs');
    if (startTimeMs < 0) throw invalid('options.startTimeMs', startTimeMs, 'epoch milliseconds >= 0');
    if (typeof write !== 'function') throw invalid('options.write', write, 'a function taking text');
    this._write = write;
    this.startTimeMs = startTimeMs;
    write(`#[nines${comment ? ` ${comment}` : ''} unit=ns]\n`);
    write('#[Histogram log format version 1.3]\n');
    write(`#[StartTime: ${(startTimeMs / 1000).toFixed(3)} (seconds since epoch), ${new Date(startTimeMs).toISOString()}]\n`);
    write(`${LEGEND}\n`);
  }

  /**
   * Writes `Tag=<tag>,<start>,<length>,<max ms>,<base64>`; start in seconds relative to StartTime.
   * @param {{tag: string, histogram: import('hdr-histogram-js').Histogram, startMs: number, endMs: number}} interval
   *   histogram in ns with nines' configuration; startMs >= the log's startTimeMs; endMs >= startMs
   */
  writeInterval (interval) {
    plainObject(interval, 'interval');
    const h = checkHistogram(interval.histogram, 'interval.histogram');
    // Java prints getMaxValue(), the top bucket's highest equivalent value.
    const maxMs = h.totalCount > 0 ? h.getValueAtPercentile(100) / MAX_RATIO : 0;
    this._writeLine(interval, maxMs, encodeHistogram(h));
  }

  /**
   * Writes an interval that was encoded where its histogram lives (a worker thread), so the
   * histogram is encoded once for MQTT and the log alike.
   * @param {{tag: string, encoded: string, maxMs: number, startMs: number, endMs: number}} interval from encodeInterval()
   */
  writeEncodedInterval (interval) {
    plainObject(interval, 'interval');
    const maxMs = finite(interval.maxMs, 'interval.maxMs');
    if (typeof interval.encoded !== 'string' || interval.encoded === '') throw invalid('interval.encoded', interval.encoded, 'a base64 histogram');
    this._writeLine(interval, maxMs, interval.encoded);
  }

  /**
   * Checks an interval's tag, start and end, then writes its line (both kinds of interval).
   * @param {{tag: string, startMs: number, endMs: number}} interval
   * @param {number} maxMs @param {string} encoded the histogram in base64
   */
  _writeLine (interval, maxMs, encoded) {
    const tag = checkTag(interval.tag);
    const startMs = finite(interval.startMs, 'interval.startMs');
    const endMs = finite(interval.endMs, 'interval.endMs');
    if (startMs < this.startTimeMs) throw invalid('interval.startMs', startMs, `>= the log's startTimeMs (${this.startTimeMs})`);
    if (endMs < startMs) throw invalid('interval.endMs', endMs, `>= interval.startMs (${startMs})`);
    const start = ((startMs - this.startTimeMs) / 1000).toFixed(3);
    const length = ((endMs - startMs) / 1000).toFixed(3);
    this._write(`Tag=${tag},${start},${length},${maxMs.toFixed(3)},${encoded}\n`);
  }

  /**
   * Writes a snapshot's three histograms as Tag=response, Tag=service and Tag=lag lines.
   * @param {import('./snapshot').Snapshot} snapshot
   */
  writeSnapshot (snapshot) {
    const snap = checkSnapshot(snapshot);
    for (const tag of HIST_FIELDS) {
      this.writeInterval({ tag, histogram: snap[tag], startMs: snap.startMs, endMs: snap.endMs });
    }
  }
}

/**
 * @typedef {object} HlogInterval
 * @property {string|null} tag null for an untagged line
 * @property {number} startSec the line's timestamp as written (relative or absolute seconds)
 * @property {number} lengthSec
 * @property {number} max Interval_Max as written (ms in nines logs)
 * @property {import('./paged-histogram').PagedHistogram} histogram checked decode, ns; its
 *   startTimeStampMsec, endTimeStampMsec and tag are set from the line
 * @property {number} startMs absolute start, epoch ms, by Java's rule: BaseTime + start if a BaseTime
 *   line exists; else StartTime + start when the first timestamp is over a year before StartTime;
 *   else start is absolute
 */

/**
 * One interval of one histogram as writeEncodedInterval() takes it: plain data, computed where the
 * histogram lives.
 * @param {string} tag
 * @param {import('hdr-histogram-js').Histogram} histogram ns
 * @param {number} startMs
 * @param {number} endMs
 * @param {string} [encoded] the histogram's encoding when it was already made (the MQTT payload's `hist`)
 * @returns {{tag: string, encoded: string, maxMs: number, startMs: number, endMs: number}}
 */
function encodeInterval (tag, histogram, startMs, endMs, encoded) {
  const h = checkHistogram(histogram, 'histogram');
  return {
    tag: checkTag(tag),
    encoded: typeof encoded === 'string' ? encoded : encodeHistogram(h),
    // Java prints getMaxValue(), the top bucket's highest equivalent value.
    maxMs: h.totalCount > 0 ? h.getValueAtPercentile(100) / MAX_RATIO : 0,
    startMs,
    endMs
  };
}

/**
 * Reads an interval log (ours, Java's, or the library's, blank lines included).
 * @param {string} text
 * @param {{maxChars?: number}} [options] per-histogram cap, passed to decodeHistogram
 * @returns {HlogInterval[]} in file order
 * @throws {NinesError} NINES_ERR_INVALID_ARG for a malformed line, NINES_ERR_BAD_HISTOGRAM for a bad
 *   histogram; both name the line number
 */
function readHlog (text, options = {}) {
  if (typeof text !== 'string') throw invalid('text', text, 'a string');
  const out = [];
  let startTimeSec = null;
  let baseTimeSec = null;
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const n = i + 1;
    if (line === '') continue;
    if (line.startsWith('#[StartTime:')) {
      startTimeSec = headerSeconds(line, n);
      continue;
    }
    if (line.startsWith('#[BaseTime:')) {
      baseTimeSec = headerSeconds(line, n);
      continue;
    }
    if (line.startsWith('#') || line.startsWith('"')) continue;
    const cells = line.split(/[ ,]+/);
    const tag = cells[0].startsWith('Tag=') ? cells.shift().slice(4) : null;
    if (cells.length !== 4 || tag === '') {
      throw invalid(`.hlog line ${n}`, lines[i], '[Tag=<tag>,]<start>,<length>,<max>,<base64 histogram>');
    }
    const [startSec, lengthSec, max] = cells.slice(0, 3).map((c) => Number(c));
    if (![startSec, lengthSec, max].every(Number.isFinite) || lengthSec < 0) {
      throw invalid(`.hlog line ${n}`, lines[i], 'a line with finite start, length >= 0 and max');
    }
    if (baseTimeSec === null) {
      baseTimeSec = startTimeSec !== null && startSec < startTimeSec - YEAR_SEC ? startTimeSec : 0;
    }
    let histogram;
    try {
      histogram = decodeHistogram(cells[3], options);
    } catch (err) {
      throw new NinesError(err.code, `.hlog line ${n}: ${err.message}`, { ...err.details, line: n });
    }
    const startMs = (baseTimeSec + startSec) * 1000;
    histogram.startTimeStampMsec = startMs;
    histogram.endTimeStampMsec = startMs + lengthSec * 1000;
    if (tag !== null) histogram.tag = tag;
    out.push({ tag, startSec, lengthSec, max, histogram, startMs });
  }
  return out;
}

/**
 * @param {string} line "#[StartTime: 1700000000.000 (seconds since epoch), …]"
 * @param {number} n line number
 * @returns {number} seconds
 */
function headerSeconds (line, n) {
  const value = Number(line.slice(line.indexOf(':') + 1).trim().split(/\s+/)[0]);
  if (!Number.isFinite(value)) throw invalid(`.hlog line ${n}`, line, 'a time header with seconds since the epoch');
  return value;
}

module.exports = { encodeInterval, HlogWriter, readHlog, checkTag };
