'use strict';

/**
 * The correlation drill's wire trace (correlation.js, `trace: true`), loaded into the gateway and the
 * RTU simulators with NODE_OPTIONS=--require, so the code under test is not changed to be measured.
 * Each process (and worker thread) appends one line per event to <NINES_DRILL_TRACE>/<label>-<pid>-<thread>.trace:
 *   gateway (drivers/modbus/rtu-transport.js): `w <ns> <target> <frame hex>` a request written,
 *     `r <ns> <target> <chunk hex>` bytes read, `t <ns> <target>` the request in flight timed out,
 *     `p <ns> serial` serialport's binding found a serial port readable (then reads it in the thread pool),
 *     `o`/`c <ns> <target>` the port (or socket) opened or closed;
 *   simulator (simulators/modbus/rtu-line.js): `q <ns> <unit> <address>` a request taken in,
 *     `x <ns> <unit> <address>` its reply written.
 * <ns> is process.hrtime.bigint(), CLOCK_MONOTONIC on Linux: one clock for every process of the machine.
 * A synchronous write per event: at the drill's rates (a few hundred events a second) it costs the
 * gateway a few microseconds per request, far below the 100 ms timeouts the drill is about.
 */

const dir = process.env.NINES_DRILL_TRACE;
if (dir) install(dir, process.env.NINES_DRILL_TRACE_LABEL || 'proc');

function install (dir, label) {
  const fs = require('node:fs');
  const path = require('node:path');
  const { threadId } = require('node:worker_threads');
  const hrtime = process.hrtime.bigint;
  let fd = null;
  const rec = (line) => {
    if (fd === null) fd = fs.openSync(path.join(dir, `${label}-${process.pid}-${threadId}.trace`), 'a');
    fs.writeSync(fd, line + '\n');
  };

  const { RtuTransport } = require('../../gateway/drivers/modbus/rtu-transport');
  const { send, abort, _onData: onData } = RtuTransport.prototype;
  RtuTransport.prototype.send = function (p) {
    send.call(this, p);
    rec(`w ${p.sentNs} ${this._target.url} ${this._txBuf.toString('hex')}`);
  };
  // NINES_DRILL_BREAK=hold: the line is not held after a timeout (the defect of issue 18), so the
  // drill can show that it finds what it looks for
  const breakHold = process.env.NINES_DRILL_BREAK === 'hold';
  RtuTransport.prototype.abort = function (p) {
    rec(`t ${hrtime()} ${this._target.url}`);
    if (breakHold) { if (this._p === p) this._p = null; this._rxLen = 0; return; }
    abort.call(this, p);
  };
  // the port (or socket) opened and closed: a reconnect in the middle of a hold shows
  const { _portOpened: opened, _portClosed: closed } = RtuTransport.prototype;
  RtuTransport.prototype._portOpened = function (port) {
    rec(`o ${hrtime()} ${this._target.url}`);
    return opened.call(this, port);
  };
  RtuTransport.prototype._portClosed = function (port) {
    rec(`c ${hrtime()} ${this._target.url}`);
    return closed.call(this, port);
  };
  // bound in the constructor, so patched before any transport exists
  RtuTransport.prototype._onData = function (chunk) {
    rec(`r ${hrtime()} ${this._target.url} ${chunk.toString('hex')}`);
    onData.call(this, chunk);
  };

  // serialport's binding polls the port readable in this thread (`p`): when the kernel had bytes for us
  try {
    const { Poller } = require('@serialport/bindings-cpp/dist/poller');
    const { emit } = Poller.prototype;
    Poller.prototype.emit = function (event, ...args) {
      if (event === 'readable') rec(`p ${hrtime()} serial`);
      return emit.call(this, event, ...args);
    };
  } catch { /* another binding: no poll events in the trace */ }

  const { RtuLine } = require('../../gateway/simulators/modbus/rtu-line');
  const { _frame: frame, _reply: reply } = RtuLine.prototype;
  RtuLine.prototype._frame = function (buf, start, end) {
    if (end - start >= 4) rec(`q ${hrtime()} ${buf[start]} ${buf.readUInt16BE(start + 2)}`);
    frame.call(this, buf, start, end);
  };
  RtuLine.prototype._reply = function (unitId, buf, start, end) {
    rec(`x ${hrtime()} ${unitId} ${buf.readUInt16BE(start + 1)}`);
    reply.call(this, unitId, buf, start, end);
  };
}
