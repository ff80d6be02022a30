'use strict';

const { parse, posInt, suggest, readOptionFiles } = require('./args');
const { parseDuration } = require('../base/quantities');
const { NinesError } = require('../base/errors');
const C = require('../base/constants');

const USAGE = `Usage: nines sim ascii|modbus|rtu|rtutcp|all [options]

Device simulators on 127.0.0.1, for running and testing everything without hardware.
  ascii    an ED-588 (8 DI + 8 DO) or ED-560 (4 AO) speaking the ASCII protocol (default port ${C.SIM_ASCII_PORT})
  modbus   a Modbus TCP server (default port ${C.SIM_MODBUS_PORT}); with --cert and --key, Modbus/TCP
           Security: the same server inside TLS (default port ${C.SIM_MODBUS_TLS_PORT}; dial modbus+tls://host:port)
  rtu      a Modbus RTU server on a serial device (--path; e.g. one end of a socat PTY pair)
  rtutcp   Modbus RTU slaves behind a TCP listener, as a serial server presents them: RTU frames
           with CRC, no MBAP header (default port ${C.SIM_MODBUS_RTUTCP_PORT}; dial modbus+rtutcp://host:port)
  all      ED-588 on ${C.SIM_ASCII_PORT}, ED-560 on ${C.SIM_ASCII_PORT + 1} and Modbus TCP on ${C.SIM_MODBUS_PORT}

Options:
  --host <addr>        address to bind (default 127.0.0.1)
  --port <n>           port (ascii, modbus, rtutcp); 0 picks a free one
  --model <name>       ED-588 or ED-560 (ascii; default ED-588)
  --address <AA>       ASCII address, two hex digits (default 01)
  --checksum           ASCII checksum mode on
  --path <dev>         serial device (rtu)
  --baud <n>           baud rate (rtu; default 9600)
  --parity <p>         none|even|odd (rtu; default none)
  --unit-id <ids>      Modbus unit ids served: one, or a list such as 1,2,5-8 (the slaves of a line;
                       default 1)
  --animate            values change over time (for demos): ASCII inputs toggle; Modbus input and
                       holding registers 0 (a counter) and 1 (a sine) and discrete input 0 move
  --max-connections <n> open connections allowed at once (default 32, as many devices allow)
  --one-at-a-time      modbus: serve one request at a time per connection and drop, unanswered, any
                       request that arrives while the one before is still being served (as many real
                       devices do; a client with maxInflight > 1 must fall back to 1)
  --needs-delay-after-connect <d>
                       modbus, rtutcp: drop (unanswered) requests that come sooner than this after
                       their connection opened, as devices that need a pause after a connect do
                       (counted as tooSoonAfterConnect; the client's fix: delayAfterConnect)
  --needs-inter-frame-delay <d>
                       modbus, rtu, rtutcp: drop requests that come sooner than this after the
                       previous reply on their connection or line (counted as tooSoonAfterReply;
                       the client's fix: interFrameDelay)
  --faults <spec>      fault injection, e.g. "latency=1ms-3ms,spike=1/10000:35ms,drop=0.001,stall=2s@10s"
  --preset <name>      modbus, rtu, rtutcp: initial values. pattern: holding register i = i, input
                       register i = 1000 + i; signature: every unit's registers hold
                       unit x 1000 + address (input registers + 32768), so a reply taken for another
                       request's (another address or unit) shows in the values; default: zeros
  --holes <spec>       addresses the Modbus map lacks (exception 2 when touched), e.g. "hr:50-59,coil:7"
                       (tables coil, di, hr, ir)
  --map <spec>         the only addresses the Modbus map has, per table; every other address is a
                       hole, and a table not named has none: "holding:0-99,200-219;input:0-9"
                       (tables coil, di, holding/hr, input/ir)
  --lacks <fcs>        Modbus function codes the device lacks (exception 1), e.g. 8,22,23,43
  --identity <name>    what FC43 device identification answers: nines (default), ED-588, ED-560;
                       object 6 (UserApplicationName) is "unit <id>", so each unit tells itself apart
  --cert <file>        modbus: serve TLS with this PEM certificate (with --key)
  --key <file>         modbus: its PEM private key
  --ca <file>          modbus with --cert: require client certificates signed by this PEM CA (the
                       Modbus/TCP Security spec's mutual authentication); the role each presents is printed
  --duration <d>       stop after this long (e.g. 30s); default: until Ctrl-C
`;

