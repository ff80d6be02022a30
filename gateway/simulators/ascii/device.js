'use strict';

/**
 * Pure device models of the ASCII simulator (no sockets, no timers): ED-588 (8 DI + 8 DO) and
 * ED-560 (4 AO). `handle(line)` takes one command without its CR and returns the reply without
 * CR, the checksum appended when checksums are on.
 *
 * Silence rules [HW, DOC]: unknown or unparseable commands, a wrong address, a missing or wrong
 * checksum (checksum on), and the broadcasts `#**` / `~**` get no reply. `$AARS` gets no reply
 * and closes the connection. Known commands with invalid parameters answer `?AA`, output writes a
 * bare `?` [DCON].
 *
 * Our choices for the hold-overs of notes §3.2 [OURS]:
 * - `@01A5A5` (4-digit data on the 8-output ED-588): `>` and the outputs take the low byte (A5),
 *   because the vendor's @AA(Data) latency test sends 4 digits and expects a reply.
 * - `#01A801` (line 8 of an 8-output model) and `#01A002` (DD neither 00 nor 01): bare `?`.
 * - Lower-case commands (`$01m`, `@0a`): silence — commands must be upper case [DOC]. Free text
 *   of `~AAO(name)` / `~AAL(loc)` may be lower case.
 * - A checksum sent while checksums are off is part of the command: `$012B7` is an unknown shape,
 *   hence silence. (Where the extra digits still form a command, e.g. `@01A1` = set outputs to A1,
 *   the device obeys that command, as a real DCON device must.)
 * - CR-LF: the LF left at the start of the next line is ignored as whitespace [OURS].
 * - A command of the other model's table (e.g. `@01` to an ED-560, `#010+05.000` to an ED-588)
 *   is "unsupported here": `?AA`, or a bare `?` for an ED-588 output write. Shapes in neither
 *   table are silent.
 * - `$AARS` and `$AAS1` (factory reset, answered `!AA`) reboot the device; the simulator drops
 *   every connection, as a rebooting device does.
 * - `$AA4` before any `#**` answers `?AA`; names are 1–10 printable characters; `%AANNTTCCFF`
 *   may not change the checksum bit (`?AA`).
 *
 * Inputs: `setInput`/`setInputs` drive input levels; edges update latches (high latch on a rising
 * edge, low latch on a falling edge) and counters (on the falling edge by factory default, FF bit
 * 7 = 0; rising when set), 16-bit counters wrap at 65536, 32-bit at 2^32 [DCON, LIB].
 * Watchdog: `~AA3ETT` enables it (TT tenths of a second); without a host OK `~**` in time it trips
 * when the next command arrives (or a state accessor is read): outputs go to their safe value,
 * output writes answer a bare `!` until `~AA1` clears the status [DCON].
 */

const { NinesError } = require('../../base/errors');
const { ASCII_ADDRESS_DEFAULT } = require('../../base/constants');
const {
  HEX2, MODELS, BAUD_DEFAULT, FF_CHECKSUM, FF_COUNTER_RISING, FF_COUNTER_32, WATCHDOG_TICK_MS,
  ANALOG_RANGE_DEFAULT, ANIMATE_STEP_MS, checksumOf
} = require('./models');
const { handleCommon, isFreeText } = require('./common');
const { handleDigital, recogniseDigital } = require('./digital');
const { handleAnalog, recogniseAnalog } = require('./analog');

const OPTION_KEYS = ['model', 'address', 'checksum', 'name', 'animate', 'now', 'counterEdge', 'counterBits'];
const PREFIXES = '#$%@~';
const CODE_LF = 0x0A;
const HEX_DIGIT_RE = /^[0-9A-F]{1,2}$/i;

/** Result objects; SILENT is shared so silence allocates nothing. */
const SILENT = Object.freeze({ reply: null });
const SILENT_CLOSE = Object.freeze({ reply: null, close: true });

/** @returns {never} */
function invalid (field, value, rule) {
  throw new NinesError('NINES_ERR_INVALID_ARG', `${field} must be ${rule}; got ${JSON.stringify(value)}`, { field, value });
}

/** Normalises the `address` option: '01', '1', 1 → '01'. */
function normaliseAddress (a) {
  if (Number.isInteger(a) && a >= 0 && a <= 255) return HEX2[a];
  if (typeof a === 'string' && HEX_DIGIT_RE.test(a)) return HEX2[parseInt(a, 16)];
  return invalid('address', a, 'two hex digits 00-FF or an integer 0-255');
}

