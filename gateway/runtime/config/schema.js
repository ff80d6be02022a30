'use strict';

const D = require('./defaults');
const DL = require('../../devices/limits');
const JL = require('../../jobs/limits');
const C = require('../../base/constants');
const SP = require('../sparkplug/defaults');
const { PROFILE_FIELDS } = require('./profile-keys');
const { DURATION_HINT, NOT_A_DURATION } = require('../../base/duration-field');
const { RATE_HINT } = require('../../base/quantities');
const { NAME_PATTERN, NAME_RULE } = require('../../base/names');

/**
 * JSON Schema (draft-07, checked with ajv) of the gateway config: the structure, types and
 * ranges. Every object has `additionalProperties: false`, so a misspelt key is an error, never
 * ignored. Values that need parsing (durations, rates, URLs, targets) are typed here and parsed
 * by the semantic checks (validate.js), which also check rules that span fields.
 *
 * Two annotation keywords, ignored by ajv, carry our wording for the error list:
 *   rule: replaces the generic message when the node fails ("is not a rate; use …")
 *   hint: appended when the field is required but missing ("is required; use …")
 */

const SIZE_HINT = 'use e.g. "1GB", "512MiB" or a number of bytes';

/** The entries of an object under these keys */
const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, o[k]]));

const name = { type: 'string', pattern: NAME_PATTERN, rule: NAME_RULE };
const duration = { type: ['string', 'number'], rule: NOT_A_DURATION, hint: DURATION_HINT };
const rate = { type: ['string', 'number'], rule: `is not a rate; ${RATE_HINT}`, hint: RATE_HINT };
const register = { type: 'integer', minimum: 0, maximum: 65535, rule: 'must be an integer from 0 to 65535' };
const unitId = { type: 'integer', minimum: 0, maximum: 255, rule: 'must be an integer from 0 to 255' };
const bitOrWord = { type: ['integer', 'boolean'], rule: 'must be an integer, or true/false for coils' };

const read = {
  type: 'object',
  additionalProperties: false,
  required: ['fc', 'address', 'quantity'],
  properties: {
    fc: { enum: [1, 2, 3, 4], rule: 'must be a read function code: 1 (coils), 2 (discrete inputs), 3 (holding registers) or 4 (input registers)' },
    address: register,
    quantity: { type: 'integer', minimum: 1, maximum: 2000, rule: 'must be an integer from 1 to 2000 (125 for registers)' },
    unitId
  }
};

const write = {
  type: 'object',
  additionalProperties: false,
  required: ['fc', 'address'],
  properties: {
    fc: { enum: [5, 6, 15, 16], rule: 'must be a write function code: 5 (one coil), 6 (one register), 15 (coils) or 16 (registers)' },
    address: register,
    value: bitOrWord,
    values: { type: 'array', minItems: 1, items: bitOrWord, rule: 'must be a non-empty list of integers (or true/false for coils)' },
    unitId
  }
};

const valuesModes = JL.VALUE_MODES.join(', ');
const values = {
  if: { type: 'string' },
  then: { enum: JL.VALUE_MODES, rule: `must be one of ${valuesModes}, or an object such as { mode: on-change, deadband: 0.5, maxRate: 10/s }` },
  else: {
    type: 'object',
    rule: `must be one of ${valuesModes}, or an object such as { mode: on-change, deadband: 0.5, maxRate: 10/s }`,
    additionalProperties: false,
    required: ['mode'],
    properties: {
      mode: { enum: JL.VALUE_MODES, rule: `must be one of ${valuesModes}`, hint: `one of ${valuesModes}` },
      deadband: { type: 'number', minimum: 0, rule: 'must be a number >= 0 (a change smaller than this is not published)' },
      n: { type: 'integer', minimum: 1, rule: 'must be an integer >= 1 (publish every n-th reply)' },
      maxRate: rate
    }
  }
};

