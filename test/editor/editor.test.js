'use strict';

/**
 * The editor side, in headless Chromium (Debian's `chromium`, driven by playwright-core) against
 * a real Node-RED 4 with the package installed: the palette shows every nines node, each edit
 * dialog opens with its labels translated and validates as you type, the help renders as core nodes'
 * help does (each documented msg property its own entry), a device's warnings reach the debug sidebar
 * from a node on a flow, and the browser console stays free of errors.
 */

const assert = require('node:assert/strict');
const { startNodeRed, PKG } = require('../e2e/launch');
const ui = require('./browser');

const FLOW_NODES = ['nines-ascii', 'nines-modbus-read', 'nines-modbus-write', 'nines-poll', 'nines-latency-probe', 'nines-latency-merge', 'nines-device-status'];
const DEVICE_NODES = ['nines-ascii-device', 'nines-modbus-device'];
const CONFIG_NODES = [...DEVICE_NODES, 'nines-profile'];

/** Per node type: a field, a value its validator must refuse and one it must accept */
const VALIDATION = {
  'nines-ascii': ['#node-input-command', 'read it', '@01'],
  'nines-modbus-read': ['#node-input-address', '70000', '100'],
  'nines-modbus-write': ['#node-input-address', '-1', '100'],
  'nines-poll': ['#node-input-rate', 'fast', '1000/s'],
  'nines-latency-probe': ['#node-input-connections', '1,x', '1,2,4'],
  'nines-latency-merge': ['#node-input-window', '0', '60'],
  'nines-device-status': ['#node-input-name', null, 'plc1 health'],
  'nines-ascii-device': ['#node-config-input-port', '70000', '9500'],
  'nines-modbus-device': ['#node-config-input-unitId', '256', '1'],
  'nines-profile': ['#node-config-input-name', '', 'meter']
};

/** The first words of each node's help summary */
const SUMMARY = {
  'nines-ascii': 'Sends one ASCII',
  'nines-modbus-read': 'Reads coils',
  'nines-modbus-write': 'Writes coils',
  'nines-poll': 'Polls a device',
  'nines-latency-probe': 'Runs a latency test',
  'nines-latency-merge': 'Merges nines latency payloads',
  'nines-device-status': 'Sends the health of a device',
  'nines-ascii-device': 'A Brainboxes ED',
  'nines-modbus-device': 'A Modbus TCP server',
  'nines-profile': 'A tag list described once'
};

/**
 * The msg properties each node's help documents, per section and, for nodes with several outputs,
 * per output: each must render as its own <dt>/<dd> entry, as core nodes' help does.
 */
const HELP_PROPERTIES = {
  'nines-ascii': { Inputs: [['command', 'payload']], Outputs: [['payload', 'raw', 'latency', 'command']] },
  'nines-modbus-read': { Inputs: [['fc', 'address', 'quantity', 'unitId']], Outputs: [['payload', 'data', 'buffer', 'latency', 'modbus', 'quality', 'ts', 'units', 'reads']] },
  'nines-modbus-write': { Inputs: [['payload', 'fc', 'address', 'unitId']], Outputs: [['payload', 'modbus', 'latency', 'results']] },
  'nines-poll': { Inputs: [['topic']], Outputs: [['topic', 'payload', 'quality', 'ts', 'changed', 'units', 'polls'], ['topic', 'payload']] },
  'nines-latency-probe': { Inputs: [['topic']], Outputs: [['topic', 'payload'], ['payload', 'filename'], ['payload']] },
  'nines-latency-merge': { Inputs: [['payload', 'topic']], Outputs: [['topic', 'payload'], ['topic', 'payload', 'timestamp']] },
  'nines-device-status': { Outputs: [['topic', 'payload']] },
  'nines-ascii-device': {},
  'nines-modbus-device': {},
  'nines-profile': {}
};

/** Entries whose full text must survive: [node, section, property, texts its description holds] */
const HELP_TEXTS = [
  ['nines-modbus-read', 'Inputs', 'address', ['0–65535', 'protocol address, 0-based', 'no 4xxxx offsets']],
  ['nines-modbus-write', 'Inputs', 'address', ['0–65535', '0-based', 'no 4xxxx offsets']],
  ['nines-modbus-read', 'Outputs', 'payload', ['FC 1/2: booleans', 'bit 0 first', '2 characters per register']],
  ['nines-ascii', 'Outputs', 'payload', ['{outputs: [8 booleans], inputs: [8 booleans], value}', 'an acknowledged write gives true']],
  ['nines-poll', 'Outputs', 'payload', ['as in nines modbus read', '{outputs, inputs}', '{"boiler_temp": 71.3, "pump_on": true}']],
  ['nines-ascii', 'Inputs', 'payload', ['{outputs: [true, false, …]}', '{line: 3, value: true}']]
];

