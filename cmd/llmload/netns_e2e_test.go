//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netnsPort is the simulator's port inside its own namespace, where
// nothing else listens.
const netnsPort = 18431

// ip runs an ip(8) command, failing the test on error.
func ip(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// netns makes a network namespace with its loopback up, deleted when the
// test ends; it skips the test where the machine cannot make one.
func netns(t *testing.T, name string) {
	t.Helper()
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		t.Skipf("this machine cannot make network namespaces (ip netns add: %v: %s); the test needs root and iproute2", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	ip(t, "-n", name, "link", "set", "lo", "up")
}

// link joins two namespaces with a veth pair on a /30 of their own.
func link(t *testing.T, server, client, ifServer, ifClient, serverAddr, clientAddr string) {
	t.Helper()
	ip(t, "link", "add", ifServer, "type", "veth", "peer", "name", ifClient)
	ip(t, "link", "set", ifServer, "netns", server)
	ip(t, "link", "set", ifClient, "netns", client)
	ip(t, "-n", server, "addr", "add", serverAddr+"/30", "dev", ifServer)
	ip(t, "-n", client, "addr", "add", clientAddr+"/30", "dev", ifClient)
	ip(t, "-n", server, "link", "set", ifServer, "up")
	ip(t, "-n", client, "link", "set", ifClient, "up")
}

// TestE2ESegmentsInNetworkNamespaces runs the 4 segments each in a network
// namespace of its own, with its own address, and the simulator in a
// fifth: they share nothing but the network (no loopback, no files until
// the results are merged here), as segments on separate machines do.
func TestE2ESegmentsInNetworkNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary in five network namespaces")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make network namespaces (ip netns); CI runs as root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip(8) from iproute2 to make network namespaces")
	}
	tag := fmt.Sprintf("ll%d", os.Getpid()%100000)
	server := tag + "srv"
	netns(t, server)
	const n = 4
	addrs := make([]string, n)
	for i := range n {
		seg := fmt.Sprintf("%sseg%d", tag, i)
		netns(t, seg)
		addrs[i] = fmt.Sprintf("10.213.%d.1", i)
		link(t, server, seg, fmt.Sprintf("%ss%d", tag, i), fmt.Sprintf("%sc%d", tag, i), addrs[i], fmt.Sprintf("10.213.%d.2", i))
	}

	dir := t.TempDir()
	scenario := writeFile(t, dir, "seg.lua", segmentScenario)
	truthLog := filepath.Join(dir, "truth.jsonl")
	mock := startIn(t, server, "mock", "--addr", fmt.Sprintf("0.0.0.0:%d", netnsPort), "--fixed-ttft", "20ms", "--fixed-itl", "2ms", "--truth-log", truthLog)
	mock.waitFor(t, "the mock's address", func() bool { return strings.Contains(mock.stdout.String(), fmt.Sprint(netnsPort)) })

	procs := runAll(t, segmentRuns(dir, scenario, n,
		func(i int) string { return fmt.Sprintf("http://%s:%d/v1", addrs[i], netnsPort) },
		func(i int) []string { return []string{"ip", "netns", "exec", fmt.Sprintf("%sseg%d", tag, i)} },
		"--set", "rate=200"))
	for i, c := range procs {
		if c.code != 0 {
			t.Fatalf("segment %d exited %d:\n%s", i, c.code, c.stderr.String())
		}
	}
	mock.signalAndWait(t, syscall.SIGINT, 30*time.Second)
	server0 := readTruth(t, truthLog)

	merged := filepath.Join(dir, "merged.json")
	stdout, stderr, code := runBinary(t, nil, append([]string{"merge", "--out", merged}, segmentFiles(dir, n)...)...)
	if code != 0 {
		t.Fatalf("merge exited %d:\n%s\n%s", code, stdout, stderr)
	}
	res := loadResult(t, merged)
	if requests, _ := totalRequests(res); requests != duringLoad(res, server0) {
		t.Errorf("merged requests %d, the server counted %d during the load", requests, duringLoad(res, server0))
	}
	var files []string
	for i := range n {
		files = append(files, filepath.Join(dir, fmt.Sprintf("seg-%d.jsonl", i)))
	}
	ttfts := requestTTFTs(t, files...)
	got50, got99 := mergedTTFT(t, res)
	if p50, p99 := nearestRank(ttfts, 50), nearestRank(ttfts, 99); !sameBucket(got50, p50) || !sameBucket(got99, p99) {
		t.Errorf("merged TTFT p50 %.3f p99 %.3f ms of %d; the union of the %d requests: %.3f and %.3f", got50, got99, mergedCount(t, res), len(ttfts), p50, p99)
	}
	// Each segment reached the server at its own address: none through
	// a loopback it does not have.
	for i, s := range res.Run.Segments {
		if s.ActualStart.IsZero() || !s.Complete {
			t.Errorf("segment %d: %+v", i, s)
		}
	}
	for _, a := range addrs {
		if !strings.Contains(res.Run.Target, a) {
			t.Errorf("merged target %q lacks the segment address %s", res.Run.Target, a)
		}
	}
}

// startIn starts the binary inside network namespace ns.
func startIn(t *testing.T, ns string, args ...string) *started {
	t.Helper()
	return startCommand(t, "ip", append([]string{"netns", "exec", ns, binary}, args...)...)
}