/** A tag's fields are checked by the tag module (tags/spec.js), which names each field's rule */
const tag = { type: 'object', rule: 'must be a tag such as { name: boiler_temp, table: holding, address: 100, type: float32 }' };
const tagList = { type: 'array', items: tag, rule: 'must be a list of tags such as - { name: boiler_temp, table: holding, address: 100, type: float32 }' };
const jobTags = {
  if: { type: 'string' },
  then: { type: 'string', minLength: 1 },
  else: {
    type: 'array',
    minItems: 1,
    items: { if: { type: 'string' }, then: { type: 'string', minLength: 1 }, else: tag },
    rule: 'must name a tag group of the device, or list tag groups and tags'
  }
};

const job = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'device', 'rate'],
  properties: {
    name,
    device: { type: 'string', minLength: 1, rule: 'must name a device defined under devices' },
    unit: { type: 'string', minLength: 1, rule: 'must name a unit of the device (devices.<name>.units)' },
    command: { type: 'string', minLength: 1, rule: 'must be an ASCII command string such as "@01" (quote it: @ and # are special in YAML)' },
    generator: { type: 'string', minLength: 1, rule: 'must name a command generator such as "@AA(Data)" (quote it in YAML)' },
    read,
    write,
    tags: jobTags,
    rate,
    connections: { type: 'integer', minimum: 1, maximum: JL.MAX_CONNECTIONS, rule: `must be an integer from 1 to ${JL.MAX_CONNECTIONS}` },
    catchUp: { enum: JL.POLICIES, rule: `must be one of ${JL.POLICIES.join(', ')}` },
    precision: { enum: JL.PRECISIONS, rule: `must be one of ${JL.PRECISIONS.join(', ')} (spin: the last stretch before each send is spun, tens of µs late at most, for CPU; sleep: 50-90 µs late)` },
    count: { type: 'integer', minimum: 1, rule: 'must be an integer >= 1 (requests to send, then the job ends)' },
    duration,
    values
  }
};

/** How a device (or a unit of a line) shapes requests and reads its tags */
const quirks = {
  maxGap: { type: 'integer', minimum: 0, maximum: 2000, rule: 'must be an integer from 0 to 2000 (registers or bits a coalesced tag read may read past between two tags)' },
  maxRegistersPerRequest: { type: 'integer', minimum: 1, maximum: 125, rule: 'must be an integer from 1 to 125 (the largest register read the device answers)' },
  maxBitsPerRequest: { type: 'integer', minimum: 1, maximum: 2000, rule: 'must be an integer from 1 to 2000 (the largest coil or discrete-input read the device answers)' },
  addressBase: { enum: [0, 1], rule: 'must be 0 (tag addresses as on the wire) or 1 (the data sheet counts registers from 1)' },
  order: { enum: ['ABCD', 'CDAB', 'BADC', 'DCBA'], rule: 'must be ABCD, CDAB, BADC or DCBA (the word and byte order of tags that give none)' },
  unsupportedFunctionCodes: {
    type: 'array',
    items: { enum: C.MODBUS_LACKABLE_WRITE_FCS },
    rule: `must list the write function codes the device lacks, of ${C.MODBUS_LACKABLE_WRITE_FCS.join(', ')} (writes by tag then use the one that stands in; without 22 a bit of a register is not written)`
  }
};
const tagGroups = {
  type: 'object',
  additionalProperties: {
    if: { type: 'array' },
    then: tagList,
    else: {
      type: 'object',
      additionalProperties: false,
      required: ['csv'],
      properties: { csv: { type: 'string', minLength: 1, rule: 'must be the path of a CSV tag sheet (relative to the config file)' } },
      rule: 'must be a list of tags, or { csv: <tag sheet> }'
    }
  },
  rule: 'must map tag group names to lists of tags (or { csv: <tag sheet> })'
};
const profileName = { type: 'string', minLength: 1, rule: 'must name a profile: one under profiles, or one shipped with nines (such as ED-588)' };
const tagOverrides = {
  type: 'object',
  additionalProperties: { type: 'object', rule: 'must be the fields of the profile\'s tag to change, such as { scale: 0.01, deadband: 1 }' },
  rule: 'must map tag names of the profile to the fields that differ here, such as { power: { scale: 0.01 } }'
};
const scanClass = {
  type: 'object',
  additionalProperties: false,
  required: ['rate', 'tags'],
  properties: {
    rate,
    tags: {
      if: { type: 'string' },
      then: { type: 'string', minLength: 1 },
      else: { type: 'array', minItems: 1, items: { type: 'string', minLength: 1 }, rule: 'must name a tag group, or list tag groups' },
      hint: 'the tag groups read at this rate, e.g. tags: [measurements]'
    },
    values
  }
};
const scanClasses = {
  type: 'object',
  minProperties: 1,
  additionalProperties: scanClass,
  rule: 'must map scan class names to { rate, tags }, such as { fast: { rate: 10/s, tags: [measurements] }, slow: { rate: 1/min, tags: [nameplate] } }'
};
const backoff = {
  type: 'object',
  additionalProperties: false,
  properties: { min: duration, max: duration },
  rule: 'must be a mapping { min, max } of reconnect delays, e.g. { min: 100ms, max: 10s }'
};
/** One unit (slave, unit id) of a line */
const unit = {
  type: 'object',
  additionalProperties: false,
  required: ['unitId'],
  properties: {
    unitId: { type: 'integer', minimum: 0, maximum: 255, rule: 'must be the unit id: 1-247 on a serial line, 0-247 or 255 over Modbus TCP', hint: 'the unit id (slave address), e.g. 1' },
    backoff: { ...backoff, rule: 'must be a mapping { min, max }: how long a unit that stopped answering is left alone before it is probed again' },
    ...quirks,
    tags: tagGroups,
    profile: profileName,
    overrides: tagOverrides,
    scan: scanClasses
  }
};