const HOLE_BANKS = Object.freeze({ coil: 'coils', co: 'coils', di: 'discreteInputs', discrete: 'discreteInputs', hr: 'holdingRegisters', holding: 'holdingRegisters', ir: 'inputRegisters', input: 'inputRegisters' });

/**
 * `--holes hr:50-59,coil:7` → the model's holes option (simulators/modbus/model.js checks the ranges).
 * @param {string|undefined} spec
 * @returns {{holes?: object}}
 */
function holesOption (spec) {
  if (spec === undefined) return {};
  const holes = {};
  for (const part of spec.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([a-z]+):(\d+)(?:-(\d+))?$/i.exec(part);
    const bank = m && HOLE_BANKS[m[1].toLowerCase()];
    if (!bank) throw new NinesError('NINES_ERR_INVALID_ARG', `--holes: "${part}" must be <table>:<first>[-<last>] with table coil, di, hr or ir, e.g. "hr:50-59"`, { field: 'holes', value: part });
    (holes[bank] = holes[bank] || []).push([Number(m[2]), Number(m[3] === undefined ? m[2] : m[3])]);
  }
  return { holes };
}

/**
 * `--map "holding:0-99,200-219;input:0-9"` → the model's map option (model.js checks the ranges).
 * @param {string|undefined} spec
 * @returns {{map?: object}}
 */
function mapOption (spec) {
  if (spec === undefined) return {};
  const map = {};
  for (const part of spec.split(';').map((p) => p.trim()).filter(Boolean)) {
    const m = /^([a-z]+):(.+)$/i.exec(part);
    const bank = m && HOLE_BANKS[m[1].toLowerCase()];
    const ranges = m ? m[2].split(',').map((r) => /^\s*(\d+)(?:-(\d+))?\s*$/.exec(r)) : [];
    if (!bank || ranges.some((r) => r === null)) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `--map: "${part}" must be <table>:<first>[-<last>][,…] with table coil, di, holding or input, e.g. "holding:0-99,200-219"`, { field: 'map', value: part });
    }
    map[bank] = (map[bank] || []).concat(ranges.map((r) => [Number(r[1]), Number(r[2] === undefined ? r[1] : r[2])]));
  }
  return { map };
}

/**
 * `--lacks 8,22` → [8, 22] (model.js checks they are function codes it answers).
 * @param {string|undefined} text
 * @returns {{lacks?: number[]}}
 */
function lacksOption (text) {
  if (text === undefined) return {};
  const fcs = text.split(',').map((p) => p.trim());
  if (!fcs.every((f) => /^\d{1,3}$/.test(f))) throw new NinesError('NINES_ERR_INVALID_ARG', `--lacks must be function codes such as 8,22,23,43; got "${text}"`, { field: 'lacks', value: text });
  return { lacks: fcs.map(Number) };
}

/**
 * `--unit-id 1,2,5-8` → [1, 2, 5, 6, 7, 8]: the unit ids a Modbus simulator serves.
 * @param {string} text
 * @returns {number[]}
 */
function unitIdsOption (text) {
  const ids = new Set();
  for (const part of String(text).split(',').map((p) => p.trim())) {
    const m = /^(\d{1,3})(?:-(\d{1,3}))?$/.exec(part);
    const lo = m ? Number(m[1]) : NaN;
    const hi = m && m[2] !== undefined ? Number(m[2]) : lo;
    if (!m || lo > 255 || hi > 255 || hi < lo) {
      throw new NinesError('NINES_ERR_INVALID_ARG', `--unit-id must be unit ids 0-255, one or a list such as 1,2,5-8; got "${text}"`, { field: 'unit-id', value: text });
    }
    for (let id = lo; id <= hi; id++) ids.add(id);
  }
  return [...ids];
}

