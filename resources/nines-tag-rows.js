/**
 * A tag list row of the editor, without the DOM: what each field of a row shows for a tag, the tag
 * a row saves, and which of a row's optional fields show. resources/nines-tags.js builds the rows
 * with it; test/editor/tag-rows.test.js runs it in Node against the runtime (gateway/tags), so the
 * two are held to one reading of a tag.
 *
 * It interprets as little as it can: a field the user did not edit is saved as it came (an "INT"
 * stays "INT", a "40101" stays text, a wordOrder stays a wordOrder), for the runtime to read; a field
 * typed in the dialog is text, a number where the runtime takes one (its pattern, from the schema).
 * Which fields a tag takes is the runtime's answer (nines-tags/check: each row as the core reads
 * it; nines-tags/schema: per table and type). No value is dropped because a field is hidden: a
 * field that holds a value always shows, and only a change of table or type by the user empties
 * the fields the new one does not take.
 *
 * Loaded in the browser as window.NinesTagRows; in Node through require().
 */
(function (factory) {
    'use strict';
    var api = factory();
    // the editor's page may define a `module` of its own (an AMD loader): the window gets it regardless
    if (typeof window !== 'undefined') { window.NinesTagRows = api; }
    if (typeof window === 'undefined' && typeof module === 'object' && module.exports) { module.exports = api; }
})(function () {
    'use strict';

    /** The fields a row edits, in the order they show */
    var EDITED = ['name', 'table', 'address', 'type', 'order', 'bit', 'byte', 'length', 'scale', 'offset', 'deadband', 'unit'];
    /** The fields that show only for some tags */
    var OPTIONAL = ['order', 'bit', 'byte', 'length', 'scale', 'offset', 'deadband'];
    /** The order select's value for a tag that gives wordOrder/byteOrder (kept as they came) */
    var PAIR = '=';

    function absent(v) { return v === undefined || v === null || v === ''; }
    function has(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }

    /** The canonical table of the schema a name is, exactly (no aliases: the runtime reads those) */
    function tableOf(schema, protocol, name) {
        var tables = schema.protocols[protocol].tables;
        return typeof name === 'string' && has(tables, name) ? tables[name] : null;
    }

    /**
     * What each field of a row shows for a tag.
     * @param {object} tag the tag as stored (node.tags[i], a sheet's row, a new row)
     * @param {object} schema GET nines-tags/schema
     * @param {string} protocol modbus|ascii
     * @returns {Object<string, string>} text per field of EDITED; the order select's PAIR for a tag
     *   that names wordOrder/byteOrder; the type a table gives a tag with none (the runtime's default)
     */
    function texts(tag, schema, protocol) {
        var out = {};
        EDITED.forEach(function (f) { out[f] = absent(tag[f]) ? '' : String(tag[f]); });
        if (out.order === '' && (!absent(tag.wordOrder) || !absent(tag.byteOrder))) { out.order = PAIR; }
        var table = tableOf(schema, protocol, tag.table);
        if (out.type === '' && table) { out.type = table.types[0]; }
        return out;
    }

    /** A typed field as saved: trimmed text, a number where the runtime takes one, absent when empty */
    function typed(field, text, schema) {
        var s = absent(text) ? '' : String(text).trim();
        if (s === '') { return undefined; }
        var numeric = field === 'address' || schema.numberFields.indexOf(field) >= 0;
        return numeric && new RegExp(schema.numberText, 'i').test(s) ? Number(s) : s;
    }

    /**
     * The tag a row saves. A field whose text is what texts() showed for the given tag is saved as
     * the tag held it; an edited one as typed(). Fields the row does not edit (description,
     * readOnly) are kept; empty ones are left out, as the runtime leaves them out.
     * @param {Object<string, string>} now the row's fields as they are
     * @param {object} given the tag the row was built from
     * @param {object} schema
     * @param {string} protocol
     * @returns {object}
     */
    function tagOf(now, given, schema, protocol) {
        var shown = texts(given, schema, protocol);
        var tag = {};
        EDITED.forEach(function (f) {
            var v = now[f] === shown[f] ? given[f] : typed(f, now[f], schema);
            if (f === 'order' && now[f] === PAIR) { v = undefined; }
            if (!absent(v)) { tag[f] = v; }
        });
        Object.keys(given).forEach(function (k) {
            if (EDITED.indexOf(k) >= 0 || absent(given[k])) { return; }
            // a wordOrder/byteOrder goes once the user picks an order instead
            if ((k === 'wordOrder' || k === 'byteOrder') && now.order !== shown.order) { return; }
            tag[k] = given[k];
        });
        return tag;
    }

    /**
     * The fields a table and type take, as the schema says (canonical names only).
     * @returns {string[]|null} null when the schema does not know the pair as spelled
     */
    function takes(schema, protocol, table, type) {
        var t = tableOf(schema, protocol, table);
        return t && typeof type === 'string' && has(t.fields, type) ? t.fields[type] : null;
    }

    /**
     * Which optional fields a row shows: those that hold a value, and those its tag takes.
     * @param {Object<string, string>} now the row's fields
     * @param {string[]|null} fields what the tag takes: the runtime's reading of the row, else takes()
     * @returns {Object<string, boolean>} per field of OPTIONAL
     */
    function visible(now, fields) {
        var out = {};
        OPTIONAL.forEach(function (f) {
            out[f] = now[f] !== '' || (fields !== null && fields.indexOf(f) >= 0);
        });
        return out;
    }

    /**
     * The fields the user's change of table or type empties: those the new pair does not take.
     * @returns {string[]} none when the schema does not know the new pair (the runtime judges it)
     */
    function emptied(schema, protocol, table, type) {
        var fields = takes(schema, protocol, table, type);
        if (fields === null) { return []; }
        return OPTIONAL.filter(function (f) { return fields.indexOf(f) < 0; });
    }

    /**
     * The names a sheet's tags would repeat if appended to a list: an append that would give two tags
     * one name is refused (the runtime refuses such a list: names are unique, exactly as spelled).
     * @param {object[]} list the tags the list holds
     * @param {object[]} added the sheet's tags
     * @returns {string[]} each repeated name once, in the sheet's order
     */
    function repeatedNames(list, added) {
        var held = {};
        list.forEach(function (tag) { if (typeof tag.name === 'string') { held[tag.name] = true; } });
        var out = [];
        added.forEach(function (tag) {
            if (typeof tag.name === 'string' && has(held, tag.name) && out.indexOf(tag.name) < 0) { out.push(tag.name); }
        });
        return out;
    }

    return { EDITED: EDITED, OPTIONAL: OPTIONAL, PAIR: PAIR, texts: texts, tagOf: tagOf, takes: takes, visible: visible, emptied: emptied, repeatedNames: repeatedNames };
});