/** Modbus/TCP Security (modbus+tls://): file paths, read at load (tls-files.js); no switch to skip verification */
const deviceTls = {
  type: 'object',
  additionalProperties: false,
  rule: 'must be a mapping { ca, cert, key, servername } of PEM file paths (and the name the device\'s certificate carries)',
  properties: {
    ca: { type: 'string', minLength: 1, rule: 'must be the path of a PEM file: the CA(s) that sign the device\'s certificate' },
    cert: { type: 'string', minLength: 1, rule: 'must be the path of a PEM file: the gateway\'s client certificate (with its Modbus/TCP Security role)' },
    key: { type: 'string', minLength: 1, rule: 'must be the path of a PEM file: the client certificate\'s private key, unencrypted' },
    servername: { type: 'string', minLength: 1, rule: 'must be the DNS name the device\'s certificate carries, when the target dials an address' },
    // named so that `false` gets the reason, not "unknown key"; true is what nines does anyway
    rejectUnauthorized: { enum: [true], rule: 'cannot be false: nines always verifies the device\'s certificate (trust a self-signed device by giving its certificate as ca)' }
  }
};

const device = {
  type: 'object',
  additionalProperties: false,
  required: ['target'],
  properties: {
    target: { type: 'string', minLength: 1, rule: 'must be a target URL such as "ascii://127.0.0.1:9500", "modbus+tcp://127.0.0.1:5020?unitId=1", "modbus+tls://10.0.0.5:802", "modbus+rtu:///dev/ttyUSB0" or "modbus+rtutcp://10.0.0.9:4001"', hint: 'e.g. "ascii://127.0.0.1:9500"' },
    tls: deviceTls,
    timeout: duration,
    connectTimeout: duration,
    queue: { type: 'integer', minimum: 1, maximum: DL.MAX_QUEUE, rule: `must be an integer from 1 to ${DL.MAX_QUEUE} (requests waiting per job)` },
    maxConnections: {
      type: 'integer',
      minimum: 1,
      maximum: DL.MAX_CONNECTIONS,
      rule: `must be an integer from 1 to ${DL.MAX_CONNECTIONS} (the TCP connections the device accepts; every job on it shares them)`
    },
    maxInflight: {
      type: 'integer',
      minimum: 1,
      maximum: DL.MAX_INFLIGHT,
      rule: `must be an integer from 1 to ${DL.MAX_INFLIGHT} (requests one Modbus TCP connection carries at once; 1 unless the device serves pipelined requests)`
    },
    ...quirks,
    // the line's pauses (drivers/connection.js): one line, one timing, so not per unit
    interFrameDelay: duration,
    delayAfterConnect: duration,
    // FC8 counters in the device's health, read at this period (devices/diagnostics.js)
    diagnostics: duration,
    allowWrites: { type: 'boolean', rule: 'must be true or false (whether jobs may write to this device; default false)' },
    tags: tagGroups,
    profile: profileName,
    overrides: tagOverrides,
    scan: scanClasses,
    units: {
      if: { type: 'string' },
      then: { type: 'string', minLength: 1, rule: 'must be a list of unit ids such as "1-10, 12" (each unit named unit-<id>), or a mapping of unit names to { unitId, … }' },
      else: {
        type: 'object',
        minProperties: 1,
        additionalProperties: unit,
        rule: 'must map unit names to { unitId, … }: the units (slaves) of a serial line, an RTU-over-TCP socket or a Modbus TCP gateway; or list their unit ids, "1-10, 12"'
      }
    },
    backoff
  }
};