/** Validates createDevice options; returns them filled with defaults. */
function checkOptions (o) {
  if (o === null || typeof o !== 'object') invalid('options', o, 'an object');
  for (const k of Object.keys(o)) if (!OPTION_KEYS.includes(k)) invalid(k, o[k], `absent: unknown option (known: ${OPTION_KEYS.join(', ')})`);
  const model = o.model === undefined ? 'ED-588' : o.model;
  if (!Object.prototype.hasOwnProperty.call(MODELS, model)) invalid('model', model, `one of ${Object.keys(MODELS).join(', ')}`);
  const out = {
    model,
    address: normaliseAddress(o.address === undefined ? ASCII_ADDRESS_DEFAULT : o.address),
    checksum: o.checksum === undefined ? false : o.checksum,
    name: o.name === undefined ? model : o.name,
    animate: o.animate === undefined ? false : o.animate,
    now: o.now === undefined ? () => performance.now() : o.now,
    counterEdge: o.counterEdge === undefined ? 'falling' : o.counterEdge,
    counterBits: o.counterBits === undefined ? 16 : o.counterBits
  };
  if (typeof out.checksum !== 'boolean') invalid('checksum', out.checksum, 'true or false');
  if (typeof out.animate !== 'boolean') invalid('animate', out.animate, 'true or false');
  if (typeof out.name !== 'string' || !isFreeText(out.name, false)) invalid('name', out.name, '1 to 10 printable ASCII characters');
  if (typeof out.now !== 'function') invalid('now', typeof out.now, 'a function returning milliseconds');
  if (out.counterEdge !== 'rising' && out.counterEdge !== 'falling') invalid('counterEdge', out.counterEdge, '"rising" or "falling"');
  if (out.counterBits !== 16 && out.counterBits !== 32) invalid('counterBits', out.counterBits, '16 or 32');
  return out;
}

/** One simulated ED device. Create with createDevice(). */
class AsciiDevice {
  /** @param {object} opts validated options */
  constructor (opts) {
    this._opts = opts;
    this._spec = MODELS[opts.model];
    this._now = opts.now;
    this._handleModel = this._spec.kind === 'digital' ? handleDigital : handleAnalog;
    this._recogniseOther = this._spec.kind === 'digital' ? recogniseAnalog : recogniseDigital;
    this._closeAfter = false;
    this.reset();
  }

  /** Factory state as created (S0): persistent settings and volatile state. */
  reset () {
    const o = this._opts;
    this._address = o.address;
    this._checksum = o.checksum;
    this._name = o.name;
    this._location = '';
    this._baud = BAUD_DEFAULT;
    this._ff = (o.counterEdge === 'rising' ? FF_COUNTER_RISING : 0) | (o.counterBits === 32 ? FF_COUNTER_32 : 0);
    this._wd = { enabled: false, ticks: 0, tripped: false, lastOkMs: 0 };
    this._safe = 0;
    this._powerOn = 0;
    this._in = 0xFF; // [HW] unwired inputs read 1 (NPN pull-up)
    this._channels = [];
    for (let i = 0; i < (this._spec.channels || 0); i++) {
      this._channels.push({ value: 0, range: ANALOG_RANGE_DEFAULT, slew: '00', safe: 0, powerOn: 0 });
    }
    this.reboot();
  }

  /** Power cycle ($AARS): volatile state back to power-on; name, config, safe values persist. */
  reboot () {
    this._out = this._powerOn;
    for (const c of this._channels) c.value = c.powerOn;
    this._counters = [0, 0, 0, 0, 0, 0, 0, 0];
    this._latchHigh = 0;
    this._latchLow = 0;
    this._sync = null;
    this._syncFresh = false;
    this._resetFlag = true;
    this._wd.tripped = false;
    this._wd.lastOkMs = this._now();
    this._animT0 = this._now();
    this._animDone = [0, 0, 0, 0, 0, 0, 0, 0];
  }

