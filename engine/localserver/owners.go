package localserver

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// scan is one pass over /proc: every process's parent, and the
// processes holding one of the wanted socket inodes open.
type scan struct {
	parent map[int]int
	owners []int
	denied bool // some process's open files could not be read
}

// scanProcs reads every process in fsys (a /proc): its parent from stat,
// and whether an fd of it is one of the sockets, a link "socket:[inode]".
// Processes that vanish meanwhile, or whose fds llmload may not read
// (another user's, without root), are skipped.
func scanProcs(fsys fs.FS, inodes map[uint64]bool) scan {
	s := scan{parent: map[int]int{}}
	entries, _ := fs.ReadDir(fsys, ".")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		if st, ok := readStat(fsys, pid); ok {
			s.parent[pid] = st.ppid
		}
		holds, readable := holdsSocket(fsys, pid, inodes)
		s.denied = s.denied || !readable
		if holds {
			s.owners = append(s.owners, pid)
		}
	}
	slices.Sort(s.owners)
	return s
}

// holdsSocket reports whether pid has one of the sockets open; readable
// is false when its fd directory could not be listed.
func holdsSocket(fsys fs.FS, pid int, inodes map[uint64]bool) (holds, readable bool) {
	dir := strconv.Itoa(pid) + "/fd"
	fds, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return false, !isPermission(err)
	}
	for _, fd := range fds {
		target, err := fs.ReadLink(fsys, dir+"/"+fd.Name())
		if err != nil {
			continue
		}
		if inode, ok := socketInode(target); ok && inodes[inode] {
			return true, true
		}
	}
	return false, true
}

// socketInode reads the inode of an fd link "socket:[12345]".
func socketInode(link string) (uint64, bool) {
	rest, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSuffix(rest, "]"), 10, 64)
	return n, err == nil
}

func isPermission(err error) bool { return errors.Is(err, fs.ErrPermission) }

// family is the owners and their descendants, never self nor anything
// below it: llmload's own CPU is counted apart, and a server that started
// llmload must not count llmload as its child. The owners come first, in
// pid order, then each generation below them in pid order: pids wrap, so
// a worker may have a smaller pid than the server that started it.
func (s scan) family(self int) []int {
	children := map[int][]int{}
	for pid, ppid := range s.parent {
		children[ppid] = append(children[ppid], pid)
	}
	seen := map[int]bool{self: true}
	var out []int
	for gen := slices.Clone(s.owners); len(gen) > 0; {
		var next []int
		for _, pid := range gen {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			out = append(out, pid)
			next = append(next, children[pid]...)
		}
		slices.Sort(next)
		gen = next
	}
	return out
}
