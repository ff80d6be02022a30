'use strict';

/**
 * Templates (Sparkplug 3.0, 6.4.14; `mqtt.sparkplug.templates: true`): a tag group becomes a
 * template definition in the NBIRTH (`is_definition` true, its members with their datatypes and no
 * values), and each Sparkplug device that polls the whole group carries an instance of it in its
 * DBIRTH (a Template metric named like the group, `template_ref` = the definition's name, every
 * member with its value). A host (Ignition's MQTT Engine makes them UDTs) then knows that the
 * meters of a line are alike. Pure, tested alone.
 *
 * Names: a definition is named like its group. Groups of one name on several devices or units that
 * hold the same tags (names, datatypes, units) share it; one that differs from the first of its name
 * gets a definition of its own, `<group>@<device id>`, so a definition never means two things.
 */

/** What makes two groups one definition */
function identity (members) {
  return JSON.stringify(members.map((m) => [m.name, m.datatype, m.unit]));
}

/**
 * @typedef {object} TemplateDefinition
 * @property {string} name
 * @property {import('./model').MetricDef[]} members
 */

/**
 * @typedef {object} TemplateInstance
 * @property {string} name the instance metric's name: its group's
 * @property {string} ref the definition's name
 * @property {import('./model').MetricDef[]} members
 */

/**
 * @param {import('./model').NodeModel} model
 * @returns {{definitions: TemplateDefinition[], instances: Map<string, TemplateInstance[]>}}
 *   definitions in the order first seen; instances per Sparkplug device id
 */
function buildTemplates (model) {
  const byName = new Map(); // definition name → identity
  const definitions = [];
  const instances = new Map();
  for (const d of model.devices.values()) {
    const defs = new Map(d.metrics.map((m) => [m.name, m]));
    const list = [];
    for (const g of d.groups || []) {
      const members = g.tags.map((t) => defs.get(t));
      const id = identity(members);
      let name = g.name;
      if (byName.has(name) && byName.get(name) !== id) name = `${g.name}@${d.name}`;
      if (!byName.has(name)) {
        byName.set(name, id);
        definitions.push({ name, members });
      }
      list.push({ name: g.name, ref: name, members });
    }
    instances.set(d.name, list);
  }
  return { definitions, instances };
}

/**
 * A definition as an NBIRTH metric.
 * @param {TemplateDefinition} def
 * @param {number} alias
 * @returns {object} a sparkplug-payload metric
 */
function definitionMetric (def, alias) {
  return {
    name: def.name,
    alias,
    type: 'Template',
    value: {
      isDefinition: true,
      metrics: def.members.map((m) => ({ name: m.name, type: m.datatype, value: null, ...(m.unit ? { properties: { engUnit: { type: 'String', value: m.unit } } } : {}) }))
    }
  };
}

module.exports = { buildTemplates, definitionMetric };