  /**
   * Handles one command line (without CR).
   * @param {string} line latin1 text
   * @returns {{reply: string|null, close?: boolean}} reply without CR (checksum appended when on);
   *   close: the device reboots and drops its connections
   */
  handle (line) {
    if (typeof line !== 'string') invalid('line', typeof line, 'a string');
    let s = line;
    if (s.charCodeAt(0) === CODE_LF) s = s.replace(/^\n+/, ''); // CR-LF from the host [OURS]
    if (this._checksum) {
      const n = s.length - 2;
      // [DOC] checksum on: a missing or wrong checksum is ignored, silently
      if (n < 1 || s.slice(n) !== checksumOf(s.slice(0, n))) return SILENT;
      s = s.slice(0, n);
    }
    if (this._opts.animate || this._wd.enabled) this._tick();
    this._closeAfter = false;
    const reply = this._dispatch(s);
    if (this._closeAfter) {
      this._closeAfter = false;
      return reply === null ? SILENT_CLOSE : { reply: this._seal(reply), close: true };
    }
    return reply === null || reply === undefined ? SILENT : { reply: this._seal(reply) };
  }

  /** Appends the checksum when on. */
  _seal (reply) {
    return this._checksum ? reply + checksumOf(reply) : reply;
  }

  /** @returns {string|null|undefined} */
  _dispatch (s) {
    if (s.length < 3 || PREFIXES.indexOf(s.charAt(0)) < 0) return null;
    if (s === '#**') { // [DOC] synchronized sampling, never answered
      if (this._spec.kind === 'digital') {
        this._sync = HEX2[this._out] + HEX2[this._in];
        this._syncFresh = true;
      }
      return null;
    }
    if (s === '~**') { // [DOC] host OK, never answered
      this._wd.lastOkMs = this._now();
      return null;
    }
    if (s.charCodeAt(1) !== this._address.charCodeAt(0) || s.charCodeAt(2) !== this._address.charCodeAt(1)) return null;
    const prefix = s.charAt(0);
    const body = s.slice(3);
    let r = handleCommon(this, prefix, body);
    if (r === undefined) r = this._handleModel(this, prefix, body);
    if (r !== undefined) return r;
    const kind = this._recogniseOther(prefix, body);
    if (kind === null) return null; // unknown shape: silence [HW]
    return kind === 'write' ? '?' : '?' + this._address;
  }

  /** Lazy clock work: animation steps and the watchdog trip. */
  _tick () {
    const now = this._now();
    if (this._opts.animate && this._spec.kind === 'digital') {
      for (let i = 0; i < 8; i++) {
        const total = Math.floor((now - this._animT0) / (ANIMATE_STEP_MS * (i + 1)));
        if (total > this._animDone[i]) {
          this._toggle(i, total - this._animDone[i]);
          this._animDone[i] = total;
        }
      }
    }
    const wd = this._wd;
    if (wd.enabled && !wd.tripped && now - wd.lastOkMs > wd.ticks * WATCHDOG_TICK_MS) {
      wd.tripped = true; // [DCON] outputs go to their safe value
      this._out = this._safe;
      for (const c of this._channels) c.value = c.safe;
    }
  }

  /** Toggles input i n times, counting every edge, in O(1). */
  _toggle (i, n) {
    const bit = 1 << i;
    const high = (this._in & bit) !== 0;
    const firstHalf = Math.ceil(n / 2);
    const rising = high ? n - firstHalf : firstHalf;
    const falling = n - rising;
    if (rising > 0) this._latchHigh |= bit;
    if (falling > 0) this._latchLow |= bit;
    this._count(i, this._ff & FF_COUNTER_RISING ? rising : falling);
    if (n % 2 === 1) this._in ^= bit;
  }

  /** Adds k edges to counter i, wrapping at the counter width. */
  _count (i, k) {
    if (k === 0) return;
    const modulus = this._counterBits() === 32 ? 0x100000000 : 0x10000;
    this._counters[i] = (this._counters[i] + k) % modulus;
  }

  /** @returns {16|32} */
  _counterBits () {
    return this._ff & FF_COUNTER_32 ? 32 : 16;
  }

  /** @returns {number} the `$AA2` FF byte, checksum bit included */
  _configFF () {
    return this._ff | (this._checksum ? FF_CHECKSUM : 0);
  }

  _requireDigital (what) {
    if (this._spec.kind !== 'digital') {
      throw new NinesError('NINES_ERR_INVALID_ARG', `${what} needs a model with digital inputs; ${this.model} has none`, { field: 'model', value: this.model });
    }
  }