/** A profile: a device description many devices or units share (profiles.js); its fields are a device's */
const profile = {
  type: 'object',
  additionalProperties: false,
  rule: 'must be a device description such as { order: CDAB, timeout: 500ms, tags: { … }, scan: { … } }, or { csv: <tag sheet> }',
  properties: {
    description: { type: 'string', rule: 'must be text' },
    ...pick(device.properties, PROFILE_FIELDS),
    tags: tagGroups,
    csv: { type: 'string', minLength: 1, rule: 'must be the path of a CSV tag sheet (relative to the config file): its tags are the profile\'s tag group of the profile\'s name' },
    scan: scanClasses
  }
};
const tls = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ca: { type: 'string', minLength: 1, rule: 'must be the path of a PEM file' },
    cert: { type: 'string', minLength: 1, rule: 'must be the path of a PEM file' },
    key: { type: 'string', minLength: 1, rule: 'must be the path of a PEM file' },
    rejectUnauthorized: { type: 'boolean', rule: 'must be true or false' }
  }
};

const mqtt = {
  type: 'object',
  additionalProperties: false,
  properties: {
    url: { type: 'string', minLength: 1, rule: 'must be a broker URL such as "mqtt://127.0.0.1:1883"' },
    embedded: {
      type: 'object',
      additionalProperties: false,
      properties: {
        host: { type: 'string', minLength: 1, rule: 'must be a host name or address to listen on' },
        port: { type: 'integer', minimum: 0, maximum: 65535, rule: 'must be a TCP port from 0 to 65535 (0 picks a free one)' },
        username: { type: 'string', minLength: 1, rule: 'must be a non-empty string (the login clients of the embedded broker must use)' },
        password: { type: 'string', minLength: 1, rule: `must be a non-empty string (or leave it out and set ${D.MQTT_EMBEDDED_PASSWORD_ENV})` },
        maxPacketSize: { type: ['string', 'integer'], rule: `is not a size; ${SIZE_HINT}` },
        maxClients: { type: 'integer', minimum: 1, maximum: D.MQTT_EMBEDDED_MAX_CLIENTS_LIMIT, rule: `must be an integer from 1 to ${D.MQTT_EMBEDDED_MAX_CLIENTS_LIMIT} (connections the embedded broker keeps open; default ${D.MQTT_EMBEDDED_MAX_CLIENTS})` }
      }
    },
    prefix: { type: 'string', pattern: D.PREFIX_PATTERN, rule: 'must be one or more topic levels of letters, digits, _ . - separated by / (no + # or empty levels)' },
    clientId: { type: 'string', minLength: 1, maxLength: 256, rule: 'must be a non-empty string of at most 256 characters' },
    username: { type: 'string', minLength: 1, rule: 'must be a non-empty string' },
    password: { type: 'string', rule: 'must be a string' },
    qos: { enum: [0, 1, 2], rule: 'must be 0, 1 or 2' },
    protocolVersion: { enum: [4, 5], rule: 'must be 4 (MQTT 3.1.1) or 5 (MQTT 5)' },
    tls,
    writes: {
      type: ['boolean', 'object'],
      additionalProperties: false,
      rule: 'must be true, false, or a mapping { queue, maxAge }: whether clients may write tags by publishing to <prefix>/<gateway>/<device>/write (default false)',
      properties: {
        queue: { type: 'integer', minimum: 1, maximum: D.MQTT_WRITES_QUEUE_LIMIT, rule: `must be an integer from 1 to ${D.MQTT_WRITES_QUEUE_LIMIT} (write commands that may wait per device; more are refused with NINES_ERR_WRITE_BACKLOG)` },
        maxAge: duration
      }
    },
    buffer: { type: 'integer', minimum: 0, maximum: D.MQTT_BUFFER_MAX_LIMIT, rule: `must be an integer from 0 to ${D.MQTT_BUFFER_MAX_LIMIT} (latency summaries, and values, kept in memory while the broker is away)` },
    spool: {
      type: 'object',
      additionalProperties: false,
      required: ['dir'],
      rule: 'must be a mapping { dir, maxBytes, sync }, e.g. { dir: /var/lib/nines/spool, maxBytes: 1GB }',
      properties: {
        dir: { type: 'string', minLength: 1, rule: 'must be the path of a folder the gateway may write (created if missing)', hint: 'the folder that keeps summaries and values while the broker is away, e.g. /var/lib/nines/spool' },
        maxBytes: { type: ['string', 'integer'], rule: `is not a size; ${SIZE_HINT}` },
        sync: duration
      }
    },
    keepalive: duration,
    connectTimeout: duration,
    errorInterval: duration,
    reconnect: {
      type: 'object',
      additionalProperties: false,
      properties: { initial: duration, max: duration }
    },
    sparkplug: {
      type: 'object',
      additionalProperties: false,
      required: ['group'],
      rule: 'must be a mapping such as { group: plant1, node: edge-1 } (omit it to turn Sparkplug B off)',
      properties: {
        group: { type: 'string', minLength: 1, rule: 'must be a Sparkplug group id such as "plant1" (no / + #)', hint: 'the Sparkplug group id, e.g. group: plant1' },
        node: { type: 'string', minLength: 1, rule: 'must be a Sparkplug edge node id such as "edge-1" (no / + #; default: gateway.id)' },
        clientId: { type: 'string', minLength: 1, maxLength: 256, rule: 'must be a non-empty string of at most 256 characters (the client id of the Sparkplug session)' },
        writes: { type: 'boolean', rule: 'must be true or false (whether DCMD may write tags; default false)' },
        primaryHost: { type: 'string', minLength: 1, rule: 'must be the host id of the primary host application, as in its spBv1.0/STATE/<host id> topic (no / + #)' },
        hold: {
          type: 'object',
          additionalProperties: false,
          rule: 'must be a mapping { maxMessages, maxBytes }: the DATA held while the primary host is offline',
          properties: {
            maxMessages: { type: 'integer', minimum: 1, maximum: SP.HOLD_MAX_MESSAGES_LIMIT, rule: `must be an integer from 1 to ${SP.HOLD_MAX_MESSAGES_LIMIT} (DATA messages held in memory; default ${SP.HOLD_MAX_MESSAGES})` },
            maxBytes: { type: ['string', 'integer'], rule: `is not a size; ${SIZE_HINT}` }
          }
        },
        templates: { type: 'boolean', rule: 'must be true or false (tag groups as Sparkplug templates; default false)' }
      }
    }
  }
};