/**
 * --cert, --key, --ca → the Modbus simulator's tls option (PEM texts), or null without --cert.
 * @param {{cert?: string, key?: string, ca?: string}} values
 * @param {string} kind
 * @returns {{cert: Buffer, key: Buffer, ca?: Buffer}|null}
 */
function simTls (values, kind) {
  if (values.cert === undefined && values.key === undefined && values.ca === undefined) return null;
  if (kind !== 'modbus') throw new NinesError('NINES_ERR_INVALID_ARG', `--cert, --key and --ca are for the modbus simulator (Modbus/TCP Security); got "${kind}"`, { field: 'cert' });
  if (values.cert === undefined || values.key === undefined) throw new NinesError('NINES_ERR_INVALID_ARG', 'TLS needs both --cert and --key (PEM files)', { field: values.cert === undefined ? 'cert' : 'key' });
  return readOptionFiles(values, ['cert', 'key', 'ca']);
}

/** @param {string[]} argv @returns {Promise<number>} */
async function main (argv) {
  const { values, positionals } = parse(argv, {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    model: { type: 'string', default: 'ED-588' },
    address: { type: 'string', default: '01' },
    checksum: { type: 'boolean', default: false },
    path: { type: 'string' },
    baud: { type: 'string', default: '9600' },
    parity: { type: 'string', default: 'none' },
    'unit-id': { type: 'string', default: '1' },
    animate: { type: 'boolean', default: false },
    faults: { type: 'string' },
    duration: { type: 'string' },
    'max-connections': { type: 'string' },
    holes: { type: 'string' },
    map: { type: 'string' },
    lacks: { type: 'string' },
    identity: { type: 'string' },
    preset: { type: 'string' },
    'one-at-a-time': { type: 'boolean', default: false },
    'needs-delay-after-connect': { type: 'string' },
    'needs-inter-frame-delay': { type: 'string' },
    cert: { type: 'string' },
    key: { type: 'string' },
    ca: { type: 'string' }
  }, USAGE);
  if (values.help) { process.stdout.write(USAGE); return 0; }
  const kind = positionals[0] || 'all';
  const KINDS = ['ascii', 'modbus', 'rtu', 'rtutcp', 'all'];
  if (!KINDS.includes(kind) || positionals.length > 1) {
    const guess = positionals.length === 1 ? suggest(kind, KINDS) : undefined;
    throw new NinesError('NINES_ERR_INVALID_ARG', guess
      ? `nines sim takes one of ${KINDS.join(', ')}; got "${kind}": did you mean "${guess}"?`
      : `nines sim takes one of ${KINDS.join(', ')}; got "${positionals.join(' ')}"\n\n${USAGE}`);
  }
  const port = values.port === undefined ? undefined : (values.port === '0' ? 0 : posInt(values.port, 'port', 65535));
  const unitIds = unitIdsOption(values['unit-id']);
  // the quirk modes, checked by each simulator (simulators/modbus/quirks.js)
  const quirks = {};
  if (values['needs-delay-after-connect'] !== undefined) quirks.needsDelayAfterConnectMs = parseDuration(values['needs-delay-after-connect'], '--needs-delay-after-connect');
  if (values['needs-inter-frame-delay'] !== undefined) quirks.needsInterFrameDelayMs = parseDuration(values['needs-inter-frame-delay'], '--needs-inter-frame-delay');
  if (Object.keys(quirks).length !== 0 && !['modbus', 'rtu', 'rtutcp'].includes(kind)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `--needs-delay-after-connect and --needs-inter-frame-delay are for the modbus, rtu and rtutcp simulators; got "${kind}"`);
  }
  if (values.preset !== undefined && !['pattern', 'signature'].includes(values.preset)) {
    throw new NinesError('NINES_ERR_INVALID_ARG', `--preset must be pattern or signature; got "${values.preset}"`, { field: 'preset', value: values.preset });
  }
  if (values.preset !== undefined && kind === 'ascii') {
    throw new NinesError('NINES_ERR_INVALID_ARG', '--preset is for the Modbus simulators (modbus, rtu, rtutcp, all)', { field: 'preset', value: values.preset });
  }
  const modelOptions = { unitIds, animate: values.animate, ...holesOption(values.holes), ...mapOption(values.map), ...lacksOption(values.lacks) };
  if (values.identity !== undefined) modelOptions.identification = values.identity;
  if (values.preset !== undefined) modelOptions.preset = values.preset;
  const durationMs = values.duration === undefined ? undefined : parseDuration(values.duration, '--duration');
  const common = { host: values.host, faults: values.faults };
  if (values['max-connections'] !== undefined) common.maxConnections = posInt(values['max-connections'], 'max-connections', 100000);
  const sims = [];
  const started = (label, sim) => {
    sims.push(sim);
    const needs = [['needs-delay-after-connect', 'delay after connect'], ['needs-inter-frame-delay', 'inter-frame delay']]
      .filter(([k]) => values[k] !== undefined).map(([k, what]) => `${what} ${values[k]}`);
    process.stdout.write(`${label.padEnd(14)} ${sim.url}${values.faults ? `  faults: ${values.faults}` : ''}${needs.length ? `  needs: ${needs.join(', ')}` : ''}\n`);
  };
  try {
    if (kind === 'ascii' || kind === 'all') {
      const { createAsciiSimulator } = require('../simulators/ascii');
      const model = kind === 'all' ? 'ED-588' : values.model;
      started(model, await createAsciiSimulator({ ...common, model, port: port ?? C.SIM_ASCII_PORT, address: values.address, checksum: values.checksum, animate: values.animate }));
      if (kind === 'all') {
        started('ED-560', await createAsciiSimulator({ ...common, model: 'ED-560', port: C.SIM_ASCII_PORT + 1, address: values.address, checksum: values.checksum }));
      }
    }
    if (kind === 'modbus' || kind === 'all') {
      const { createModbusTcpSimulator } = require('../simulators/modbus');
      const tls = simTls(values, kind);
      const p = kind === 'all' ? C.SIM_MODBUS_PORT : (port ?? (tls ? C.SIM_MODBUS_TLS_PORT : C.SIM_MODBUS_PORT));
      const sim = await createModbusTcpSimulator({ ...common, ...quirks, port: p, oneAtATime: values['one-at-a-time'], modelOptions, ...(tls ? { tls } : {}) });
      started(tls ? 'Modbus TLS' : 'Modbus TCP', sim);
      if (tls && tls.ca) {
        // the Modbus/TCP Security role each client's certificate carries (simulators/modbus/tls-listener.js)
        sim.server.on('secureConnection', (s) => process.stdout.write(`client ${s.remoteAddress}: role ${sim.clientRoles[sim.clientRoles.length - 1] ?? '(none)'}\n`));
      }
    }
    if (kind === 'rtu') {
      if (!values.path) throw new NinesError('NINES_ERR_INVALID_ARG', `nines sim rtu needs --path <serial device>\n\n${USAGE}`);
      const { createModbusRtuSimulator } = require('../simulators/modbus');
      started('Modbus RTU', await createModbusRtuSimulator({ ...quirks, path: values.path, baudRate: posInt(values.baud, 'baud'), parity: values.parity, faults: values.faults, modelOptions }));
    }
    if (kind === 'rtutcp') {
      const { createModbusRtuTcpSimulator } = require('../simulators/modbus');
      started('Modbus RTU/TCP', await createModbusRtuTcpSimulator({ ...common, ...quirks, port: port ?? C.SIM_MODBUS_RTUTCP_PORT, modelOptions }));
    }
  } catch (err) {
    await Promise.allSettled(sims.map((s) => s.close()));
    throw err;
  }
  process.stdout.write(durationMs === undefined ? 'Ctrl-C to stop\n' : `running for ${values.duration}\n`);
  await new Promise((resolve) => {
    const timer = durationMs === undefined ? null : setTimeout(resolve, durationMs);
    const onSignal = () => { if (timer) clearTimeout(timer); resolve(); };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
  await Promise.allSettled(sims.map((s) => s.close()));
  return 0;
}

module.exports = { main, USAGE, holesOption, mapOption, lacksOption, unitIdsOption };
