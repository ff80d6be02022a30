/**
 * The tag list editor of the nines-poll, nines-modbus-read and nines-modbus-write dialogs, shared
 * by the three (Node-RED serves this file at resources/node-red-contrib-nines/nines-tags.js; each
 * node's .html loads it and hands its definition to NinesTags.attach; it defines window.NinesTags once).
 *
 * It holds no tag rules. A row's fields ↔ its tag is resources/nines-tag-rows.js (no DOM, tested in
 * Node against the runtime); which fields a row takes is the runtime's reading of it. What the rows offer (tables per protocol, their types, the orders) comes
 * from the runtime's GET nines-tags/schema, and every list is checked by the runtime's core
 * (POST nines-tags/check, gateway/tags/spec.js): the answer names each problem by its path
 * ([3, 'address']) and in plain words ("row 4, address: … ; got …"): every problem shows at once,
 * under its row, and its field turns red with the rule as its tooltip. A CSV tag sheet is read by
 * resources/nines-tag-sheet.js (parsed by the runtime too; it asks before it changes a list that holds
 * tags).
 *
 * The rows are a table (style: resources/nines-tags.css): a header names the columns, each field
 * keeps its column's width, and rows never wrap; a list wider than the dialog scrolls sideways, the
 * header with it. A column shows when a row shows its field (a list of coils has no order column); a
 * row that does not take a field shows a blank cell there.
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
    var CHECK_DELAY_MS = 250;
    /** The problems the node's tooltip on the canvas lists (the dialog shows them all) */
    var MAX_LISTED = 10;
    /** Rows a status line names before "…" */
    var MAX_ROWS_NAMED = 12;

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

    // ---- rows ↔ tags: resources/nines-tag-rows.js (no DOM; tested against the runtime) ----

    // taken when a dialog opens: Node-RED loads a module's scripts side by side, in no set order
    var Rows = null;

    // ---- the editor ----

    /** The node whose dialog is open (validators read the dialog's fields only for it) */
    var editing = null;

    function Editor(node, opts) {
        Rows = window.NinesTagRows;
        this.node = node;
        this.opts = opts;
        this.timer = null;
        this.seq = 0;
        // where the device counts addresses from (the runtime's answer says; 0 until it does)
        this.addressBase = 0;
        this.build();
    }

    Editor.prototype.protocol = function () { return this.opts.protocol(); };
    /** The rows' content elements, in list order (editableList('items') wraps each in a jQuery of its own) */
    Editor.prototype.rows = function () { return this.list.children('li').children('.red-ui-editableList-item-content'); };
    Editor.prototype.device = function () { return this.opts.device(); };

    Editor.prototype.build = function () {
        var self = this;
        var root = this.root = $(this.opts.container).empty();
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
            reader.onload = function () { window.NinesTagSheet.read(self.sheetTarget(), String(reader.result), f.name); };
            reader.readAsText(f);
        });
        this.list.editableList({
            addItem: function (row, i, data) { self.addRow(row, i, data); },
            removable: true,
            sortable: true,
            scrollOnAdd: true,
            height: 'auto',
            addButton: t('add'),
            removeItem: function () { self.changed(); },
            sortItems: function () { self.changed(); }
        });
        // the list grows with its rows up to a screenful, then scrolls (a sheet may hold hundreds);
        // sideways too, when its columns are wider than the dialog, the header with them
        this.scroller = this.list.parent().addClass('nines-tags-scroll');
        this.head = $('<div class="nines-tags-head"></div>').prependTo(this.scroller);
        ['number'].concat(Rows.EDITED).forEach(function (f) {
            $('<span></span>').addClass('nines-tags-col-' + f).text(t('head.' + f)).attr('title', f === 'number' ? '' : t('field.' + f)).appendTo(self.head);
        });
        this.layoutTimer = null;
        // the problems under a row are as wide as the list's visible part
        var fit = function () { self.scroller[0].style.setProperty('--nines-tags-view', Math.max(200, self.scroller[0].clientWidth - 60) + 'px'); };
        fit();
        if (window.ResizeObserver) { new window.ResizeObserver(fit).observe(this.scroller[0]); }
        withSchema(function () {
            (self.node.tags || []).forEach(function (tag) { self.list.editableList('addItem', { given: $.extend({}, tag) }); });
            self.changed();
        });
    };

    /**
     * A new row's tag: the next name, the last row's table and type, the address after the last
     * row's (as the runtime read that row), else the device's first address.
     */
    Editor.prototype.nextTag = function (adding) {
        var protocol = this.protocol();
        var tables = schema.protocols[protocol].tables;
        var items = this.rows().filter(function () { return this !== adding; });
        var rows = this.tags(adding);
        var last = rows[rows.length - 1];
        // the last row as the runtime read it (aliases resolved), else as it is spelled
        var read = (last && items.last().data('reading')) || last || {};
        var table = tables[read.table] ? read.table : (protocol === 'ascii' ? 'input' : 'holding');
        var type = read.table === table && read.type ? read.type : tables[table].types[0];
        var kind = tables[table].kind;
        var base = kind === 'registers' || kind === 'bits' ? this.addressBase : 0;
        var address = base;
        if (read.table === table && typeof last.address === 'number') {
            var span = typeof last.length === 'number' ? last.length : (schema.words[type] || 1);
            address = Math.min(last.address + (kind === 'registers' ? span : 1), tables[table].max + base);
        }
        return { name: 'tag' + (rows.length + 1), table: table, address: address, type: type };
    };

    /**
     * A row: {given: tag} for a tag of the node or a sheet, taken whatever it holds (a row with no
     * name is the runtime's to refuse); the add button's {} for a new one.
     */
    Editor.prototype.addRow = function (row, index, data) {
        var self = this;
        var fresh = !data || data.given === undefined;
        var tag = fresh ? this.nextTag(row[0]) : data.given;
        var shown = Rows.texts(tag, schema, this.protocol());
        row.data('tag', tag);
        row.data('reading', null);
        // the fields in one line under the header's columns; the row's problems under them
        var cells = $('<div class="nines-tag-cells"></div>').appendTo(row);
        $('<span class="nines-tag-number"></span>').appendTo(cells);
        $('<ul class="nines-tag-row-problems"></ul>').appendTo(row);
        var input = function (field) {
            return $('<input type="text">').addClass('nines-tag-' + field)
                .attr('placeholder', t('field.' + field)).attr('title', t('field.' + field)).val(shown[field]);
        };
        var select = function (field) { return $('<select></select>').addClass('nines-tag-' + field).attr('title', t('field.' + field)); };
        input('name').appendTo(cells);
        var table = select('table').appendTo(cells);
        input('address').appendTo(cells);
        var type = select('type').appendTo(cells);
        var orderSel = select('order').appendTo(cells);
        var fields = { order: orderSel };
        ['bit', 'byte', 'length', 'scale', 'offset', 'deadband'].forEach(function (f) { fields[f] = input(f).appendTo(cells); });
        input('unit').appendTo(cells);

        /** A select's options: the runtime's values, then one it does not offer (a sheet's typo or alias, for the core to judge) */
        function options(select, values, current, blank) {
            select.empty();
            var list = (blank ? [''] : []).concat(values);
            if (list.indexOf(current) < 0) { list.push(current); }
            list.forEach(function (v) { $('<option></option>').val(v).text(v).appendTo(select); });
            select.val(current);
        }
        /** The schema's entry for the row's table: as spelled, else as the runtime read it */
        function tableInfo() {
            var tables = schema.protocols[self.protocol()].tables;
            var read = row.data('reading');
            return tables[table.val()] || (read ? tables[read.table] : null);
        }
        function typeOptions(current) {
            var info = tableInfo();
            options(type, info ? info.types : [], current, current === '');
        }
        /** Shows the fields that hold a value and those the tag takes (the runtime's reading, else the schema's) */
        function refresh() {
            var read = row.data('reading');
            var takes = read ? read.fields : Rows.takes(schema, self.protocol(), table.val(), type.val());
            var show = Rows.visible(self.texts(row), takes);
            Object.keys(fields).forEach(function (f) { fields[f].toggleClass('nines-tag-off', !show[f]); });
            row.data('shows', show);
            self.layout();
        }
        /** The user picked a table or a type: the fields the new one does not take are emptied (in sight) */
        function picked(tableChanged) {
            row.data('reading', null);
            var info = tableInfo();
            if (tableChanged) { typeOptions(info && info.types.indexOf(type.val()) < 0 ? info.types[0] : type.val()); }
            Rows.emptied(schema, self.protocol(), table.val(), type.val()).forEach(function (f) { fields[f].val(''); });
            refresh();
            self.changed();
        }
        options(table, Object.keys(schema.protocols[this.protocol()].tables), shown.table, shown.table === '');
        typeOptions(shown.type);
        var orders = Object.keys(schema.orders).concat(shown.order === Rows.PAIR ? [Rows.PAIR] : []);
        options(orderSel, orders, shown.order, true);
        orderSel.find('option[value=""]').text(t('defaultOrder'));
        // a tag that names wordOrder/byteOrder keeps them, shown as they are
        orderSel.find('option[value="' + Rows.PAIR + '"]').text(['wordOrder', 'byteOrder'].filter(function (k) { return tag[k] !== undefined; })
            .map(function (k) { return k + ' ' + tag[k]; }).join(', '));
        table.find('option[value=""]').text('');
        refresh();
        table.on('change', function () { picked(true); });
        type.on('change', function () { picked(false); });
        row.find('input').on('change keyup', function () { refresh(); self.changed(); });
        orderSel.on('change', function () { self.changed(); });
        row.data('refresh', function () {
            row.data('reading', null);
            options(table, Object.keys(schema.protocols[self.protocol()].tables), table.val() || '', !table.val());
            typeOptions(type.val() || '');
            refresh();
        });
        row.data('read', function (reading) { row.data('reading', reading); refresh(); });
        if (fresh) { self.changed(); }
    };

    /**
     * Soon (once for many rows changed at once): numbers the rows, and shows the optional columns
     * some row shows, hiding the others.
     */
    Editor.prototype.layout = function () {
        var self = this;
        if (this.layoutTimer !== null) { return; }
        this.layoutTimer = setTimeout(function () {
            self.layoutTimer = null;
            var used = {};
            self.rows().each(function (i) {
                var row = $(this);
                row.find('.nines-tag-number').text(i + 1);
                var show = row.data('shows') || {};
                Rows.OPTIONAL.forEach(function (f) { if (show[f]) { used[f] = true; } });
            });
            Rows.OPTIONAL.forEach(function (f) { self.root.toggleClass('nines-tags-no-' + f, !used[f]); });
        }, 0);
    };

    /** @returns {boolean} whether a row's field shows (its column shows and the row takes it) */
    function showing(field) {
        return field.length > 0 && !field.hasClass('nines-tag-off') && field.css('display') !== 'none';
    }

    /** @returns {Object<string, string>} a row's fields as they are */
    Editor.prototype.texts = function (row) {
        var out = {};
        Rows.EDITED.forEach(function (f) {
            var v = row.find('.nines-tag-' + f).val();
            out[f] = v === undefined || v === null ? '' : String(v);
        });
        return out;
    };

    /**
     * The rows as tags, as they will be saved (Rows.tagOf: unedited fields as they came).
     * @param {Element} [skip] a row being added (its fields are not there yet)
     */
    Editor.prototype.tags = function (skip) {
        var out = [];
        var self = this;
        var protocol = this.protocol();
        this.rows().each(function () {
            if (this === skip) { return; }
            var row = $(this);
            out.push(Rows.tagOf(self.texts(row), row.data('tag') || {}, schema, protocol));
        });
        return out;
    };

    /** A row changed: check the list with the runtime after a short pause in typing. */
    Editor.prototype.changed = function () {
        var self = this;
        this.layout();
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

    /**
     * Shows every problem the core found at once: each under its row, in plain words, its field red
     * with the rule as its tooltip; the list's own problems under the list.
     */
    Editor.prototype.show = function (r, count) {
        var items = this.rows();
        items.find('.input-error').removeClass('input-error').each(function () {
            var f = /nines-tag-(\w+)/.exec(this.className);
            $(this).attr('title', f ? t('field.' + f[1]) : '');
        });
        items.css('box-shadow', '');
        items.children('.nines-tag-row-problems').empty();
        this.problems.empty();
        this.status.attr('data-state', 'ready');
        if (r.failed) { this.status.text(t('checkFailed')); return; }
        var self = this;
        this.addressBase = r.addressBase || 0;
        // each row shows the fields its tag takes, as the runtime read the row
        (r.rows || []).forEach(function (reading, i) {
            var fn = items.eq(i).data('read');
            if (fn) { fn(reading); }
        });
        var rows = [];
        r.problems.forEach(function (p) {
            var row = typeof p.path[0] === 'number' ? items.eq(p.path[0]) : null;
            if (!row || !row.length) {
                $('<li></li>').text(p.text).appendTo(self.problems);
                return;
            }
            var name = p.path[1] === 'wordOrder' || p.path[1] === 'byteOrder' ? 'order' : p.path[1];
            var field = row.find('.nines-tag-' + name);
            // a field the row does not show (a sheet's wordOrder): the row is marked, by its name
            if (!showing(field)) { field = row.find('.nines-tag-name'); }
            var title = field.hasClass('input-error') ? field.attr('title') + '\n' + p.rule : p.rule;
            field.addClass('input-error').attr('title', title);
            // a bar at its left edge that takes no room: the row's fields stay under their headers
            row.css('box-shadow', 'inset 3px 0 0 var(--red-ui-text-color-error, #d6615f)');
            $('<li></li>').text(p.text).appendTo(row.children('.nines-tag-row-problems'));
            if (rows.indexOf(p.path[0] + 1) < 0) { rows.push(p.path[0] + 1); }
        });
        if (r.problems.length === 0) {
            this.status.text(t('summary.' + this.opts.summary, { count: count, reads: r.reads, writable: r.writable }));
            return;
        }
        var named = rows.slice(0, MAX_ROWS_NAMED).join(', ') + (rows.length > MAX_ROWS_NAMED ? ', …' : '');
        var key = rows.length === 0 ? 'problems' : rows.length === 1 ? 'problemsInRow' : 'problemsInRows';
        this.status.text(t(key, { count: r.problems.length, rows: named }));
    };

    /** What a CSV sheet goes into: this list (resources/nines-tag-sheet.js reads the sheet and asks) */
    Editor.prototype.sheetTarget = function () {
        var self = this;
        return {
            area: this.sheet,
            t: t,
            protocol: this.protocol(),
            device: this.device(),
            tags: function () { return self.tags(); },
            put: function (tags, append) {
                if (!append) { self.list.editableList('empty'); }
                tags.forEach(function (tag) { self.list.editableList('addItem', { given: tag }); });
                self.changed();
            }
        };
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
            // a node polling its single request (or a profile's tags) has no list of its own to check
            if (!opts.always && field(node, open, 'source') !== 'tags') { return true; }
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
            // every problem, each on its line of the node's tooltip (a list of strings: Node-RED 3.1 and later)
            var texts = r.problems.slice(0, MAX_LISTED).map(function (p) { return p.text; });
            if (r.problems.length > MAX_LISTED) { texts.push(t('more', { count: r.problems.length - MAX_LISTED })); }
            return texts;
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
         * @param {{protocol: function(object, boolean): string, device: function(object, boolean): string, watch: string, summary: string,
         *   always?: boolean, container?: string}} opts
         *   protocol, device: each gets the node and whether its dialog is open; watch: the dialog's
         *   fields (a selector) whose change changes either; summary: what the status line says of a
         *   clean list, by the node's kind: poll (requests per poll), read (requests per read), write
         *   (the tags it can write); always: the list is checked whatever the node's source (a
         *   nines-profile, which is a list and nothing else); container: where the list is built
         *   (default #nines-tags; a config node's dialog opens over its user's, which has one)
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
                    container: opts.container || '#nines-tags',
                    summary: opts.summary,
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
