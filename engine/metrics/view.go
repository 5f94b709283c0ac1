package metrics

// view is one tracked (metric, filter): a cell fed by every event of the
// metric that matches the filter. Owned by the aggregator.
type view struct {
	key    string
	metric string
	id     metricID // built-in metrics fed by samples
	filter []tagPair
	c      cell
}

type tagPair struct{ key, value string }

func newView(key, metric string, id metricID, k kind, g geometry, f Filter) *view {
	v := &view{key: key, metric: metric, id: id, c: newCell(k, g)}
	for key, value := range f {
		v.filter = append(v.filter, tagPair{key, value})
	}
	return v
}

// match reports whether an event's labels satisfy every pair. It does not
// allocate: this runs for every sample while views exist.
func (v *view) match(e *event) bool {
	for _, p := range v.filter {
		var got string
		switch p.key {
		case "scenario":
			got = e.scenario
		case "stage":
			got = e.stage
		case TargetTag:
			// The endpoint of options.targets that served a request; a
			// run with one target keeps a user tag of that name.
			got = e.targetName
			if got == "" {
				t, ok := e.tags[p.key]
				if !ok {
					return false
				}
				got = t
			}
		case TaskTag:
			// A task's name; a request keeps a user tag of that name.
			if e.task != nil {
				got = e.task.name
				break
			}
			t, ok := e.tags[p.key]
			if !ok {
				return false
			}
			got = t
		default:
			t, ok := e.tags[p.key]
			if !ok {
				return false
			}
			got = t
		}
		if got != p.value {
			return false
		}
	}
	return true
}
