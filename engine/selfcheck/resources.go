package selfcheck

import (
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// Resources is what the process holds at one moment: the figures a soak
// watches for growth. A figure the platform does not give is -1.
type Resources struct {
	At         time.Time
	RSS        int64 // resident set, bytes
	HeapLive   int64 // heap the last garbage collection found live, bytes
	Goroutines int64
	OpenFiles  int64 // file descriptors, sockets included
}

const (
	heapLiveMetric   = "/gc/heap/live:bytes"
	goroutinesMetric = "/sched/goroutines:goroutines"
)

// resourceReader reads Resources; its samples are reused between reads.
type resourceReader struct {
	read []metrics.Sample
	page int64
}

func newResourceReader() *resourceReader {
	return &resourceReader{
		read: []metrics.Sample{{Name: heapLiveMetric}, {Name: goroutinesMetric}},
		page: int64(os.Getpagesize()),
	}
}

func (r *resourceReader) now() Resources {
	metrics.Read(r.read)
	res := Resources{At: time.Now(), HeapLive: -1, Goroutines: -1, RSS: r.rss(), OpenFiles: openFiles()}
	if v := r.read[0].Value; v.Kind() == metrics.KindUint64 {
		res.HeapLive = int64(v.Uint64())
	}
	if v := r.read[1].Value; v.Kind() == metrics.KindUint64 {
		res.Goroutines = int64(v.Uint64())
	}
	return res
}

// rss is the resident set from /proc/self/statm (its second field, in
// pages): the current figure, where getrusage gives only the peak.
func (r *resourceReader) rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return -1
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return -1
	}
	return pages * r.page
}

// openFiles counts the entries of /proc/self/fd, the one it reads with
// included, since that is what a limit on open files counts too.
func openFiles() int64 {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	var n int64
	for {
		names, err := d.Readdirnames(1024)
		n += int64(len(names))
		if err != nil || len(names) == 0 {
			break
		}
	}
	return n
}