/** The settings each config node's help lists, each as its own list item starting with its name */
const HELP_SETTINGS = {
  'nines-ascii-device': ['Host, Port', 'Address', 'Checksum mode', 'Timeout', 'Connect timeout', 'Reconnect', 'Connections'],
  'nines-modbus-device': ['Transport', 'Unit id', 'Units on line', 'Connections', 'In flight', 'Timeout', 'Connect timeout', 'Inter-frame delay', 'Delay after connect', 'Reconnect', 'Allow writes'],
  'nines-profile': ['Protocol', 'Tags']
};

describe('Node-RED editor (headless Chromium)', function () {
  this.timeout(60000);
  let nr;
  let browser;
  let page;
  let consoleErrors;

  before(async () => {
    nr = await startNodeRed();
    // nines-profile comes last, after the scripts of the tag table it loads
    ({ browser, page, consoleErrors } = await ui.openEditorPage(nr.url, () => window.RED && RED.nodes && RED.nodes.getType('nines-latency-merge') &&
      RED.nodes.getType('nines-profile') && document.querySelector('.red-ui-palette-node[data-palette-type="nines-ascii"]')));
  });

  after(async () => {
    if (browser) await browser.close();
    if (nr) await nr.stop();
  });

  it('registers every nines node, in the "nines" palette category (config nodes as config)', async () => {
    const defs = await page.evaluate((types) => types.map((t) => {
      const d = RED.nodes.getType(t);
      return d && { type: t, category: d.category, set: d.set && d.set.module };
    }), [...FLOW_NODES, ...CONFIG_NODES]);
    defs.forEach((d, i) => assert.ok(d, `${[...FLOW_NODES, ...CONFIG_NODES][i]} registered`));
    for (const d of defs.slice(0, FLOW_NODES.length)) assert.equal(d.category, 'nines', d.type);
    for (const d of defs.slice(FLOW_NODES.length)) assert.equal(d.category, 'config', d.type);
    for (const d of defs) assert.equal(d.set, PKG.name);
  });

  it('shows every flow node in the palette with its icon and label', async () => {
    for (const type of FLOW_NODES) {
      const el = page.locator(`.red-ui-palette-node[data-palette-type="${type}"]`);
      assert.equal(await el.count(), 1, type);
      const label = (await el.locator('.red-ui-palette-label').innerText()).trim();
      assert.ok(label.length > 0 && !label.includes('.'), `${type} label "${label}"`);
      const icon = await el.locator('.red-ui-palette-icon').evaluate((n) => getComputedStyle(n).backgroundImage);
      assert.match(icon, /nines-[a-z-]+\.svg/, `${type} icon`);
    }
  });

  /**
   * Adds a node of `type` to the workspace and opens its edit dialog.
   * @param {string} type
   * @param {boolean} [withDefaults] give the node its defaults' values, as the palette does
   */
  async function openEditor (type, withDefaults = false) {
    const id = await page.evaluate(([t, full]) => {
      const id = RED.nodes.id();
      const n = { id, type: t, x: 200, y: 200, z: RED.workspaces.active() };
      if (full) {
        const defaults = RED.nodes.getType(t).defaults;
        for (const k of Object.keys(defaults)) n[k] = defaults[k].value;
      }
      RED.view.importNodes([n], { generateIds: false, addFlow: false });
      RED.editor.edit(RED.nodes.node(id));
      return id;
    }, [type, withDefaults]);
    await page.waitForSelector(`#dialog-form input, #dialog-form select`, { state: 'visible' });
    return id;
  }

  const closeEditors = () => ui.closeEditors(page);
  const openConfig = (type) => ui.openConfigDialog(page, type);
  const markedInvalid = (selector, value) => ui.markedInvalid(page, selector, value);

  async function translatedLabels (formSelector) {
    return page.$$eval(`${formSelector} label, ${formSelector} span[data-i18n], ${formSelector} option`, (els) => els
      .filter((e) => e.offsetParent !== null)
      .map((e) => e.textContent.trim())
      .filter((t) => /^nines-[a-z-]+\./.test(t)));
  }

  for (const type of FLOW_NODES) {
    it(`opens the ${type} edit dialog, translated, and validates as you type`, async () => {
      await openEditor(type);
      try {
        assert.deepEqual(await translatedLabels('#dialog-form'), [], 'untranslated catalog keys');
        const [field, bad, good] = VALIDATION[type];
        if (bad !== null) assert.equal(await markedInvalid(field, bad), true, `${field} = ${bad} should be refused`);
        assert.equal(await markedInvalid(field, good), false, `${field} = ${good} should be accepted`);
      } finally {
        await closeEditors();
      }
    });
  }

  for (const type of CONFIG_NODES) {
    it(`opens the ${type} config dialog, translated, and validates as you type`, async () => {
      await openConfig(type);
      try {
        assert.deepEqual(await translatedLabels('#node-config-dialog-edit-form'), [], 'untranslated catalog keys');
        const [field, bad, good] = VALIDATION[type];
        assert.equal(await markedInvalid(field, bad), true, `${field} = ${bad} should be refused`);
        assert.equal(await markedInvalid(field, good), false, `${field} = ${good} should be accepted`);
      } finally {
        await closeEditors();
      }
    });
  }

  /** Per device config node: [field, value, refused?], typed in order into one dialog */
  const DEVICE_FIELDS = [
    ['#node-config-input-maxConnections', '0', true],
    ['#node-config-input-maxConnections', '65', true],
    ['#node-config-input-maxConnections', '8', false],
    ['#node-config-input-connectTimeout', '0', true],
    ['#node-config-input-connectTimeout', '2000', false],
    ['#node-config-input-backoffMin', '-1', true],
    ['#node-config-input-backoffMin', '200', false],
    ['#node-config-input-backoffMax', '100', true],
    ['#node-config-input-backoffMax', '5000', false]
  ];

  for (const type of DEVICE_NODES) {
    it(`checks the ${type} connection settings as you type (maxConnections, connect timeout, backoff)`, async () => {
      await openConfig(type);
      try {
        const defaults = await page.evaluate(() => ({
          maxConnections: $('#node-config-input-maxConnections').val(),
          connectTimeout: $('#node-config-input-connectTimeout').val(),
          backoffMin: $('#node-config-input-backoffMin').val(),
          backoffMax: $('#node-config-input-backoffMax').val()
        }));
        assert.deepEqual(defaults, { maxConnections: '1', connectTimeout: '5000', backoffMin: '100', backoffMax: '10000' });
        for (const [field, value, refused] of DEVICE_FIELDS) {
          assert.equal(await markedInvalid(field, value), refused, `${field} = ${value} should be ${refused ? 'refused' : 'accepted'}`);
        }
        // a backoff maximum that was fine turns red when the minimum passes it
        await markedInvalid('#node-config-input-backoffMin', '6000');
        assert.equal(await page.locator('#node-config-input-backoffMax').evaluate((n) => n.classList.contains('input-error')), true, 'backoffMax below backoffMin');
      } finally {
        await closeEditors();
      }
    });
  }

  it('keeps a Modbus RTU device to one connection and says so', async () => {
    await openConfig('nines-modbus-device');
    try {
      await markedInvalid('#node-config-input-maxConnections', '4');
      await page.selectOption('#node-config-input-transport', 'rtu');
      assert.equal(await page.inputValue('#node-config-input-maxConnections'), '1');
      assert.equal(await page.locator('#node-config-input-maxConnections').isDisabled(), true);
      const tip = await page.locator('#node-config-dialog-edit-form span.nines-modbus-device-rtu').innerText();
      assert.match(tip, /serial line is one connection/);
      await page.selectOption('#node-config-input-transport', 'tcp');
      assert.equal(await page.locator('#node-config-input-maxConnections').isDisabled(), false);
      assert.equal(await markedInvalid('#node-config-input-maxConnections', '4'), false);
    } finally {
      await closeEditors();
    }
  });

  it('checks "In flight" on a Modbus TCP device as you type (1-64, default 1), and keeps RTU to one request at a time', async () => {
    await openConfig('nines-modbus-device');
    try {
      assert.equal(await page.inputValue('#node-config-input-maxInflight'), '1');
      assert.match(await page.locator('#node-config-input-maxInflight + span').last().innerText(), /requests per connection at once, 1–64/);
      assert.equal(await markedInvalid('#node-config-input-maxInflight', '0'), true);
      assert.equal(await markedInvalid('#node-config-input-maxInflight', '65'), true);
      assert.equal(await markedInvalid('#node-config-input-maxInflight', '2.5'), true);
      assert.equal(await markedInvalid('#node-config-input-maxInflight', '16'), false);
      await page.selectOption('#node-config-input-transport', 'rtu');
      assert.equal(await page.inputValue('#node-config-input-maxInflight'), '1');
      assert.equal(await page.locator('#node-config-input-maxInflight').isVisible(), false, 'a TCP-only field');
    } finally {
      await closeEditors();
    }
  });

  it('offers Modbus/TCP Security: host and port (802 for the default 502), a TLS configuration, several connections and requests in flight', async () => {
    await openConfig('nines-modbus-device');
    try {
      assert.equal(await page.locator('#node-config-input-tls').isVisible(), false, 'no TLS row in clear');
      await page.selectOption('#node-config-input-transport', 'tls');
      assert.equal(await page.inputValue('#node-config-input-port'), '802');
      assert.equal(await page.locator('#node-config-input-host').isVisible(), true);
      assert.equal(await page.locator('#node-config-input-tls').isVisible(), true, 'the core tls-config node\'s picker');
      assert.match(await page.locator('#node-config-dialog-edit-form div.form-tips.nines-modbus-device-tls').innerText(), /Verify server certificate/);
      assert.equal(await page.locator('#node-config-input-maxConnections').isDisabled(), false);
      assert.equal(await markedInvalid('#node-config-input-maxInflight', '8'), false);
      await page.selectOption('#node-config-input-transport', 'tcp');
      assert.equal(await page.inputValue('#node-config-input-port'), '502');
    } finally {
      await closeEditors();
    }
  });

  it('offers RTU over TCP: host and port (4001 for the default 502), an optional baud rate, one connection; and checks the line quirks', async () => {
    await openConfig('nines-modbus-device');
    try {
      await page.selectOption('#node-config-input-transport', 'rtutcp');
      assert.equal(await page.locator('#node-config-input-host').isVisible(), true);
      assert.equal(await page.inputValue('#node-config-input-port'), '4001');
      assert.equal(await page.locator('#node-config-input-path').isVisible(), false);
      assert.equal(await page.locator('#node-config-input-parity').isVisible(), false);
      assert.equal(await page.locator('#node-config-input-maxConnections').isDisabled(), true);
      const tips = await page.locator('#node-config-dialog-edit-form span.nines-modbus-device-rtutcp').allInnerTexts();
      assert.ok(tips.some((t) => /serial server port is one serial line/.test(t)), tips.join(' | '));
      assert.ok(tips.some((t) => /sets the silence between frames/.test(t)), tips.join(' | '));
      // the line's baud rate may be left unknown over TCP, not on a serial port
      await page.selectOption('#node-config-input-baudRate', '');
      await page.locator('#node-config-input-baudRate').dispatchEvent('change');
      assert.equal(await page.locator('#node-config-input-baudRate').evaluate((n) => n.classList.contains('input-error')), false);
      await page.selectOption('#node-config-input-transport', 'rtu');
      assert.equal(await page.inputValue('#node-config-input-baudRate'), '9600');
      await page.selectOption('#node-config-input-transport', 'tcp');
      assert.equal(await page.inputValue('#node-config-input-port'), '502');
      assert.equal(await page.inputValue('#node-config-input-interFrameDelay'), '0');
      assert.equal(await markedInvalid('#node-config-input-interFrameDelay', '-1'), true);
      assert.equal(await markedInvalid('#node-config-input-interFrameDelay', '20'), false);
      // the pause counts against the timeout (1000 ms by default)
      assert.equal(await markedInvalid('#node-config-input-interFrameDelay', '1000'), true);
      assert.equal(await markedInvalid('#node-config-input-delayAfterConnect', '60001'), true);
      assert.equal(await markedInvalid('#node-config-input-delayAfterConnect', '250'), false);
    } finally {
      await closeEditors();
    }
  });

  it('offers the poll catch-up policies, skip by default', async () => {
    await openEditor('nines-poll', true);
    try {
      assert.equal(await page.inputValue('#node-input-policy'), 'skip');
      const options = await page.$$eval('#node-input-policy option', (els) => els.map((e) => e.value));
      assert.deepEqual(options, ['skip', 'capped', 'burst']);
      // the dialog says what the chosen policy does
      assert.match(await page.locator('#nines-poll-policy-tip').innerText(), /Missed polls are skipped and counted/);
      await page.selectOption('#node-input-policy', 'capped');
      assert.match(await page.locator('#nines-poll-policy-tip').innerText(), /up to twice the rate/);
    } finally {
      await closeEditors();
    }
  });

  it('takes the poll rate per second, per minute, in Hz or as a period, and says under the field what it reads', async () => {
    await openEditor('nines-poll', true);
    try {
      const tip = () => page.locator('#nines-poll-rate-tip').innerText();
      // the hint names the forms the field takes
      assert.match(await tip(), /10\/s.*1000\/min.*10Hz.*100ms.*max/s);
      for (const [rate, reads] of [['10/s', /10 polls\/s, one every 100 ms/], ['10Hz', /10 polls\/s, one every 100 ms/], ['100ms', /10 polls\/s, one every 100 ms/],
        ['1kHz', /1000 polls\/s, one every 1 ms/], ['1000/min', /16\.7 polls\/s, one every 60 ms/], ['2s', /0\.5 polls\/s, one every 2 s/], ['max', /closed loop/]]) {
        assert.equal(await markedInvalid('#node-input-rate', rate), false, `${rate} should be accepted`);
        assert.match(await tip(), reads, rate);
      }
      for (const rate of ['fast', '0ms', '10Hz/s', '-5/s', '2000kHz']) {
        assert.equal(await markedInvalid('#node-input-rate', rate), true, `${rate} should be refused`);
        assert.match(await tip(), /Not a rate/, rate);
      }
    } finally {
      await closeEditors();
    }
  });

  for (const type of ['nines-device-status', 'nines-poll']) {
    it(`marks a ${type} node without a device as invalid`, async () => {
      const id = await openEditor(type, true);
      try {
        await page.selectOption('#node-input-protocol', 'modbus');
        assert.equal(await page.evaluate((nodeId) => RED.editor.validateNode(RED.nodes.node(nodeId)), id), false);
      } finally {
        await closeEditors();
      }
    });
  }

  it('shows the device status node\'s device field for the chosen protocol, Modbus by default', async () => {
    await openEditor('nines-device-status', true);
    try {
      assert.equal(await page.inputValue('#node-input-protocol'), 'modbus');
      assert.equal(await page.locator('#node-input-modbusDevice').isVisible(), true);
      await page.selectOption('#node-input-protocol', 'ascii');
      assert.equal(await page.locator('#node-input-asciiDevice').isVisible(), true);
      assert.equal(await page.locator('#node-input-modbusDevice').isVisible(), false);
    } finally {
      await closeEditors();
    }
  });

  it('fills the command from the ascii helper with the device address', async () => {
    await openEditor('nines-ascii');
    try {
      await page.selectOption('#nines-ascii-helper', 'setOutput');
      await page.fill('#nines-ascii-helper-line', '3');
      await page.selectOption('#nines-ascii-helper-on', 'on');
      await page.click('#nines-ascii-helper-fill');
      assert.equal(await page.inputValue('#node-input-command'), '#011301');
      await page.selectOption('#nines-ascii-helper', 'setAnalog');
      await page.fill('#nines-ascii-helper-channel', '2');
      await page.fill('#nines-ascii-helper-volts', '5.5');
      await page.click('#nines-ascii-helper-fill');
      assert.equal(await page.inputValue('#node-input-command'), '#012+05.500');
    } finally {
      await closeEditors();
    }
  });

  for (const type of [...FLOW_NODES, ...CONFIG_NODES]) {
    it(`renders the ${type} help with its summary and sections`, async () => {
      const html = await page.evaluate(async (t) => {
        RED.sidebar.help.show(t);
        await new Promise((resolve) => setTimeout(resolve, 50));
        // the help stack of the sidebar (other .red-ui-help blocks hold the tips)
        return [...document.querySelectorAll('.red-ui-sidebar-help-stack .red-ui-help')].map((e) => e.innerHTML).join('\n');
      }, type);
      assert.ok(html.includes(SUMMARY[type]), `${type} summary`);
      // the help's <h3> headings become its collapsible sections
      assert.match(html, /<h3[^>]*>(?:(?!<\/h3>).)*Details(?:(?!<\/h3>).)*<\/h3>/s, `${type} Details heading`);
      if (FLOW_NODES.includes(type)) assert.match(html, /<h3[^>]*>(?:(?!<\/h3>).)*(Inputs|Outputs)(?:(?!<\/h3>).)*<\/h3>/s, `${type} Inputs/Outputs`);
    });
  }

  /**
   * Opens a node's help in the sidebar and reads it as the user sees it: the text, the property
   * entries (section, output, name, type, description) and the list items.
   */
  async function renderedHelp (type) {
    return page.evaluate(async (t) => {
      RED.sidebar.help.show(t);
      await new Promise((resolve) => setTimeout(resolve, 50));
      const all = [...document.querySelectorAll('.red-ui-sidebar-help-stack .red-ui-help')];
      // the outermost help blocks only: one may hold another
      const roots = all.filter((r) => !all.some((o) => o !== r && o.contains(r)));
      const headings = roots.flatMap((r) => [...r.querySelectorAll('h3')]);
      const sectionOf = (el) => {
        let last = null;
        for (const h of headings) if (h.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING) last = h;
        return last ? last.textContent.trim() : null;
      };
      const entries = [];
      for (const dl of roots.flatMap((r) => [...r.querySelectorAll('dl.message-properties')])) {
        const li = dl.closest('ol.node-ports > li');
        const port = li ? [...li.parentElement.children].indexOf(li) : 0;
        for (const dt of dl.querySelectorAll(':scope > dt')) {
          const typeEl = dt.querySelector('.property-type');
          const dd = dt.nextElementSibling;
          entries.push({
            section: sectionOf(dl),
            port,
            name: (dt.textContent.slice(0, dt.textContent.length - (typeEl ? typeEl.textContent.length : 0))).trim(),
            type: typeEl ? typeEl.textContent.trim() : '',
            desc: dd && dd.tagName === 'DD' ? dd.textContent.replace(/\s+/g, ' ').trim() : null
          });
        }
      }
      const items = roots.flatMap((r) => [...r.querySelectorAll('li')]).map((li) => li.textContent.replace(/\s+/g, ' ').trim());
      return { text: roots.map((r) => r.textContent).join('\n').replace(/\s+/g, ' '), entries, items };
    }, type);
  }

  for (const type of [...FLOW_NODES, ...CONFIG_NODES]) {
    it(`renders every documented property of the ${type} help as its own entry, as core nodes' help does`, async () => {
      const { text, entries, items } = await renderedHelp(type);
      // no markdown property line left as text (": data (array) :")
      assert.doesNotMatch(text, /:\s*\*?[A-Za-z_.]+\*?\s*\([^)]*\)\s*:/, `${type}: a ": name (type) :" line rendered as text`);
      const got = {};
      for (const e of entries) {
        assert.ok(e.section === 'Inputs' || e.section === 'Outputs', `${type}: ${e.name} under ${e.section}`);
        ((got[e.section] ||= [])[e.port] ||= []).push(e.name);
        assert.ok(e.type.length > 0, `${type} ${e.section} ${e.name}: no type`);
        assert.ok(e.desc && e.desc.length > 3, `${type} ${e.section} ${e.name}: no description`);
      }
      assert.deepEqual(got, HELP_PROPERTIES[type], `${type}: properties per section and output`);
      for (const [node, section, name, texts] of HELP_TEXTS.filter(([n]) => n === type)) {
        const e = entries.find((x) => x.section === section && x.name === name);
        assert.ok(e, `${node} ${section} ${name}`);
        for (const want of texts) assert.ok(e.desc.includes(want), `${node} ${section} ${name}: "${want}" missing from "${e.desc}"`);
      }
      for (const setting of HELP_SETTINGS[type] || []) {
        assert.ok(items.some((li) => li.startsWith(`${setting}:`)), `${type}: the setting "${setting}" as its own list item`);
      }
    });
  }

  it('shows a lost device\'s warning in the debug sidebar from a node on a flow, never from the config node', async () => {
    // a port nothing listens on: the device fails to connect and says so
    const closed = await new Promise((resolve) => {
      const srv = require('node:net').createServer().listen(0, '127.0.0.1', () => { const { port } = srv.address(); srv.close(() => resolve(port)); });
    });
    const flow = [
      { id: 'ed1tab', type: 'tab', label: 'device down' },
      { id: 'ed1dev', type: 'nines-modbus-device', name: 'plc down', transport: 'tcp', host: '127.0.0.1', port: closed, unitId: 1, timeout: 300, backoffMin: 100, backoffMax: 300 },
      { id: 'ed1read', type: 'nines-modbus-read', z: 'ed1tab', device: 'ed1dev', fc: 3, address: 0, quantity: 1, dataType: 'uint16', wordOrder: 'big', byteOrder: 'big', scale: 1, offset: 0, x: 200, y: 100, wires: [[]] }
    ];
    const deploy = async (f) => assert.equal((await nr.api('POST', '/flows', f, { 'Node-RED-Deployment-Type': 'full' })).status, 204);
    await deploy(flow);
    try {
      // the editor loads the deployed flows, then the device drops again while the debug sidebar shows
      await page.reload();
      await page.waitForFunction(() => window.RED && RED.nodes && RED.nodes.node('ed1read') && RED.nodes.node('ed1dev'), null, { timeout: 30000 });
      await page.evaluate(() => RED.sidebar.show('debug'));
      await deploy(flow);
      await page.waitForSelector('.red-ui-debug-msg', { timeout: 10000 });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const msgs = await page.$$eval('.red-ui-debug-msg', (els) => els.map((e) => ({ cls: e.className, text: e.textContent })));
      assert.ok(msgs.some((m) => /NINES_ERR_CONNECT_FAILED/.test(m.text)), JSON.stringify(msgs));
      for (const m of msgs) {
        // on a flow: the sidebar knows the node and its tab, so it can filter and reveal it
        assert.match(m.cls, /red-ui-debug-msg-node-ed1read\b/, m.text);
        assert.match(m.cls, /red-ui-debug-msg-flow-ed1tab\b/, m.text);
      }
    } finally {
      await deploy([]);
    }
  });

  it('edits a nines-profile\'s tags with the nodes\' table, checked by the runtime; a node taking them shows the profile, not a list', async () => {
    const ids = await page.evaluate(() => {
      const prof = { id: RED.nodes.id(), type: 'nines-profile', name: 'meter', protocol: 'modbus', tags: [
        { name: 'a', table: 'holding', address: 0, type: 'float32' }, { name: 'b', table: 'holding', address: 1 }] };
      const poll = { id: RED.nodes.id(), type: 'nines-poll', x: 300, y: 300, z: RED.workspaces.active(), protocol: 'modbus', source: 'profile', profile: prof.id };
      for (const [k, d] of Object.entries(RED.nodes.getType('nines-poll').defaults)) if (!(k in poll)) poll[k] = d.value;
      RED.view.importNodes([prof, poll], { generateIds: false, addFlow: false });
      return { prof: prof.id, poll: poll.id };
    });
    // the overlap is the runtime's to find: the profile turns invalid once its answer is in
    await page.waitForFunction((id) => { const n = RED.nodes.node(id); RED.editor.validateNode(n); return n.valid === false; }, ids.prof, { timeout: 5000 });
    await page.evaluate((id) => RED.editor.editConfig('', 'nines-profile', id, 'node-input'), ids.prof);
    await page.waitForSelector('#nines-profile-tags .nines-tags-list > li', { state: 'visible' });
    try {
      assert.equal(await page.locator('#nines-profile-tags .nines-tags-list > li').count(), 2);
      await page.waitForFunction(() => /overlaps/.test(document.querySelector('#nines-profile-tags').textContent), null, { timeout: 5000 });
    } finally {
      await closeEditors();
    }
    await page.evaluate((id) => RED.editor.edit(RED.nodes.node(id)), ids.poll);
    await page.waitForSelector('#node-input-profile', { state: 'attached' });
    try {
      assert.equal(await page.locator('.nines-poll-profile').isVisible(), true);
      assert.equal(await page.locator('.nines-poll-tags').isVisible(), false);
      assert.equal(await page.locator('#node-input-fc').isVisible(), false);
    } finally {
      await closeEditors();
    }
  });

  it('leaves the browser console without errors', () => {
    assert.deepEqual(consoleErrors, []);
  });
});