const listen = {
  type: ['string', 'integer'],
  rule: 'must be "host:port" such as "127.0.0.1:9464" or "[::1]:9464", or a port number (then on 127.0.0.1)'
};
/** gateway.metrics and gateway.http: where they listen and the login they ask for */
const endpoint = (what, extra = {}) => ({
  type: 'object',
  additionalProperties: false,
  rule: `must be a mapping such as { listen: "127.0.0.1:${what === 'metrics' ? 9464 : 9465}" } (omit it to turn the ${what === 'metrics' ? 'metrics endpoint' : 'status page'} off)`,
  properties: {
    listen,
    username: { type: 'string', minLength: 1, rule: 'must be a non-empty string (the HTTP Basic login)' },
    password: { type: 'string', minLength: 1, rule: `must be a non-empty string (or leave it out and set ${what === 'metrics' ? D.METRICS_PASSWORD_ENV : D.HTTP_PASSWORD_ENV})` },
    maxConnections: { type: 'integer', minimum: 1, maximum: D.HTTP_MAX_CONNECTIONS_LIMIT, rule: `must be an integer from 1 to ${D.HTTP_MAX_CONNECTIONS_LIMIT} (open connections; default ${D.HTTP_MAX_CONNECTIONS})` },
    ...extra
  }
});

