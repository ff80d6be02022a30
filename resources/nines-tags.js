/**
 * The tag list editor of the nines-poll, nines-modbus-read and nines-modbus-write dialogs, shared
 * by the three (Node-RED serves this file at resources/node-red-contrib-nines/nines-tags.js; each
 * node's .html loads it and hands its definition to NinesTags.attach; it defines window.NinesTags once).
 *
 * It holds no tag rules. What the rows offer (tables per protocol, their types, the orders) comes
 * from the runtime's GET nines-tags/schema, and every list is checked by the runtime's core
 * (POST nines-tags/check, gateway/tags/spec.js): the answer names each problem by its path
 * ([3, 'address']), and the row's field turns red with the rule as its tooltip. A CSV tag sheet is
 * parsed there too (POST nines-tags/sheet), so its problems come with their line and column.
 *
 * Node-RED's `validate` is synchronous: the validator answers from a cache of checks keyed by the
 * list, the protocol and the device. A list not checked yet counts as valid while its check runs;
 * when the answer arrives, the node is validated again and the canvas redrawn, so a bad list gets
 * its red triangle moments later. The runtime refuses a bad list on deploy in any case.
 *
 * Strings come from the nines-poll catalog (node-red-contrib-nines/nines-poll), one copy for the
 * three dialogs.
 */
