package dataset

import (
	"bytes"
	"context"
)

// LoadText loads one prompt per line of path; blank lines are skipped.
// The file loads once per process: later calls return the same *Pool.
// Reading stops with an error once ctx is done. Safe for concurrent use.
func LoadText(ctx context.Context, path string) (*Pool, error) {
	return cached(path, "text", Options{}, func() (*Pool, error) { return loadText(ctx, path) })
}

func loadText(ctx context.Context, path string) (*Pool, error) {
	var items []Item
	err := eachLine(ctx, path, func(_ int, b []byte) error {
		if len(bytes.TrimSpace(b)) > 0 {
			items = append(items, Item{Text: string(b)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return finish(path, items)
}
