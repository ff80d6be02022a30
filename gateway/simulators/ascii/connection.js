'use strict';

/**
 * One client connection of the ASCII simulator: CR framing with the 255-byte cap, strictly
 * ordered replies, fault actions and delays.
 *
 * Zero-delay path: every complete line of a chunk is answered synchronously inside the 'data'
 * handler and the replies of the chunk go out in one socket.write (no timer, no setImmediate),
 * so the simulator is never the bottleneck of a benchmark.
 * Delayed path (latency, spikes, stalls): lines wait in a bounded per-connection queue; the head
 * is served after its delay, counted from when it reached the head, like a device that handles
 * one command at a time; a stall holds the head until the stall ends. The device state changes
 * when a command is served, not when it arrives.
 */

const { ASCII_MAX_LINE_BYTES } = require('../../base/constants');

const CR = 0x0D;
/** Commands waiting behind a delayed one, per connection; a strict request/response client has 1. */
const MAX_PENDING_LINES = 256;
/** Shortest timer we set (libuv's resolution); replies are never sent before they are due. */
const MIN_TIMER_MS = 1;

/** The simulator side of one TCP connection. */
class SimConnection {
  /**
   * @param {object} sim the simulator: device, faults, stats, _reboot()
   * @param {import('node:net').Socket} socket
   */
  constructor (sim, socket) {
    this.sim = sim;
    this.socket = socket;
    this.partial = '';
    this.discarding = false;
    /** @type {Array<{line: string, decision: {action: string, delayMs: number}, dueAt: number}>} */
    this.queue = [];
    this.timer = null;
    this.closing = false;
    this.closed = false;
    this.reboot = false;
    this.paused = false;
    this._pump = this._pump.bind(this);
    socket.on('data', (chunk) => this.onData(chunk));
    socket.on('drain', () => {
      if (this.paused) { this.paused = false; socket.resume(); }
    });
  }

  /**
   * Frames a chunk into lines and answers them.
   * @param {Buffer} chunk
   */
  onData (chunk) {
    if (this.closing || this.closed) return;
    const stats = this.sim.stats;
    const end = chunk.length;
    let out = '';
    let start = 0;
    while (start < end && !this.closing) {
      const cr = chunk.indexOf(CR, start);
      if (cr < 0) {
        this._stash(chunk, start, end);
        break;
      }
      let line = null;
      if (this.discarding) {
        this.discarding = false; // the CR ends the oversized line, already counted
      } else if (this.partial.length === 0) {
        if (cr - start <= ASCII_MAX_LINE_BYTES) line = chunk.toString('latin1', start, cr);
        else stats.discardedFrames++;
      } else {
        if (this.partial.length + cr - start <= ASCII_MAX_LINE_BYTES) line = this.partial + chunk.toString('latin1', start, cr);
        else stats.discardedFrames++;
        this.partial = '';
      }
      start = cr + 1;
      if (line !== null) out = this._request(line, out);
    }
    if (out.length > 0) this._write(out);
    if (this.closing) this._finishClose();
  }

  /** Keeps the unterminated tail of a chunk; past the cap, discards up to the next CR [OURS]. */
  _stash (chunk, start, end) {
    if (this.discarding) return;
    if (this.partial.length + end - start > ASCII_MAX_LINE_BYTES) {
      this.partial = '';
      this.discarding = true;
      this.sim.stats.discardedFrames++;
      return;
    }
    this.partial += chunk.toString('latin1', start, end);
  }

  /**
   * Takes one framed line: answers it now (fast path) or queues it behind the delayed ones.
   * @param {string} line
   * @param {string} out replies not yet written, in order
   * @returns {string} replies still to write
   */
  _request (line, out) {
    const sim = this.sim;
    sim.stats.requests++;
    const decision = sim.faults.decide();
    if (this.queue.length === 0 && decision.delayMs === 0 && sim.faults.holdMs() === 0) {
      return out + this._execute(line, decision);
    }
    if (this.queue.length >= MAX_PENDING_LINES) {
      sim.stats.overflow++;
      return out;
    }
    // Earlier replies go out first, so a queued reply can never overtake them.
    if (out.length > 0) this._write(out);
    this.queue.push({ line, decision, dueAt: -1 });
    if (this.queue.length === 1) this._pump();
    return '';
  }

  /**
   * Serves one command: the device handles it, then the fault action shapes what is sent.
   * @returns {string} bytes to send (reply + CR, junk + CR, or '')
   */
  _execute (line, decision) {
    const sim = this.sim;
    const stats = sim.stats;
    const res = sim.device.handle(line);
    if (res.close) {
      this.closing = true;
      this.reboot = true;
    }
    if (res.reply === null) {
      stats.silent++;
      return '';
    }
    switch (decision.action) {
      case 'reply':
        stats.replies++;
        return res.reply + '\r';
      case 'drop':
        stats.dropped++;
        return '';
      case 'garbage':
        stats.garbage++;
        return sim.faults.garbage().toString('latin1') + '\r';
      default: // close instead of answering
        stats.closed++;
        this.closing = true;
        return '';
    }
  }

  /** Serves every queued command that is due; arms one timer for the next. Also the timer callback. */
  _pump () {
    this.timer = null;
    if (this.closed) return;
    let out = '';
    while (this.queue.length > 0 && !this.closing) {
      const head = this.queue[0];
      const now = performance.now();
      if (head.dueAt < 0) head.dueAt = now + head.decision.delayMs;
      const waitMs = Math.max(head.dueAt - now, this.sim.faults.holdMs());
      if (waitMs > 0) {
        this.timer = setTimeout(this._pump, Math.max(MIN_TIMER_MS, Math.ceil(waitMs)));
        break;
      }
      this.queue.shift();
      out += this._execute(head.line, head.decision);
    }
    if (out.length > 0) this._write(out);
    if (this.closing) this._finishClose();
  }

  /** Writes with backpressure: a client that does not read stops being read (bounded memory). */
  _write (out) {
    if (this.closed) return;
    if (!this.socket.write(out, 'latin1') && !this.paused) {
      this.paused = true;
      this.socket.pause();
    }
  }

  /** After a close action or a reboot: flushes what was written, then closes. */
  _finishClose () {
    if (this.reboot) {
      this.reboot = false;
      this.sim._reboot();
    } else {
      this.shutdown();
    }
  }

  /** Graceful close: pending writes are flushed, then FIN; queued commands are forgotten. */
  shutdown () {
    if (this.closed) return;
    this.closing = true;
    this._forget();
    const socket = this.socket;
    socket.end(() => socket.destroy());
  }

  /** Abrupt close (network cut, simulator close). */
  destroy () {
    this.closing = true;
    this._forget();
    this.socket.destroy();
  }

  /** Called on the socket's 'close'. */
  onClose () {
    this.closed = true;
    this._forget();
  }

  _forget () {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.queue.length = 0;
  }
}

module.exports = { SimConnection, MAX_PENDING_LINES };
