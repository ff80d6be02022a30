'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { NinesError } = require('../base/errors');
const D = require('../runtime/config/defaults');

/**
 * Follows a config file for `nines run --watch` and says when a change is complete: once the file's
 * identity, size and times have not changed for `settleMs` (and no change event came meanwhile).
 * A debounce of change events alone applied a file written in two pieces half a second apart
 * half-written (issue 18). A file that keeps changing past `maxWaitMs` is reported once, and still
 * waited for.
 *
 * The directory is watched, not the file: editors save by writing a new file and renaming it over
 * the old one, which ends a watch on the old file. While a change is pending the file is also
 * looked at every `settleMs / 5` (at most every 100 ms), since watch events may be coalesced.
 *
 * Whether the settled content parses is for the caller's load (runtime/config/load.js), which
 * reports a syntax error with its line and column, as on SIGHUP.
 *
 * chokidar's awaitWriteFinish does the settling, but chokidar 5 is ESM only and would be a new
 * runtime dependency for these few lines; the file-level rules (maxWaitMs, identity) are ours anyway.
 *
 * @param {string} file
 * @param {object} handlers
 * @param {() => void} handlers.onSettled the file changed and has held still since
 * @param {(err: NinesError) => void} handlers.onProblem the file has kept changing for maxWaitMs
 *   (once per change; onSettled still follows when it holds still), or its directory can no longer
 *   be watched; NINES_ERR_CONFIG either way
 * @param {{settleMs?: number, maxWaitMs?: number}} [opts] defaults.js CONFIG_WATCH_SETTLE_MS,
 *   CONFIG_WATCH_MAX_WAIT_MS
 * @returns {{close: () => void}}
 */
function watchConfigFile (file, { onSettled, onProblem }, { settleMs = D.CONFIG_WATCH_SETTLE_MS, maxWaitMs = D.CONFIG_WATCH_MAX_WAIT_MS } = {}) {
  const abs = path.resolve(file);
  const name = path.basename(abs);
  const pollMs = Math.max(10, Math.min(100, Math.round(settleMs / 5)));
  let timer = null;
  let seen = null;
  let quietSince = 0;
  let pendingSince = 0;
  let reported = false;

  const tick = () => {
    const now = Date.now();
    const state = fileState(abs);
    if (state !== seen) { seen = state; quietSince = now; }
    if (now - quietSince >= settleMs) {
      clearInterval(timer);
      timer = null;
      onSettled();
      return;
    }
    if (!reported && now - pendingSince >= maxWaitMs) {
      reported = true;
      const rule = `kept changing for ${Math.round((now - pendingSince) / 1000)} s; it is reloaded once it has not changed for ${settleMs} ms`;
      onProblem(new NinesError('NINES_ERR_CONFIG', `gateway config ${abs} ${rule}`, { source: abs, errors: [{ path: '', value: abs, rule }] }));
    }
  };
  const watcher = fs.watch(path.dirname(abs), (event, changed) => {
    if (changed !== null && changed !== name) return;
    // a change event counts as a change even when size and times look the same (coarse mtimes)
    quietSince = Date.now();
    if (timer !== null) return;
    pendingSince = quietSince;
    seen = fileState(abs);
    reported = false;
    timer = setInterval(tick, pollMs);
  });
  watcher.on('error', (err) => {
    const rule = `cannot be watched any more (${err.code || err.message}); reload it with SIGHUP`;
    onProblem(new NinesError('NINES_ERR_CONFIG', `gateway config ${abs} ${rule}`, { source: abs, errors: [{ path: '', value: abs, rule }], cause: err.code }));
  });
  return { close: () => { clearInterval(timer); timer = null; watcher.close(); } };
}

/** @returns {string} what tells a changed file apart: inode, size, modification and change times */
function fileState (abs) {
  try {
    const st = fs.statSync(abs, { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch (err) {
    return `missing:${err.code}`;
  }
}

module.exports = { watchConfigFile };
