'use strict';

/**
 * ED-560 commands (ascii-protocol.md "ED-560"; notes §2.4): 4 analog outputs in engineering
 * format `+DD.DDD`. Handlers return the reply without checksum, `null` for silence, or
 * `undefined` when the shape is not an ED-560 command. Invalid parameters (absent channel,
 * out-of-range value, unknown range code) answer `?AA` [DOC]; writes while the host watchdog has
 * tripped answer a bare `!` [DCON].
 */

const { ANALOG_RANGES, formatAnalog } = require('./models');

/** Loose number: the vendor library sends unsigned, unpadded values such as `4.983` [LIB]. */
const VALUE_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
/** One signed value of the multi-channel set; a sign is required to split concatenated values [OURS]. */
const SIGNED_VALUE_RE = /[+-](?:\d+(?:\.\d*)?|\.\d+)/y;
const HEX1_RE = /^[0-9A-F]$/;
const HEX2_RE = /^[0-9A-F]{2}$/;
const MULTI_RE = /^1N[0-9A-F]{2}/;

/** @returns {number} channel index, or -1 when c is not one hex digit */
function channelOf (c) {
  return HEX1_RE.test(c) ? parseInt(c, 16) : -1;
}

/** Rounds to the 3 decimals the device keeps, so a read-back returns what was written. */
function round3 (v) {
  return Math.round(v * 1000) / 1000;
}

/** `#AAn(data)` single channel and `#AA1NVV(values)` multi-channel set. */
function hash (dev, body) {
  const aa = dev.address;
  const ch = dev._channels;
  if (MULTI_RE.test(body)) {
    // [OURS] undocumented multi-channel set (vendor latency test): VV is a channel mask, one signed
    // value per set bit in ascending order; channels that exist are set (clamped to their range),
    // mask bits without a value or without a channel are ignored; the reply is `>`.
    const mask = parseInt(body.slice(2, 4), 16);
    const values = [];
    SIGNED_VALUE_RE.lastIndex = 4;
    while (SIGNED_VALUE_RE.lastIndex < body.length) {
      const m = SIGNED_VALUE_RE.exec(body);
      if (!m) return '?' + aa;
      values.push(Number(m[0]));
    }
    if (dev._wd.tripped) return '!';
    let k = 0;
    for (let bit = 0; bit < 8 && k < values.length; bit++) {
      if ((mask & (1 << bit)) === 0) continue;
      const v = values[k++];
      if (bit < ch.length) {
        const r = ANALOG_RANGES[ch[bit].range];
        ch[bit].value = round3(Math.min(r.max, Math.max(r.min, v)));
      }
    }
    return '>';
  }
  const n = channelOf(body.charAt(0));
  const data = body.slice(1);
  if (n < 0 || !VALUE_RE.test(data)) return undefined;
  if (n >= ch.length) return '?' + aa; // [DCON] #015+05.000 → ?01
  const v = Number(data);
  const r = ANALOG_RANGES[ch[n].range];
  if (v < r.min || v > r.max) return '?' + aa; // [OURS] out of range: refused, value unchanged
  if (dev._wd.tripped) return '!';
  ch[n].value = round3(v); // [DOC] #012+05.130 → > sets ch2 = 5.13 V
  return '>';
}

/** `$AA6n` read back, `$AA9n…` range, `$AA4n` / `$AA7n` power-on value. */
function dollar (dev, body) {
  const aa = dev.address;
  const cmd = body.charAt(0);
  if (cmd !== '6' && cmd !== '9' && cmd !== '4' && cmd !== '7') return undefined;
  const n = channelOf(body.charAt(1));
  if (n < 0) return undefined;
  const rest = body.slice(2);
  if (cmd !== '9' && rest !== '') return undefined;
  if (n >= dev._channels.length) return '?' + aa;
  const c = dev._channels[n];
  switch (cmd) {
    case '6': return '!' + aa + formatAnalog(c.value); // [LIB] $0160 → !01+05.000
    case '4': c.powerOn = c.value; return '!' + aa; // [DCON] store power-on value
    case '7': return '!' + aa + formatAnalog(c.powerOn); // [DCON] read power-on value
  }
  if (rest === '') return '!' + aa + c.range + c.slew; // [DOC] $0190 → !013200
  // [DOC] $AA9nttss and the short form $AA9nts (read as type 3t, slew 0s [OURS])
  let tt, ss;
  if (rest.length === 4 && HEX2_RE.test(rest.slice(2))) { tt = rest.slice(0, 2); ss = rest.slice(2); }
  else if (rest.length === 2 && HEX1_RE.test(rest.charAt(1))) { tt = '3' + rest.charAt(0); ss = '0' + rest.charAt(1); }
  else return '?' + aa;
  const r = ANALOG_RANGES[tt];
  if (!r) return '?' + aa;
  c.range = tt;
  c.slew = ss;
  // [OURS] values outside the new range are clamped into it
  c.value = Math.min(r.max, Math.max(r.min, c.value));
  c.safe = Math.min(r.max, Math.max(r.min, c.safe));
  c.powerOn = Math.min(r.max, Math.max(r.min, c.powerOn));
  return '!' + aa;
}

/** `~AA4n` read safe value, `~AA5n` store the present output as safe value [DOC]. */
function tilde (dev, body) {
  const aa = dev.address;
  const cmd = body.charAt(0);
  if ((cmd !== '4' && cmd !== '5') || body.length !== 2) return undefined;
  const n = channelOf(body.charAt(1));
  if (n < 0) return undefined;
  if (n >= dev._channels.length) return '?' + aa;
  const c = dev._channels[n];
  if (cmd === '4') return '!' + aa + formatAnalog(c.safe); // [DOC] ~0140 → !01+00.000
  c.safe = c.value; // [DOC] ~0152 → !01
  return '!' + aa;
}

/**
 * Dispatches an ED-560 command.
 * @param {import('./device').AsciiDevice} dev
 * @param {string} prefix
 * @param {string} body the command after the address
 * @returns {string|null|undefined}
 */
function handleAnalog (dev, prefix, body) {
  switch (prefix) {
    case '#': return hash(dev, body);
    case '$': return dollar(dev, body);
    case '~': return tilde(dev, body);
    default: return undefined;
  }
}

/**
 * Recognises the shape of an ED-560 command sent to another model [OURS]; ED-560 writes answer
 * `?AA` when invalid (not a bare `?`), so both kinds are 'read' here.
 * @param {string} prefix
 * @param {string} body
 * @returns {'read'|'write'|null}
 */
function recogniseAnalog (prefix, body) {
  if (prefix === '#') return MULTI_RE.test(body) || (channelOf(body.charAt(0)) >= 0 && VALUE_RE.test(body.slice(1))) ? 'read' : null;
  if (prefix === '$') return /^([467][0-9A-F]|9[0-9A-F](?:[0-9A-F]{2}|[0-9A-F]{4})?)$/.test(body) ? 'read' : null;
  if (prefix === '~') return /^[45][0-9A-F]$/.test(body) ? 'read' : null;
  return null;
}

module.exports = { handleAnalog, recogniseAnalog };
