package dataset

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// LoadCSV loads the o.Column column of a CSV file whose first row names
// the columns; blank cells are skipped. The file loads once per process per
// options: later calls return the same *Pool. Reading stops with an error
// once ctx is done. Safe for concurrent use.
func LoadCSV(ctx context.Context, path string, o Options) (*Pool, error) {
	o = Options{Column: o.column()}
	return cached(path, "csv", o, func() (*Pool, error) { return loadCSV(ctx, path, o.Column) })
}

func loadCSV(ctx context.Context, path, column string) (*Pool, error) {
	s, err := openSource(ctx, path, textLimits)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	r := csv.NewReader(s.r)
	r.FieldsPerRecord = -1 // short rows are reported by line below
	r.ReuseRecord = true
	col, err := csvColumn(r, column)
	if err != nil {
		return nil, csvError(path, err)
	}
	var items []Item
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(path, err)
		}
		if col >= len(row) {
			line, _ := r.FieldPos(0)
			return nil, fmt.Errorf("%s:%d: row has %d fields, no column %q", path, line, len(row), column)
		}
		if strings.TrimSpace(row[col]) != "" {
			// A row's fields share one string: clone so the other columns
			// are not kept alive with the prompt.
			items = append(items, Item{Text: strings.Clone(row[col])})
		}
	}
	return finish(path, items)
}

// csvColumn reads the header row and returns the index of column.
func csvColumn(r *csv.Reader, column string) (int, error) {
	header, err := r.Read()
	if err == io.EOF {
		return 0, errors.New("no prompts (empty file, no header row)")
	}
	if err != nil {
		return 0, err
	}
	for i, h := range header {
		if strings.TrimSpace(h) == column {
			return i, nil
		}
	}
	return 0, fmt.Errorf("no column %q (columns: %s)", column, strings.Join(header, ", "))
}

// csvError puts the file and line first, as every other loader error does.
func csvError(path string, err error) error {
	if isSourceError(err) {
		return err
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%d: %w", path, pe.Line, pe.Err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