(function () {
    'use strict';
    if (window.NinesTags) { return; }

    var NS = 'node-red-contrib-nines/nines-poll:nines-poll.tags.';
    var FIELDS = ['name', 'table', 'address', 'type', 'order', 'bit', 'length', 'scale', 'offset', 'deadband', 'unit'];
    var NUMBER_FIELDS = ['address', 'bit', 'length', 'scale', 'offset', 'deadband'];
    var NUMBER_TEXT = /^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?\s*$/i;
    var CHECK_DELAY_MS = 250;

    function t(key, opts) { return RED._(NS + key, opts); }

    // ---- the runtime's answers ----

    var schema = null;
    var schemaWaiters = null;
    /** Calls done(schema) once the runtime said what the rows offer. */
    function withSchema(done) {
        if (schema) { done(schema); return; }
        if (schemaWaiters) { schemaWaiters.push(done); return; }
        schemaWaiters = [done];
        $.ajax({ url: 'nines-tags/schema', dataType: 'json' }).done(function (s) {
            schema = s;
            var list = schemaWaiters;
            schemaWaiters = null;
            list.forEach(function (fn) { fn(s); });
        }).fail(function () { schemaWaiters = null; });
    }

    /** key → {problems, reads, count} or {failed: true}; pending: key → nodes to validate again */
    var checks = {};
    var pending = {};
    var MAX_CACHED = 200;

    function cacheKey(protocol, device, tags) {
        return protocol + '\u0000' + (device || '') + '\u0000' + JSON.stringify(tags);
    }

    /** @returns {object|null} the core's answer for a list, if it gave one */
    function cached(protocol, device, tags) {
        return checks[cacheKey(protocol, device, tags)] || null;
    }

    /** Asks the runtime's core about a list; done(result) when it answers (asynchronously, always). */
    function request(protocol, device, tags, done) {
        var key = cacheKey(protocol, device, tags);
        if (pending[key]) { pending[key].push(done); return; }
        pending[key] = [done];
        $.ajax({
            url: 'nines-tags/check',
            method: 'POST',
            contentType: 'application/json',
            dataType: 'json',
            data: JSON.stringify({ protocol: protocol, device: device || undefined, tags: tags })
        }).done(function (r) { settle(key, r); }).fail(function () { settle(key, { failed: true, problems: [] }); });
    }

    function settle(key, result) {
        var keys = Object.keys(checks);
        if (keys.length >= MAX_CACHED) { delete checks[keys[0]]; }
        checks[key] = result;
        var waiting = pending[key] || [];
        delete pending[key];
        waiting.forEach(function (fn) { fn(result); });
    }

    // ---- rows ↔ tags ----

    /** A row as stored: numbers typed as text become numbers, empty fields are left out. */
    function cleanValue(field, text) {
        if (text === undefined || text === null) { return undefined; }
        var s = String(text).trim();
        if (s === '') { return undefined; }
        if (NUMBER_FIELDS.indexOf(field) >= 0 && NUMBER_TEXT.test(s)) { return Number(s); }
        return s;
    }

    /**
     * A row's address as saved. A string address is a Modicon reference to the runtime ("40101",
     * holding register 101) and a number the 0-based address: one that came in as text (a flow
     * edited as JSON) stays text while its field is unedited, else Done would move it to register
     * 40101; an address typed here is the number.
     */
    function addressOf(row) {
        var text = row.find('.nines-tag-address').val();
        var given = (row.data('tag') || {}).address;
        if (typeof given === 'string' && given.trim() !== '' && String(text).trim() === given.trim()) { return given; }
        return cleanValue('address', text);
    }

    /** The order letters of wordOrder/byteOrder (a sheet may name them apart) */
    function orderOf(tag) {
        if (tag.order !== undefined || (tag.wordOrder === undefined && tag.byteOrder === undefined) || !schema) { return tag.order; }
        var w = tag.wordOrder || 'big';
        var b = tag.byteOrder || 'big';
        var found;
        Object.keys(schema.orders).forEach(function (letters) {
            var o = schema.orders[letters];
            if (o.wordOrder === w && o.byteOrder === b) { found = letters; }
        });
        return found;
    }

    /** What a table and type show: the kind of table, and whether the type is a number */
    function shape(protocol, table, type) {
        var tables = schema ? schema.protocols[protocol].tables : {};
        var info = tables[table];
        var kind = info ? info.kind : null;
        var numeric = (schema && schema.numericTypes.indexOf(type) >= 0) || kind === 'counter' || kind === 'analog';
        return {
            order: kind === 'registers' && type !== 'bit',
            bit: type === 'bit',
            length: type === 'string',
            scale: numeric,
            offset: numeric,
            deadband: numeric
        };
    }

    // ---- the editor ----

    /** The node whose dialog is open (validators read the dialog's fields only for it) */
    var editing = null;

    function Editor(node, opts) {
        this.node = node;
        this.opts = opts;
        this.timer = null;
        this.seq = 0;
        this.build();
    }

    Editor.prototype.protocol = function () { return this.opts.protocol(); };
    /** The rows' content elements, in list order (editableList('items') wraps each in a jQuery of its own) */
    Editor.prototype.rows = function () { return this.list.children('li').children('.red-ui-editableList-item-content'); };
    Editor.prototype.device = function () { return this.opts.device(); };

    Editor.prototype.build = function () {
        var self = this;
        var root = $(this.opts.container).empty();
        this.list = $('<ol id="nines-tags-list" class="nines-tags-list"></ol>').appendTo(root);
        var bar = $('<div class="nines-tags-bar" style="margin-top: 6px;"></div>').appendTo(root);
        this.importButton = $('<button type="button" id="nines-tags-import" class="red-ui-button red-ui-button-small"><i class="fa fa-upload"></i> </button>')
            .append($('<span></span>').text(t('import'))).appendTo(bar);
        this.file = $('<input type="file" id="nines-tags-file" accept=".csv,.tsv,.txt,text/csv,text/plain" style="display: none;">').appendTo(bar);
        this.status = $('<span id="nines-tags-status" style="margin-left: 10px;"></span>').appendTo(bar);
        this.sheet = $('<div id="nines-tags-sheet" class="form-tips" style="display: none; margin-top: 6px;"></div>').appendTo(root);
        this.problems = $('<ul id="nines-tags-problems" style="margin: 6px 0 0 18px; color: var(--red-ui-text-color-error, #d6615f);"></ul>').appendTo(root);
        this.importButton.on('click', function () { self.file.val(''); self.file.trigger('click'); });
        this.file.on('change', function () {
            var f = this.files && this.files[0];
            if (!f) { return; }
            var reader = new FileReader();
            reader.onload = function () { self.importSheet(String(reader.result), f.name); };
            reader.readAsText(f);
        });
        this.list.css({ 'min-width': '450px' }).editableList({
            addItem: function (row, i, data) { self.addRow(row, i, data); },
            removable: true,
            sortable: true,
            scrollOnAdd: true,
            height: 'auto',
            addButton: t('add'),
            removeItem: function () { self.changed(); },
            sortItems: function () { self.changed(); }
        });
        // the list grows with its rows up to a screenful, then scrolls (a sheet may hold hundreds)
        this.list.parent().css({ 'max-height': '360px', 'overflow-y': 'auto' });
        withSchema(function () {
            (self.node.tags || []).forEach(function (tag) { self.list.editableList('addItem', $.extend({}, tag)); });
            self.changed();
        });
    };

    /** A new row's tag: the next name, the last row's table and type, the address after the last row. */
    Editor.prototype.nextTag = function (adding) {
        var protocol = this.protocol();
        var tables = schema.protocols[protocol].tables;
        var rows = this.tags(adding);
        var last = rows[rows.length - 1];
        var table = last && tables[last.table] ? last.table : (protocol === 'ascii' ? 'input' : 'holding');
        var type = last && last.table === table && last.type ? last.type : tables[table].types[0];
        var address = 0;
        if (last && last.table === table && typeof last.address === 'number') {
            var span = typeof last.length === 'number' ? last.length : (schema.words[last.type] || 1);
            address = Math.min(last.address + (tables[table].kind === 'registers' ? span : 1), tables[table].max);
        }
        return { name: 'tag' + (rows.length + 1), table: table, address: address, type: type };
    };

    Editor.prototype.addRow = function (row, index, data) {
        var self = this;
        var tag = data && data.name !== undefined ? data : this.nextTag(row[0]);
        var order = orderOf(tag);
        row.data('tag', tag);
        row.css({ display: 'flex', 'flex-wrap': 'wrap', gap: '4px', 'align-items': 'center' });
        var input = function (field, width) {
            return $('<input type="text">').addClass('nines-tag-' + field).css('width', width)
                .attr('placeholder', t('field.' + field)).attr('title', t('field.' + field))
                .val(tag[field] === undefined || tag[field] === null ? '' : String(field === 'order' ? order : tag[field]));
        };
        input('name', '120px').appendTo(row);
        var table = $('<select class="nines-tag-table" style="width: 95px;"></select>').attr('title', t('field.table')).appendTo(row);
        input('address', '60px').appendTo(row);
        var type = $('<select class="nines-tag-type" style="width: 85px;"></select>').attr('title', t('field.type')).appendTo(row);
        var orderSel = $('<select class="nines-tag-order" style="width: 85px;"></select>').attr('title', t('field.order')).appendTo(row);
        var extra = {
            bit: input('bit', '40px').appendTo(row),
            length: input('length', '50px').appendTo(row),
            scale: input('scale', '55px').appendTo(row),
            offset: input('offset', '55px').appendTo(row),
            deadband: input('deadband', '60px').appendTo(row)
        };
        input('unit', '50px').appendTo(row);

        function options(select, values, current) {
            select.empty();
            var list = values.slice();
            // a value the runtime does not offer (a typo in a sheet) stays, for the core to judge
            if (current !== undefined && current !== '' && list.indexOf(current) < 0) { list.push(current); }
            list.forEach(function (v) { $('<option></option>').val(v).text(v).appendTo(select); });
            if (current !== undefined && current !== '') { select.val(current); }
        }
        function refresh(tableChanged) {
            var protocol = self.protocol();
            var tables = schema.protocols[protocol].tables;
            var tb = table.val() || tag.table;
            options(table, Object.keys(tables), tb);
            var info = tables[table.val()];
            var types = info ? info.types : [];
            var ty = type.val() || tag.type;
            if (tableChanged && info && types.indexOf(ty) < 0) { ty = types[0]; }
            options(type, types, ty === undefined && info ? types[0] : ty);
            var show = shape(protocol, table.val(), type.val());
            orderSel.toggle(show.order);
            Object.keys(extra).forEach(function (f) { extra[f].toggle(show[f]); });
        }
        table.val(tag.table);
        options(orderSel, [''].concat(Object.keys(schema.orders)), order === undefined ? '' : order);
        orderSel.find('option[value=""]').text(t('defaultOrder'));
        refresh(false);
        table.on('change', function () { refresh(true); self.changed(); });
        type.on('change', function () { refresh(false); self.changed(); });
        row.find('input').on('change keyup', function () { self.changed(); });
        orderSel.on('change', function () { self.changed(); });
        row.data('refresh', function () { refresh(false); });
        if (!data || data.name === undefined) { self.changed(); }
    };

    /**
     * The rows as tags, as they will be saved: fields that do not apply to a row are left out.
     * @param {Element} [skip] a row being added (its fields are not there yet)
     */
    Editor.prototype.tags = function (skip) {
        var out = [];
        var self = this;
        this.rows().each(function () {
            if (this === skip) { return; }
            var row = $(this);
            var kept = $.extend({}, row.data('tag'));
            // the dialog edits these; a sheet's description or readOnly are kept as they came
            FIELDS.concat(['wordOrder', 'byteOrder']).forEach(function (f) { delete kept[f]; });
            var protocol = self.protocol();
            var tag = {};
            tag.name = cleanValue('name', row.find('.nines-tag-name').val());
            tag.table = cleanValue('table', row.find('.nines-tag-table').val());
            tag.address = addressOf(row);
            tag.type = cleanValue('type', row.find('.nines-tag-type').val());
            var show = schema ? shape(protocol, tag.table, tag.type) : {};
            ['order', 'bit', 'length', 'scale', 'offset', 'deadband'].forEach(function (f) {
                if (show[f]) { tag[f] = cleanValue(f, row.find('.nines-tag-' + f).val()); }
            });
            tag.unit = cleanValue('unit', row.find('.nines-tag-unit').val());
            Object.keys(tag).forEach(function (k) { if (tag[k] === undefined) { delete tag[k]; } });
            out.push($.extend(tag, kept));
        });
        return out;
    };

    /** A row changed: check the list with the runtime after a short pause in typing. */
    Editor.prototype.changed = function () {
        var self = this;
        // the state says whether the marks shown are the runtime's answer for the rows as they are
        this.status.attr('data-state', 'checking');
        clearTimeout(this.timer);
        this.timer = setTimeout(function () { self.checkNow(); }, CHECK_DELAY_MS);
    };

    Editor.prototype.checkNow = function () {
        var self = this;
        var seq = ++this.seq;
        var tags = this.tags();
        var r = cached(this.protocol(), this.device(), tags);
        if (r) { this.show(r, tags.length); return; }
        request(this.protocol(), this.device(), tags, function (answer) {
            if (seq === self.seq) { self.show(answer, tags.length); }
        });
    };

    /** Marks the fields the core refused, the rule as their tooltip, and lists the problems. */
    Editor.prototype.show = function (r, count) {
        var items = this.rows();
        items.find('.input-error').removeClass('input-error').each(function () {
            var f = /nines-tag-(\w+)/.exec(this.className);
            $(this).attr('title', f ? t('field.' + f[1]) : '');
        });
        items.css('border-left', '');
        this.problems.empty();
        this.status.attr('data-state', 'ready');
        if (r.failed) { this.status.text(t('checkFailed')); return; }
        var self = this;
        r.problems.forEach(function (p) {
            var row = typeof p.path[0] === 'number' ? items.eq(p.path[0]) : null;
            if (row && row.length) {
                var field = row.find('.nines-tag-' + p.path[1] + ':visible');
                // a field the row does not show (a sheet's wordOrder): the row is marked, by its name
                if (!field.length) { field = row.find('.nines-tag-name'); }
                field.addClass('input-error').attr('title', p.rule);
                row.css('border-left', '3px solid var(--red-ui-text-color-error, #d6615f)');
            }
            $('<li></li>').text(p.text).appendTo(self.problems);
        });
        this.status.text(r.problems.length
            ? t('problems', { count: r.problems.length })
            : t('summary', { count: count, reads: r.reads }));
    };

    /** A CSV sheet: parsed by the runtime; its rows replace the list, its problems say line and column. */
    Editor.prototype.importSheet = function (text, fileName) {
        var self = this;
        $.ajax({
            url: 'nines-tags/sheet',
            method: 'POST',
            contentType: 'application/json',
            dataType: 'json',
            data: JSON.stringify({ protocol: this.protocol(), device: this.device() || undefined, text: text })
        }).done(function (r) {
            self.sheet.empty().show();
            if (r.error) {
                // a sheet that does not parse changes nothing
                self.sheet.addClass('nines-tags-sheet-error').text(t('sheetError', { file: fileName, message: r.error.message }));
                return;
            }
            self.sheet.removeClass('nines-tags-sheet-error').text(t('imported', { file: fileName, count: r.tags.length }));
            if (r.problems.length) {
                var ul = $('<ul style="margin: 4px 0 0 18px;"></ul>').appendTo(self.sheet);
                r.problems.forEach(function (p) { $('<li></li>').text(p.text).appendTo(ul); });
            }
            self.list.editableList('empty');
            r.tags.forEach(function (tag) { self.list.editableList('addItem', tag); });
            self.changed();
        }).fail(function (xhr) {
            var e = xhr.responseJSON && xhr.responseJSON.error;
            self.sheet.show().addClass('nines-tags-sheet-error').text(t('sheetError', { file: fileName, message: e ? e.message : xhr.statusText }));
        });
    };

    /** The protocol changed (poll dialog): rows offer that protocol's tables, and the list is checked again. */
    Editor.prototype.protocolChanged = function () {
        this.rows().each(function () { var fn = $(this).data('refresh'); if (fn) { fn(); } });
        this.changed();
    };

    var editors = {};

    /** A field as the open dialog shows it, else as the node holds it */
    function field(node, open, name) {
        return open && $('#node-input-' + name).length ? $('#node-input-' + name).val() : node[name];
    }

    /** Builds the tag list in a node's dialog (node.tags: its list). */
    function prepare(node, opts) {
        editing = node;
        editors[node.id] = new Editor(node, opts);
    }

    /** @returns {object[]} the dialog's rows as the tags to save */
    function save(node) {
        var e = editors[node.id];
        delete editors[node.id];
        editing = null;
        return e && schema ? e.tags() : node.tags;
    }

    function cancel(node) {
        delete editors[node.id];
        editing = null;
    }

    /**
     * A `validate` for defaults.tags. It reads the node's dialog only while that node is edited.
     * @param {{protocol: function(object, boolean): string, device: function(object, boolean): string}} opts
     *   each gets the node and whether its dialog is open
     */
    function validator(opts) {
        // two arguments: Node-RED takes a returned string as the reason the node is invalid
        return function (v, opt) {
            var node = this;
            var open = editing === node;
            // a node polling its single request has no list to check
            if (field(node, open, 'source') !== 'tags') { return true; }
            var protocol = opts.protocol(node, open);
            var device = opts.device(node, open);
            var r = cached(protocol, device, v);
            if (r === null) {
                request(protocol, device, v, function () {
                    // the answer came later: validate the node again, so its triangle shows
                    if (RED.nodes.node(node.id) === node) { RED.editor.validateNode(node); RED.view.redraw(true); }
                });
                return true;
            }
            if (r.failed || r.problems.length === 0) { return true; }
            var first = r.problems[0].text;
            return r.problems.length === 1 ? first : t('problemsFirst', { count: r.problems.length, first: first });
        };
    }

    /** Runs fn after a node definition's own hook of that name, if it has one. */
    function after(def, hook, fn) {
        var own = def[hook];
        def[hook] = function () {
            var r = own ? own.apply(this, arguments) : undefined;
            fn.call(this);
            return r;
        };
    }

    window.NinesTags = {
        field: field,
        /**
         * Gives a node type its tag list, the same way for the three: defaults.tags checked by the
         * runtime's core while source is "tags", the list built in the dialog (in #nines-tags, after
         * the node's own oneditprepare), saved into node.tags, dropped on cancel or delete. The list
         * follows the dialog's protocol and device as they change.
         * @param {object} def the definition given to RED.nodes.registerType (changed in place)
         * @param {{protocol: function(object, boolean): string, device: function(object, boolean): string, watch: string}} opts
         *   protocol, device: each gets the node and whether its dialog is open; watch: the dialog's
         *   fields (a selector) whose change changes either
         * @returns {object} def
         */
        attach: function (def, opts) {
            def.defaults.tags.validate = validator(opts);
            var own = def.oneditprepare;
            def.oneditprepare = function () {
                var node = this;
                // flows saved before tag lists existed have no source: their single request
                if (!node.source) { $('#node-input-source').val('request'); }
                if (own) { own.call(node); }
                prepare(node, {
                    container: '#nines-tags',
                    protocol: function () { return opts.protocol(node, true); },
                    device: function () { return opts.device(node, true); }
                });
                $(opts.watch).on('change', function () {
                    if (editors[node.id]) { editors[node.id].protocolChanged(); }
                });
            };
            after(def, 'oneditsave', function () { this.tags = save(this); });
            after(def, 'oneditcancel', function () { cancel(this); });
            after(def, 'oneditdelete', function () { cancel(this); });
            return def;
        }
    };
})();
