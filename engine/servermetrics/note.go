package servermetrics

import (
	"fmt"
	"slices"
	"strings"
)

// maxExamples bounds the family names a Result quotes when none is known.
const maxExamples = 5

// runtimePrefixes are the families every Prometheus client library adds
// (process, language runtime, the exporter itself): quoted last, as they
// say nothing of which server answered.
var runtimePrefixes = []string{"go_", "process_", "python_", "promhttp_", "jvm_", "nodejs_"}

// describe records what the endpoint exposed: the server kind, how many
// families there were and how many llmload knows, and when it knows none
// a few of their names.
func (b *builder) describe(r *Result) {
	r.Families, r.Known, r.Server = b.families, len(b.known), b.kind()
	if r.Known == 0 || (r.GPUOnly && r.Server != ServerDCGM) {
		r.Examples = examples(b.names, maxExamples)
	}
	r.Note = r.Explain()
}

// kind is the server most of the known metrics seen belong to; the
// earlier in servers on a tie, "" when none was seen.
func (b *builder) kind() string {
	counts := map[string]int{}
	for name := range b.known {
		counts[kindOf(name)]++
	}
	best := ""
	for _, s := range kinds {
		if counts[s.kind] > counts[best] {
			best = s.kind
		}
	}
	return best
}

// examples picks up to n names in a stable order, the runtime's own
// families after the others.
func examples(names []string, n int) []string {
	sorted := slices.Clone(names)
	slices.SortFunc(sorted, func(a, b string) int {
		if ra, rb := isRuntime(a), isRuntime(b); ra != rb {
			if ra {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	return sorted[:min(n, len(sorted))]
}

func isRuntime(name string) bool {
	return slices.ContainsFunc(runtimePrefixes, func(p string) bool { return strings.HasPrefix(name, p) })
}

// Explain says in one sentence what a reader must know of the endpoint
// beyond its series: why there are none (it answered nothing usable, or
// nothing llmload knows, or what it knows gave no points), or that none
// of them is the server's queue; "" when nothing needs saying. It reads
// only the Result's fields, so that a result written by an older llmload,
// or merged from segments, is explained too.
func (r *Result) Explain() string {
	switch {
	case r.Scrapes == 0:
		return ""
	case r.GPUOnly:
		return r.explainGPU()
	case len(r.Endpoints) > 0:
		return r.explainSums()
	case len(r.Series) > 0:
		return r.explainRoles()
	case r.Failures >= r.Scrapes:
		return fmt.Sprintf("%s answered no metrics in %s; is it the server's Prometheus endpoint? "+
			"(llama-server serves one only with --metrics)", r.URL, plural(r.Scrapes, "scrape", "scrapes"))
	case r.Known > 0:
		return fmt.Sprintf("%s exposes %s llmload knows (%s) but they gave no points in %s: "+
			"rates and latencies need two scrapes with requests between them", r.URL,
			plural(r.Known, "metric", "metrics"), ServerName(r.Server), plural(r.Scrapes, "scrape", "scrapes"))
	case r.Families > 0:
		return fmt.Sprintf("%s at %s %s llmload knows (e.g. %s); known: %s", noneOf(r.Families), r.URL,
			isAre(r.Families), strings.Join(r.Examples, ", "), knownServers())
	}
	return fmt.Sprintf("%s gave no series llmload knows in %s; known: %s", r.URL, plural(r.Scrapes, "scrape", "scrapes"), knownServers())
}

// explainGPU says why an endpoint named as a GPU exporter gave no GPU
// series: it answered nothing usable, or its metrics are not DCGM's.
func (r *Result) explainGPU() string {
	switch {
	case r.Server == ServerDCGM && len(r.Series) > 0:
		return ""
	case r.Failures >= r.Scrapes:
		why := ""
		if len(r.Errors) > 0 {
			why = ": " + withoutCount(r.Errors[0])
		}
		return fmt.Sprintf("--gpu-metrics %s answered no metrics in %s%s; no GPU figures from it", r.URL,
			plural(r.Scrapes, "scrape", "scrapes"), why)
	case r.Server == ServerDCGM:
		return fmt.Sprintf("--gpu-metrics %s exposes DCGM fields but none of %s gave a reading", r.URL, dcgmNames())
	case r.Families > 0:
		return fmt.Sprintf("--gpu-metrics %s is not NVIDIA's DCGM exporter: none of its %d families is one of %s (e.g. %s)",
			r.URL, r.Families, dcgmNames(), strings.Join(r.Examples, ", "))
	}
	return fmt.Sprintf("--gpu-metrics %s gave no GPU series in %s", r.URL, plural(r.Scrapes, "scrape", "scrapes"))
}

// withoutCount is an error line without its count: "HTTP 500" of
// "HTTP 500 (3×)".
func withoutCount(line string) string {
	if i := strings.LastIndex(line, " ("); i > 0 && strings.HasSuffix(line, "×)") {
		return line[:i]
	}
	return line
}

// dcgmNames lists the DCGM fields llmload reads.
func dcgmNames() string {
	names := make([]string, len(gpuMetrics))
	for i, m := range gpuMetrics {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

// explainRoles warns when the series hold no queue gauge, which the
// analysis reads to corroborate a knee or a cliff; a GPU exporter has
// none to hold.
func (r *Result) explainRoles() string {
	if IsGPU(r.Server) || r.ByRole(RoleWaiting) != nil || r.ByRole(RoleRunning) != nil {
		return ""
	}
	return fmt.Sprintf("%s has no gauge of running or waiting requests llmload knows: the server's queue cannot corroborate a knee or a cliff", r.URL)
}

// explainSums warns when the endpoints' queue gauges gave no sum: each
// endpoint's own note says why it has none, if it has none.
func (r *Result) explainSums() string {
	if r.ByRole(RoleWaiting) != nil || r.ByRole(RoleRunning) != nil {
		return ""
	}
	return fmt.Sprintf("no gauge of running or waiting requests was read from all %d endpoints in the same scrapes: "+
		"their summed queue cannot corroborate a knee or a cliff; each endpoint's series are kept apart", len(r.Endpoints))
}

// noneOf words the families that are not known: "the one family",
// "none of the 37 families".
func noneOf(n int) string {
	if n == 1 {
		return "the one family"
	}
	return fmt.Sprintf("none of the %d families", n)
}

func isAre(n int) string {
	if n == 1 {
		return "is not one"
	}
	return "is one"
}

// plural is "1 scrape", "45 scrapes".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
