package dataset

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// traceColumns are the header positions of a CSV trace's columns, -1 for
// a column the file does not have.
type traceColumns struct {
	time, input, output, ids, session, text, messages int
	id, parent, delay                                 int
}

func readTraceCSV(ctx context.Context, tr *traceReader) ([32]byte, error) {
	s, err := openTraceSource(ctx, tr.path)
	if err != nil {
		return [32]byte{}, err
	}
	defer s.Close()
	r := csv.NewReader(s.r)
	r.FieldsPerRecord = -1 // short rows are reported by line below
	r.ReuseRecord = true
	cols, err := tr.csvHeader(r)
	if err != nil {
		return [32]byte{}, err
	}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return s.sum(), nil
		}
		if err != nil {
			return [32]byte{}, csvError(tr.path, err)
		}
		rec, err := tr.csvRecord(r, row, cols)
		if err == nil {
			err = tr.add(rec)
		}
		if err != nil {
			return [32]byte{}, err
		}
	}
}

// csvHeader reads the header row and finds the columns. A column is
// required when a record cannot do without it, or when the format names it
// explicitly (not by the kind's default).
func (tr *traceReader) csvHeader(r *csv.Reader) (traceColumns, error) {
	header, err := r.Read()
	if err == io.EOF {
		return traceColumns{}, fmt.Errorf("%s: empty file (no header row, no records)", tr.path)
	}
	if err != nil {
		return traceColumns{}, csvError(tr.path, err)
	}
	header = append([]string(nil), header...) // ReuseRecord: the next Read overwrites it
	fs, def := tr.f.Fields, kindFields(tr.f.Kind)
	find := func(name, deflt string, required bool) (int, error) {
		if name == "" {
			return -1, nil // a field this format does not read
		}
		if i := headerIndex(header, name); i >= 0 {
			return i, nil
		}
		if required || name != deflt {
			return -1, fmt.Errorf("%s:1: no column %q (columns: %s)", tr.path, name, strings.Join(header, ", "))
		}
		return -1, nil
	}
	var c traceColumns
	for _, col := range []struct {
		dst         *int
		name, deflt string
		required    bool
	}{
		{&c.time, fs.Time, def.Time, true},
		{&c.output, fs.Output, def.Output, true},
		{&c.ids, fs.HashIDs, def.HashIDs, false},
		{&c.session, fs.Session, def.Session, false},
		{&c.text, fs.Text, def.Text, false},
		{&c.messages, fs.Messages, def.Messages, false},
		{&c.id, fs.ID, def.ID, false},
		{&c.parent, fs.Parent, def.Parent, false},
		{&c.delay, fs.Delay, def.Delay, false},
	} {
		if *col.dst, err = find(col.name, col.deflt, col.required); err != nil {
			return c, err
		}
	}
	// Without a text or messages column, every prompt is made from Input.
	c.input, err = find(fs.Input, def.Input, c.text < 0 && c.messages < 0)
	return c, err
}

// headerIndex finds a column by its name, or failing that regardless of
// case (spreadsheets and exports recase headers).
func headerIndex(header []string, name string) int {
	for i, h := range header {
		if strings.TrimSpace(h) == name {
			return i
		}
	}
	for i, h := range header {
		if strings.EqualFold(strings.TrimSpace(h), name) {
			return i
		}
	}
	return -1
}

// csvRow is one row being read, for its cells and its errors.
type csvRow struct {
	tr   *traceReader
	r    *csv.Reader
	row  []string
	line int // the row's first line
}

func (c csvRow) cell(i int) string {
	if i < 0 || i >= len(c.row) {
		return ""
	}
	return strings.TrimSpace(c.row[i])
}

// fail names the line of column i (a quoted cell may span lines).
func (c csvRow) fail(i int, field string, err error) error {
	line := c.line
	if i >= 0 && i < len(c.row) {
		line, _ = c.r.FieldPos(i)
	} else if i >= len(c.row) {
		err = fmt.Errorf("%w (the row has %d fields)", err, len(c.row))
	}
	return fieldError(c.tr.path, line, field, err)
}

// csvRecord reads one row.
func (tr *traceReader) csvRecord(r *csv.Reader, row []string, c traceColumns) (timed, error) {
	line, _ := r.FieldPos(0)
	cr := csvRow{tr: tr, r: r, row: row, line: line}
	rec := timed{rec: TraceRecord{Line: line}, chat: -1, parent: -1}
	fs := tr.f.Fields
	var err error
	if err := cr.tree(&rec, c); err != nil {
		return timed{}, err
	}
	if v := cr.cell(c.time); rec.link.child() {
		// Timed by its parent's answer: a time of its own is not needed.
	} else if v == "" {
		return timed{}, cr.fail(c.time, fs.Time, errors.New("missing"))
	} else if rec.t, err = parseStamp(v, tr.f.TimeUnit); err != nil {
		return timed{}, cr.fail(c.time, fs.Time, err)
	}
	if err := cr.prompt(&rec.rec, c); err != nil {
		return timed{}, err
	}
	if v := cr.cell(c.output); v == "" {
		return timed{}, cr.fail(c.output, fs.Output, errors.New("missing"))
	} else if rec.rec.Output, err = parseLength(v, 0); err != nil {
		return timed{}, cr.fail(c.output, fs.Output, err)
	}
	if rec.rec.HashIDs, err = parseIDList(cr.cell(c.ids)); err != nil {
		return timed{}, cr.fail(c.ids, fs.HashIDs, err)
	}
	if v := cr.cell(c.session); v != "" {
		rec.rec.Session = tr.session(v)
	}
	return rec, nil
}

// prompt reads the cells that make the prompt: a text or messages, and
// the input length, which may be missing beside them.
func (c csvRow) prompt(rec *TraceRecord, cols traceColumns) error {
	fs := c.tr.f.Fields
	if cols.text >= 0 && cols.text < len(c.row) && c.row[cols.text] != "" {
		// A row's fields share one string: clone so the others are not
		// kept alive with the prompt.
		rec.Text = strings.Clone(c.row[cols.text])
	}
	var err error
	if v := c.cell(cols.messages); v != "" {
		if rec.Messages, err = messages(json.RawMessage(v)); err != nil {
			return c.fail(cols.messages, fs.Messages, err)
		}
	}
	if v := c.cell(cols.input); v != "" {
		if rec.Input, err = parseLength(v, 1); err != nil {
			return c.fail(cols.input, fs.Input, err)
		}
	} else if rec.Text == "" && rec.Messages == nil {
		return c.fail(cols.input, fs.Input, errors.New("missing"))
	}
	return nil
}
