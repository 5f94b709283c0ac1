package library

import "testing"

// TestShippedHeadersMatchTheirCode holds every scenario of the shipped
// library to its header: a summary, and Keys lines that name exactly the
// keys, with their defaults, that its llm.param calls read. A key renamed
// or a default changed in the code alone fails here.
func TestShippedHeadersMatchTheirCode(t *testing.T) {
	list, err := List("../../scenarios")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		t.Run(s.Name(), func(t *testing.T) {
			if s.Err != nil {
				t.Fatal(s.Err)
			}
			if s.Summary == "" {
				t.Errorf("%s: the header has no summary", s.Path)
			}
			if s.Dynamic > 0 {
				t.Errorf("%s:%d: a computed llm.param key: no header can name it", s.Path, s.Dynamic)
			}
			if err := s.Mismatch(); err != nil {
				t.Error(err)
			}
		})
	}
}