const gateway = {
  type: 'object',
  additionalProperties: false,
  properties: {
    id: name,
    interval: duration,
    workers: {
      if: { type: 'string' },
      then: { const: 'auto', rule: `must be "auto" or an integer from 1 to ${D.GATEWAY_MAX_WORKERS}` },
      else: { type: 'integer', minimum: 1, maximum: D.GATEWAY_MAX_WORKERS, rule: `must be "auto" or an integer from 1 to ${D.GATEWAY_MAX_WORKERS}` }
    },
    mode: { enum: ['worker', 'inline'], rule: 'must be worker (poll in worker threads) or inline (on the main thread)' },
    hlog: { type: 'string', minLength: 1, rule: 'must be a directory path for HdrHistogram interval logs (.hlog), one file per job and run' },
    metrics: endpoint('metrics', {
      buckets: { type: 'array', items: duration, maxItems: D.METRICS_MAX_BUCKETS, rule: `must be a list of at most ${D.METRICS_MAX_BUCKETS} durations, ascending, such as [1ms, 2.5ms, 5ms, 10ms] (the classic histogram buckets; [] for none)` }
    }),
    http: endpoint('http', {
      window: { type: 'integer', minimum: 1, maximum: D.HTTP_WINDOW_MAX_INTERVALS, rule: `must be an integer from 1 to ${D.HTTP_WINDOW_MAX_INTERVALS} (intervals the status page merges)` }
    })
  }
};

/** The whole document */
const schema = {
  type: 'object',
  rule: 'must be a mapping with the sections gateway, mqtt, devices and jobs',
  additionalProperties: false,
  required: ['devices'],
  properties: {
    gateway,
    mqtt,
    devices: {
      type: 'object',
      minProperties: 1,
      additionalProperties: device,
      rule: 'must map device names to { target, timeout, … }, at least one device',
      hint: 'map device names to { target: "ascii://127.0.0.1:9500" }'
    },
    jobs: {
      type: 'array',
      minItems: 1,
      items: job,
      rule: 'must be a list of at least one job',
      hint: 'list at least one job: - { name, device, command | generator | read | write | tags, rate }'
    },
    profiles: {
      type: 'object',
      additionalProperties: profile,
      rule: 'must map profile names to device descriptions { tags, scan, order, timeout, … }'
    }
  }
};

module.exports = { schema, SIZE_HINT };