  /**
   * Drives one input line; an edge updates latches and counters.
   * @param {number} n line 0–7
   * @param {boolean} high level (true = 1)
   */
  setInput (n, high) {
    this._requireDigital('setInput');
    if (!Number.isInteger(n) || n < 0 || n > 7) invalid('n', n, 'an input line 0-7');
    if (typeof high !== 'boolean') invalid('high', high, 'true or false');
    const bit = 1 << n;
    if (((this._in & bit) !== 0) !== high) this._toggle(n, 1);
  }

  /**
   * Drives all 8 inputs at once (bit i = input i).
   * @param {number} byte 0–255
   */
  setInputs (byte) {
    this._requireDigital('setInputs');
    if (!Number.isInteger(byte) || byte < 0 || byte > 255) invalid('byte', byte, 'an integer 0-255');
    const changed = this._in ^ byte;
    for (let i = 0; i < 8; i++) if (changed & (1 << i)) this._toggle(i, 1);
  }

  /** Brings clock-driven state (animation, watchdog) up to now before a read. */
  _catchUp () {
    if (this._opts.animate || this._wd.enabled) this._tick();
  }

  /** @returns {string} 'ED-588' | 'ED-560' */
  get model () { return this._spec.model; }
  /** @returns {string} the address as two upper-case hex digits */
  get address () { return this._address; }
  /** @returns {boolean} checksums on */
  get checksum () { return this._checksum; }
  /** Switches checksums (the device's web-page setting). @param {boolean} on */
  set checksum (on) {
    if (typeof on !== 'boolean') invalid('checksum', on, 'true or false');
    this._checksum = on;
  }

  /** @returns {string} */
  get name () { return this._name; }
  /** @returns {string} */
  get location () { return this._location; }
  /** @returns {number|number[]} ED-588: output byte; ED-560: channel values (V or mA) */
  get outputs () { this._catchUp(); return this._spec.kind === 'digital' ? this._out : this._channels.map((c) => c.value); }
  /** @returns {number|null} ED-588: input byte (bit i = input i); null on models without inputs */
  get inputs () { this._catchUp(); return this._spec.kind === 'digital' ? this._in : null; }
  /** @returns {number[]} the 8 input counters */
  get counters () { this._catchUp(); return this._counters.slice(); }
  /** @returns {{high: number, low: number}} latch bytes */
  get latches () { this._catchUp(); return { high: this._latchHigh, low: this._latchLow }; }
  /** @returns {number|number[]} ED-588: safe output byte; ED-560: per-channel safe values */
  get safeValue () { return this._spec.kind === 'digital' ? this._safe : this._channels.map((c) => c.safe); }
  /** @returns {number|number[]} ED-588: power-on output byte; ED-560: per-channel values */
  get powerOnValue () { return this._spec.kind === 'digital' ? this._powerOn : this._channels.map((c) => c.powerOn); }
  /** @returns {Array<{value: number, range: string, slew: string, safe: number, powerOn: number}>|null} ED-560 channels */
  get channels () { this._catchUp(); return this._spec.kind === 'digital' ? null : this._channels.map((c) => ({ ...c })); }
  /** @returns {{enabled: boolean, timeoutMs: number, tripped: boolean}} host watchdog */
  get watchdog () {
    this._catchUp();
    return { enabled: this._wd.enabled, timeoutMs: this._wd.ticks * WATCHDOG_TICK_MS, tripped: this._wd.tripped };
  }

  /** @returns {{type: string, baud: string, ff: number, counterEdge: string, counterBits: number}} `$AA2` fields */
  get config () {
    return {
      type: this._spec.type,
      baud: this._baud,
      ff: this._configFF(),
      counterEdge: this._ff & FF_COUNTER_RISING ? 'rising' : 'falling',
      counterBits: this._counterBits()
    };
  }
}

/**
 * Creates a simulated device in its factory state.
 * @param {{model?: 'ED-588'|'ED-560', address?: string|number, checksum?: boolean, name?: string,
 *   animate?: boolean, now?: () => number, counterEdge?: 'rising'|'falling', counterBits?: 16|32}} [options]
 *   animate: inputs toggle slowly (input i every (i+1) s) for demos; now: clock in ms (tests)
 * @returns {AsciiDevice}
 * @throws {NinesError} NINES_ERR_INVALID_ARG naming the bad option
 */
function createDevice (options = {}) {
  return new AsciiDevice(checkOptions(options));
}

module.exports = { createDevice, AsciiDevice, MODELS };
