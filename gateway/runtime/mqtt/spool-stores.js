'use strict';

const path = require('node:path');
const { WindowReporter } = require('../../base/window-reporter');
const { SpoolStore } = require('./message-store');
const D = require('./defaults');

const KINDS = Object.freeze(['latency', 'value']);

/**
 * The publisher's disk spool (spool.js): one log per kind, latency summaries and values, each with
 * half the cap, so values never push summaries out. Both survive a restart or a power loss; the
 * memory FIFOs then hold only what the disk refused (full, failing). Each job's last spooled `seq`
 * is kept so numbering goes on after a restart, and the drop counts are kept with it, so every gap
 * in a stream stays explained. A file error is reported (NINES_ERR_IO) at most once per
 * MQTT_REPORT_WINDOW_MS per kind of failure, with how many it stands for.
 */
class SpoolStores {
  /**
   * @param {object} opts
   * @param {{dir: string, maxBytes: number, syncIntervalMs: number}} opts.spool
   * @param {Record<'latency'|'value', object>} opts.stores the publisher's stores: each kind's is
   *   replaced by a SpoolStore over it
   * @param {(kind: string, job: string) => string} opts.topic
   * @param {import('./drop-counts').DropCounts} opts.dropped
   * @param {() => void} opts.onDurable records reached the disk: they may go
   * @param {(err: import('../../base/errors').NinesError) => void} opts.onError a file error, rate-limited
   */
  constructor ({ spool, stores, topic, dropped, onDurable, onError }) {
    this.dir = spool.dir;
    this.maxBytes = spool.maxBytes;
    this._stores = stores;
    // details.repeated: how many failures a report stands for (payloads.js errorDigest), itself included
    this._ioReports = new WindowReporter({
      windowMs: D.MQTT_REPORT_WINDOW_MS,
      emit: (_kind, err, held) => {
        if (held > 0) err.details = { ...err.details, repeated: held };
        onError(err);
      }
    });
    for (const kind of KINDS) {
      let store;
      try {
        store = SpoolStore.open({
          dir: path.join(spool.dir, kind === 'latency' ? 'latency' : 'values'),
          maxBytes: Math.floor(spool.maxBytes / 2),
          syncIntervalMs: spool.syncIntervalMs,
          memory: stores[kind],
          topic,
          onDrop: (k, job, n) => dropped.add(k, job, n),
          onIoError: (err) => this.reportIo(err),
          onDurable,
          extra: () => ({ dropped: dropped.jobs(kind) })
        });
      } catch (err) {
        // a spool that cannot be opened is reported and memory serves instead
        this.reportIo(err);
        continue;
      }
      // drops are counted per stream, and the stream goes on across restarts
      dropped.seed(kind, store.spool.savedExtra.dropped);
      stores[kind] = store;
    }
  }

  /** @returns {Map<string, {seq: number, end: number}>} each job's last spooled summary */
  resumePoints () {
    const s = this._stores.latency;
    return s instanceof SpoolStore ? new Map(s.spool.jobs) : new Map();
  }

  /** @returns {{dir: string, maxBytes: number, latency: object|null, value: object|null}} */
  stats () {
    const out = { dir: this.dir, maxBytes: this.maxBytes };
    for (const kind of KINDS) out[kind] = this._stores[kind] instanceof SpoolStore ? this._stores[kind].stats() : null;
    return out;
  }

  /** Saves the cursor as of now: a crash during an outage then resends nothing already delivered. */
  checkpoint () {
    for (const kind of KINDS) {
      const s = this._stores[kind];
      if (!(s instanceof SpoolStore)) continue;
      try { s.spool.checkpoint(); } catch (err) { this.reportIo(err); }
    }
  }

  /** A file error, reported per kind of failure (its cause and the operation) at most once per window. */
  reportIo (err) {
    this._ioReports.offer(`${(err.details && err.details.cause) || ''} ${err.message.split(' ')[1] || ''}`, err);
  }

  /** At stop, after the stores closed: what the windows hold is reported now. */
  close () {
    this._ioReports.flush();
    this._ioReports.clear();
  }
}

module.exports = { SpoolStores };
